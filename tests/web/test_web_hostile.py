"""Hostile agents as web seats, through a real `spades serve` subprocess.

Every misbehaviour of the tournament's hostile agents (tests/faults/hostile_agents.py) and
of the web-only ones (web_hostile_agents.py: KeyboardInterrupt, SIGALRM ignored, os._exit
in the constructor, a subprocess or a forked child left hanging, a self-inflicted
SIGKILL) sits in a bot seat of a table whose person plays from a websocket. Each must:

- show the person one `failure` naming the seat, the agent as the server lists it, and
  one line of what it did (the tournament's fragment; for a hang the decision time limit);
- leave the server running and serving another table;
- fail again on `retry` (the faults are deterministic), and play on to the end of the hand
  once `replace`d by `heuristic` (the hand's row in ROOT/web/<id>/log.jsonl);
- leave no process of the table's agents behind (its own, a subprocess, a forked child).

While a bot hangs a new connection to the table gets its state at once, and a ping its
pong. An agent that prints or forks plays on. One server lists every hostile agent (each
`h-CLASS`); the default run tries a few faults, `-m slow` the whole matrix.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import default_and_slow
from web_helpers import Seat, Server, token_of

pytest.importorskip("starlette")
pytest.importorskip("websockets")
pytestmark = [pytest.mark.cli]

from web_hostile_agents import SPAWNING, WEB_FAULTS, _tournament_hostile

HOSTILE = Path(__file__).resolve().parents[1] / "faults" / "hostile_agents.py"
WEB_HOSTILE = Path(__file__).resolve().with_name("web_hostile_agents.py")
_base = _tournament_hostile()
FAULTS: dict[str, str] = _base.FAULTS
HARMLESS: tuple[str, ...] = _base.HARMLESS
TIMEOUT = 3  # --decision-timeout
H_SEAT, ME = 3, 2  # the hostile agent's seat, the person's
WAIT = 60  # the longest any one step may take (a guard against hanging, not a speed check)


def name_of(fault: str) -> str:
    """The hostile agent's name in the server's catalogue."""
    return f"h-{fault}"


def agent_list() -> str:
    listed = [f"{name_of(f)}={HOSTILE}:{f}" for f in [*FAULTS, *HARMLESS]]
    listed += [f"{name_of(f)}={WEB_HOSTILE}:{f}" for f in WEB_FAULTS]
    return ",".join(listed)


@contextlib.contextmanager
def environ(**extra: str):
    """os.environ with `extra` for the block (a `Server` started in it inherits them)."""
    saved = {k: os.environ.get(k) for k in extra}
    os.environ.update(extra)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


class HostileServer:
    """The module's server and where its agents record their processes."""

    def __init__(self, server: Server, pids: Path) -> None:
        self.server, self.pids = server, pids

    def alive(self) -> None:
        assert self.server.proc.poll() is None, "spades serve ended:\n" + self.output()

    def output(self) -> str:
        return "".join(self.server.output[-40:])

    def new_table(self, agents: dict[int, str]) -> tuple[str, Seat]:
        """A table with the person at seat ME, `agents` by seat, heuristic elsewhere;
        (its id, the person's connection; its `token` set). Waits out the new-table rate
        limit."""
        seats = [
            {"kind": "human", "name": "me"}
            if s == ME
            else {"kind": "agent", "name": agents.get(s, "heuristic")}
            for s in range(4)
        ]
        deadline = time.monotonic() + WAIT
        while True:
            status, data = self.server.post("/api/tables", {"seats": seats})
            if status != 429 or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert status == 200, data
        token = token_of(data["links"][0]["link"])
        seat = Seat(self.server, token)
        seat.token = token
        return data["table"], seat


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    pids = tmp_path_factory.mktemp("pids")
    args = ["--pace", "0", "--no-review", "--decision-timeout", str(TIMEOUT)]
    with environ(HOSTILE_AFTER="0", WEB_HOSTILE_PIDS=str(pids)):
        server = Server(root, *args, "--agents", agent_list())
    yield HostileServer(server, pids)
    server.stop()
    assert server.proc.returncode is not None
    left = leftover(pids, "", grace=10)
    assert not left, f"processes of the agents outlived the server: {left}"


