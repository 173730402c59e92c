"""Asking an agent for actions: the one guarded call, and what an agent may return.

Anyone's code plays here (an agent is a file named on the command line), so a broken agent
is the common case. Every place that asks an agent to act (the play loop of tournaments,
evaluations and training, `agents.play_loop`; `spades demo`; `spades play`; the
environments' `opponents=`) goes through `call_agent`, and whatever the agent does wrong
ends as one `AgentError`, whose one-line message names the agent, the game and seat, and
what it did:

    agent 'mine', game 3, seat 1 (East): returned 2.7, not a whole number

- **It raises** (anything, even `SystemExit` from `sys.exit`, a `KeyboardInterrupt` of its
  own, or an exception that cannot be pickled back from a worker process): "raised
  ZeroDivisionError: division by zero (bot.py, line 12)". The user's real Ctrl-C (a
  SIGINT that arrives during the call) stays a `KeyboardInterrupt`: "interrupted".
- **It returns something else than one legal action per game**: `checked_actions`, the
  one check of a returned batch: None, strings, booleans, fractions and NaN (whole floats
  are taken, as the environments take them: `spades_env.cards.action_array`), a scalar
  or an array of the wrong shape, an action out of range or illegal in its game (with
  the rule it breaks, RULES.md, and the legal ones). The agent gets a copy of the mask:
  legality is checked against one it never saw.
- **It ends the process** with `os._exit`: refused while it acts (the call raises).
- **It takes too long**: with a decision time limit set (`limits`), a call that takes
  longer is interrupted (SIGALRM, in the main thread), and one that returns late anyway
  is refused. An agent can defeat the alarm (ignore, block or catch it, cancel the
  timer); a watchdog outside the call ends it (`spades_env.call_watch`): a tournament's
  driver ends the worker process, elsewhere the process ends with the one line.
- **It leaves something behind**: a process it started (a fork, a subprocess) that still
  runs when the call returns is ended with everything below it
  (`spades_env.process_tree`); a forked child that returns into the caller's code ends
  there at once. A change to the process (the working folder, the recursion limit,
  signal handlers or mask, a timer, a variable of the environment, stdout) is put back
  and named as the agent's fault.
- **It prints**: with `limits(stdout_to_stderr=True)` (the command line) its output goes to
  stderr, so it cannot mix with a command's results on stdout.

`AgentError` is a `ValueError` (a command prints it as its one line of error) and crosses
a process boundary intact (a worker sends it to its driver).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from spades_env.call_watch import ProcessState, board, sigints, sigints_seen, watch_here
from spades_env.cards import NUM_ACTIONS, ActionValueError, action_array, action_to_str
from spades_env.engine import explain_illegal, seat_name
from spades_env.process_tree import children, children_since, end_children, pid_mark

#: `os._exit` itself, kept before any agent can replace it: what ends a worker or a forked
#: child for real while an agent's call has `os._exit` refused.
hard_exit = os._exit


class AgentError(ValueError):
    """An agent misbehaved (raised, returned a bad action, ended the process, or ran past
    the decision time limit). The message is one line: the agent, where (the game, or a
    caller's description such as a tournament's deal and side), the seat, what it did."""

    def __init__(
        self,
        agent: str,
        what: str,
        game: int | None = None,
        seat: int | None = None,
        where: str | None = None,
    ) -> None:
        self.agent, self.what, self.game, self.seat, self.where = agent, what, game, seat, where
        super().__init__(self._message())

    def _message(self) -> str:
        parts = [f"agent {self.agent!r}"]
        if self.where is not None:  # "" for a caller with a single game to name
            parts += [self.where] if self.where else []
        elif self.game is not None:
            parts.append(f"game {self.game}")
        if self.seat is not None:
            parts.append(f"seat {self.seat} ({seat_name(self.seat)})")
        text = ", ".join(parts) + f": {self.what}"
        return text.replace("\r", "\\r").replace("\n", "\\n")

    def __reduce__(self):  # pickled with its fields (a worker sends it to its driver)
        return (type(self), (self.agent, self.what, self.game, self.seat, self.where))

    def relocated(self, where: str | None = None, agent: str | None = None) -> AgentError:
        """The same fault, described from the caller's side: `where` (e.g. "deal 17, side
        1") in place of the batch's game number, `agent` in place of its name."""
        return AgentError(
            self.agent if agent is None else agent,
            self.what,
            self.game,
            self.seat,
            self.where if where is None else where,
        )


