"""`spades analyze LOG`: bid accuracy of a tournament, as tables and PNG plots
(and, with `--format csv|json`, every table as a file).

Reads only the tournament log (`log.jsonl`, or the run folder holding it), prints the
tables of `experiments.bid_analysis` and writes its plots beside the log, with the
comparison against the double-dummy solver: cached answers always, and at most
`AUTO_SOLVES` new hands solved a run unless `--dd` (all) or `--dd-max` says otherwise;
`--no-dd` leaves it out. A line on stderr says when the solves start (`--quiet`: none).
Answers are cached by `agents.dd.cache`, so a rerun only
solves what is new.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from experiments.cli.progress import counting_bar
from experiments.cli.values import whole_number
from experiments.tournament.bid_stats import GROUPINGS

if TYPE_CHECKING:
    import pandas as pd


def add_parser(sub) -> None:
    p = sub.add_parser(
        "analyze",
        help="bid accuracy of a tournament log: tables and PNG plots",
        description="Bid accuracy of a tournament: bid error, exact / make / set rates, "
        "bags, nil, bid totals, calibration and the bid x tricks matrix, with 95% "
        "intervals; plots are written as PNG files beside the log.",
    )
    p.add_argument("log", metavar="LOG", help="log.jsonl, or the run folder holding it")
    p.add_argument(
        "--by",
        choices=list(GROUPINGS),
        default="agent",
        help="split the accuracy tables by agent (default), bidding position (seat), "
        "score situation (ahead / level / behind by 100+), the bid made (nil = 0) or the "
        "opponent (each agent's figures against each other agent)",
    )
    p.add_argument(
        "--format",
        choices=("csv", "json"),
        help="also write every table, as numbers with their interval bounds, to NAME.csv "
        "or NAME.json files in the --out folder",
    )
    dd = p.add_mutually_exclusive_group()
    dd.add_argument(
        "--dd",
        action="store_true",
        help="solve every hand missing from the double-dummy cache (default: use cached "
        "answers and solve at most 200 new hands a run)",  # AUTO_SOLVES (a test checks)
    )
    dd.add_argument("--no-dd", action="store_true", help="leave the double-dummy comparison out")
    p.add_argument(
        "--dd-max",
        type=whole_number(0),
        metavar="N",
        help="solve at most N new hands this run (0: cached answers only)",
    )
    p.add_argument(
        "--dd-cache",
        metavar="FILE",
        help="the double-dummy cache (default: $SPADES_DD_CACHE or "
        "~/.cache/spades-env/dd_tricks.sqlite)",
    )
    p.add_argument(
        "--out", metavar="DIR", help="folder for the PNGs and tables (default: beside the log)"
    )
    p.set_defaults(run=run)


def solve_notice(todo: int) -> str:
    """The line `analyze` prints on stderr as the double-dummy solves start."""
    hands = "hand" if todo == 1 else "hands"
    return (
        f"double dummy: solving {todo} new {hands} on every core (a first run also compiles "
        "the solver, about a minute; --no-dd or --dd-max 0 leaves it out)"
    )


def rich_table(title: str, frame: pd.DataFrame, keys: tuple[str, ...] = ()) -> Table:
    """A data frame of strings as a rich table; key columns left-aligned."""
    table = Table(title=title)
    for c in frame.columns:
        table.add_column(str(c), justify="left" if c in keys else "right")
    for row in frame.itertuples(index=False):
        table.add_row(*(str(x) for x in row))
    return table


def run(args: argparse.Namespace) -> int:
    # pandas and matplotlib load here, not when `spades` starts
    from experiments.bid_analysis import analyze, save_figures, save_tables
    from experiments.bid_analysis.log_frames import load_log, log_path
    from experiments.bid_analysis.report import KEYS, confusion_view, report_tables
    from experiments.cli.checks import output_folder

    # every argument is checked before anything is solved
    folder = output_folder(args.out if args.out else log_path(args.log).parent)
    rows = load_log(args.log)
    cache = None
    if not args.no_dd:
        from agents.dd.cache import DDCache

        cache = DDCache(args.dd_cache)  # a damaged or foreign file is refused here

    out = Console()
    if not out.is_terminal:
        out = Console(width=200)  # a pipe or file: do not squeeze the tables
    err = Console(stderr=True)
    progress = counting_bar(err, "double dummy")
    tasks: list = []

    def on_solve(done: int, todo: int) -> None:
        if not tasks:  # called first with done=0, before the workers start (and compile)
            if not args.quiet:  # a line in a pipe or log too, where the bar does not show
                err.print(solve_notice(todo), soft_wrap=True, highlight=False)
            progress.start()
            tasks.append(progress.add_task("dd", total=todo))
        progress.update(tasks[0], completed=done, total=todo)

    try:
        analysis = analyze(
            rows,
            by=args.by,
            dd=False if args.no_dd else True if args.dd else "auto",
            max_solves=args.dd_max,
            cache=cache,
            on_solve=on_solve,
        )
    finally:
        if tasks:
            progress.stop()
        if cache is not None:
            cache.close()
    for title, frame in report_tables(analysis).items():
        out.print(rich_table(title, frame, KEYS))
    for agent, matrix in analysis.confusion.items():
        m = confusion_view(matrix)
        out.print(rich_table(f"{agent}: bid (rows) x tricks taken", m.reset_index(), ("bid",)))
    if analysis.dd_unsolved:
        out.print(
            f"double dummy: {analysis.dd_unsolved} of {len(analysis.hands)} hands have no "
            "answer yet and are left out; run again (or with --dd) to solve more"
        )
    folder.mkdir(parents=True, exist_ok=True)
    for path in save_figures(analysis, folder):
        out.print(f"plot: {path}")
    if args.format:
        for path in save_tables(analysis, folder, args.format):
            out.print(f"table: {path}")
    return 0
