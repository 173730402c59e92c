"""`spades bench --only web`: the browser table's server, measured from outside.

A real `spades serve` subprocess on loopback (bots at pace 0, no review), spoken to as
browsers would:

- the first page load: with Playwright and the OS's Chromium, the lobby's load event in a
  fresh browser profile (navigation timing); without them, the lobby's HTML, script and
  style fetched over HTTP one after the other;
- a human move's round trip: a scripted person (a websocket client) sends a legal move
  and waits for the state that holds it;
- how many tables one server holds: N tables, each one scripted person (thinking
  `THINK` seconds before each move) and three heuristic seats, all playing at once for a
  while; N doubles until the 99th percentile of the people's round trips passes
  `LIMIT_MS`, and the last N under it is reported;
- memory per table: the server's resident memory growth over the tables of the largest N
  that passed, divided by N.
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
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

Row = dict[str, Any]
LIMIT_MS = 200.0
THINK = 0.5  # seconds a scripted person waits before each move
MAX_TABLES = 256
_ROOT = Path(__file__).resolve().parents[2]


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
        line = self.proc.stdout.readline()
        found = re.search(r"http://(\S+?)/", line)
        if not found:
            self.stop()
            raise RuntimeError(f"spades serve did not start: {line.strip()}")
        self.host = found.group(1)
        self.output: list[str] = []  # read on, so the server never blocks on a full pipe
        threading.Thread(target=lambda: self.output.extend(self.proc.stdout), daemon=True).start()

    def rss_mb(self) -> float:
        text = Path(f"/proc/{self.proc.pid}/status").read_text()
        return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024

    def new_table(self) -> str:
        seats = [{"kind": "agent", "name": "heuristic"}] * 4
        seats = [*seats[:2], {"kind": "human", "name": "bench"}, seats[3]]
        req = urllib.request.Request(
            f"http://{self.host}/api/tables",
            data=json.dumps({"seats": seats}).encode(),
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=120) as r:
            return json.loads(r.read())["links"][0]["link"].rsplit("/", 1)[1]

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


async def _person(host: str, token: str, until: float, think: float, times: list[float]) -> None:
    """A scripted person: at each turn, wait `think`, play the first legal choice, time
    the round trip to the state holding the move."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import ConnectionClosed

    async def next_state(ws) -> dict[str, Any] | None:
        while True:
            left = until - time.monotonic()
            if left <= 0:
                return None
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=left))
            except TimeoutError:
                return None
            if msg.get("type") == "state":
                return msg

    try:
        async with connect(f"ws://{host}/ws/{token}", max_size=2**22, open_timeout=60) as ws:
            await _play(ws, next_state, think, times)
    except (OSError, TimeoutError, ConnectionClosed) as exc:  # a failed level
        times.append(float("inf"))
        print(f"web bench: a person's connection failed: {exc}", file=sys.stderr)


async def _play(ws, next_state, think: float, times: list[float]) -> None:
    """Play the turns of one seat until the time is up (see `_person`)."""
    state = await next_state(ws)
    while state is not None and not state["game_over"]:
        if not state["your_turn"]:
            state = await next_state(ws)
            continue
        await asyncio.sleep(think)
        sent = time.perf_counter()
        act = {"type": "act", "action": state["legal"][0]["action"], "move": state["moves"]}
        await ws.send(json.dumps(act))
        moves = state["moves"]
        while state is not None and state["moves"] <= moves:
            state = await next_state(ws)
        if state is not None:
            times.append(time.perf_counter() - sent)


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
            # a person at most 10 moves a second (the server cuts off 20 a second and more)
            single = _load(server, [server.new_table()], max(seconds, 3.0), 0.1)
            ms = np.array(single) * 1e3
            rows.append(
                _row(
                    "web: human move round trip (1 table)",
                    float(np.median(ms)),
                    "ms (median)",
                    p99_ms=float(np.percentile(ms, 99)),
                    moves=len(ms),
                )
            )
            held, per_table, tokens = 0, None, []
            n, base = 1, server.rss_mb()
            while n <= MAX_TABLES:
                try:
                    tokens += [server.new_table() for _ in range(n - len(tokens))]
                except OSError as exc:  # the server could not take more tables in time
                    rows.append(_row(f"web: {n} tables at once", float("inf"), "ms", how=str(exc)))
                    break
                times = _load(server, tokens, max(2 * seconds, 6.0), THINK)
                p99 = float(np.percentile(np.array(times) * 1e3, 99)) if times else float("inf")
                rows.append(
                    _row(f"web: {n} tables at once", p99, "ms (p99 round trip)", moves=len(times))
                )
                if p99 >= LIMIT_MS:
                    break
                held, per_table = n, (server.rss_mb() - base) / n
                n *= 2
            rows.append(
                _row(
                    "web: tables held (p99 < 200 ms)",
                    held,
                    "tables",
                    memory_per_table_mb=per_table,
                    think_s=THINK,
                )
            )
        finally:
            server.stop()
    return rows


def _row(name: str, value: float, unit: str, **extra: Any) -> Row:
    return {
        "name": name, "batch": 1, "rate": value, "unit": unit,
        "reference": None, "reference_rate": None, "ratio": None, **extra,
    }  # fmt: skip


def detail(row: Row) -> str:
    """The extra figures of a web row, one indented line."""
    keys = ("p99_ms", "moves", "memory_per_table_mb", "think_s", "how")
    parts = [
        f"{k}={row[k]:.1f}" if isinstance(row[k], float) else f"{k}={row[k]}"
        for k in keys
        if row.get(k) is not None
    ]
    return "    " + ", ".join(parts) if parts else ""


SECTIONS: dict[str, Callable[[float], list[Row]]] = {"web": web_section}
