"""Compile the kernels of the default tournament ahead of it, on two processes at once.

    python -m experiments.warm          # .ci/setup runs this right after the core install

A fresh checkout or install has no compiled kernels: the first `spades tournament` (random
against heuristic) would compile the engine's kernels and then the heuristic's, one after
the other, in each of its worker processes. Here the two sets compile side by side, one
process each (the engine's by playing one duplicate deal of random play, the heuristic's
card play by deciding one position), into numba's on-disk cache, so that the first
tournament starts from a warm cache. It prints one line and how long it took; with
`--quiet`, nothing. It changes no result: a kernel loaded from the cache is the same
machine code as one compiled in the run.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor


def _cpu() -> float:
    """CPU seconds of this process so far (user and system)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def engine_kernels() -> tuple[str, float]:
    """The engine's kernels (deal, step, score, masks): one duplicate deal, random play.
    Returns the set's name and the CPU seconds it took."""
    from experiments.tournament import TournamentConfig, run_tournament

    with tempfile.TemporaryDirectory(prefix="spades-warm-") as folder:
        run_tournament(folder, TournamentConfig(agents=("random", "random"), deals=1), workers=1)
    return "engine", _cpu()


def heuristic_kernels() -> tuple[str, float]:
    """The heuristic's card play: one decision of the first trick (name, CPU seconds)."""
    from agents.heuristic.play import decide_card
    from spades_env.rules import Rules

    rules = Rules.preset("standard")
    position = {
        "seat": 0, "hand": (1 << 13) - 1, "legal": (1 << 13) - 1, "unseen": ((1 << 52) - 1) ^ 8191,
        "leader": 0, "trick_size": 0, "lead_suit": -1, "tricks_played": 0, "trump": 0,
        "bids": [3, 3, 3, 3], "tricks_won": [0, 0, 0, 0], "trick": [-1, -1, -1, -1],
        "voids": [0, 0, 0, 0],
    }  # fmt: skip
    decide_card(rules, position)
    return "heuristic", _cpu()


def command_line() -> None:
    """Import what `spades` imports to build its parser. Run by .ci/setup with Python's
    bytecode writing on, it leaves the bytecode of those modules (and, through the two
    kernel sets, of the tournament's) on disk: a first command does not compile Python
    source, even where PYTHONDONTWRITEBYTECODE is set (many container images set it)."""
    from experiments.cli.app import build_parser

    build_parser()


def warm(workers: int = 2) -> tuple[float, dict[str, float]]:
    """Compile both kernel sets (side by side on `workers` processes); return the wall
    seconds and each set's CPU seconds (on a busy machine the wall time is the CPU time
    of the slower set divided by the share of a core it got)."""
    # this command says what it does itself: no compile notice (spades_env's NOTICE_ENV,
    # set before the first import of spades_env, which checks the cache)
    os.environ["SPADES_COMPILE_NOTICE"] = "0"
    # the cache checks (which may clear a stale cache) run here once, before the workers
    from agents.kernels.compile import ensure_fresh as agents_fresh
    from spades_env.core.compile import ensure_fresh

    ensure_fresh()
    agents_fresh()
    start = time.perf_counter()
    jobs = (engine_kernels, heuristic_kernels)
    if workers <= 1:
        cpu = dict(job() for job in jobs)  # one process: each set's CPU is cumulative
        command_line()
    else:
        with ProcessPoolExecutor(min(workers, len(jobs))) as pool:
            futures = [pool.submit(job) for job in jobs]
            command_line()  # meanwhile, here
            cpu = dict(future.result() for future in futures)
    return time.perf_counter() - start, cpu


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m experiments.warm", description=__doc__.split("\n")[0]
    )
    p.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    p.add_argument("--quiet", action="store_true", help="print nothing")
    args = p.parse_args(argv)
    if not args.quiet:
        print(
            "spades-env: compiling the kernels of the default tournament (once; about half a "
            "minute)",
            file=sys.stderr,
            flush=True,
        )
    seconds, cpu = warm(args.workers)
    if not args.quiet:
        each = ", ".join(f"{name} {s:.0f} s" for name, s in cpu.items())
        print(
            f"spades-env: kernels compiled in {seconds:.0f} s (CPU: {each})",
            file=sys.stderr,
            flush=True,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
