"""Torch's threads for a script of the user's: one per process unless asked otherwise,
as `spades train` runs (docs/environments/index.md, "Torch's threads").

Torch starts a thread per core. On an idle machine that is harmless, but where the cores
are busy with other work (another run, a tournament's workers, a shared CI machine) the
threads contend and a small network's training slows down tenfold or more. The examples
in `examples/` call `one_thread` first and take `--threads` (`add_threads_flag`).
"""

from __future__ import annotations

import argparse
import os


def one_thread(threads: int = 1) -> int:
    """Run torch on `threads` threads; returns the count torch reports. Call it before
    torch's first computation; `OMP_NUM_THREADS` (unless already set) covers the processes
    this one starts."""
    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import torch

    torch.set_num_threads(threads)
    return torch.get_num_threads()


def add_threads_flag(parser: argparse.ArgumentParser) -> None:
    """`--threads N` (default 1), for `one_thread`."""
    parser.add_argument(
        "--threads", type=int, default=1, help="torch's threads (default 1; see one_thread)"
    )
