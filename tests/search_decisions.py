"""Recorded decisions of the search agents, to hold their speed-ups to the same choices.

The fixture `tests/data/search_decisions.json` holds, for each agent spec of `SPECS` and
each chain of `chains()`, the actions one agent (seeded with the chain's seed) chose on
the chain's positions in order, so that the random draws a decision leaves for the next
one are checked too; for ISMCTS also the root visit counts, for PIMC the mean value of
each action. It was written by the implementation before the speed-ups (run this module
as a script to rewrite it: only do that for an intended change of behaviour).

Positions: random legal play (bidding, the blind-nil choice, the exchange and card play)
from a seeded deal, a position kept at random, several hands per game so that scores and
bags vary. Rules: the standard preset, blind nil with the RULES.md §2 exchange and the
§3 two-of-clubs lead, `jokers`, `mirror` (known spade counts in the sampler) and
`three_player` (one-player teams, 17 tricks).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from agents.registry import make_agent, parse_agent
from spades_env.engine import random_legal_actions, step
from spades_env.observation import SeatView, seat_view
from spades_env.rules import Rules
from spades_env.state import PLAY, init

FIXTURE = Path(__file__).parent / "data" / "search_decisions.json"
SPECS = (
    "ismcts:iterations=200",
    "ismcts:iterations=1000",
    "pimc:worlds=16,policy=greedy",
    "pimc:worlds=64,policy=greedy",
    "pimc:worlds=8",
)
RULES = {
    "standard": Rules(),
    "blind_exchange": Rules(blind_nil="always", blind_nil_exchange=True, first_lead="two_of_clubs"),
    "jokers": Rules.preset("jokers"),
    "mirror": Rules.preset("mirror"),
    "three_player": Rules.preset("three_player"),
}
SEEDS = range(8)
CHAIN = 6  # positions per chain


def chain_positions(rules_name: str, seed: int, n: int = CHAIN) -> list[SeatView]:
    """`n` views of the seat to act, from random play of one seeded game."""
    rules = RULES[rules_name]
    rng = np.random.default_rng([seed, 4711])
    state = init(rules, 1, rng)
    out: list[SeatView] = []
    while len(out) < n:
        if state.phase[0] > PLAY:  # game over: a fresh game
            state = init(rules, 1, rng)
        keep = 0.12 if state.phase[0] == PLAY else 0.5
        if rng.random() < keep:
            out.append(seat_view(state))
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return out


def chains(seeds=SEEDS) -> list[tuple[str, int]]:
    return [(name, seed) for name in RULES for seed in seeds]


def run_chain(spec: str, rules_name: str, seed: int) -> list[dict]:
    """What one agent of `spec` (seeded `seed`) decides on the chain, in order."""
    agent = make_agent(parse_agent(spec), seed=seed)
    out = []
    for view in chain_positions(rules_name, seed):
        action = int(agent.decide(view, 0))
        row: dict = {"action": action}
        if spec.startswith("ismcts"):
            root = agent.last_root
            row["visits"] = (
                {} if root is None else {str(a): ch.visits for a, ch in root.children.items()}
            )
        else:
            row["values"] = {str(a): v for a, v in agent.last_values.items()}
        out.append(row)
    return out


def key(spec: str, rules_name: str, seed: int) -> str:
    return f"{spec}|{rules_name}|{seed}"


def record(path: Path = FIXTURE) -> None:
    data = {}
    for spec in SPECS:
        for name, seed in chains():
            data[key(spec, name, seed)] = run_chain(spec, name, seed)
            print(spec, name, seed, [r["action"] for r in data[key(spec, name, seed)]], flush=True)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, indent=0, sort_keys=True) + "\n")


def load() -> dict:
    return json.loads(FIXTURE.read_text())


if __name__ == "__main__":
    record(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE)
