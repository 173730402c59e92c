"""Shared by tests/web: a `spades serve` subprocess, its websockets, and the browser.

`Server` runs `python -m experiments.cli serve --port 0` on a root folder and reads the
URL it prints; `Seat` is a seat's websocket (the `websockets` client);
`chromium()` launches the OS's Chromium through Playwright (skipping only where none is
installed: .ci/run installs one and turns such a skip into a failure); `screenshot` saves
a page to docs/_static/web/ with SPADES_SCREENSHOTS=1, where the docs page shows it;
`leaked_cards` checks what a browser received against the logged hands.
"""

from __future__ import annotations

import json
import os
import queue
import re
import shutil
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import ctrl_c_reaches_it

ROOT = Path(__file__).resolve().parents[2]
SHOTS = ROOT / "docs" / "_static" / "web"
CHROMIUM = os.environ.get("SPADES_CHROMIUM", "/usr/bin/chromium")
URL = re.compile(r"(http://\S+)")
WAIT = 120


class Server:
    """`spades serve` on a free port of 127.0.0.1, until `stop` or `kill`."""

    def __init__(self, root: Path, *args: str) -> None:
        self.root = root
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "experiments.cli",
                "serve",
                "--port",
                "0",
                "--root",
                str(root),
                *args,
            ],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            preexec_fn=ctrl_c_reaches_it,
        )
        lines: queue.Queue[str | None] = queue.Queue()

        def pump() -> None:
            assert self.proc.stdout is not None
            for line in self.proc.stdout:
                lines.put(line)
                self.output.append(line)
            lines.put(None)

        self.output: list[str] = []
        threading.Thread(target=pump, daemon=True).start()
        while True:
            try:
                line = lines.get(timeout=WAIT)
            except queue.Empty:
                self.kill()
                raise AssertionError("spades serve printed no URL") from None
            if line is None:
                raise AssertionError("spades serve exited: " + "".join(self.output))
            found = URL.search(line)
            if found:
                self.url = found.group(1).rstrip("/")
                if "?" in self.url:
                    self.url = self.url.split("/?")[0]
                return

    @property
    def ws_url(self) -> str:
        return self.url.replace("http://", "ws://")

    def get(self, path: str) -> tuple[int, Any]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as r:
                return r.status, json.loads(r.read() or b"null")
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read() or b"null")

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        data = json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + path, data=data, headers={"Content-Type": "application/json"}
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    def new_table(self, seats: list[dict[str, str]], **extra: Any) -> dict[str, Any]:
        status, data = self.post("/api/tables", {"seats": seats, **extra})
        assert status == 200, data
        return data

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.kill()

    def kill(self) -> None:
        """SIGKILL: the server gets no chance to write anything more."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(timeout=30)


def seats(human: int = 2, agent: str = "heuristic", players: int = 4, **people: str):
    """A seats list: `human` is the person "me", `people` maps seat numbers (as s0..s4)
    to more people's names, every other seat the agent."""
    out = []
    for s in range(players):
        if s == human:
            out.append({"kind": "human", "name": "me"})
        elif f"s{s}" in people:
            out.append({"kind": "human", "name": people[f"s{s}"]})
        else:
            out.append({"kind": "agent", "name": agent})
    return out


def token_of(link: str) -> str:
    return link.rsplit("/", 1)[-1]


class Seat:
    """A seat's websocket: every message received is kept, in order."""

    def __init__(self, server: Server, token: str) -> None:
        from websockets.sync.client import connect

        self._conn = connect(
            f"{server.ws_url}/ws/{token}", open_timeout=60, close_timeout=2, max_size=2**22
        )
        self.ws = self._conn.__enter__()
        self.received: list[dict[str, Any]] = []
        self.latest: dict[str, Any] | None = None  # the last state message
        self.raw: list[str] = []

    def send(self, msg: Any) -> None:
        self.ws.send(msg if isinstance(msg, str) else json.dumps(msg))

    def next(self, kind: str | None = None, timeout: float = WAIT) -> dict[str, Any]:
        """The next message (of `kind`, skipping others)."""
        while True:
            raw = self.ws.recv(timeout=timeout)
            self.raw.append(raw)
            msg = json.loads(raw)
            self.received.append(msg)
            if msg["type"] == "state":
                self.latest = msg
            if kind is None or msg["type"] == kind:
                return msg

    def until(self, test, timeout: float = WAIT) -> dict[str, Any]:
        """The next state message for which `test(state)` holds."""
        while True:
            msg = self.next("state", timeout)
            if test(msg):
                return msg

    def turn(self) -> dict[str, Any]:
        """The state at this seat's next turn (the last one received, if it is that)."""
        if self.latest is not None and self.latest["your_turn"]:
            return self.latest
        return self.until(lambda s: s["your_turn"])

    def act(self, pick=lambda s: s["legal"][0]["action"]) -> dict[str, Any]:
        """Wait for this seat's turn, play `pick(state)`, return the state right after."""
        state = self.turn()
        self.send({"type": "act", "action": pick(state), "move": state["moves"]})
        return self.until(lambda s: s["moves"] > state["moves"])

    def close(self) -> None:
        self._conn.__exit__(None, None, None)


