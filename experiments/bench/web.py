"""`spades bench --only web`: the browser table's server, measured from outside.

A real `spades serve` subprocess on loopback (bots at pace 0, no review), spoken to as
browsers would:

- the first page load: with Playwright and the OS's Chromium, the lobby's load event in a
  fresh browser profile (navigation timing); without them, the lobby's HTML, script and
  style fetched over HTTP one after the other;
- a new table's start: tables made one after another, each with a scripted person (a
  websocket client) who plays at once: the time from the table's creation to the
  person's second turn, which holds the table's first bot move and so the start of its
  agents' process (`experiments.web.seats`); the server's first table also starts the
  fork server, and is shown apart;
- a human move's round trip: a scripted person sends a legal move and waits for the
  state that holds it;
- how many tables one server holds: N tables, each one scripted person (thinking
  `THINK` seconds before each move) and three heuristic seats, all playing at once for a
  while; N doubles until the 99th percentile of the people's round trips passes
  `LIMIT_MS` (or a seat's agent fails), and the last N under it is reported. Each
  level's new tables play their first turns before it is timed (their agents' processes
  started): the level measures tables in play, and a table's start is the row above.
  New tables past the server's rate limit are waited for, and a level whose tables would
  take more than half the machine's available memory (at the memory per table so far)
  is not tried;
- memory per table, over the tables of the largest N that passed, divided by N, two ways:
  the server process's resident memory (RSS) growth alone, and the growth of the
  proportional set size (PSS, `/proc/PID/smaps_rollup`) of the server and every process
  under it: the fork server and each table's agents' process (`experiments.web.seats`),
  found through `/proc/*/stat`'s parent ids. PSS shares each page among the processes
  that map it, so the children's pages shared with the fork server are not counted once
  per child. The second is the table's real cost; the first is what the server alone
  grows by.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from experiments.web.seats import process_tree

Row = dict[str, Any]
LIMIT_MS = 200.0
THINK = 0.5  # seconds a scripted person waits before each move
MAX_TABLES = 256
WARM_LIMIT = 120.0  # seconds new tables may take to play their first turns
CREATE_WAIT = 600.0  # seconds a new table is waited for past the server's rate limit
_ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Start:
    """A new table's start, in seconds: from its creation to its person's second turn
    (its first bot move included), and one round of moves after it."""

    to_second_turn: float
    next_round: float


@dataclass(frozen=True)
class Memory:
    """The server's resident memory, and the proportional set size of the server and all
    its descendants (None where the kernel has no smaps_rollup), in MB."""

    server_rss_mb: float
    tree_pss_mb: float | None
    processes: int


def _available_mb() -> float | None:
    """The machine's available memory (MemAvailable), in MB."""
    try:
        text = Path("/proc/meminfo").read_text()
    except OSError:
        return None
    found = re.search(r"MemAvailable:\s+(\d+)", text)
    return int(found.group(1)) / 1024 if found else None


