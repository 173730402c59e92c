"""The run-wide request limits of the `llm:` agent (agents.llm.limits): two `RunLimits`
on one folder stand for two worker processes (a lock belongs to an open file, so they
exclude each other exactly as processes do)."""

from __future__ import annotations

import contextlib
import fcntl
import os
import threading

import pytest

from agents.llm.limits import LIMITS_DIR, RunLimits


def _free_slots(limits: RunLimits) -> int:
    """How many slot files a third party could lock now."""
    free = 0
    for path in sorted(limits.folder.glob("slot-*")):
        fd = os.open(path, os.O_RDWR)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pass
        else:
            free += 1
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)
    return free


@pytest.mark.parametrize("concurrency", [1, 2, 5])
def test_the_slots_are_shared_by_every_process_of_the_run(tmp_path, concurrency):
    a = RunLimits(tmp_path, "http://h/v1", concurrency, None)
    b = RunLimits(tmp_path, "http://h/v1", concurrency, None)
    with contextlib.ExitStack() as held:
        for k in range(concurrency):
            held.enter_context((a if k % 2 else b).slot())
        assert _free_slots(a) == 0  # all taken, between the two
        got = threading.Event()

        def one_more() -> None:
            with b.slot():
                got.set()

        waiter = threading.Thread(target=one_more, daemon=True)
        waiter.start()
        assert not got.wait(0.2)  # blocked while every slot is held
    waiter.join(timeout=30)
    assert got.is_set()  # and served once one was released
    assert _free_slots(a) == concurrency


def test_another_endpoint_has_its_own_slots(tmp_path):
    a = RunLimits(tmp_path, "http://h/v1", 1, None)
    b = RunLimits(tmp_path, "http://other/v1", 1, None)
    with a.slot(), b.slot():
        assert len(list((tmp_path / LIMITS_DIR).iterdir())) == 2


@pytest.mark.parametrize("per_minute", [1, 3, 10])
def test_per_minute_counts_the_sends_of_every_process(tmp_path, per_minute):
    a = RunLimits(tmp_path, "http://h/v1", 4, per_minute)
    b = RunLimits(tmp_path, "http://h/v1", 4, per_minute)
    waits = [(a if k % 2 else b)._book() for k in range(per_minute + 1)]
    assert waits[:per_minute] == [0.0] * per_minute  # booked
    assert 0 < waits[-1] <= 60  # the next one waits for the oldest to leave the minute


def test_a_torn_minute_file_starts_the_minute_again(tmp_path):
    a = RunLimits(tmp_path, "http://h/v1", 1, 2)
    (a.folder / "minute").write_bytes(b"[12.5, 13")
    assert a._book() == 0.0