class Other:
    """Another table, heuristic bots only, whose person plays a few moves in each case:
    the proof that the server still serves its other tables."""

    def __init__(self, hostile: HostileServer) -> None:
        self.hostile = hostile
        self.table, self.me = hostile.new_table({})

    def plays_on(self, rounds: int = 2) -> None:
        """The person plays on for `rounds` rounds of moves, the states arriving."""
        self.hostile.alive()
        self.me.send({"type": "state"})
        state = play(self.me, lambda s: True)
        if state["game_over"]:
            self.me.close()
            self.table, self.me = self.hostile.new_table({})
            state = play(self.me, lambda s: True)
        start = state["moves"]
        state = play(self.me, lambda s: s["moves"] >= start + 4 * rounds or s["game_over"])
        assert state["failure"] is None, state["failure"]


@pytest.fixture(scope="module")
def other(hostile):
    table = Other(hostile)
    yield table
    table.me.close()


# ----------------------------------------------------------------------------- helpers
def play(seat: Seat, until, timeout: float = WAIT) -> dict[str, Any]:
    """Read the seat's states, playing its first legal action at each of its turns (while
    no seat has failed; once per move, across calls), until `until(state)`; that state.
    Bounded by `timeout`."""
    deadline = time.monotonic() + timeout
    last: dict[str, Any] | None = None
    while True:
        left = deadline - time.monotonic()
        try:
            assert left > 0
            state = seat.next("state", timeout=left)
        except (AssertionError, TimeoutError):
            shown = None if last is None else {k: last[k] for k in ("moves", "to_act", "failure")}
            raise AssertionError(
                f"no awaited state within {timeout} s; the last: {shown}"
            ) from None
        last = state
        mine = state["your_turn"] and state["failure"] is None
        if mine and state["moves"] != getattr(seat, "acted", -1):
            action = state["legal"][0]["action"]
            seat.send({"type": "act", "action": action, "move": state["moves"]})
            seat.acted = state["moves"]
        if until(state):
            return state


def failed(state: dict[str, Any]) -> bool:
    return state["failure"] is not None


def _is_alive(pid: int) -> bool:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return False
    return fields[0] != "Z"  # a zombie has ended (its parent has yet to reap it)


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode().strip()
    except OSError:
        return "?"


def recorded(pids: Path, kind: str) -> list[int]:
    """The processes web_hostile_agents recorded for class `kind` ("" for every class)."""
    return [int(p.suffix[1:]) for p in pids.iterdir() if kind in ("", p.stem)]


def leftover(pids: Path, kind: str, grace: float) -> list[str]:
    """The recorded processes of `kind` still running after `grace` seconds at most."""
    deadline = time.monotonic() + grace
    while True:
        alive = [p for p in recorded(pids, kind) if _is_alive(p)]
        if not alive or time.monotonic() > deadline:
            return [f"{p}: {_cmdline(p)}" for p in alive]
        time.sleep(0.1)


def check_failure(state: dict[str, Any], fault: str, fragment: str) -> dict[str, Any]:
    failure = state["failure"]
    assert failure is not None
    assert failure["seat"] == H_SEAT, failure
    assert failure["agent"] == name_of(fault), failure
    what = failure["what"]
    assert isinstance(what, str) and what and "\n" not in what and "\r" not in what, failure
    assert "Traceback" not in what, failure
    assert fragment in what, failure
    assert state["to_act"] == H_SEAT and not state["game_over"], state["to_act"]
    return failure