def pss_kb(pid: int) -> int | None:
    """A process's proportional set size in kB (0 if it ended meanwhile; None where the
    kernel has no /proc/PID/smaps_rollup, before Linux 4.14)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup") as f:
            for line in f:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except FileNotFoundError:
        return None if Path(f"/proc/{pid}").exists() else 0
    except OSError:  # ended meanwhile (ESRCH), or not this user's
        return 0
    return None


class _Server:
    def __init__(self, root: Path) -> None:
        env = {
            **os.environ,
            "PYTHONPATH": str(_ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""),
        }
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "experiments.cli", "serve", "--port", "0", "--root", str(root),
             "--pace", "0", "--no-review", "--max-tables", str(MAX_TABLES * 2)],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
        )  # fmt: skip
        assert self.proc.stdout is not None
        lines: list[str] = []  # notices (kernels compiling on a first run) may come first
        found = None
        while found is None:
            line = self.proc.stdout.readline()
            if not line:  # it ended: its last line says why
                self.stop()
                last = next((t.strip() for t in reversed(lines) if t.strip()), "no output")
                raise RuntimeError(f"spades serve did not start: {last}")
            lines.append(line)
            found = re.search(r"http://(\S+?)/", line)
        self.host = found.group(1)
        self.waited = 0.0  # seconds waited on the server's rate limit of new tables
        self.output: list[str] = []  # read on, so the server never blocks on a full pipe
        threading.Thread(target=lambda: self.output.extend(self.proc.stdout), daemon=True).start()

    def memory(self) -> Memory:
        """The server's RSS, and the PSS of it and all its descendants, now."""
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        rss = int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024
        pids = process_tree(self.proc.pid)
        pss = [pss_kb(p) for p in pids]
        tree = None if None in pss else sum(p for p in pss if p is not None) / 1024
        return Memory(rss, tree, len(pids))

    def new_table(self) -> str:
        """A new table's person's token. The server takes NEW_TABLES_PER_MINUTE new tables
        a minute (a burst of as many): past that it answers 429 and the time to wait,
        which is waited (the tables are created before a level is timed)."""
        seats = [{"kind": "agent", "name": "heuristic"}] * 4
        seats = [*seats[:2], {"kind": "human", "name": "bench"}, seats[3]]
        req = urllib.request.Request(
            f"http://{self.host}/api/tables",
            data=json.dumps({"seats": seats}).encode(),
            headers={"Content-Type": "application/json"},
        )
        give_up = time.monotonic() + CREATE_WAIT
        while True:
            try:
                with urllib.request.urlopen(req, timeout=120) as r:
                    return json.loads(r.read())["links"][0]["link"].rsplit("/", 1)[1]
            except urllib.error.HTTPError as exc:
                body = exc.read().decode("utf-8", "replace")
                wait = re.search(r"try again in (\d+) s", body)
                if exc.code != 429 or wait is None or time.monotonic() > give_up:
                    raise OSError(f"new table refused ({exc.code}): {body.strip()}") from None
                self.waited += max(1.0, float(wait.group(1)))
                time.sleep(max(1.0, float(wait.group(1))))

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def _page_load_ms(server: _Server) -> tuple[float, str]:
    chromium = "/usr/bin/chromium"
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        chromium = ""
    if chromium and Path(chromium).exists():
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium)
            page = browser.new_context().new_page()  # a fresh profile: nothing cached
            page.goto(f"http://{server.host}/")
            page.wait_for_load_state("load")
            ms = page.evaluate(
                "() => { const t = performance.getEntriesByType('navigation')[0];"
                " return t.loadEventEnd - t.startTime; }"
            )
            browser.close()
            return float(ms), "Chromium, fresh profile, load event"
    start = time.perf_counter()
    for path in ("/", "/static/style.css", "/static/common.js", "/static/lobby.js"):
        with urllib.request.urlopen(f"http://{server.host}{path}", timeout=30) as r:
            r.read()
    return (time.perf_counter() - start) * 1e3, "HTTP, the lobby's four files in turn"


def _states(ws, until: float) -> Callable[[], Any]:
    """The next state message a seat's websocket gets, or None once `until` passes. A
    state with a `failure` (a seat's agent failed) ends the caller's play."""

    async def next_state() -> dict[str, Any] | None:
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return None
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=left))
            except TimeoutError:
                return None
            if msg.get("type") == "state":
                if msg.get("failure"):  # a seat's agent failed: the table waits for a person
                    print(f"web bench: a seat failed: {msg['failure']}", file=sys.stderr)
                return msg

    return next_state


