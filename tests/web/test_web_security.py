"""The security review of `spades serve`, its repros as tests: what a client may name (no
code, file, URL or variable: only the agents of the server's catalogue), the Host header
and Origin checks that stop DNS rebinding and other sites' pages (in a real Chromium too),
malformed requests and messages, damaged games on disk, files at rest, and the limits on
new tables. The server runs as a subprocess (`web_helpers.Server`) and is spoken to over
loopback only, with raw HTTP where a header must be set exactly."""

from __future__ import annotations

import base64
import hashlib
import http.server
import json
import os
import re
import shutil
import socket
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from web_helpers import CHROMIUM, Seat, Server, seats, token_of

pytest.importorskip("starlette")
pytest.importorskip("websockets")
pytestmark = [pytest.mark.cli]

#: seconds any one network reply may take
WAIT = 30
SERVE = ("--pace", "0", "--no-review")

#: an agent the server's owner lists (`--agents mine=PATH:Mine`): random legal play
MINE = """\
import numpy as np

from agents.base import BaseAgent


class Mine(BaseAgent):
    def __init__(self, seed=None, depth: int = 1):
        super().__init__(seed)

    def act(self, view, obs, mask):
        return np.array([self.rng.choice(np.flatnonzero(r)) for r in mask], dtype=np.int64)
"""

#: what a client may try to seat or ask a hint of: code, files, URLs, variables, options
#: past the web's bounds, labels. `{marker}` is a file that must never appear, `{evil}` a
#: module that writes it when imported, `{dir}` a folder outside the server's root.
HOSTILE = {
    "os.system": "os:system:command=touch {marker}",
    "subprocess.run": "subprocess:run:args=touch {marker}",
    "a module's function": "experiments.cli.serve:run",
    "a file": "{evil}:Cls",
    "a file with options": "{evil}:Cls:depth=2",
    "a named file": "x={evil}:Cls",
    "a file of the repository": "tests/faults/hostile_agents.py:Raise",
    "llm endpoint": "llm:model=x,base_url=http://127.0.0.1:1/v1",
    "llm key variable": "llm:model=x,api_key_env=HOME",
    "llm template": "llm:model=x,template=/etc/passwd",
    "llm store": "llm:model=x,store={dir}/store",
    "heuristic model file": "heuristic:model=/etc/passwd",
    "heuristic model missing": "heuristic:model=/nonexistent",
    "ppo model file": "ppo:model=/etc/passwd",
    "checkpoint": "checkpoint:/etc/passwd",
    "sb3": "sb3:/etc/passwd",
    "pimc worlds": "pimc:worlds=100000",
    "pimc policy path": "pimc:policy=../../x",
    "pimc evaluator path": "pimc:evaluator={evil}",
    "a label": "NAME=heuristic",
    "a label of pimc": "p=pimc:worlds=2",
    "an option twice": "pimc:worlds=2,worlds=3",
    "not a number": "pimc:worlds=nan",
    "too long": "heuristic:bid=" + "a" * 230,
    "a newline": "heuristic\nos:system",
}

#: (a spec naming a file, an existing file, a missing one): the errors must not tell them apart
ORACLE = [
    ("heuristic:model={}", "/etc/passwd", "/nonexistent/x"),
    ("checkpoint:{}", "/etc/passwd", "/nonexistent/x"),
    ("sb3:{}", "/etc/passwd", "/nonexistent/x.zip"),
    ("{}:Cls", "/etc/passwd", "/nonexistent/x.py"),
    ("{}:Cls", "{evil}", "{dir}/missing.py"),
    ("llm:model=x,template={}", "/etc/passwd", "/nonexistent/x"),
    ("pimc:policy={}", "/etc/passwd", "/nonexistent/x"),
]
ORACLE_IDS = ["heuristic model", "checkpoint", "sb3", "a system file", "a file", "llm", "pimc"]


@dataclass
class Area:
    """A folder outside the server's root: the hostile module, the owner's agent, and the
    marker file nothing may create."""

    dir: Path
    marker: Path = field(init=False)
    evil: Path = field(init=False)
    mine: Path = field(init=False)

    def __post_init__(self) -> None:
        self.marker = self.dir / "MARKER"
        self.evil = self.dir / "evil.py"
        self.mine = self.dir / "mine.py"
        self.evil.write_text(
            f"from pathlib import Path\n\nPath({str(self.marker)!r}).write_text('imported')\n\n\n"
            "class Cls:\n    pass\n"
        )
        self.mine.write_text(MINE)

    def spec(self, template: str) -> str:
        return template.format(marker=self.marker, evil=self.evil, dir=self.dir)

    def untouched(self) -> None:
        assert not self.marker.exists(), "a client's spec ran code"
        assert not (self.dir / "store").exists(), "a client's spec chose a folder"