def fails_alone_then_retry_and_replace(
    hostile: HostileServer,
    other: Other,
    fault: str,
    fragment: str,
    spawns: bool = False,
    wait: float = WAIT + TIMEOUT,
) -> None:
    """The case of every fault: the seat fails (one line, the server and another table
    unharmed), fails again on retry, and once replaced the hand plays to its end."""
    hostile.alive()
    table, me = hostile.new_table({H_SEAT: name_of(fault)})
    try:
        started = time.monotonic()
        state = play(me, failed, timeout=wait)
        first = check_failure(state, fault, fragment)
        took = time.monotonic() - started
        moves = state["moves"]
        if spawns:
            assert recorded(hostile.pids, fault), "the agent recorded no process"
        left = leftover(hostile.pids, fault, grace=5)
        assert not left, f"after the failure, processes of the agents were left: {left}"

        other.plays_on()  # the server serves another table

        me.send({"type": "seat", "do": "retry"})
        state = play(me, lambda s: not failed(s))  # the retry's own view: cleared
        assert state["moves"] == moves
        state = play(me, failed, timeout=WAIT + TIMEOUT)
        again = check_failure(state, fault, fragment)
        assert again == first, (first, again)
        assert state["moves"] == moves
        left = leftover(hostile.pids, fault, grace=5)
        assert not left, f"after the retry's failure, processes were left: {left}"

        me.send({"type": "seat", "do": "replace", "agent": "heuristic"})
        state = play(me, lambda s: bool(s["sheet"]) or failed(s))
        assert state["failure"] is None, state["failure"]
        assert state["players"][H_SEAT]["name"] == "heuristic", state["players"]
        other.plays_on(1)
    finally:
        me.close()
    from experiments.tournament.results_log import read_rows

    rows = read_rows(hostile.server.root / "web" / table / "log.jsonl")
    assert len(rows) >= 1 and rows[0]["seats"][H_SEAT] == "heuristic", rows[:1]
    game = json.loads((hostile.server.root / "web" / table / "game.json").read_text())
    assert [r["seat"] for r in game["replaced"]] == [H_SEAT], game["replaced"]
    hostile.alive()
    print(f"{fault}: failed after {took:.1f} s: {first['what']}")


# ----------------------------------------------------------------------------- the cases
TOURNAMENT_DEFAULT = ["OsExit", "Hang", "Illegal", "RaiseInInit"]


@pytest.mark.parametrize(
    "fault",
    default_and_slow(TOURNAMENT_DEFAULT, [f for f in FAULTS if f not in TOURNAMENT_DEFAULT]),
)
def test_a_hostile_seat_fails_alone_and_is_retried_then_replaced(fault, hostile, other):
    fails_alone_then_retry_and_replace(hostile, other, fault, FAULTS[fault])


WEB_DEFAULT = ["Interrupt", "IgnoresAlarm", "SpawnsAndHangs"]


@pytest.mark.parametrize(
    "fault",
    default_and_slow(WEB_DEFAULT, [f for f in WEB_FAULTS if f not in WEB_DEFAULT]),
)
def test_a_web_hostile_seat_fails_alone_and_leaves_no_process(fault, hostile, other):
    fails_alone_then_retry_and_replace(
        hostile, other, fault, WEB_FAULTS[fault], spawns=fault in SPAWNING
    )


def test_while_a_bot_hangs_a_new_connection_gets_its_state_and_a_pong_at_once(hostile):
    _table, me = hostile.new_table({H_SEAT: name_of("Hang")})
    late = None
    try:
        # the hung bot's turn: the state that shows it to act, no failure yet
        play(me, lambda s: s["to_act"] == H_SEAT and not failed(s), timeout=WAIT)
        thinking = time.monotonic()
        late = Seat(hostile.server, me.token)
        first = late.next("state", timeout=TIMEOUT)
        took = time.monotonic() - thinking
        assert took < 2, f"the new connection's first state took {took:.2f} s"
        assert first["failure"] is None and first["to_act"] == H_SEAT  # still thinking
        for seat in (late, me):
            asked = time.monotonic()
            seat.send({"type": "ping"})
            seat.next("pong", timeout=TIMEOUT)
            assert time.monotonic() - asked < 2
        assert time.monotonic() - thinking < TIMEOUT, "the bot's time ran out meanwhile"
        state = play(late, failed, timeout=WAIT)
        check_failure(state, "Hang", FAULTS["Hang"])
        assert play(me, failed)["failure"] == state["failure"]
    finally:
        me.close()
        if late is not None:
            late.close()
    hostile.alive()


@pytest.mark.parametrize(
    "fault", default_and_slow(["Forks"], [f for f in HARMLESS if f != "Forks"])
)
def test_a_hostile_seat_that_prints_or_forks_plays_on(fault, hostile):
    _table, me = hostile.new_table({H_SEAT: name_of(fault)})
    seen: list[dict[str, Any]] = []

    def three_tricks(state: dict[str, Any]) -> bool:
        seen.append(state)
        return failed(state) or state["tricks_played"] >= 3 or state["hand_no"] > 0

    try:
        state = play(me, three_tricks)
    finally:
        me.close()
    assert state["failure"] is None, state["failure"]
    assert all(s["failure"] is None for s in seen)
    hostile.alive()
