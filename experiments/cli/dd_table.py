"""`spades dd-table`: double-dummy tricks tables of seeded deals, solved on every core
into the on-disk cache (`agents.dd.cache`), so a rerun, and `spades analyze`, read them
back at no cost."""

from __future__ import annotations

import argparse
import io
import time
from pathlib import Path

import numpy as np

from experiments.cli.checks import add_overwrite_input, output_file
from experiments.cli.values import (
    MAX_SEED,
    add_rules_arguments,
    build_rules,
    deal_count,
    seed_number,
    whole_number,
)
from spades_env.tooling.files import atomic_write


def add_parser(sub) -> None:
    p = sub.add_parser(
        "dd-table",
        help="double-dummy tricks tables of seeded deals, cached on disk",
        description="For each deal, the tricks each team makes double dummy with each seat "
        "on lead (agents.dd.tricks_tables). Deal i is the first hand of the game with seed "
        "SEED + i. Deals are solved on every core with a progress bar, and every answer is "
        "kept in the double-dummy cache, so a rerun costs nothing and an interrupted run "
        "keeps its work.",
    )
    p.add_argument(
        "--deals", type=deal_count, default=1000, metavar="N", help="deals (default 1000)"
    )
    p.add_argument(
        "--seed",
        type=seed_number,
        default=0,
        metavar="SEED",
        help="first seed, 0..2**64-1 (default 0)",
    )
    p.add_argument(
        "--cache",
        metavar="FILE",
        help="double-dummy cache (default $SPADES_DD_CACHE, else "
        "~/.cache/spades-env/dd_tricks.sqlite)",
    )
    p.add_argument(
        "--workers", type=whole_number(1), metavar="K", help="processes (default: every core)"
    )
    p.add_argument(
        "--out", metavar="FILE", help="also write seeds, deals and tables to FILE (.npz)"
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    add_overwrite_input(p)
    add_rules_arguments(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from agents.dd.cache import DDCache, default_cache_path, seeded_deals, tricks_tables
    from agents.dd.position import check_rules

    rules = build_rules(args.rules or "standard", args.option or [])
    check_rules(rules)  # before anything is written
    if args.seed + args.deals - 1 > MAX_SEED:  # the seeds SEED..SEED+N-1 are 64-bit
        raise ValueError(
            f"--seed {args.seed} --deals {args.deals}: the last seed would pass 2**64-1; "
            f"give --seed at most {MAX_SEED - args.deals + 1}"
        )
    out = Path(args.out) if args.out else None
    if out is not None and out.suffix != ".npz":
        raise ValueError(f"--out {args.out!r}: give a .npz file")
    if out is not None:  # before anything is solved; never over the cache it reads
        cache_file = Path(args.cache) if args.cache else default_cache_path()
        output_file(out, inputs={"the double-dummy cache": cache_file}, allow=args.overwrite_input)
    deals = seeded_deals(args.deals, args.seed, rules)
    cache = DDCache(args.cache)
    counts: dict[str, int] = {}
    start = time.perf_counter()
    try:
        tables = tricks_tables(
            deals, rules, cache=cache, workers=args.workers, progress=not args.no_progress,
            counts=counts,
        )  # fmt: skip
    finally:
        cache.close()
    seconds = time.perf_counter() - start
    last = args.seed + args.deals - 1
    print(
        f"{args.deals} deals (seeds {args.seed}..{last}): {counts['solved']} solved, "
        f"{counts['cached']} from the cache, {seconds:.1f} s; cache {cache.path}"
    )
    mean = tables.astype(np.float64).mean(axis=0)
    for leader in range(4):
        print(
            f"  seat {leader} on lead: team 0 (seats 0, 2) makes {mean[leader, 0]:.2f} tricks "
            f"on average, team 1 (seats 1, 3) {mean[leader, 1]:.2f}"
        )
    if out is not None:
        seeds = np.arange(args.seed, args.seed + args.deals, dtype=np.uint64)
        out.parent.mkdir(parents=True, exist_ok=True)
        buffer = io.BytesIO()  # written whole, or not at all (a full disk leaves no part)
        np.savez(buffer, seeds=seeds, deals=deals, tables=tables)
        atomic_write(out, buffer.getbuffer())
        print(f"tables written to {out}")
    return 0