# ----------------------------------------------------------------------------- helpers
def port_of(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


def raw_http(
    port: int,
    method: str,
    path: str,
    host: str | None,
    headers: dict[str, str] | None = None,
    body: bytes = b"",
    upgrade: bool = False,
) -> tuple[int, bytes]:
    """One request written byte by byte (the Host header exactly as given, or none), its
    status and body; a websocket handshake with `upgrade` (the body is then empty)."""
    lines = [f"{method} {path} HTTP/1.1"]
    if host is not None:
        lines.append(f"Host: {host}")
    if upgrade:
        key = base64.b64encode(os.urandom(16)).decode()
        lines += [
            "Upgrade: websocket",
            "Connection: Upgrade",
            f"Sec-WebSocket-Key: {key}",
            "Sec-WebSocket-Version: 13",
        ]
    else:
        lines += ["Connection: close", f"Content-Length: {len(body)}"]
    lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
    request = ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + body
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall(request)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(65536)
            if not chunk:
                break
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        status = int(head.split(b" ", 2)[1])
        if status == 101:
            return status, b""
        length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
        while length is None or len(rest) < int(length.group(1)):
            chunk = sock.recv(65536)
            if not chunk:
                break
            rest += chunk
    return status, rest


def post_table(server: Server, body: Any, origin: str | None = "same") -> tuple[int, Any]:
    """POST /api/tables as the server's own page sends it (JSON, its own Origin); `body`
    a value (sent as JSON) or bytes (sent as they are)."""
    raw = body if isinstance(body, bytes) else json.dumps(body).encode()
    headers = {"Content-Type": "application/json"}
    if origin is not None:
        headers["Origin"] = server.url if origin == "same" else origin
    host = f"127.0.0.1:{port_of(server)}"
    status, data = raw_http(port_of(server), "POST", "/api/tables", host, headers, raw)
    try:
        return status, json.loads(data)
    except ValueError:
        return status, data.decode("utf-8", "replace")


def one_line(data: Any) -> str:
    """The error of a refused request: one short line, no traceback."""
    assert isinstance(data, dict) and isinstance(data.get("error"), str), data
    error = data["error"]
    assert error and "\n" not in error and len(error) < 500, error
    assert "Traceback" not in error, error
    return error


def games(server: Server) -> set[str]:
    """The web games on disk under the server's root."""
    folder = server.root / "web"
    return {p.name for p in folder.iterdir()} if folder.is_dir() else set()


def human_seats(players: int = 4) -> list[dict[str, str]]:
    """Every seat a person's: a table that starts no agents' process."""
    return [{"kind": "human", "name": f"p{s}"} for s in range(players)]


def play_hands(server: Server, hands: int, human: int = 2) -> tuple[str, str, dict]:
    """A table of one person and three random agents, played until `hands` hands are
    finished (logged); (table id, the person's token, the last state)."""
    table = server.new_table(seats(human=human, agent="random"))
    token = token_of(table["links"][0]["link"])
    me = Seat(server, token)
    try:
        state = me.next("state", WAIT)
        while len(state["sheet"]) < hands:
            state = me.act(lambda s: s["legal"][-1]["action"])
        return table["table"], token, state
    finally:
        me.close()


def refused_handshake(server: Server, token: str) -> bool:
    """Whether a websocket to the seat is refused: an unknown seat is accepted and closed
    at once with 4404 (the code the page reads), before any message."""
    from websockets.exceptions import ConnectionClosed, InvalidStatus
    from websockets.sync.client import connect

    try:
        with connect(f"{server.ws_url}/ws/{token}", open_timeout=WAIT) as ws:
            ws.recv(timeout=WAIT)
    except ConnectionClosed as closed:
        return closed.rcvd is not None and closed.rcvd.code == 4404
    except InvalidStatus:
        return False
    return False


def say(seat: Seat, msg: Any) -> None:
    """Send a message, paced under the server's flood limit (20 a second)."""
    time.sleep(0.1)
    seat.send(msg)


def play_first(seat: Seat, state: dict) -> None:
    """Play the first legal action of `state` (this seat's turn)."""
    say(seat, {"type": "act", "action": state["legal"][0]["action"], "move": state["moves"]})


def server_output(server: Server) -> str:
    """Everything the server printed so far (its log included)."""
    time.sleep(0.3)  # the log line of a refusal, written as the reply goes out
    return "".join(server.output)


# ----------------------------------------------------------------------------- fixtures
@pytest.fixture(scope="module")
def area(tmp_path_factory) -> Area:
    return Area(tmp_path_factory.mktemp("outside"))


@pytest.fixture(scope="module")
def server(tmp_path_factory, area):
    listed = f"mine={area.mine}:Mine,bad=tests/faults/hostile_agents.py:Raise"
    srv = Server(tmp_path_factory.mktemp("root"), *SERVE, "--agents", listed)
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def probe(server):
    """A seat at a table of random agents, for messages over its websocket."""
    table = server.new_table(seats(human=2, agent="random"))
    token = token_of(table["links"][0]["link"])
    seat = Seat(server, token)
    seat.next("state", WAIT)
    yield seat, token
    seat.close()


@pytest.fixture(scope="module")
def people(server) -> list[str]:
    """The seat tokens of a table of people only."""
    table = server.new_table(human_seats())
    return [token_of(link["link"]) for link in table["links"]]


# ============================================================================ 1. agents
@pytest.mark.parametrize("where", ["seat", "hint"])
@pytest.mark.parametrize("spec", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_client_names_no_code_file_url_or_variable(server, area, spec, where):
    text = area.spec(spec)
    if where == "seat":
        body = {"seats": seats(agent=text)}
    else:
        body = {"seats": seats(agent="random"), "hint": text}
    before = games(server)
    status, data = post_table(server, body)
    assert status == 400, data
    error = one_line(data)
    assert error.startswith("North's agent: " if where == "seat" else "hint: "), error
    assert games(server) == before
    area.untouched()


@pytest.mark.parametrize("where", ["seat", "hint"])
@pytest.mark.parametrize(("template", "exists", "missing"), ORACLE, ids=ORACLE_IDS)
def test_an_error_never_tells_whether_a_file_exists(server, area, template, exists, missing, where):
    errors = []
    for path in (area.spec(exists), area.spec(missing)):
        text = template.format(path)
        if where == "seat":
            body = {"seats": seats(agent=text)}
        else:
            body = {"seats": seats(agent="random"), "hint": text}
        status, data = post_table(server, body)
        assert status == 400, data
        error = one_line(data).replace(path, "PATH")
        errors.append(re.sub(r"'[^']*'", "'NAME'", error))  # the echoed name, shortened
    assert errors[0] == errors[1]
    area.untouched()


@pytest.mark.parametrize("spec", list(HOSTILE.values()), ids=list(HOSTILE))
def test_a_hint_message_names_no_code_file_url_or_variable(server, area, probe, spec):
    seat, _ = probe
    say(seat, {"type": "hint", "agent": area.spec(spec)})
    error = seat.next("error", WAIT)["error"]
    assert error.startswith("hint: ") or "message too long" in error, error
    assert "\n" not in error
    area.untouched()
    say(seat, {"type": "ping"})
    assert seat.next("pong", WAIT)


def test_an_agent_the_owner_listed_is_seated_by_its_name_alone(server, area):
    table = server.new_table(seats(human=2, agent="mine"), hint="mine")
    me = Seat(server, token_of(table["links"][0]["link"]))
    try:
        state = me.next("state", WAIT)
        while state["moves"] < 8:  # the listed agent bids and plays
            state = me.act()
            assert state["failure"] is None, state["failure"]
        state = me.turn()
        say(me, {"type": "hint"})  # the table's hint agent: the listed one
        assert me.next("hint", WAIT)["type"] == "hint"
        say(me, {"type": "hint", "agent": "mine:depth=2"})
        assert "as the server lists it" in me.next("error", WAIT)["error"]
    finally:
        me.close()
    for text in ("mine:depth=2", "mine:path=/etc/passwd", f"mine={area.evil}:Cls"):
        for body in ({"seats": seats(agent=text)}, {"seats": seats(), "hint": text}):
            status, data = post_table(server, body)
            assert status == 400, data
            one_line(data)
    area.untouched()


def test_a_failed_seat_is_given_only_an_agent_of_the_catalogue(server, area):
    """The person's answer to a failed seat (`seat` message) names an agent as a seat does."""
    bad = [{"kind": "agent", "name": "random"}] * 2 + [{"kind": "human", "name": "me"}]
    table = server.new_table([*bad, {"kind": "agent", "name": "bad"}])
    me = Seat(server, token_of(table["links"][0]["link"]))
    try:
        state = me.next("state", WAIT)
        while state["failure"] is None:
            if state["your_turn"]:
                play_first(me, state)
            state = me.until(lambda s: s["failure"] is not None or s["your_turn"], WAIT)
        assert state["failure"]["seat"] == 3
        for spec in HOSTILE.values():
            say(me, {"type": "seat", "do": "replace", "agent": area.spec(spec)})
            error = me.next("error", WAIT)["error"]
            assert "the new agent" in error or "message too long" in error, error
        say(me, {"type": "seat", "do": "replace", "agent": "random"})
        after = me.until(lambda s: s["failure"] is None, WAIT)
        assert after["moves"] >= state["moves"]
    finally:
        me.close()
    area.untouched()


# ============================================================================ 2. hosts
BAD_HOSTS = [
    "evil.example:{port}",
    "evil.example",
    "evil.example.:{port}",
    "127.0.0.1.evil.example",
    "127.0.0.1.evil.example:{port}",
    "localhost.evil.example:{port}",
    "127.0.0.1:{port}@evil.example",
    "",
    "   ",
    "garbage value!",
    "[::1",
    "[::1]x",
    "localhost:port",
    "x" * 400,
]
GOOD_HOSTS = [
    "127.0.0.1:{port}",
    "localhost:{port}",
    "[::1]:{port}",
    "LocalHost:{port}",
    "127.0.0.1",
]


@pytest.mark.parametrize("host", BAD_HOSTS, ids=[h[:30] or "empty" for h in BAD_HOSTS])
def test_a_host_header_naming_another_server_is_refused(server, area, probe, host):
    port = port_of(server)
    name = host.format(port=port)
    for path in ("/", "/api/options", "/api/runs", "/replay", "/static/table.js"):
        status, body = raw_http(port, "GET", path, name)
        assert status == 403, (path, status, body[:200])
        assert b"unknown host" in body
    before = games(server)
    body = json.dumps({"seats": seats(agent=area.spec(HOSTILE["os.system"]))}).encode()
    headers = {"Content-Type": "application/json", "Origin": f"http://{name}"}
    status, _ = raw_http(port, "POST", "/api/tables", name, headers, body)
    assert status == 403
    _, token = probe
    status, _ = raw_http(port, "GET", f"/ws/{token}", name, upgrade=True)
    assert status == 403  # closed with 4403 before it was accepted
    assert games(server) == before
    area.untouched()


def test_a_request_without_a_host_header_is_refused(server):
    port = port_of(server)
    status, _ = raw_http(port, "GET", "/api/runs", None)
    assert status in (400, 403)
    with socket.create_connection(("127.0.0.1", port), timeout=WAIT) as sock:
        sock.sendall(b"GET /api/runs HTTP/1.0\r\n\r\n")  # HTTP/1.0 needs no Host
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    assert data.split(b" ", 2)[1] == b"403", data[:200]


@pytest.mark.parametrize("host", GOOD_HOSTS)
def test_a_host_header_naming_this_machine_is_served(server, people, host):
    port = port_of(server)
    name = host.format(port=port)
    for path in ("/", "/api/options", "/api/runs"):
        status, body = raw_http(port, "GET", path, name)
        assert status == 200, (path, body[:200])
    token = people[GOOD_HOSTS.index(host) % len(people)]  # a seat's connections are capped
    status, _ = raw_http(port, "GET", f"/ws/{token}", name, upgrade=True)
    assert status == 101


FOREIGN_ORIGINS = [
    "http://evil.example",
    "http://evil.example:{port}",
    "http://127.0.0.1:1",
    "http://127.0.0.1:{port}.evil.example",
    "http://localhost:{port}",  # this server by another name: another origin for the page
    "null",
    "",
]


@pytest.mark.parametrize("origin", FOREIGN_ORIGINS, ids=[o or "empty" for o in FOREIGN_ORIGINS])
def test_a_request_from_another_origin_is_refused(server, area, probe, origin):
    port = port_of(server)
    text = origin.format(port=port)
    before = games(server)
    status, data = post_table(server, {"seats": seats(agent="random")}, origin=text)
    assert status == 400 and "own pages" in one_line(data)
    _, token = probe
    host = f"127.0.0.1:{port}"
    status, _ = raw_http(port, "GET", f"/ws/{token}", host, {"Origin": text}, upgrade=True)
    assert status == 403
    assert games(server) == before
    area.untouched()


# ----------------------------------------------------------------------------- browser
@pytest.fixture(scope="module")
def browser():
    """The OS's Chromium, resolving evil.example to 127.0.0.1 (a rebound name)."""
    sync_api = pytest.importorskip("playwright.sync_api")
    path = CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")
    if path is None:
        pytest.skip(f"no Chromium at {CHROMIUM} (.ci/run installs the OS package)")
    pw = sync_api.sync_playwright().start()
    b = pw.chromium.launch(
        executable_path=path,
        args=["--host-resolver-rules=MAP evil.example 127.0.0.1", "--no-proxy-server"],
    )
    yield b
    b.close()
    pw.stop()


class _Foreign(http.server.BaseHTTPRequestHandler):
    page = b""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(self.page)))
        self.end_headers()
        self.wfile.write(self.page)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def foreign():
    """Another site on this machine: a second HTTP server, on another port."""
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Foreign)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


