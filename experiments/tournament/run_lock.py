"""An exclusive lock on a tournament's run folder: one process writes a log at a time.

`hold(run_dir)` takes an `flock` on `run_dir/.lock` without waiting, and writes the
holder (pid, host, start time) into the file. A second process is refused at once with a
`RunLockedError` naming the holder. The kernel releases the lock when its process ends,
however it ends (kill -9 included), so a lock file left behind never blocks the next run:
only a live holder does. The descriptor is not inherited by child processes, so a worker
that outlives its driver does not keep the folder locked. POSIX only (`fcntl`).
"""

from __future__ import annotations

import fcntl
import os
import re
import socket
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path

from experiments.tournament.config import TournamentError

LOCK_FILE = ".lock"


class RunLockedError(TournamentError):
    """Another live process holds the run folder."""


@contextmanager
def hold(run_dir: Path) -> Iterator[None]:
    """Hold `run_dir`'s lock for the block, or raise `RunLockedError` naming the holder."""
    fd = os.open(run_dir / LOCK_FILE, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise RunLockedError(
                f"run folder {str(run_dir)!r} is in use by {_holder(fd)}; "
                "wait for it to end, or choose another --out"
            ) from None
        since = datetime.now(UTC).isoformat(timespec="seconds")
        text = f"pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode()
        os.pwrite(fd, text, 0)
        os.ftruncate(fd, len(text))
        try:
            yield
        finally:
            os.ftruncate(fd, 0)  # a clean exit leaves no holder behind
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    """The holder as its lock file names it. The holder writes its name just after taking
    the lock, so for a moment the file may still be empty or name a dead process (a
    killed earlier holder): read again briefly until it names a live one."""
    text = ""
    for _ in range(50):
        text = os.pread(fd, 512, 0).decode(errors="replace").strip()
        if text and not _names_a_dead_process(text):
            return text
        time.sleep(0.01)
    return text or "another process"


def _names_a_dead_process(text: str) -> bool:
    match = re.match(r"pid (\d+) on (\S+)", text)
    if match is None or match[2] != socket.gethostname():
        return False
    try:
        os.kill(int(match[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False