def chromium():
    """Playwright and the launched OS Chromium; skips where either is missing."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        pytest.skip(
            f"no Chromium at {CHROMIUM}: install the OS package (apt-get install chromium) "
            "or set SPADES_CHROMIUM"
        )
    pw = sync_api.sync_playwright().start()
    browser = pw.chromium.launch(
        executable_path=CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    )
    return pw, browser


def screenshot(page, name: str) -> Path:
    """Save the page as NAME.png: into docs/_static/web/ (the docs page and the README show
    these) with SPADES_SCREENSHOTS=1, else into a temporary folder, so that a test run
    leaves the tracked pictures as they are."""
    folder = SHOTS if os.environ.get("SPADES_SCREENSHOTS") == "1" else _scratch()
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.png"
    page.screenshot(path=str(path), full_page=False)
    return path


def _scratch() -> Path:
    import tempfile

    return Path(tempfile.gettempdir()) / f"spades-web-shots-{os.getpid()}"


def card_ids(data: Any, skip: str | None = None) -> set[int]:
    """Every card object's id in wire data (`skip`: a top-level key left out)."""
    found: set[int] = set()
    if isinstance(data, dict):
        if {"id", "label", "suit"} <= set(data):
            found.add(data["id"])
        for k, v in data.items():
            if k != skip:
                found |= card_ids(v)
    elif isinstance(data, list):
        for v in data:
            found |= card_ids(v)
    return found


def leaked_cards(frames: list[str], seat: int, records: list[dict[str, Any]]) -> list[tuple]:
    """(moves, cards) of every state frame that showed `seat` a card it may not know: a
    card of another seat's hand that was not yet played (checked against the logged
    hand records: the deal and the actions up to that frame)."""
    from spades_env.cards import NUM_CARDS, str_to_action, str_to_card

    starts, total = [], 0
    for r in records:
        starts.append(total)
        total += len(r["actions"])
    out = []
    for raw in frames:
        msg = json.loads(raw)
        if msg.get("type") != "state":
            continue
        h = msg["hand_no"]
        if h >= len(records):
            continue  # a hand not logged yet: nothing to check against
        rec = records[h]
        done = msg["moves"] - starts[h]
        if done < 0 or done > len(rec["actions"]):
            continue
        own = {str_to_card(c) for c in rec["deal"][seat]}
        played = set()
        for _, text in rec["actions"][:done]:
            a = str_to_action(text)
            if 0 <= a < NUM_CARDS:
                played.add(a)
        shown = card_ids(msg)
        bad = shown - own - played
        if msg["hand_hidden"]:
            bad |= card_ids(msg["hand"])
        if bad:
            out.append((msg["moves"], sorted(bad)))
    return out


#: the widths every browser test of the lobby and the table runs at: a desktop and a phone
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


def page_at(browser, width: str, timeout_ms: int = 60_000):
    """A new page (in a fresh context: its own cookies and storage) at a VIEWPORTS size."""
    context = browser.new_context(viewport=VIEWPORTS[width])
    page = context.new_page()
    page.set_default_timeout(timeout_ms)
    return page


def no_sideways_scroll(page) -> tuple[int, int]:
    """(the document's scroll width, the window's inner width): equal or less when nothing
    sticks out sideways."""
    return tuple(page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]"))


def axe_serious(page) -> list[str]:
    """axe-core's serious and critical violations on the page, one line each (rule,
    impact, the first elements); axe-playwright-python ships axe-core, nothing is fetched."""
    sync = pytest.importorskip("axe_playwright_python.sync_playwright")
    result = sync.Axe().run(page)
    return [
        f"{v['id']} ({v['impact']}): {[n['target'] for n in v['nodes'][:3]]}"
        for v in result.response["violations"]
        if v["impact"] in ("serious", "critical")
    ]


def page_state(page) -> dict[str, Any]:
    """The last state a table page received (table.js keeps it as window.spadesState)."""
    return page.evaluate("window.spadesState || null") or {}


def click_turn(page) -> None:
    """One move by mouse at the page's turn: a bid button (a middling bid, never blind
    nil), else the first playable card; returns once the table has moved on."""
    before = page_state(page)["moves"]
    buttons = page.locator("#prompt button.act")
    if buttons.count():
        labels = buttons.all_inner_texts()
        pick = next((i for i, t in enumerate(labels) if t in ("see", "3", "2", "4")), 0)
        buttons.nth(pick).click()
    else:
        page.locator("#hand .card.legal").first.click()
    page.wait_for_function(f"window.spadesState.moves > {before}")


def wait_turn(page, test: str = "s.your_turn") -> dict[str, Any]:
    """Wait until the page's state `s` makes the JavaScript `test` true; that state."""
    page.wait_for_function(f"(() => {{ const s = window.spadesState; return !!s && ({test}); }})()")
    return page_state(page)


def play_to_game_over(page, timeout_ms: int = 300_000) -> dict[str, Any]:
    """Play the page's seat to the end of the game, fast: at each turn the first legal
    action is sent over the page's own socket (table.js `send`), as a click would; the
    state at game over."""
    while True:
        page.wait_for_function(
            "(() => { const s = window.spadesState;"
            " return !!s && (s.your_turn || s.game_over); })()",
            timeout=timeout_ms,
        )
        state = page_state(page)
        if state["game_over"]:
            return state
        moves = state["moves"]
        page.evaluate(
            f"send({{type: 'act', action: window.spadesState.legal[0].action, move: {moves}}})"
        )
        page.wait_for_function(
            f"window.spadesState.moves > {moves} || window.spadesState.game_over",
            timeout=timeout_ms,
        )