#: what a hostile page tries against the spades server; its results land in window.results
ATTACK = """
const results = {};
async function attempt(name, f) {
  try { results[name] = await f(); } catch (e) { results[name] = "blocked: " + e.name; }
}
async function attack(base, wsUrl, body) {
  await attempt("json", async () => (await fetch(base + "/api/tables", {
    method: "POST", headers: {"Content-Type": "application/json"}, body})).status);
  await attempt("no-cors json", async () => (await fetch(base + "/api/tables", {
    method: "POST", mode: "no-cors", headers: {"Content-Type": "application/json"},
    body})).type);
  await attempt("no-cors text", async () => (await fetch(base + "/api/tables", {
    method: "POST", mode: "no-cors", headers: {"Content-Type": "text/plain"}, body})).type);
  await attempt("runs", async () => {
    const r = await fetch(base + "/api/runs"); return [r.status, await r.text()]; });
  await attempt("options", async () => (await fetch(base + "/api/options")).status);
  await attempt("websocket", () => new Promise((resolve) => {
    const seen = [], ws = new WebSocket(wsUrl);
    ws.onopen = () => seen.push("open");
    ws.onmessage = () => seen.push("message");
    ws.onclose = (ev) => resolve({seen, code: ev.code});
    setTimeout(() => resolve({seen, code: "no close"}), 15000);
  }));
  return results;
}
"""