# ----------------------------------------------------------------------------- limits
@dataclass(frozen=True)
class Limits:
    """How agents are called in this process: `timeout` seconds per call (None: no
    limit), and whether what they print goes to stderr."""

    timeout: float | None = None
    stdout_to_stderr: bool = False
    #: how the caller's user changes the limit, added to the error (a flag's name)
    timeout_hint: str = ""
    #: what a watchdog does with the error of a call it must end with the process, just
    #: before (a command writes its line of error; default: the error, to stderr)
    on_stuck: Callable[[AgentError], None] | None = None

    def __reduce__(self):  # sent to a worker without `on_stuck`: its watchdog is elsewhere
        return (type(self), (self.timeout, self.stdout_to_stderr, self.timeout_hint))


_limits = Limits()


def current_limits() -> Limits:
    return _limits


@contextlib.contextmanager
def limits(**changes: Any) -> Iterator[Limits]:
    """Set the limits (`Limits` fields) for the block; `timeout` 0 or None: no limit."""
    global _limits
    if changes.get("timeout") is not None:
        timeout = float(changes["timeout"])
        if not timeout >= 0:
            raise ValueError(f"a decision time limit must be 0 (none) or more; got {timeout}")
        changes["timeout"] = timeout or None
    previous = _limits
    _limits = replace(previous, **changes)
    try:
        yield _limits
    finally:
        _limits = previous


def set_limits(new: Limits) -> None:
    """Set this process's limits (a worker process takes its driver's)."""
    global _limits
    _limits = new


class _DecisionTimeout(BaseException):
    """Raised into an agent's call by the alarm: a BaseException, so that an agent's own
    `except Exception` does not swallow it."""


class _ProcessExit(BaseException):
    """What `os._exit` raises while an agent acts."""

    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _refused_exit(code: int = 0) -> None:
    raise _ProcessExit(code)


def _alarm(signum, frame) -> None:
    raise _DecisionTimeout


#: "no limit given": the process's `limits` apply
_NOT_SET = object()

#: Guarded calls in progress in this process; a fork during one marks the child
_depth = [0]
#: whether any agent was called in this process (`leave_no_threads`)
_called = [False]
_forked_child = [False]


def _after_fork_in_child() -> None:
    if _depth[0]:
        _forked_child[0] = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


# ----------------------------------------------------------------------------- calling
def agent_name(agent: Any) -> str:
    """What an error calls an agent: its `name`, else (unnamed, or BaseAgent's default
    "agent") its class's name."""
    name = getattr(agent, "name", None)
    return name if isinstance(name, str) and name not in ("", "agent") else type(agent).__name__


