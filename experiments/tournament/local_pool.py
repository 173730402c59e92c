"""The local backend's worker processes: units out, rows back, in unit order, and an
interruption that always ends at once.

`multiprocessing.Pool` is not used because its teardown can wait for ever after Ctrl-C:
its `terminate` puts sentinels through the result pipe, whose lock a worker may hold while
it sends a large result that nobody reads any more (measured: 2 hangs in 20 Ctrl-Cs with
units of 50 deals). Here the workers ignore SIGINT (only the driver takes Ctrl-C), and
when the driver stops early, for an interrupt or an error, it kills its workers and
leaves the pipes alone: nothing can wait on a lock a dead worker held. A worker that dies
on its own is noticed and reported, rather than waited for. A driver killed alone (kill -9
of its pid, not its group) cannot kill its workers: each worker watches its parent and
exits within `PARENT_CHECK_SECONDS` of the driver's end.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import wait
from typing import Any

from experiments.tournament.config import TournamentError

Rows = list[dict[str, Any]]


#: Seconds between a worker's checks that its driver is still alive.
PARENT_CHECK_SECONDS = 0.5


def _exit_with_driver(driver: int) -> None:
    """In a worker: end the process as soon as the driver `driver` is gone (killed with
    SIGKILL alone, it cannot kill its workers; they are then re-parented)."""

    def watch() -> None:
        while os.getppid() == driver:
            time.sleep(PARENT_CHECK_SECONDS)
        os._exit(1)

    threading.Thread(target=watch, name="driver-watch", daemon=True).start()


def _serve(
    setup: Callable[[Any], Any],
    work: Callable[[Any, int], Rows],
    arg: Any,
    tasks,
    results,
    driver: int | None = None,
) -> None:
    """A worker: `setup(arg)` once, then `work(state, unit)` for each unit until None;
    it exits on its own when the driver dies."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's
    if driver is not None:
        _exit_with_driver(driver)
    try:
        state = setup(arg)
    except BaseException as exc:  # sent to the driver, which raises it
        results.put((None, False, _picklable(exc)))
        return
    while (unit := tasks.get()) is not None:
        try:
            results.put((unit, True, work(state, unit)))
        except BaseException as exc:
            results.put((unit, False, _picklable(exc)))


def _picklable(exc: BaseException) -> BaseException:
    return exc if isinstance(exc, TournamentError | RuntimeError) else RuntimeError(repr(exc))


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    """SIGINT ignored while workers start: a spawned Python keeps an ignored SIGINT
    ignored, so no worker can be interrupted before its first instruction."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def ordered_results(
    units: Sequence[int],
    workers: int,
    setup: Callable[[Any], Any],
    work: Callable[[Any, int], Rows],
    arg: Any,
) -> Iterator[Rows]:
    """`work(setup(arg), u)` for each unit of `units` in `workers` spawned processes,
    yielded in the order of `units`. Closing the iterator early kills the workers."""
    ctx = mp.get_context("spawn")  # not fork: the caller may run threads (a progress bar)
    tasks, results = ctx.SimpleQueue(), ctx.SimpleQueue()
    with _sigint_ignored():
        procs = [
            ctx.Process(
                target=_serve, args=(setup, work, arg, tasks, results, os.getpid()), daemon=True
            )
            for _ in range(workers)
        ]
        for p in procs:
            p.start()
    queued = iter(units)
    try:
        for _, unit in zip(range(2 * workers), queued, strict=False):
            tasks.put(unit)  # two units per worker in flight, the rest as results come
        done: dict[int, Rows] = {}
        for unit in units:
            while unit not in done:
                got, ok, payload = _next_result(results, procs)
                if not ok:
                    raise payload
                done[got] = payload
                following = next(queued, None)
                if following is not None:
                    tasks.put(following)
            yield done.pop(unit)
        for _ in procs:
            tasks.put(None)
        for p in procs:
            p.join()
    finally:
        for p in procs:
            if p.is_alive():
                p.kill()
        for p in procs:
            p.join()


def _next_result(results, procs: list) -> tuple[Any, bool, Any]:
    """The next (unit, ok, rows or error), or an error if a worker died without one."""
    while results.empty():
        wait([p.sentinel for p in procs], timeout=0.05)
        dead = [p for p in procs if p.exitcode is not None]
        if dead and results.empty():
            raise TournamentError(
                f"a worker process died (exit code {dead[0].exitcode}) before sending its result"
            )
    return results.get()
