"""`spades bench`: throughput with ratios against references measured in the same run."""

from __future__ import annotations

import argparse

from experiments.bench.dd import DEFAULT_DEALS
from experiments.bench.runner import SECTIONS, format_rows, run_bench, to_json
from experiments.cli.values import deal_count, positive_seconds


def add_parser(sub) -> None:
    p = sub.add_parser(
        "bench",
        help="measure throughput against reference implementations",
        description="Measure throughput (decisions, steps or solves per second) and print each "
        "figure as a ratio against a reference measured in the same run: OpenSpiel, "
        "PettingZoo's card games, DDS, pimc:worlds=64. Machines are shared and noisy: quote "
        f"the ratios. Sections: {', '.join(sorted(SECTIONS))}.",
    )
    p.add_argument(
        "--seconds", type=positive_seconds, default=3.0, help="time per measurement (> 0)"
    )
    p.add_argument(
        "--only", action="append", choices=sorted(SECTIONS), help="run only these sections"
    )
    p.add_argument(
        "--deals",
        type=deal_count,
        default=DEFAULT_DEALS,
        metavar="N",
        help=f"fresh seeded deals the dd section solves (default {DEFAULT_DEALS})",
    )
    p.add_argument("--json", action="store_true", help="print the figures as JSON")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    rows = run_bench(args.only, args.seconds, deals=args.deals)
    print(to_json(rows) if args.json else format_rows(rows))
    return 0