def call_agent(
    agent: Any,
    view: Any,
    obs: npt.NDArray[np.int16] | None,
    mask: npt.NDArray[np.bool_],
    *,
    name: str | None = None,
    games: Sequence[int] | npt.NDArray[np.integer] | None = None,
    seats: Sequence[int] | npt.NDArray[np.integer] | None = None,
    state: Any = None,
) -> npt.NDArray[np.int64]:
    """`agent.act(view, obs, mask)`, guarded and checked: (B,) int64 legal actions, or an
    `AgentError` naming the agent (`name`, default `agent_name`), the game and the seat.

    games: (B,) the rows' game numbers as errors name them (default 0..B-1); seats: (B,)
    the seats to act (an error names the seat only when given). state: the engine
    `State` whose games `games` are, to name the rule an illegal action breaks."""
    name = agent_name(agent) if name is None else name
    first_game = (0 if games is None else int(games[0])) if mask.shape[0] else None
    first_seat = None if seats is None or not len(seats) else int(seats[0])
    own = getattr(agent, "decision_timeout", _NOT_SET)  # an agent's own limit (None: none)
    given = mask.copy()  # the agent's to change: legality is checked against `mask`
    raw = guarded(
        lambda: agent.act(view, obs, given),
        name, first_game, first_seat,
        timeout=own,
    )  # fmt: skip
    # the common case, one legal int64 action per row, checked in three array operations
    common = type(raw) is np.ndarray and raw.dtype == np.int64 and raw.shape == mask.shape[:1]
    if common and (
        not raw.size
        or (raw.view(np.uint64).max() < NUM_ACTIONS and mask[_rows(raw.size), raw].all())
    ):
        return raw
    return checked_actions(raw, mask, agent=name, games=games, seats=seats, state=state)


_ROWS: dict[int, npt.NDArray[np.int64]] = {}


def _rows(n: int) -> npt.NDArray[np.int64]:
    """np.arange(n), kept (a batch size repeats at every step)."""
    rows = _ROWS.get(n)
    if rows is None:
        rows = _ROWS[n] = np.arange(n)
    return rows


def guarded(
    fn: Callable[[], Any],
    name: str,
    game: int | None = None,
    seat: int | None = None,
    passthrough: tuple[type[BaseException], ...] = (),
    timeout: Any = _NOT_SET,
) -> Any:
    """`fn()`, a call into an agent's code (its `act`, its constructor), with whatever it
    does wrong turned into an `AgentError` naming `name`, `game` and `seat`: an exception
    (SystemExit and its own KeyboardInterrupt too), os._exit, the decision time limit, a
    change to its process it leaves behind (`spades_env.call_watch.ProcessState`); a
    forked child ends here, and every process the call started and left running is ended
    with everything below it (`spades_env.process_tree`). Exceptions of the `passthrough`
    types are raised as they are; the user's own Ctrl-C stays a KeyboardInterrupt.
    `timeout`: the limit of this call (default the process's `limits`; an agent class may
    set its own `decision_timeout`, None for none, as one whose batch is many network
    requests)."""
    now = _limits
    if timeout is not _NOT_SET:
        now = replace(now, timeout=float(timeout) or None if timeout is not None else None)
    main = threading.current_thread() is threading.main_thread()
    alarm = main and now.timeout is not None and hasattr(signal, "setitimer")
    previous = None
    mark = pid_mark()
    sigint = sigints() if main else None
    before = ProcessState() if main else None
    watched = now.timeout is not None and _depth[0] == 0
    if watched:
        watch_here(_stuck_here)
        board().start(now.timeout, name, game, seat, mark)
    _called[0] = True
    _depth[0] += 1
    failed = True
    swapped = False
    try:
        if main:
            os._exit = _refused_exit
        if alarm:
            previous = signal.signal(signal.SIGALRM, _alarm)
            signal.setitimer(signal.ITIMER_REAL, now.timeout)
        if now.stdout_to_stderr:
            target = sys.stderr
            with contextlib.redirect_stdout(target):
                out = fn()
                swapped = sys.stdout is not target  # undone by the redirect's end: named
        else:
            out = fn()
        failed = False
        return out
    except _DecisionTimeout:
        raise AgentError(name, _took_too_long(now), game, seat) from None
    except _ProcessExit as exc:
        what = f"called os._exit({exc.code}) (ending the process is not allowed)"
        raise AgentError(name, what, game, seat) from None
    except SystemExit as exc:
        what = f"called sys.exit({exc.code!r}) (ending the process is not allowed)"
        raise AgentError(name, what, game, seat) from None
    except KeyboardInterrupt as exc:
        if sigint is not None and sigints() != sigint:
            raise  # the user's Ctrl-C
        raise AgentError(name, describe_raised(exc), game, seat) from None
    except BaseException as exc:
        if isinstance(exc, passthrough):
            raise
        raise AgentError(name, describe_raised(exc), game, seat) from None
    finally:
        if _forked_child[0]:  # the child of a fork in the agent: only the parent plays
            hard_exit(0)
        _depth[0] -= 1
        late = watched and time.monotonic() > board().clock[0]  # the alarm swallowed
        if watched:
            board().end()
        if alarm:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        if main:
            os._exit = hard_exit
        left = children_since(mark, this_thread=True)
        if left:  # what the call started and left running ends with it
            end_children(left)
        changed = None
        if before is not None:
            user_sigint = sigint is not None and sigints_seen() != sigint
            changed = before.changed(timer_is_ours=alarm, user_sigint=user_sigint)
        if swapped and changed is None:
            changed = ProcessState.words(["sys.stdout or sys.stderr"])
        if late and not failed:
            raise AgentError(name, _took_too_long(now), game, seat)
        if changed is not None and not failed:
            raise AgentError(name, changed, game, seat)


