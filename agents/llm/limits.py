"""One limit on requests in flight, and per minute, for a whole run: every thread of every
worker process that shares a store (a tournament's run folder) and an endpoint.

The limits live in files of the store's ``llm_limits/<endpoint hash>/`` folder, locked
with ``flock`` (a lock belongs to an open file, so two threads of one process exclude
each other as two processes do, and a killed process releases its locks):

- in flight: ``slot-K`` for K < ``concurrency``; a request holds one slot while it is
  sent and read, so at most ``concurrency`` requests are in flight at once, across all;
- per minute (``per_minute``): ``minute`` holds the send times of the last minute; a
  request waits until fewer than ``per_minute`` were sent in the last 60 s.

Without a folder (a store kept in memory) the limits hold for the process alone.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path

LIMITS_DIR = "llm_limits"
_POLL = 0.005  # seconds between tries for a slot


class RunLimits:
    """The in-flight and per-minute limits of one endpoint in one store."""

    def __init__(
        self, folder: Path | None, endpoint: str, concurrency: int, per_minute: int | None
    ) -> None:
        self.concurrency, self.per_minute = concurrency, per_minute
        self.folder: Path | None = None
        if folder is not None:
            tag = hashlib.sha256(endpoint.encode()).hexdigest()[:16]
            self.folder = Path(folder) / LIMITS_DIR / tag
            self.folder.mkdir(parents=True, exist_ok=True)
        self._local = threading.BoundedSemaphore(concurrency)
        self._sent: list[float] = []
        self._sent_lock = threading.Lock()

    @contextlib.contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one of the run's request slots (and a place in the minute) for the block."""
        with self._local:
            fd = self._take_slot()
            try:
                self._wait_minute()
                yield
            finally:
                if fd is not None:
                    fcntl.flock(fd, fcntl.LOCK_UN)
                    os.close(fd)

    def _take_slot(self) -> int | None:
        if self.folder is None:
            return None
        while True:
            for k in range(self.concurrency):
                fd = os.open(self.folder / f"slot-{k}", os.O_RDWR | os.O_CREAT, 0o644)
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:
                    os.close(fd)
                    continue
                return fd
            time.sleep(_POLL)

    def _wait_minute(self) -> None:
        if not self.per_minute:
            return
        while True:
            wait = self._book()
            if wait <= 0:
                return
            time.sleep(min(wait, 0.5))

    def _book(self) -> float:
        """Book a send now if fewer than `per_minute` went out in the last 60 s (0), else
        the seconds until the oldest of them leaves the minute."""
        now = time.time()
        if self.folder is None:
            with self._sent_lock:
                return self._book_in(self._sent, now)
        path = self.folder / "minute"
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            raw = os.read(fd, 1 << 20)
            try:
                sent = [float(t) for t in json.loads(raw or b"[]")]
            except (ValueError, TypeError):
                sent = []  # a torn or foreign file: start the minute again
            wait = self._book_in(sent, now)
            os.lseek(fd, 0, os.SEEK_SET)
            os.ftruncate(fd, 0)
            os.write(fd, json.dumps(sent).encode())
            return wait
        finally:
            os.close(fd)  # releases the lock

    def _book_in(self, sent: list[float], now: float) -> float:
        sent[:] = [t for t in sent if now - t < 60.0]
        assert self.per_minute is not None
        if len(sent) < self.per_minute:
            sent.append(now)
            return 0.0
        return min(sent) + 60.0 - now
