"""The web app of `spades serve`: a Starlette application, served by uvicorn.

Pages (static files of `experiments/web/static`, no build step, nothing from the net):
`/` the lobby (a new table, the run folders to replay), `/table/TOKEN` a seat at a table,
`/replay` a run folder's deals. JSON endpoints under `/api/`, and one websocket per seat,
`/ws/TOKEN`, over which the seat gets its view (`experiments.web.views.seat_state`) after
every change and sends its moves (checked by `experiments.web.protocol`).

Safety (docs/web.md, "Security"): no request chooses code, a file, a URL or an
environment variable. Clients seat and hint only the agents of the server's catalogue
(`experiments.web.catalogue`), and those agents run in a process per table
(`experiments.web.seats`), never in the server. Every request's Host header must name
this server (`HostCheck`: loopback names, IP literals, or the names the server was
started with), so a web page cannot reach it by DNS rebinding; a request with an Origin
must come from the same origin. With an access key (`--token`, required off loopback)
every request must carry it, as `?key=` once (the page then keeps it in a cookie) or the
cookie. Run folders are read only under the root (`experiments.web.replay.resolve`);
request bodies and messages are size- and depth-capped; a websocket sending more than
`RATE` messages a second (beyond a burst of `BURST`), or a binary frame, is closed, which
touches no other connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import itertools
import json
import logging
import time
from collections.abc import Collection
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import quote

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.registry import AgentSpecError
from experiments.web import replay
from experiments.web.catalogue import Catalogue
from experiments.web.game import DECISION_TIMEOUT, SeatInfo, TableError
from experiments.web.manager import Manager
from experiments.web.protocol import MessageError, load_json, parse_message
from spades_env.rules import PRESETS, Rules

STATIC = Path(str(resources.files("experiments.web") / "static"))
MAX_BODY = 16_384
RATE, BURST = 20.0, 40.0  # websocket messages per second, and the burst allowed
MAX_CONNS_PER_SEAT = 4
KEY_COOKIE = "spades_key"
_conn_ids = itertools.count()
log = logging.getLogger("spades.web")


class AccessKey:
    """ASGI middleware: every request carries the server's access key (query or cookie)."""

    def __init__(self, app: ASGIApp, key: str | None) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.key is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request = Request(scope) if scope["type"] == "http" else WebSocket(scope, receive, send)
        given = request.query_params.get("key") or request.cookies.get(KEY_COOKIE) or ""
        if hmac.compare_digest(given.encode(), self.key.encode()):
            if scope["type"] == "http" and request.query_params.get("key"):

                async def send_cookie(message):
                    if message["type"] == "http.response.start":
                        cookie = f"{KEY_COOKIE}={self.key}; Path=/; HttpOnly; SameSite=Strict"
                        message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
                    await send(message)

                await self.app(scope, receive, send_cookie)
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403})
            return
        response = Response("access key required: open the link spades serve printed\n", 403)
        await response(scope, receive, send)


#: names a Host header may give for any server: this machine's loopback names
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def host_name(header: str | None) -> str | None:
    """The name of a Host header (or of an Origin's authority), lowercase, without the
    port and the brackets of an IPv6 address; None for a header that is not one."""
    if not header or len(header) > 300:
        return None
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        if end < 0 or (header[end + 1 :] not in ("",) and not header[end + 1 :].startswith(":")):
            return None
        return header[1:end]
    name, _, port = header.partition(":")
    if port and not port.isdigit():
        return None
    return name.rstrip(".") or None


def allowed_host(name: str | None, hosts: frozenset[str]) -> bool:
    """A name this server answers to: a loopback name, an IP literal (a page cannot be
    rebound to an address), or one of `hosts` (the names it was started with)."""
    if name is None:
        return False
    if name in LOOPBACK_NAMES or name in hosts:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """ASGI middleware: a request whose Host header names another server is refused (403
    over HTTP, close code 4403 over a websocket). A page on a domain that resolves to this
    machine (DNS rebinding) sends its own name, and is refused here."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] = frozenset()) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if allowed_host(host_name(host), self.hosts):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403})
            return
        response = Response("unknown host: open this server by the address it printed\n", 403)
        await response(scope, receive, send)


def _error(text: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


def _same_origin(headers, host: str | None) -> bool:
    """A request a page of this server made: no Origin header (not a browser's
    cross-site request), or one naming this server's own host."""
    origin = headers.get("origin")
    if origin is None:
        return True
    return host is not None and origin.split("://", 1)[-1].rstrip("/") == host