async def _person(host: str, token: str, until: float, think: float, times: list[float]) -> None:
    """A scripted person: at each turn, wait `think`, play the first legal choice, time
    the round trip to the state holding the move."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    try:
        async with connect(f"ws://{host}/ws/{token}", max_size=2**22, open_timeout=60) as ws:
            await _play(ws, _states(ws, until), think, times)
    except (OSError, TimeoutError, ConnectionClosed) as exc:  # a failed level
        times.append(float("inf"))
        print(f"web bench: a person's connection failed: {exc}", file=sys.stderr)


async def _play(ws, next_state, think: float, times: list[float]) -> None:
    """Play the turns of one seat until the time is up (see `_person`); a seat whose
    agent failed counts as a failed round trip (inf)."""
    state = await next_state()
    while state is not None and not state["game_over"]:
        if state.get("failure"):
            times.append(float("inf"))
            return
        if not state["your_turn"]:
            state = await next_state()
            continue
        await asyncio.sleep(think)
        sent = time.perf_counter()
        act = {"type": "act", "action": state["legal"][0]["action"], "move": state["moves"]}
        await ws.send(json.dumps(act))
        moves = state["moves"]
        while state is not None and state["moves"] <= moves:
            state = await next_state()
        if state is not None:
            times.append(time.perf_counter() - sent)


async def _first_turns(host: str, token: str, created: float, until: float) -> Start | None:
    """A new table's person plays its first two turns at once: the time from the table's
    creation (`created`, perf_counter) to the person's second turn, and from its second
    move to its third turn. Between a seat's two turns every other seat acts (unless it
    won the trick and leads again), so the first holds the table's first bot move (its
    agents' process starting) and the second is a round of moves at a running table.
    None if the time runs out first."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    marks: list[float] = []
    try:
        async with connect(f"ws://{host}/ws/{token}", max_size=2**22, open_timeout=60) as ws:
            next_state = _states(ws, until)
            state, sent, moves = await next_state(), 0.0, -1
            while state is not None and not state["game_over"] and not state.get("failure"):
                if state["your_turn"] and state["moves"] > moves:
                    marks.append(time.perf_counter())
                    if len(marks) == 3:
                        break
                    moves = state["moves"]  # play the first legal choice at once
                    act = {"type": "act", "action": state["legal"][0]["action"], "move": moves}
                    if len(marks) == 2:
                        sent = time.perf_counter()
                    await ws.send(json.dumps(act))
                state = await next_state()
    except (OSError, TimeoutError, ConnectionClosed) as exc:
        print(f"web bench: a person's connection failed: {exc}", file=sys.stderr)
    if len(marks) < 3:
        return None
    return Start(marks[1] - created, marks[2] - sent)


def _warm(server: _Server, tokens: list[str], created: list[float]) -> list[Start | None]:
    """Each of these new tables played to its person's third turn, all at once (untimed
    for the levels: their agents' processes are started before a level is timed)."""
    until = time.monotonic() + WARM_LIMIT

    async def all_people() -> list[Start | None]:
        return await asyncio.gather(
            *(_first_turns(server.host, t, c, until) for t, c in zip(tokens, created, strict=True))
        )

    return asyncio.run(all_people())


def _load(server: _Server, tokens: list[str], seconds: float, think: float) -> list[float]:
    times: list[float] = []
    until = time.monotonic() + seconds

    async def all_people() -> None:
        await asyncio.gather(*(_person(server.host, t, until, think, times) for t in tokens))

    asyncio.run(all_people())
    return times


def web_section(seconds: float) -> list[Row]:
    try:
        import starlette  # noqa: F401
        import websockets  # noqa: F401
    except ImportError:
        return []
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="spades-bench-web-") as root:
        server = _Server(Path(root))
        try:
            load_ms, how = _page_load_ms(server)
            rows.append(_row("web: first page load", load_ms, "ms", how=how))
            started, token = _new_tables(server)
            rows.append(started)
            # the last of those tables, running: a person at most 10 moves a second (the
            # server cuts off 20 a second and more)
            single = _load(server, [token], max(seconds, 3.0), 0.1)
            ms = np.array(single) * 1e3
            rows.append(
                _row(
                    "web: human move round trip (1 table)",
                    float(np.median(ms)) if len(ms) else float("inf"),
                    "ms (median)",
                    p99_ms=float(np.percentile(ms, 99)) if len(ms) else None,
                    moves=len(ms),
                )
            )
            rows += _tables_held(server, seconds)
        finally:
            server.stop()
    return rows


def _new_tables(server: _Server, count: int = 4) -> tuple[Row, str]:
    """`count` tables made one after another, each played to its person's third turn
    (`_first_turns`): the median time from a table's creation to its person's second
    turn (its agents' process started, its first bot move made), over the tables after
    the first; the first's (which starts the server's fork server too) and a round of
    moves after it, for comparison. Returns the row and the last table's token."""
    starts, token = [], ""
    for _ in range(count):
        created = time.perf_counter()
        token = server.new_table()
        starts += _warm(server, [token], [created])
    started = [s.to_second_turn * 1e3 for s in starts[1:] if s is not None]
    rounds = [s.next_round * 1e3 for s in starts if s is not None]
    row = _row(
        "web: a new table, to the second turn",
        float(np.median(started)) if started else float("inf"),
        "ms (median)",
        first_table_ms=starts[0].to_second_turn * 1e3 if starts[0] is not None else None,
        next_round_ms=float(np.median(rounds)) if rounds else None,
        tables=count,
    )
    return row, token


