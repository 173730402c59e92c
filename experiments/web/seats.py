"""A table's agents, in a process of their own: nothing an agent does reaches the server.

Every agent of a web table (its bots, and the agents that give hints) is built and asked
in one child process per table, never in the server. The server sends the child the
game's actions so far and the seat to decide for; the child replays them on its own copy
of the game (`SingleGame`, with `spades play`'s replayable seeding: `ask_agent`) and
answers with an action, or a hint. Whatever the agent does wrong ends only that child:

- it raises (even `KeyboardInterrupt` or `SystemExit`), returns an illegal action or
  anything else (the guarded call of `spades_env.agent_calls`): the child answers with
  the one-line reason;
- it ends the process (`os._exit`, a crash), in its constructor or while acting: the
  server reads the end of the pipe;
- it thinks past the decision time limit, or blocks its own alarms: the server stops
  waiting and kills the child's whole process group (its subprocesses too), from outside
  the agent's reach.

Each of these is a `SeatError` naming the seat, the agent and what it did; the table
shows it and the person chooses what to do (`experiments.web.manager`). The next request
starts a new child, which replays the game and rebuilds the agents, so a retried seat
decides as it would have.

Children are forked from a server process that loaded the game's modules once
(multiprocessing's `forkserver`), so a new one is ready in milliseconds and shares that
memory. A child ends with the server (the parent-death signal), and when idle it is
closed by the manager.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from typing import Any

from agents.spec import AgentSpec
from spades_env.process_tree import become_subreaper, end_tree, process_tree

__all__ = ["Game", "SeatError", "SeatProcess", "end_tree", "process_tree"]

#: modules the fork server loads once, so each table's child starts warm
PRELOAD = [
    "experiments.web.seats",
    "experiments.table.session",
    "agents.heuristic.agent",
    "experiments.web.seats_warmup",  # the compiled kernels loaded once, before any fork
]
_ctx_lock = threading.Lock()
_ctx: Any = None


def _context() -> Any:
    global _ctx
    with _ctx_lock:
        if _ctx is None:
            ctx = mp.get_context("forkserver")
            ctx.set_forkserver_preload(PRELOAD)
            _ctx = ctx
    return _ctx


@contextlib.contextmanager
def _without_main() -> Any:
    """Start a child without re-running the server's main module in it (multiprocessing
    would, to find objects pickled from `__main__`; the child needs only this module)."""
    from multiprocessing import spawn

    original = spawn.get_preparation_data

    def prepared(name: str) -> dict[str, Any]:
        data = original(name)
        data.pop("init_main_from_path", None)
        data.pop("init_main_from_name", None)
        return data

    spawn.get_preparation_data = prepared
    try:
        yield
    finally:
        spawn.get_preparation_data = original


def value_unit(agent: Any) -> str:
    """What a hint agent's per-action values measure, for the page: a sampling agent's
    `objective` (`agents.montecarlo.pimc`: margin or team) in points of the hand score,
    averaged over the deals it sampled; else the agent's own scale."""
    objective = getattr(agent, "objective", None)
    if objective == "margin":
        return "points: your team's hand score minus the other team's, averaged over sampled deals"
    if objective == "team":
        return "points: your team's hand score, averaged over sampled deals"
    return "the agent's own scale (higher is better)"


class SeatError(Exception):
    """An agent of a table failed: `seat` (-1 for a hint), `agent` its name, `what` one
    line of what it did."""

    def __init__(self, seat: int, agent: str, what: str) -> None:
        self.seat, self.agent, self.what = seat, agent, what
        super().__init__(f"agent {agent!r}: {what}")


@dataclass(frozen=True)
class Game:
    """What a child needs to replay a table's game: rules, seed, and each seat's agent
    (None for a person's seat)."""

    rules: Any
    seed: int
    agents: tuple[AgentSpec | None, ...]


class SeatProcess:
    """The child process of one table's agents (started on first use, restarted after a
    failure). `ask` is called from a worker thread, one call at a time."""

    def __init__(self, game: Game, timeout: float) -> None:
        self.game, self.timeout = game, timeout
        self.proc: Any = None
        self.conn: Any = None
        self.last_used = time.monotonic()
        self._lock = threading.Lock()

    # ----------------------------------------------------------------- life
    def _start(self) -> None:
        ctx = _context()
        parent, child = ctx.Pipe()
        proc = ctx.Process(target=_child_main, args=(child, self.game), name="spades-seats")
        with _ctx_lock, _without_main():
            proc.start()
        child.close()
        self.proc, self.conn = proc, parent

    def close(self) -> None:
        """End the child and everything it started (its process group)."""
        proc, conn = self.proc, self.conn
        self.proc = self.conn = None
        if conn is not None:
            with contextlib.suppress(OSError):
                conn.close()
        if proc is None:
            return
        if proc.pid is not None:
            end_tree(proc.pid)
        proc.join(5)

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.is_alive()

    def retarget(self, game: Game) -> None:
        """Another line-up (a seat replaced): the next request starts a new child."""
        with self._lock:
            self.game = game
            self.close()

    # ----------------------------------------------------------------- requests
    def ask(
        self, op: str, actions: list[tuple[int, int]], seat: int, spec: AgentSpec | None = None
    ) -> Any:
        """The action (`op` "act") or hint (`op` "hint", `spec` the hint agent) for `seat`
        after `actions`; SeatError when the agent fails in any way."""
        agent = spec if spec is not None else self.game.agents[seat]
        name = agent.display if agent is not None else f"seat {seat}"
        with self._lock:
            self.last_used = time.monotonic()
            if not self.running:
                self.close()
                self._start()
            try:
                self.conn.send((op, actions, seat, spec))
            except (OSError, ValueError):
                return self._ended(seat, name)
            if not self.conn.poll(self.timeout):
                self.close()
                raise SeatError(
                    seat,
                    name,
                    f"did not decide within the decision time limit ({self.timeout:g} s)",
                )
            try:
                reply = self.conn.recv()
            except (EOFError, OSError):
                return self._ended(seat, name)
            except Exception as exc:  # bytes that are no reply (unpickling fails)
                self.close()
                what = f"garbled its process's reply ({type(exc).__name__})"
                raise SeatError(seat, name, what) from None
            if not (isinstance(reply, tuple) and len(reply) == 2 and reply[0] in _STATUSES):
                self.close()  # the next reply could be this one's: never read it
                raise SeatError(seat, name, "garbled its process's reply")
            status, value = reply
            if status == "ok" and not _fits(op, value):
                self.close()
                raise SeatError(seat, name, "garbled its process's reply")
            self.last_used = time.monotonic()
        if status == "ok":
            return value
        self.retarget(self.game)  # an agent that failed may have left its process odd
        raise SeatError(seat, name, str(value))

    def _ended(self, seat: int, name: str) -> Any:
        proc = self.proc
        code = None
        if proc is not None:
            proc.join(2)
            code = proc.exitcode
        self.close()
        how = "ended its process" + (f" (exit status {code})" if code is not None else "")
        raise SeatError(seat, name, how)