def _attack_body(area: Area) -> str:
    return json.dumps({"seats": seats(agent=area.spec(HOSTILE["os.system"]))})


@pytest.mark.browser
def test_a_rebound_name_gets_nothing_in_the_browser(browser, server, area, probe):
    """DNS rebinding: evil.example resolves to this machine; its pages are refused, and a
    script there can neither make a table nor read the runs nor open a seat."""
    port = port_of(server)
    _, token = probe
    before = games(server)
    page = browser.new_page()
    page.set_default_timeout(WAIT * 1000)
    try:
        response = page.goto(f"http://evil.example:{port}/")
        assert response is not None and response.status == 403
        assert "unknown host" in page.content()
        for path in (f"/table/{token}", "/replay"):
            assert page.goto(f"http://evil.example:{port}{path}").status == 403
        page.add_script_tag(content=ATTACK)
        results = page.evaluate(
            "([base, ws, body]) => attack(base, ws, body)",
            ["", f"ws://evil.example:{port}/ws/{token}", _attack_body(area)],
        )
    finally:
        page.close()
    assert results["json"] == 403, results  # same origin for the page: refused by its Host
    assert results["runs"][0] == 403 and '"runs"' not in results["runs"][1], results
    assert results["options"] == 403, results
    assert results["websocket"]["seen"] == [], results
    assert games(server) == before
    area.untouched()


