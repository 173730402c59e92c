"""An exclusive lock on a tournament's run folder: one process writes a log at a time.

`hold(run_dir)` takes an `flock` on `run_dir/.lock` without waiting, and writes the
holder (pid, host, start time) into the file (`spades_env.tooling.files.lock_folder`). A second
process is refused at once with a `RunLockedError` naming the holder. The kernel releases
the lock when its process ends, however it ends (kill -9 included), so a lock file left
behind never blocks the next run: only a live holder does. The descriptor is not
inherited by child processes, so a worker that outlives its driver does not keep the
folder locked. A lock file that is a symbolic or hard link is refused in one line (the
holder's line would be written into what it points to). POSIX only (`fcntl`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from experiments.tournament.config import TournamentError
from spades_env.tooling.files import LOCK_FILE, FolderLockedError, UnsafeFileError, lock_folder

__all__ = ["LOCK_FILE", "RunLockedError", "hold"]


class RunLockedError(TournamentError):
    """Another live process holds the run folder."""


@contextmanager
def hold(run_dir: Path) -> Iterator[None]:
    """Hold `run_dir`'s lock for the block, or raise `RunLockedError` naming the holder."""
    try:
        with lock_folder(
            run_dir, "run folder", "wait for it to end, or choose another --out"
        ) as held:
            yield held
    except FolderLockedError as exc:
        raise RunLockedError(str(exc)) from None
    except UnsafeFileError as exc:
        raise TournamentError(f"run folder {str(run_dir)!r}: {exc}") from None