async def _body(request: Request) -> dict[str, Any]:
    # JSON only, and from this server's own pages: another site's page cannot make a
    # cross-site JSON request without a CORS preflight, which this server never grants
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise TableError("send the request as application/json")
    if not _same_origin(request.headers, request.headers.get("host")):
        raise TableError("requests come from this server's own pages only")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise TableError(f"request too large (over {MAX_BODY} bytes)")
    try:
        data = load_json(raw or b"{}")
    except ValueError as exc:
        raise TableError(f"the request body: {exc}") from None
    if not isinstance(data, dict):
        raise TableError("the request body is a JSON object")
    return data


def _text(data: dict[str, Any], key: str, default: str, limit: int = 300) -> str:
    value = data.get(key, default)
    if value is None:
        value = default
    if not isinstance(value, str) or len(value) > limit:
        raise TableError(f"{key}: a text of at most {limit} characters")
    return value.strip()


def parse_new_table(
    data: dict[str, Any], catalogue: Catalogue
) -> tuple[Rules, list[SeatInfo], tuple[str, Any]]:
    """The rules, seats and hint agent a lobby form asks for, every field checked; agents
    only from the server's `catalogue`."""
    preset = _text(data, "rules", "standard", 40) or "standard"
    options = data.get("options", [])
    if isinstance(options, str):
        if len(options) > 2000:
            raise TableError("options: at most 2000 characters")
        options = [o for o in options.replace("\n", ",").split(",") if o.strip()]
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TableError("options: a list of NAME=VALUE texts")
    if len(options) > 30 or any(len(o) > 200 for o in options):
        raise TableError("options: at most 30, each at most 200 characters")
    # one item, so that options that only make sense together are taken together
    joined = ",".join(o.strip() for o in options if o.strip())
    rules = Rules.build(preset, [joined] if joined else [])
    seats_in = data.get("seats")
    if not isinstance(seats_in, list) or len(seats_in) != rules.num_players:
        raise TableError(f"seats: a list of {rules.num_players} seats for {rules.name}")
    seats = []
    for s, seat in enumerate(seats_in):
        if not isinstance(seat, dict):
            raise TableError(f"seat {s}: an object with kind and name")
        kind = seat.get("kind")
        if kind == "human":
            name = _text(seat, "name", "", 40) or f"player{s}"
            if not all(ch.isalnum() or ch in " _.-" for ch in name):
                raise TableError(f"seat {s}: a name of letters, digits, space, _ . -")
            seats.append(SeatInfo("human", name))
        elif kind == "agent":
            text = _text(seat, "name", "")
            spec = catalogue.spec(text, rules, f"seat {s}")
            seats.append(SeatInfo("agent", text, spec=spec))
        else:
            raise TableError(f"seat {s}: kind is human or agent")
    hint_text = _text(data, "hint", "heuristic") or "heuristic"
    hint = catalogue.spec(hint_text, rules, "hint")
    return rules, seats, (hint_text, hint)


