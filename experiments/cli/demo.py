"""`spades demo`: a few seeded hands, rendered as text with their scores.

Random play by default; `--agents` seats agents (any spec of `spades tournament`, one
per seat, repeated round the table), each seat's name printed above each hand.
"""

from __future__ import annotations

import argparse

import numpy as np

from agents.random_agent import random_legal_actions
from agents.registry import make_agent
from experiments.cli.values import (
    add_decision_timeout,
    add_rules_arguments,
    agent_limits,
    agent_specs,
    build_rules,
    seed_number,
    whole_number,
)
from spades_env.agent_calls import AgentError, call_agent, described
from spades_env.engine import legal_action_mask, seat_name, step
from spades_env.observation import encode, seat_view
from spades_env.records import hand_records
from spades_env.render import render_record
from spades_env.state import init

#: The most hands `demo` prints: a demonstration, not a run (`spades tournament` plays more).
MAX_DEMO_HANDS = 10_000


def add_parser(sub) -> None:
    p = sub.add_parser(
        "demo",
        help="play a few seeded hands and print them",
        description="Play a few seeded hands (random play, or the agents of --agents) and "
        "print each as text: the deal, the bids, every trick and the score.",
    )
    p.add_argument(
        "--hands",
        type=whole_number(1, MAX_DEMO_HANDS),
        default=2,
        help=f"number of hands, 1..{MAX_DEMO_HANDS:,} (default 2)",
    )
    p.add_argument(
        "--seed", type=seed_number, default=0, help="seed of the deals and the play, 0..2**64-1"
    )
    p.add_argument(
        "--agents",
        metavar="[NAME=]SPEC,...",
        help="the seats' agents, as spades tournament --agents takes them, repeated round "
        "the table (default: random play)",
    )
    add_rules_arguments(p)
    add_decision_timeout(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with agent_limits(args):  # the decision time limit; an agent's prints to stderr
        return _demo(args)


def _demo(args: argparse.Namespace) -> int:
    rules = build_rules(args.rules or "standard", args.option or [])
    rng = np.random.default_rng(args.seed)
    seats = None
    if args.agents is not None:
        specs = agent_specs(args.agents, "--agents")  # each read once
        if not specs:
            raise ValueError("--agents names no agent")
        seats = [
            make_agent(specs[s % len(specs)], seed=args.seed + s, rules=rules)
            for s in range(rules.num_players)
        ]
    state = init(rules, 1, rng)
    shown = 0
    while shown < args.hands and state.phase[0] != 4:
        if seats is None:
            actions = random_legal_actions(state.legal, state.phase, rng)
        else:
            seat = int(state.to_act[0])
            agent = seats[seat]
            obs = encode(state) if agent.needs_obs else None
            try:  # one guarded, checked call (spades_env.agent_calls)
                with described(lambda _game, hand=shown + 1: f"hand {hand}"):  # (a watchdog)
                    actions = call_agent(
                        agent, seat_view(state), obs, legal_action_mask(state), seats=[seat],
                        state=state,
                    )  # fmt: skip
            except AgentError as exc:
                raise exc.relocated(f"hand {shown + 1}") from None
        info = step(state, actions)
        if info.finished is not None:
            if seats is not None:
                names = (f"{seat_name(s)} {a.name}" for s, a in enumerate(seats))
                print("seats: " + ", ".join(names))
            print(render_record(hand_records(rules, info.finished)[0]))
            print()
            shown += 1
    return 0