def _took_too_long(now: Limits, how: str = "was stopped") -> str:
    hint = f", {now.timeout_hint}" if now.timeout_hint else ""
    return f"took more than {now.timeout:g} s to act (the decision time limit{hint}) and {how}"


def stuck_error(stuck: tuple[str, float, int | None, int | None]) -> AgentError:
    """The `AgentError` of a call that a watchdog found stuck past its deadline
    (`spades_env.call_watch.CallBoard.overrun`) and ended from outside."""
    name, timeout, game, seat = stuck
    how = "was stopped from outside (it kept the time limit's alarm from stopping it)"
    return AgentError(name, _took_too_long(replace(_limits, timeout=timeout), how), game, seat)


#: how the callers in progress in this process name a game of their batch (`described`)
_described: list[Callable[[int], str]] = []


@contextlib.contextmanager
def described(where: Callable[[int], str]) -> Iterator[None]:
    """For the block: `where(game)` is how an error of a call that a watchdog ends names
    the game of its batch (e.g. "deal 17, side 1"), as the caller itself would relocate
    the error of a call that returns (`AgentError.relocated`)."""
    _described.append(where)
    try:
        yield
    finally:
        _described.pop()


def _stuck_here(stuck: tuple[str, float, int | None, int | None]) -> None:
    """The watchdog thread's last resort (`spades_env.call_watch.watch_here`): an agent
    still in its call past the deadline, in this process. It cannot be stopped here: the
    one line naming it is written (`Limits.on_stuck`, default to stderr), what the call
    started is ended, and the process ends with exit status 2."""
    err = stuck_error(stuck)
    if _described and err.game is not None:
        with contextlib.suppress(Exception):
            err = err.relocated(_described[-1](err.game))
    try:
        (_limits.on_stuck or _write_stuck)(err)
    finally:
        end_children(children_since(board().mark()))
        hard_exit(2)


def _write_stuck(err: AgentError) -> None:
    os.write(2, f"{err}; ending the process\n".encode("utf-8", "replace"))


def leave_no_threads(code: int) -> int:
    """At the end of a command that called agents in its own process: `code`, after
    ending every process still below it; where a thread an agent started is still running
    (Python waits for such threads before it exits), the output is flushed and the
    process ends at once with `code`."""
    if not _called[0]:
        return code
    end_children(children())
    main = threading.main_thread()
    if any(t is not main and not t.daemon and t.is_alive() for t in threading.enumerate()):
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        hard_exit(code)
    return code


def describe_raised(exc: BaseException) -> str:
    """'raised TypeError: message (file.py, line N)': the exception and the innermost
    frame of the agent's code, on one line (no traceback)."""
    try:
        text = str(exc)
    except Exception:  # an exception whose __str__ raises
        text = "<unprintable>"
    if len(text) > 300:
        text = text[:300] + "..."
    where = ""
    frames = traceback.extract_tb(exc.__traceback__)
    if frames:
        last = frames[-1]
        where = f" ({os.path.basename(last.filename)}, line {last.lineno})"
    return f"raised {type(exc).__name__}" + (f": {text}" if text else "") + where