@pytest.mark.browser
def test_another_sites_page_gets_nothing_in_the_browser(browser, server, area, probe, foreign):
    """A page of another origin on this machine posts JSON, a form and a no-cors fetch to
    the server, reads its runs and opens a seat's websocket: all refused."""
    port = port_of(server)
    _, token = probe
    form = json.dumps({"seats": seats(agent="random"), "x": "="})
    _Foreign.page = (
        "<!doctype html><meta charset=utf-8><title>elsewhere</title>"
        f"<script>{ATTACK}</script>"
        '<iframe name="sink"></iframe>'
        f'<form id="f" method="post" enctype="text/plain" target="sink" '
        f'action="http://127.0.0.1:{port}/api/tables">'
        f"<input type=hidden name='{form[:-3]}' value='\"}}'></form>"
    ).encode()
    before = games(server)
    page = browser.new_page()
    page.set_default_timeout(WAIT * 1000)
    try:
        page.goto(f"http://127.0.0.1:{foreign.server_address[1]}/")
        with page.expect_event("framenavigated", lambda f: f.name == "sink"):
            page.evaluate("document.getElementById('f').submit()")
        sink = page.frame(name="sink").content()
        results = page.evaluate(
            "([base, ws, body]) => attack(base, ws, body)",
            [f"http://127.0.0.1:{port}", f"ws://127.0.0.1:{port}/ws/{token}", _attack_body(area)],
        )
    finally:
        page.close()
    assert "application/json" in sink  # the form's text/plain post: refused
    assert str(results["json"]).startswith("blocked"), results  # no CORS preflight granted
    assert str(results["runs"]).startswith("blocked"), results  # nothing read cross-origin
    assert results["no-cors json"] in ("opaque",) or "blocked" in results["no-cors json"]
    assert results["websocket"]["seen"] == [], results
    assert games(server) == before
    area.untouched()


def test_an_unknown_seat_link_is_closed_with_the_code_the_page_reads(server):
    from websockets.exceptions import ConnectionClosed
    from websockets.sync.client import connect

    url = f"{server.ws_url}/ws/not-a-seat-token"
    with connect(url, open_timeout=WAIT) as ws, pytest.raises(ConnectionClosed) as closed:
        ws.recv(timeout=WAIT)
    assert closed.value.rcvd is not None and closed.value.rcvd.code == 4404


# ============================================================================ 3. malformed
NESTED = {
    "arrays": b"[" * 5000,
    "objects": b'{"a":' * 3000,
    "arrays closed": b"[" * 2000 + b"]" * 2000,
    "seats nested": b'{"seats": ' + b"[" * 40 + b"]" * 40 + b"}",
    "hint nested": b'{"seats": [], "hint": ' + b'{"a":' * 100 + b"1" + b"}" * 100 + b"}",
}


@pytest.mark.parametrize("body", list(NESTED.values()), ids=list(NESTED))
def test_deeply_nested_json_is_a_one_line_400(server, body):
    before = games(server)
    status, data = post_table(server, body)
    assert status == 400, data
    one_line(data)
    assert games(server) == before
    assert raw_http(port_of(server), "GET", "/api/options", "localhost")[0] == 200


