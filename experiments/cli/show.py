"""`spades show LOG --deal N`: render one logged hand as text, both duplicate sides."""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Sequence
from typing import Any

from experiments.cli.values import whole_number
from experiments.tournament.results_log import iter_rows
from experiments.tournament.summary import pair_of
from spades_env.render import render_record


def add_parser(sub) -> None:
    p = sub.add_parser(
        "show",
        help="render a logged hand of a tournament (both sides of the deal)",
        description="Render one hand of a tournament log: every pair's both sides.",
    )
    p.add_argument("log", metavar="LOG", help="log.jsonl, or the run folder holding it")
    p.add_argument("--deal", type=whole_number(0), required=True, help="deal id (0-based)")
    p.add_argument(
        "--hand", type=whole_number(0), default=0, help="hand of the game (game mode; 0-based)"
    )
    p.add_argument("--pair", metavar="A,B", help="only this pair of agents")
    p.set_defaults(run=run)


def select(
    rows: Iterable[dict[str, Any]], deal: int, hand: int = 0, pair: str | None = None
) -> list[dict[str, Any]]:
    """The rows of one deal and hand (optionally one pair), by pair then side."""
    want = None if pair is None else tuple(a.strip() for a in pair.split(","))
    if want is not None and len(want) != 2:
        raise ValueError(f"--pair {pair!r}: write two agents as A,B")
    hits, last, any_row = [], -1, False
    for r in rows:  # read once: `rows` may stream a log of any length
        any_row = True
        last = max(last, r["deal"])
        here = r["deal"] == deal and r["hand"] == hand
        if here and (want is None or set(pair_of(r)) == set(want)):
            hits.append(r)
    if not any_row:
        raise ValueError("the log holds no rows")
    if not hits:
        raise ValueError(
            f"--deal {deal} --hand {hand}{f' --pair {pair}' if pair else ''}: no such hand in "
            f"the log (deals 0..{last})"
        )
    return sorted(hits, key=lambda r: (pair_of(r), r["side"]))


def render_rows(rows: Sequence[dict[str, Any]]) -> str:
    out = []
    by_pair: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        by_pair.setdefault(pair_of(r), []).append(r)
    for (a, b), sides in by_pair.items():
        for r in sides:
            ns, ew = r["teams"]
            out.append(
                f"log deal={r['deal']} hand={r['hand']} side={r['side']}: "
                f"North/South {ns}, East/West {ew}"
            )
            out.append(render_record(r["record"]))
            out.append("")
        if len(sides) == 2:
            diff = sum(r["hand_score"][r["side"]] - r["hand_score"][1 - r["side"]] for r in sides)
            out.append(f"duplicate: {a} - {b} = {diff:+d} points over both sides")
            out.append("")
    return "\n".join(out).rstrip() + "\n"


def run(args: argparse.Namespace) -> int:
    rows = iter_rows(args.log)  # streamed: only the hand shown is kept
    print(render_rows(select(rows, args.deal, args.hand, args.pair)), end="")
    return 0
