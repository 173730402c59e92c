"""What the guarded call (`spades_env.agent_calls.guarded`) keeps out of an agent's reach:
the clock of its time limit, the state of the process it runs in, the user's Ctrl-C.

**The clock.** The decision time limit's alarm (SIGALRM) is the agent's to defeat: it can
ignore the signal, cancel the timer, block it, install its own handler, or catch the
exception and sleep on. So every call with a limit is also written on a `CallBoard` (its
deadline, the agent, the game and the seat), which a watchdog reads from outside the call:

- in a tournament's worker process, the board is shared memory that the driver reads
  (`experiments.tournament.local_pool`); the driver ends the worker's whole process tree
  and names the agent;
- elsewhere (one worker, `demo`, `play`, an environment's `opponents=`) a thread of this
  process reads it (`watch_here`); an agent still in its call `GRACE_SECONDS` after its
  deadline cannot be stopped inside the process, so the thread says so in one line
  naming the agent (`Limits.on_stuck`), ends what the agent started, and ends the
  process with exit status 2. A thread cannot stop compiled code that holds the
  interpreter's lock for ever; a worker process can always be ended.

**The process.** `ProcessState` is what one call may not leave changed: the working
folder, the recursion limit, the signal handlers and mask, a running timer, the
environment's variables, `sys.stdout`/`sys.stderr`. A change is put back, and named as the
agent's (`changed`), so that no later call, nor the command, fails for it. A variable a
call adds to the environment is kept: libraries set their own on first import (torch
sets its compile cache's folder), and no variable the process had is touched by it.

**Ctrl-C.** `sigints` counts the real SIGINTs while an agent acts, so that the
guarded call tells the user's Ctrl-C (still "interrupted") from a `KeyboardInterrupt`
the agent raised itself (an agent error like any other).
"""

from __future__ import annotations

import _signal  # the signal module's functions without its enum conversions (per call)
import contextlib
import ctypes
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from typing import Any

#: seconds past a call's deadline before a watchdog ends it from outside: the alarm
#: inside the call is given that long to stop an agent that lets it
GRACE_SECONDS = 1.0

#: seconds between a watchdog's looks at the board
WATCH_SECONDS = 0.1

_NAME_BYTES = 240

#: kept before any agent can replace them
_monotonic = time.monotonic
_sleep = time.sleep


class CallBoard:
    """The guarded call in progress in one process, for a watchdog: its deadline
    (`time.monotonic`, the same clock in every process of the machine), time limit, game,
    seat and agent. `shared` (a multiprocessing context): in shared memory, to pass to a
    worker process that the creator watches."""

    def __init__(self, shared: Any = None) -> None:
        if shared is None:
            self.clock: Any = (ctypes.c_double * 5)()
            self.name: Any = ctypes.create_string_buffer(_NAME_BYTES)
        else:
            self.clock = shared.RawArray("d", 5)  # deadline, limit, game, seat, pid mark
            self.name = shared.RawArray("c", _NAME_BYTES)

    def start(self, limit: float, name: str, game: int | None, seat: int | None, mark) -> None:
        self.name.value = name.encode("utf-8", "replace")[: _NAME_BYTES - 1].replace(b"\0", b"?")
        self.clock[1] = limit
        self.clock[2] = -1.0 if game is None else game
        self.clock[3] = -1.0 if seat is None else seat
        self.clock[4] = -1.0 if mark is None else mark
        self.clock[0] = _monotonic() + limit

    def end(self) -> None:
        self.clock[0] = 0.0

    def overrun(
        self, grace: float = GRACE_SECONDS
    ) -> tuple[str, float, int | None, int | None] | None:
        """(agent, limit, game, seat) of a call still running `grace` seconds past its
        deadline, else None."""
        deadline = self.clock[0]
        if not deadline or _monotonic() < deadline + grace:
            return None
        game, seat = int(self.clock[2]), int(self.clock[3])
        name = self.name.value.decode("utf-8", "replace")
        return name, self.clock[1], None if game < 0 else game, None if seat < 0 else seat

    def mark(self) -> int | None:
        mark = int(self.clock[4])
        return None if mark < 0 else mark


# ----------------------------------------------------------------------------- the board
_board = [CallBoard()]
_outside = [False]  # the board is read by another process
_watcher: list[threading.Thread] = []
_on_stuck: list[Callable[[tuple], None]] = []


def board() -> CallBoard:
    return _board[0]


def watch_from_outside(shared_board: CallBoard) -> None:
    """In a worker process: its calls are written on `shared_board`, which the process
    that started it watches (no watchdog thread here)."""
    _board[0], _outside[0] = shared_board, True


def watch_here(on_stuck: Callable[[tuple], None]) -> None:
    """Start this process's watchdog thread (once), unless another process watches:
    `on_stuck(overrun)` is called with `CallBoard.overrun`'s answer when a call is stuck,
    and must end the process."""
    if _outside[0]:
        return
    _on_stuck[:] = [on_stuck]
    if _watcher and _watcher[0].is_alive():
        return
    thread = threading.Thread(target=_watch, name="agent-call-watchdog", daemon=True)
    _watcher[:] = [thread]
    thread.start()


def _watch() -> None:
    while True:
        _sleep(WATCH_SECONDS)
        stuck = _board[0].overrun()
        if stuck is not None:
            _on_stuck[0](stuck)