BAD_BODIES = {
    "oversized": b'{"seats": "' + b"x" * 20_000 + b'"}',
    "oversized whitespace": b" " * 17_000 + b"{}",
    "not JSON": b"{seats",
    "not UTF-8": b'{"seats": "\xff\xfe"}',
    "a list": b"[1, 2]",
    "NaN": b'{"seats": NaN}',
    "a huge number": b'{"seats": ' + b"9" * 5000 + b"}",
    "empty": b"",
}


@pytest.mark.parametrize("body", list(BAD_BODIES.values()), ids=list(BAD_BODIES))
def test_a_malformed_or_oversized_body_is_a_one_line_400(server, body):
    before = games(server)
    status, data = post_table(server, body)
    assert status == 400, data
    one_line(data)
    assert games(server) == before


WS_NESTED = {
    "arrays": "[" * 5000,
    "arrays under the size limit": "[" * 2000,
    "objects": '{"a":' * 400,
    "a nested field": '{"type": "hint", "agent": ' + "[" * 100 + "]" * 100 + "}",
    "not JSON": "{type",
    "a number": "1e999999",
    "a huge whole number": "9" * 2000,
}


@pytest.mark.parametrize("text", list(WS_NESTED.values()), ids=list(WS_NESTED))
def test_a_malformed_message_gets_an_error_and_the_seat_works_on(probe, text):
    seat, _ = probe
    say(seat, text)
    error = seat.next("error", WAIT)["error"]
    assert "\n" not in error and len(error) < 300
    say(seat, {"type": "ping"})
    assert seat.next("pong", WAIT)["type"] == "pong"


def test_a_binary_frame_closes_that_connection_only(server, probe):
    from websockets.exceptions import ConnectionClosed

    seat, token = probe
    other = Seat(server, token)
    try:
        other.next("state", WAIT)
        other.ws.send(b'{"type": "ping"}')
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                other.next(timeout=WAIT)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1003
    finally:
        other.close()
    say(seat, {"type": "ping"})
    assert seat.next("pong", WAIT)["type"] == "pong"


def test_a_message_over_the_frame_limit_closes_that_connection_only(server, probe):
    from websockets.exceptions import ConnectionClosed

    seat, token = probe
    other = Seat(server, token)
    try:
        other.next("state", WAIT)
        say(other, '{"type": "ping", "x": "' + "x" * 70_000 + '"}')
        with pytest.raises(ConnectionClosed) as closed:
            while True:
                other.next(timeout=WAIT)
        assert closed.value.rcvd is not None and closed.value.rcvd.code == 1009
    finally:
        other.close()
    say(seat, {"type": "ping"})
    assert seat.next("pong", WAIT)["type"] == "pong"


# ----------------------------------------------------------------------------- damaged games
def _edit(change):
    def damage(path: Path, outside: Path) -> None:
        data = json.loads(path.read_text())
        change(data)
        path.write_text(json.dumps(data))

    return damage


def _write(make):
    def damage(path: Path, outside: Path) -> None:
        path.write_bytes(make(path.read_bytes()))

    return damage