def create_app(
    root: Path,
    key: str | None = None,
    pace: float = 0.6,
    max_tables: int = 64,
    review: bool = True,
    agents: str | None = None,
    decision_timeout: float = DECISION_TIMEOUT,
    hosts: Collection[str] = (),
    max_games: int = 1000,
    tables_per_minute: int = 0,
) -> Starlette:
    """The application: `root` holds the run folders (web games go to `root/web`).
    `agents` lists the agents the server offers besides the registry's
    (`NAME=SPEC,...`, `experiments.web.catalogue`), `hosts` the names the Host header may
    give besides loopback names and IP literals."""
    root = Path(root).resolve()
    catalogue = Catalogue(agents)
    manager = Manager(
        root,
        pace=pace,
        max_tables=max_tables,
        review=review,
        catalogue=catalogue,
        decision_timeout=decision_timeout,
        max_games=max_games,
        tables_per_minute=tables_per_minute,
    )

    async def page(request: Request) -> Response:
        name = request.scope["route"].name
        return FileResponse(STATIC / f"{name}.html", headers={"Cache-Control": "no-store"})

    async def options(request: Request) -> Response:
        return JSONResponse(
            {
                "presets": list(PRESETS),
                "agents": catalogue.names(),
                "catalogue": catalogue.to_json(),
                "defaults": {name: Rules.preset(name).to_dict() for name in PRESETS},
            }
        )

    async def new_table(request: Request) -> Response:
        try:
            rules, seats, hint = parse_new_table(await _body(request), catalogue)
            table = await manager.create(rules, seats, hint=hint)
        except (TableError, AgentSpecError, ValueError) as exc:
            status = 429 if str(exc).startswith("too many new tables") else 400
            return _error(str(exc), status)
        # with an access key, each person's link carries it (they need it to get in)
        tail = f"?key={quote(key, safe='')}" if key else ""
        links = [
            {"seat": s, "name": i.name, "link": f"/table/{i.token}{tail}"}
            for s, i in enumerate(table.seats)
            if i.kind == "human"
        ]
        return JSONResponse({"table": table.id, "links": links})

    async def runs(request: Request) -> Response:
        return JSONResponse({"runs": await asyncio.to_thread(replay.list_runs, root)})

    async def deals(request: Request) -> Response:
        try:
            folder = replay.resolve(root, request.query_params.get("run", ""))
            return JSONResponse(await asyncio.to_thread(replay.deal_list, folder))
        except replay.ReplayError as exc:
            return _error(str(exc), 404 if "no run folder" in str(exc) else 400)

    async def deal(request: Request) -> Response:
        q = request.query_params
        try:
            folder = replay.resolve(root, q.get("run", ""))
            number, hand = int(q.get("deal", "0")), int(q.get("hand", "0"))
            pair = q.get("pair") or None
            return JSONResponse(
                await asyncio.to_thread(replay.deal_data, folder, number, hand, pair)
            )
        except ValueError as exc:  # ReplayError included
            return _error(str(exc))

    async def seat_socket(ws: WebSocket) -> None:
        token = ws.path_params["token"]
        if not _same_origin(ws.headers, ws.headers.get("host")):
            await ws.close(code=4403)
            return
        where = manager.lookup(token)
        if where is None:  # accepted, then closed: the page reads the code (not a 403)
            await ws.accept()
            await ws.close(code=4404, reason="unknown seat link")
            return
        table_id, seat = where
        try:
            live = await manager.get(table_id)
        except TableError as exc:
            await ws.accept()
            await ws.send_json({"type": "error", "error": str(exc)})
            await ws.close(code=4500)
            return
        if len(live.conns.get(seat, {})) >= MAX_CONNS_PER_SEAT:
            await ws.accept()
            await ws.close(code=4429, reason="too many connections to this seat")
            return
        await ws.accept()
        conn = next(_conn_ids)
        sending = asyncio.Lock()

        async def send(data: dict[str, Any]) -> None:
            async with sending:
                await ws.send_text(json.dumps(data, separators=(",", ":")))

        tokens, last = BURST, time.monotonic()
        try:
            await manager.join(live, seat, conn, send)
            while True:
                message = await ws.receive()
                if message["type"] == "websocket.disconnect":
                    break
                raw = message.get("text")
                if raw is None:  # a binary frame: not this protocol
                    await ws.close(code=1003, reason="text frames of JSON only")
                    break
                now = time.monotonic()
                tokens = min(BURST, tokens + (now - last) * RATE) - 1
                last = now
                if tokens < 0:
                    await send({"type": "error", "error": "too many messages: disconnected"})
                    await ws.close(code=4429)
                    break
                await _handle(live, seat, raw, send)
        except (WebSocketDisconnect, RuntimeError):  # gone (a send after the close: RuntimeError)
            pass
        finally:
            manager.leave(live, seat, conn)

    async def _handle(live, seat: int, raw: str, send) -> None:
        try:
            msg = parse_message(raw, seat)
            kind = msg["type"]
            if kind == "act":
                await manager.act(live, seat, msg["action"], msg["move"])
            elif kind == "hint":
                agent = msg.get("agent")
                spec = catalogue.spec(agent, live.table.rules, "hint") if agent else None
                hint = await asyncio.to_thread(live.table.hint, seat, spec)
                await send({"type": "hint", **hint})
            elif kind == "seat":
                await manager.seat_command(live, msg["do"], msg.get("agent"))
            elif kind == "review":
                review = live.table.reviews.get(msg["hand"] - 1)
                if review is None:
                    raise TableError(f"no review of hand {msg['hand']} yet")
                await send({"type": "review", "review": review})
            elif kind == "state":
                from experiments.web.views import seat_state

                async with live.lock:
                    data = seat_state(live.table, seat)
                await send(data)
            else:
                await send({"type": "pong"})
        except (MessageError, TableError, AgentSpecError, ValueError) as exc:
            await send({"type": "error", "error": str(exc)})
        except Exception:  # never the server's traceback for the person, nor its end
            log.exception("table %s, seat %s: a message failed", live.table.id, seat)
            await send(
                {"type": "error", "error": "the server could not do that (its log says why)"}
            )

    routes = [
        Route("/", page, name="index"),
        Route("/table/{token}", page, name="table"),
        Route("/replay", page, name="replay"),
        Route("/api/options", options),
        Route("/api/tables", new_table, methods=["POST"]),
        Route("/api/runs", runs),
        Route("/api/deals", deals),
        Route("/api/deal", deal),
        WebSocketRoute("/ws/{token}", seat_socket),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette):
        yield
        await asyncio.to_thread(manager.close)  # every table's agents' process ends

    hosts = frozenset(h.lower().strip("[]") for h in hosts)
    middleware = [Middleware(HostCheck, hosts=hosts), Middleware(AccessKey, key=key)]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.manager = manager
    return app