# ----------------------------------------------------------------------------- Ctrl-C
_sigints = [0]  # real SIGINTs seen by `_Recorder`s in this process


class _Recorder:
    """A SIGINT handler that counts the signal, then runs the handler it wraps."""

    def __init__(self, wrapped: Any) -> None:
        self.wrapped = wrapped

    def __call__(self, signum: int, frame: Any) -> Any:
        _sigints[0] += 1
        return self.wrapped(signum, frame)


def sigints_seen() -> int:
    """The count of real SIGINTs so far (`sigints`), without wrapping any handler."""
    return _sigints[0]


def sigints() -> int:
    """For a call in the main thread: the count of real SIGINTs so far. A call whose
    count moved was interrupted by the user's Ctrl-C, not by a `KeyboardInterrupt` the
    agent raised. The handler in place (the user's Ctrl-C handling) is wrapped once, and
    again only when someone replaces it; where SIGINT is ignored, or not Python's to
    handle, nothing is wrapped (no SIGINT reaches the call)."""
    handler = _signal.getsignal(signal.SIGINT)
    if callable(handler) and type(handler) is not _Recorder:
        _signal.signal(signal.SIGINT, _Recorder(handler))
    return _sigints[0]


# ----------------------------------------------------------------------------- process state
#: the signals whose handlers a call must leave as it found them
SIGNALS = tuple(
    getattr(signal, n)
    for n in ("SIGINT", "SIGTERM", "SIGHUP", "SIGCHLD", "SIGPIPE", "SIGALRM", "SIGUSR1", "SIGUSR2")
    if hasattr(signal, n)
)
_env_seen: list[dict] = [{}]


def _environ() -> Any:
    return getattr(os.environ, "_data", None)


class ProcessState:
    """What one call into an agent may not leave changed in its process (main thread)."""

    def __init__(self) -> None:
        try:
            self.cwd: str | None = os.getcwd()
        except OSError:  # the folder is gone: nothing to put back
            self.cwd = None
        self.recursion = sys.getrecursionlimit()
        self.handlers = [_signal.getsignal(s) for s in SIGNALS]
        self.sigmask = _signal.pthread_sigmask(signal.SIG_BLOCK, ())
        env = _environ()
        if env is not None and env != _env_seen[0]:  # the caller's own change: taken
            _env_seen[0] = dict(env)
        self.stdout, self.stderr = sys.stdout, sys.stderr

    def changed(self, timer_is_ours: bool, user_sigint: bool = False) -> str | None:
        """What the call changed, put back, in words (None: nothing). `timer_is_ours`:
        the call ran under the time limit's alarm, which the caller puts back itself.
        `user_sigint`: the user's Ctrl-C arrived during the call, and the caller's own
        SIGINT handler ran (and may have changed SIGINT's handling: not the agent's)."""
        what: list[str] = []
        cwd = _cwd()
        if self.cwd is not None and cwd != self.cwd:
            what.append(f"the working folder ({self.cwd} -> {cwd})")
            with contextlib.suppress(OSError):
                os.chdir(self.cwd)
        if sys.getrecursionlimit() != self.recursion:
            what.append(f"the recursion limit ({self.recursion} -> {sys.getrecursionlimit()})")
            sys.setrecursionlimit(self.recursion)
        for sig, before in zip(SIGNALS, self.handlers, strict=True):
            if user_sigint and sig == signal.SIGINT:
                continue
            now = _signal.getsignal(sig)
            if now != before and before is not None:
                what.append(f"the handler of {signal.Signals(sig).name}")
                _signal.signal(sig, before)
        mask = _signal.pthread_sigmask(signal.SIG_BLOCK, ())
        if mask != self.sigmask:
            names = ", ".join(sorted(signal.Signals(s).name for s in mask ^ self.sigmask))
            what.append(f"the blocked signals ({names})")
            _signal.pthread_sigmask(signal.SIG_SETMASK, self.sigmask)
        if not timer_is_ours and _signal.getitimer(signal.ITIMER_REAL) != (0.0, 0.0):
            what.append("a running timer (ITIMER_REAL)")
            _signal.setitimer(signal.ITIMER_REAL, 0)
        env = _environ()
        if env is not None and env != _env_seen[0]:
            seen = _env_seen[0]
            keys = sorted(k for k in seen if env.get(k) != seen[k])  # changed or removed
            if keys:
                shown = ", ".join(os.fsdecode(k) for k in keys[:3])
                what.append(f"the environment ({shown}{', ...' if len(keys) > 3 else ''})")
                for k in keys:
                    os.environ[os.fsdecode(k)] = os.fsdecode(seen[k])
            _env_seen[0] = dict(env)  # a variable added is kept: a library's own setting
        if sys.stdout is not self.stdout or sys.stderr is not self.stderr:
            what.append("sys.stdout or sys.stderr")
            sys.stdout, sys.stderr = self.stdout, self.stderr
        return self.words(what) if what else None

    @staticmethod
    def words(what: list[str]) -> str:
        """The error's words for the changes `what` (put back)."""
        return (
            f"changed {', '.join(what)} and left it so (put back; an agent must leave its "
            "process as it found it)"
        )


def _cwd() -> str | None:
    try:
        return os.getcwd()
    except OSError:
        return None