def _fifo(path: Path, outside: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _folder(path: Path, outside: Path) -> None:
    path.unlink()
    path.mkdir()


def _link_out(path: Path, outside: Path) -> None:
    target = outside / f"{path.parent.name}.json"
    shutil.copyfile(path, target)  # a whole, valid game, outside the root
    path.unlink()
    path.symlink_to(target)


#: damage to game.json that leaves the seat's token readable: the link names the damage
NAMED_DAMAGE = {
    "an action of the wrong shape": _edit(lambda d: d.update(actions=[[0]])),
    "an action that is a number": _edit(lambda d: d.update(actions=[7])),
    "actions null": _edit(lambda d: d.update(actions=None)),
    "an illegal action": _edit(lambda d: d.update(actions=[[0, "ZZ"], [1, "ZZ"], [3, "ZZ"]])),
    "3 seats for 4-player rules": _edit(lambda d: d.update(seats=d["seats"][:3])),
    "a seed of text": _edit(lambda d: d.update(seed="x")),
    "rules of no table": _edit(lambda d: d["rules"].update(num_players=0)),
    "rules not a dict": _edit(lambda d: d.update(rules=[1])),
    "another version": _edit(lambda d: d.update(version=99)),
    "no rules": _edit(lambda d: d.pop("rules")),
}
#: damage that leaves nothing to read the token from: the link is unknown, the log names it
UNREADABLE_DAMAGE = {
    "not JSON": _write(lambda data: b"{not json"),
    "truncated": _write(lambda data: data[: len(data) // 2]),
    "not UTF-8": _write(lambda data: b"\xff\xfe" + data),
    "nested too deeply": _write(lambda data: b"[" * 100_000 + b"]" * 100_000),
    "over the size limit": _write(lambda data: data + b" " * (5 << 20)),
    "a FIFO": _fifo,
    "a folder": _folder,
    "a link out of the root": _link_out,
}
#: damage to a line of a finished game's log.jsonl
LOG_DAMAGE = {
    "a changed byte": lambda data: (
        data[:100] + (b"X" if data[100:101] != b"X" else b"Y") + data[101:]
    ),
    "a line that is not JSON": lambda data: b"garbage\n" + data,
    "a line that is a list": lambda data: b"[1]\n" + data,
}


@dataclass
class Restarted:
    """A root whose server was stopped, its games damaged, and a server started again."""

    server: Server
    root: Path
    healthy: tuple[str, str, dict]  # (table id, token, state before the restart)
    logs: dict[str, tuple[str, str, dict]]
    damaged: dict[str, tuple[str, str]]  # damage -> (table id, token)


@pytest.fixture(scope="module")
def restarted(tmp_path_factory):
    root = tmp_path_factory.mktemp("restart-root")
    outside = tmp_path_factory.mktemp("restart-outside")
    srv = Server(root, *SERVE)
    try:
        healthy = play_hands(srv, 1)
        logs = {kind: play_hands(srv, 1) for kind in LOG_DAMAGE}
        damaged = {}
        for kind in [*NAMED_DAMAGE, *UNREADABLE_DAMAGE]:
            table = srv.new_table(seats(human=0, agent="random"))
            damaged[kind] = (table["table"], token_of(table["links"][0]["link"]))
    finally:
        srv.stop()
    for kind, damage in [*NAMED_DAMAGE.items(), *UNREADABLE_DAMAGE.items()]:
        damage(root / "web" / damaged[kind][0] / "game.json", outside)
    for kind, damage in LOG_DAMAGE.items():
        log = root / "web" / logs[kind][0] / "log.jsonl"
        log.write_bytes(damage(log.read_bytes()))
    again = Server(root, *SERVE)
    yield Restarted(again, root, healthy, logs, damaged)
    again.stop()


def _healthy_seat_works(r: Restarted) -> None:
    _, token, before = r.healthy
    seat = Seat(r.server, token)
    try:
        state = seat.next("state", WAIT)
        # its bots played on to the person's turn, before the stop or after the restart
        assert state["moves"] >= before["moves"], (state["moves"], before["moves"])
        assert state["sheet"][: len(before["sheet"])] == before["sheet"]
    finally:
        seat.close()


@pytest.mark.parametrize("kind", list(NAMED_DAMAGE))
def test_a_damaged_game_is_named_at_its_link_and_others_play_on(restarted, kind):
    from websockets.exceptions import ConnectionClosed

    r = restarted
    table_id, token = r.damaged[kind]
    seat = Seat(r.server, token)
    try:
        error = seat.next("error", WAIT)["error"]
        with pytest.raises(ConnectionClosed):
            seat.next(timeout=WAIT)
    finally:
        seat.close()
    assert error.startswith(f"web/{table_id}/game.json: "), error
    assert "damaged" in error or "not a web game" in error, error
    assert str(r.root) not in error and "\n" not in error
    _healthy_seat_works(r)


@pytest.mark.parametrize("kind", list(UNREADABLE_DAMAGE))
def test_an_unreadable_game_is_skipped_and_named_in_the_log(restarted, kind):
    """Its seat token's hash is in the damaged file only: the link is an unknown one (the
    page says so), the server's log names the file relative to the root, and the server
    serves every other table."""
    r = restarted
    table_id, token = r.damaged[kind]
    assert refused_handshake(r.server, token)
    named = [line for line in server_output(r.server).splitlines() if table_id in line]
    assert any(f"web/{table_id}/game.json" in line for line in named), named
    assert not any(str(r.root) in line for line in named), named
    status, data = r.server.get("/api/runs")  # never blocks on a FIFO, never follows the link
    assert status == 200 and f"web/{table_id}" not in json.dumps(data)
    _healthy_seat_works(r)


@pytest.mark.parametrize("kind", list(LOG_DAMAGE))
def test_a_damaged_log_line_still_resumes_or_is_named(restarted, kind):
    r = restarted
    table_id, token, before = r.logs[kind]
    seat = Seat(r.server, token)
    try:
        msg = seat.next(timeout=WAIT)
    finally:
        seat.close()
    if msg["type"] == "state":
        assert msg["moves"] >= before["moves"]
        assert msg["sheet"][: len(before["sheet"])] == before["sheet"]
    else:
        assert msg["type"] == "error" and f"web/{table_id}/log.jsonl" in msg["error"], msg
        assert str(r.root) not in msg["error"]
    _healthy_seat_works(r)


@pytest.mark.parametrize("kind", list(LOG_DAMAGE))
def test_a_damaged_log_line_is_named_by_the_deals_list(restarted, kind):
    r = restarted
    table_id, _, _ = r.logs[kind]
    status, data = r.server.get(f"/api/deals?run=web/{table_id}")
    assert str(r.root) not in json.dumps(data), data
    if status == 200:  # the good row listed, the damaged line named
        assert [d["hand"] for d in data["deals"]] == [0], data
        assert data["damaged"][0].startswith(f"web/{table_id}/log.jsonl line 1: "), data
    else:  # no good row left: the damaged line named
        assert status == 400, data
        assert one_line(data).startswith(f"web/{table_id}/log.jsonl line 1: "), data


# ============================================================================ 4. at rest
def test_a_web_games_files_are_private_and_hold_no_seat_token(restarted):
    r = restarted
    table_id, token, _ = r.healthy
    folder = r.root / "web" / table_id
    for name in ("game.json", "log.jsonl"):
        assert stat.S_IMODE((folder / name).stat().st_mode) == 0o600, name
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700
    game = json.loads((folder / "game.json").read_text())
    people = [s for s in game["seats"] if s["kind"] == "human"]
    assert [s["token_sha256"] for s in people] == [hashlib.sha256(token.encode()).hexdigest()]
    assert all("token" not in s for s in game["seats"])
    for path in folder.rglob("*"):
        if path.is_file():
            assert token.encode() not in path.read_bytes(), path
    assert not list(folder.glob("*.tmp"))
    _healthy_seat_works(r)  # the link still opens the seat after the restart


def test_the_deals_of_a_restarted_game_replay(restarted):
    r = restarted
    table_id, _, _ = r.healthy
    status, data = r.server.get(f"/api/deals?run=web/{table_id}")
    assert status == 200 and [d["hand"] for d in data["deals"]] == [0], data
    status, data = r.server.get(f"/api/deal?run=web/{table_id}&deal=0&hand=0")
    assert status == 200 and len(data["sides"]) == 1


def test_a_read_only_root_refuses_new_tables_and_still_replays(tmp_path):
    """The root's web folder turns read-only (a real file system remounted; skipped where
    mounting needs root it lacks): a new table is a one-line 400, the finished hands still
    replay, a move that cannot be saved is refused, and is played once the disk is back."""
    from fault_cases import set_read_only, small_disk

    root = tmp_path / "root"
    with small_disk(root / "web", "16m") as web:
        srv = Server(root, *SERVE)
        me = None
        try:
            table = srv.new_table(seats(human=2, agent="random"))
            table_id = table["table"]
            me = Seat(srv, token_of(table["links"][0]["link"]))
            state = me.next("state", WAIT)
            while not state["sheet"]:
                state = me.act(lambda s: s["legal"][-1]["action"])
            state = me.turn()  # no bot is mid-move as the disk turns read-only
            set_read_only(web)
            try:
                for body in ({"seats": seats(agent="random")}, {"seats": human_seats()}):
                    status, data = post_table(srv, body)
                    assert status == 400 and "cannot write" in one_line(data), data
                    assert str(root) not in data["error"]
                assert games(srv) == {table_id}
                status, data = srv.get("/api/runs")
                assert status == 200 and [x["path"] for x in data["runs"]] == [f"web/{table_id}"]
                status, data = srv.get(f"/api/deals?run=web/{table_id}")
                assert status == 200 and [d["hand"] for d in data["deals"]] == [0], data
                status, data = srv.get(f"/api/deal?run=web/{table_id}&deal=0&hand=0")
                assert status == 200 and data["sides"], data
                play_first(me, state)
                error = me.next("error", WAIT)["error"]
                assert "cannot save" in error and str(root) not in error, error
                say(me, {"type": "state"})
                assert me.next("state", WAIT)["moves"] == state["moves"]
            finally:
                set_read_only(web, False)
            play_first(me, state)
            assert me.until(lambda s: s["moves"] > state["moves"], WAIT)
        finally:
            if me is not None:
                me.close()
            srv.stop()


# ============================================================================ 5. limits
def test_new_tables_are_rate_limited(tmp_path):
    from experiments.web.manager import NEW_TABLES_PER_MINUTE

    srv = Server(tmp_path, *SERVE)
    try:
        made, refused = 0, None
        for _ in range(100):
            status, data = post_table(srv, {"seats": human_seats()})
            if status == 429:
                refused = one_line(data)
                break
            assert status == 200, data
            made += 1
        assert refused is not None and refused.startswith("too many new tables"), made
        assert 1 <= made <= NEW_TABLES_PER_MINUTE + 5  # and what refilled meanwhile
        status, data = post_table(srv, {"seats": human_seats()})
        assert status == 429 and one_line(data)
        assert len(games(srv)) == made
    finally:
        srv.stop()


def test_max_games_refuses_the_table_past_it(tmp_path):
    srv = Server(tmp_path, *SERVE, "--max-games", "2")
    try:
        for _ in range(2):
            status, data = post_table(srv, {"seats": human_seats()})
            assert status == 200, data
        for _ in range(2):
            status, data = post_table(srv, {"seats": human_seats()})
            assert status == 400 and "keeps 2 games" in one_line(data), data
            assert str(tmp_path) not in data["error"]
        assert len(games(srv)) == 2
    finally:
        srv.stop()