_STATUSES = ("ok", "failed")


def _fits(op: str, value: Any) -> bool:
    """An answer of the right shape: an action, or a hint's dict."""
    if op == "act":
        return isinstance(value, int) and not isinstance(value, bool)
    return isinstance(value, dict) and isinstance(value.get("action"), int)


# ----------------------------------------------------------------------------- the child
def _child_main(conn: Any, game: Game) -> None:
    """The child's loop: replay, ask, answer; ends when the server's end closes."""
    with contextlib.suppress(OSError):
        os.setsid()  # its own process group: the server ends it with everything it started
    _die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the server's to handle
    from spades_env.agent_calls import hard_exit, limits

    state = _Replica(game)
    with limits(stdout_to_stderr=True):
        while True:
            try:
                op, actions, seat, spec = conn.recv()
            except (EOFError, OSError):
                hard_exit(0)
            try:
                reply: tuple[str, Any] = ("ok", state.answer(op, actions, seat, spec))
            except BaseException as exc:
                reply = ("failed", _what(exc))
            try:
                conn.send(reply)
            except (OSError, ValueError):
                hard_exit(0)


def _what(exc: BaseException) -> str:
    from spades_env.agent_calls import AgentError, describe_raised

    if isinstance(exc, AgentError):
        return exc.what if exc.where is None else f"{exc.where}: {exc.what}"
    return describe_raised(exc)


def _die_with_parent() -> None:
    """Linux: SIGKILL when the fork server (and so the server) goes; and a subreaper, so
    that whatever an agent starts stays below this process (`end_tree`)."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    become_subreaper()


class _Replica:
    """The child's copy of the game and the agents built so far."""

    def __init__(self, game: Game) -> None:
        self.spec = game
        self.game: Any = None
        self.actions: list[tuple[int, int]] = []
        self.bots: dict[int, Any] = {}
        self.hinters: dict[str, Any] = {}

    def _sync(self, actions: list[tuple[int, int]]) -> None:
        from spades_env.single import SingleGame

        n = len(self.actions)
        if self.game is None or self.actions != actions[:n]:
            self.game, self.actions, n = SingleGame(self.spec.rules, seed=self.spec.seed), [], 0
        for seat, action in actions[n:]:
            if self.game.to_act != seat:
                raise ValueError(
                    f"the server's game and the agents' differ at move {len(self.actions) + 1}"
                )
            self.game.step(action)
            self.actions.append((seat, action))

    def answer(
        self, op: str, actions: list[tuple[int, int]], seat: int, spec: AgentSpec | None
    ) -> Any:
        from agents.registry import make_agent
        from experiments.table.session import ask_agent, bot_seed

        self._sync([(int(s), int(a)) for s, a in actions])
        g = self.game
        if g.done or g.to_act != seat:
            raise ValueError(f"seat {seat} is not to act")
        seed, moves = self.spec.seed, len(self.actions)
        if op == "act":
            agent = self.bots.get(seat)
            if agent is None:
                agent = self.bots[seat] = make_agent(self.spec.agents[seat], bot_seed(seed, seat))
            return ask_agent(g, agent, seat, seed, moves)
        if op != "hint" or spec is None:
            raise ValueError(f"unknown request {op!r}")
        agent = self.hinters.get(spec.text)
        if agent is None:
            if len(self.hinters) >= 4:
                self.hinters.clear()
            agent = self.hinters[spec.text] = make_agent(spec, bot_seed(seed, 99))
        if hasattr(agent, "last_values"):
            agent.last_values = {}
        action = ask_agent(g, agent, seat, seed, moves)
        values = getattr(agent, "last_values", None) or {}
        reasons = getattr(agent, "last_reasons", None)
        if not reasons and hasattr(agent, "explain"):
            from spades_env.observation import seat_view

            reasons = agent.explain(seat_view(g.state))
        return {
            "agent": spec.display,
            "action": int(action),
            "values": {str(int(a)): round(float(v), 3) for a, v in values.items()},
            "unit": value_unit(agent) if values else None,
            "reason": str(reasons[0])[:300] if reasons else None,
        }