def _tables_held(server: _Server, seconds: float) -> list[Row]:
    """N tables at once, N doubling until the p99 round trip passes LIMIT_MS or a seat
    fails; the last N under it, with the memory each of its tables added (see the module
    docstring)."""
    rows: list[Row] = []
    held, grown, tokens = 0, None, []
    n, base = 1, server.memory()  # the fork server and the start's tables included
    while n <= MAX_TABLES:
        if grown is not None and grown.tree_pss_mb is not None and base.tree_pss_mb is not None:
            need = (grown.tree_pss_mb - base.tree_pss_mb) / held * (n - len(tokens))
            free = _available_mb()
            if free is not None and need > free / 2:  # a shared machine: leave it memory
                how = f"not tried: ~{need:.0f} MB more, over half the {free:.0f} MB available"
                rows.append(_row(f"web: {n} tables at once", float("inf"), "ms", how=how))
                break
        new, created = [], []
        try:
            for _ in range(n - len(tokens)):
                created.append(time.perf_counter())
                new.append(server.new_table())
        except OSError as exc:  # the server could not take more tables in time
            rows.append(_row(f"web: {n} tables at once", float("inf"), "ms", how=str(exc)))
            break
        # the new tables' first moves (their agents' processes starting) are not timed
        _warm(server, new, created)
        tokens += new
        times = _load(server, tokens, max(2 * seconds, 6.0), THINK)
        ms = np.array(times) * 1e3
        p99 = float(np.percentile(ms, 99)) if len(ms) else float("inf")
        failed = int(np.isinf(ms).sum())  # a lost connection, or a seat whose agent failed
        now = server.memory()
        rows.append(
            _row(
                f"web: {n} tables at once",
                p99,
                "ms (p99 round trip)",
                median_ms=float(np.median(ms)) if len(ms) else None,
                moves=len(ms),
                failed=failed or None,
                processes=now.processes,
            )
        )
        if p99 >= LIMIT_MS or failed:
            break
        held, grown = n, now
        n *= 2
    extra: dict[str, Any] = {}
    if grown is not None:
        extra["server_rss_mb_per_table"] = (grown.server_rss_mb - base.server_rss_mb) / held
        if grown.tree_pss_mb is not None and base.tree_pss_mb is not None:
            extra["tree_pss_mb_per_table"] = (grown.tree_pss_mb - base.tree_pss_mb) / held
            extra["tree_pss_mb"] = grown.tree_pss_mb
        extra["processes"] = grown.processes
    rows.append(
        _row(
            "web: tables held (p99 < 200 ms)",
            held,
            "tables",
            **extra,
            think_s=THINK,
            rate_limit_wait_s=server.waited or None,
        )
    )
    return rows


def _row(name: str, value: float, unit: str, **extra: Any) -> Row:
    return {
        "name": name, "batch": 1, "rate": value, "unit": unit,
        "reference": None, "reference_rate": None, "ratio": None, **extra,
    }  # fmt: skip


def detail(row: Row) -> str:
    """The extra figures of a web row, one indented line."""
    keys = (
        "first_table_ms",
        "next_round_ms",
        "tables",
        "p99_ms",
        "median_ms",
        "moves",
        "failed",
        "tree_pss_mb_per_table",  # server and all its processes, PSS: the table's cost
        "server_rss_mb_per_table",  # the server process alone, RSS
        "tree_pss_mb",
        "processes",
        "think_s",
        "rate_limit_wait_s",
        "how",
    )
    parts = [
        f"{k}={row[k]:.1f}" if isinstance(row[k], float) else f"{k}={row[k]}"
        for k in keys
        if row.get(k) is not None
    ]
    return "    " + ", ".join(parts) if parts else ""


SECTIONS: dict[str, Callable[[float], list[Row]]] = {"web": web_section}
