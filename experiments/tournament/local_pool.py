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
exits within `agents.processes.PARENT_CHECK_SECONDS` of the driver's end.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from multiprocessing.connection import wait
from typing import Any

from agents.processes import exit_with_parent
from experiments.tournament.config import TournamentError
from spades_env.agent_calls import AgentError, stuck_error
from spades_env.call_watch import CallBoard, watch_from_outside
from spades_env.process_tree import become_subreaper, end_tree

Rows = list[dict[str, Any]]


def _serve(
    setup: Callable[[Any], Any],
    work: Callable[[Any, int], Rows],
    arg: Any,
    tasks,
    results,
    driver: int | None = None,
    calls: CallBoard | None = None,
) -> None:
    """A worker: `setup(arg)` once, then `work(state, unit)` for each unit until None;
    it exits on its own when the driver dies. Its agent calls are written on `calls`,
    which the driver watches; whatever an agent starts stays below it (a subreaper)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the driver's
    if driver is not None:
        exit_with_parent(driver)
    if calls is not None:
        watch_from_outside(calls)
    become_subreaper()
    try:
        state = setup(arg)
    except BaseException as exc:  # sent to the driver, which raises it
        results.put((None, False, _picklable(exc)))
        return
    while (unit := tasks.get()) is not None:
        results.put((unit, None, os.getpid()))  # started: a death is then put to its unit
        try:
            results.put((unit, True, work(state, unit)))
        except BaseException as exc:
            results.put((unit, False, _picklable(exc)))


def _picklable(exc: BaseException) -> BaseException:
    if isinstance(exc, TournamentError | RuntimeError | AgentError):
        return exc
    return RuntimeError(repr(exc))


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
    relocate: Callable[[AgentError, int | None], AgentError] | None = None,
) -> Iterator[Rows]:
    """`work(setup(arg), u)` for each unit of `units` in `workers` spawned processes,
    yielded in the order of `units`. Closing the iterator early kills the workers.

    A call of an agent still running `GRACE_SECONDS` past its decision time limit (one
    whose agent kept the alarm from stopping it) is ended from here: its worker's whole
    process tree is killed and the unit fails with the `AgentError` of the call,
    `relocate(error, unit)` (the unit's words for its game). At the end every worker
    is ended with everything its agents started."""
    ctx = mp.get_context("spawn")  # not fork: the caller may run threads (a progress bar)
    tasks, results = ctx.SimpleQueue(), ctx.SimpleQueue()
    boards = [CallBoard(ctx) for _ in range(workers)]
    with _sigint_ignored():
        procs = [
            ctx.Process(
                target=_serve,
                args=(setup, work, arg, tasks, results, os.getpid(), board),
                daemon=True,
            )
            for board in boards
        ]
        for p in procs:
            p.start()
    watch = _Watchdog(procs, boards, relocate)
    queued = iter(units)
    try:
        for _, unit in zip(range(2 * workers), queued, strict=False):
            tasks.put(unit)  # two units per worker in flight, the rest as results come
        # a unit's rows or its error; an error is raised when its turn comes, so the units
        # before it are all yielded first (and the error is the first unit's to fail,
        # whatever the number of workers)
        done: dict[int, tuple[bool, Any]] = {}
        playing: dict[int, int] = {}  # worker pid -> the unit it took last
        for unit in units:
            while unit not in done:
                got, ok, payload = _next_result(results, procs, playing, watch)
                if ok is None:  # a worker took a unit
                    playing[payload] = got
                    continue
                done[got] = (ok, payload)
                following = next(queued, None) if ok else None
                if following is not None:
                    tasks.put(following)
            ok, payload = done.pop(unit)
            if not ok:
                raise payload
            yield payload
    finally:
        for p in procs:  # the workers with whatever their agents left running
            if p.pid is not None:
                end_tree(p.pid)
        for p in procs:
            p.join()


class WorkerDiedError(TournamentError):
    """A worker process ended without sending its result; `unit` is the unit it was
    playing (None if it died before taking one)."""

    def __init__(self, message: str, unit: int | None) -> None:
        super().__init__(message)
        self.unit = unit

    def __reduce__(self):
        return (type(self), (self.args[0], self.unit))


class _Watchdog:
    """The driver's watch over its workers' agent calls (`spades_env.call_watch`)."""

    def __init__(self, procs: list, boards: list[CallBoard], relocate) -> None:
        self.procs, self.boards, self.relocate = procs, boards, relocate
        self.ended: set[int] = set()  # pids of the workers ended here

    def stuck(self, playing: dict[int, int]) -> tuple[int | None, AgentError] | None:
        """(unit, error) of a call stuck past its deadline, its worker ended; else None."""
        for p, board in zip(self.procs, self.boards, strict=True):
            if p.pid in self.ended or p.exitcode is not None:
                continue
            overrun = board.overrun()
            if overrun is None:
                continue
            end_tree(p.pid)
            p.join()
            self.ended.add(p.pid)
            unit, err = playing.get(p.pid), stuck_error(overrun)
            return unit, err if self.relocate is None else self.relocate(err, unit)
        return None


def _next_result(
    results, procs: list, playing: dict[int, int], watch: _Watchdog
) -> tuple[Any, bool | None, Any]:
    """The next (unit, ok, rows or error), (unit, None, pid) when a worker takes a unit, or
    a `WorkerDiedError` if a worker died without a result."""
    while results.empty():
        live = [p for p in procs if p.pid not in watch.ended]
        if not live:
            raise WorkerDiedError("every worker process was ended", None)
        wait([p.sentinel for p in live], timeout=0.05)
        stuck = watch.stuck(playing)
        if stuck is not None:
            return stuck[0], False, stuck[1]
        dead = [p for p in live if p.exitcode is not None and p.pid not in watch.ended]
        if dead and results.empty():
            code, unit = dead[0].exitcode, playing.get(dead[0].pid)
            how = (
                f"was killed by {signal.Signals(-code).name}"
                if code < 0 and -code in signal.valid_signals()
                else f"ended (exit code {code})"
            )
            doing = "before taking a unit" if unit is None else f"while playing unit {unit}"
            raise WorkerDiedError(f"a worker process {how} {doing}", unit)
    return results.get()