def checked_actions(
    actions: Any,
    mask: npt.NDArray[np.bool_],
    *,
    agent: str,
    games: Sequence[int] | npt.NDArray[np.integer] | None = None,
    seats: Sequence[int] | npt.NDArray[np.integer] | None = None,
    state: Any = None,
) -> npt.NDArray[np.int64]:
    """What an agent returned for a batch of `mask.shape[0]` games, as (B,) int64 legal
    actions, or an `AgentError` naming the first bad row (see `call_agent` for the rest)."""
    b = int(mask.shape[0])
    games = np.arange(b) if games is None else np.asarray(games)

    def fail(row: int | None, what: str) -> AgentError:
        game = int(games[row]) if row is not None and row < len(games) else None
        seat = (
            int(seats[row]) if seats is not None and row is not None and row < len(seats) else None
        )
        return AgentError(agent, what, game, seat)

    first = 0 if b else None
    expected = f"one action per game, a ({b},) integer array"
    if actions is None:
        raise fail(first, f"returned None; expected {expected}")
    try:
        arr = np.asarray(actions)
    except Exception:  # e.g. a ragged list
        raise fail(first, f"returned {_shown(actions)}; expected {expected}") from None
    if arr.dtype.kind in "USb" or (arr.dtype.kind == "O" and _has_text(arr)):
        raise fail(first, f"returned {_shown(actions)}; expected {expected}")
    if arr.ndim != 1 or arr.shape[0] != b:
        what = "a single action" if arr.ndim == 0 else f"an array of shape {arr.shape}"
        raise fail(first, f"returned {what} for {b} game(s); expected {expected}")
    try:
        out = action_array(arr)  # whole numbers only, as the environments take them
    except ActionValueError:
        with np.errstate(invalid="ignore"):
            flat = arr.astype(object)
        row = next((i for i, a in enumerate(flat) if not _whole(a)), 0)
        raise fail(row, f"returned {_shown(arr[row])}, not a whole number") from None
    bad = np.flatnonzero((out < 0) | (out >= NUM_ACTIONS))
    if bad.size:
        row = int(bad[0])
        raise fail(row, f"returned {_shown(arr[row])}, not an action (0..{NUM_ACTIONS - 1})")
    illegal = np.flatnonzero(~mask[np.arange(b), out])
    if illegal.size:
        row = int(illegal[0])
        raise fail(row, _illegal(int(out[row]), mask[row], state, games, row))
    return out


def _illegal(action: int, legal_row: npt.NDArray[np.bool_], state: Any, games, row: int) -> str:
    """'2S is illegal: <the rule>; legal: ...', the engine's own words when `state` is given."""
    legal = np.flatnonzero(legal_row).tolist()
    reason = "not among the legal actions"
    if state is not None:
        with contextlib.suppress(Exception):  # a state not the engine's: the mask alone
            reason = explain_illegal(state, int(games[row]), action)
    shown = ", ".join(action_to_str(a) for a in legal)
    return f"{action_to_str(action)} is illegal: {reason}; legal: {shown}"


def _whole(value: Any) -> bool:
    try:
        return float(value).is_integer()
    except (TypeError, ValueError, OverflowError):
        return False


def _has_text(arr: np.ndarray) -> bool:
    return any(isinstance(a, str | bytes | bool | np.bool_) for a in arr.reshape(-1).tolist())


def _shown(value: Any) -> str:
    """A returned value as an error shows it: short, on one line."""
    if isinstance(value, np.generic):
        value = value.item()
    text = repr(value) if not isinstance(value, np.ndarray) else np.array2string(value)
    text = " ".join(text.split())
    kind = type(value).__name__
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{text} ({kind})" if isinstance(value, np.ndarray | list | tuple) else text
