"""`spades demo`: a few seeded hands of random play, rendered as text with their scores."""

from __future__ import annotations

import argparse

import numpy as np

from agents.random_agent import random_legal_actions
from experiments.cli.tournament import add_rules_arguments, build_rules
from spades_env.engine import step
from spades_env.records import hand_records
from spades_env.render import render_record
from spades_env.state import init


def add_parser(sub) -> None:
    p = sub.add_parser("demo", help="play a few seeded hands and print them")
    p.add_argument("--hands", type=int, default=2, help="number of hands")
    p.add_argument("--seed", type=int, default=0, help="seed of the deals and the play")
    add_rules_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.hands < 1:
        raise ValueError("--hands must be at least 1")
    if args.seed < 0:
        raise ValueError(f"--seed must be at least 0, got {args.seed}")
    rules = build_rules(args.rules or "standard", args.option or [])
    rng = np.random.default_rng(args.seed)
    state = init(rules, 1, rng)
    shown = 0
    while shown < args.hands and state.phase[0] != 4:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            print(render_record(hand_records(rules, info.finished)[0]))
            print()
            shown += 1
    return 0
