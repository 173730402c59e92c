"""The web app of `spades serve`: a Starlette application, served by uvicorn.

Pages (static files of `experiments/web/static`, no build step, nothing from the net):
`/` the lobby (a new table, the run folders to replay), `/table/TOKEN` a seat at a table,
`/replay` a run folder's deals. JSON endpoints under `/api/`, and one websocket per seat,
`/ws/TOKEN`, over which the seat gets its view (`experiments.web.views.seat_state`) after
every change and sends its moves (checked by `experiments.web.protocol`).

Safety: with an access key (`--token`, required off loopback) every request must carry
it, as `?key=` once (the page then keeps it in a cookie) or the cookie; run folders are
read only under the root (`experiments.web.replay.resolve`); request bodies and messages
are size-capped; a websocket sending more than `RATE` messages a second (beyond a burst
of `BURST`) is closed, which touches no other connection.
"""

from __future__ import annotations

import asyncio
import hmac
import itertools
import json
import time
from importlib import resources
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.registry import AgentSpecError, known_names
from experiments.web import replay
from experiments.web.game import SeatInfo, TableError, check_spec
from experiments.web.manager import Manager
from experiments.web.protocol import MessageError, parse_message
from spades_env.rules import PRESETS, Rules

STATIC = Path(str(resources.files("experiments.web") / "static"))
MAX_BODY = 16_384
RATE, BURST = 20.0, 40.0  # websocket messages per second, and the burst allowed
MAX_CONNS_PER_SEAT = 4
KEY_COOKIE = "spades_key"
_conn_ids = itertools.count()


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
    raw = await request.body()
    if len(raw) > MAX_BODY:
        raise TableError(f"request too large ({len(raw)} bytes)")
    try:
        data = json.loads(raw or b"{}")
    except ValueError:
        raise TableError("the request body is not JSON") from None
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


def parse_new_table(data: dict[str, Any], allow_code: bool) -> tuple[Rules, list[SeatInfo], str]:
    """The rules, seats and hint agent a lobby form asks for, every field checked."""
    preset = _text(data, "rules", "standard", 40) or "standard"
    options = data.get("options", [])
    if isinstance(options, str):
        options = [o for o in options.replace("\n", ",").split(",") if o.strip()]
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TableError("options: a list of NAME=VALUE texts")
    if len(options) > 30:
        raise TableError("options: at most 30")
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
            seats.append(SeatInfo("agent", check_spec(_text(seat, "name", ""), rules, allow_code)))
        else:
            raise TableError(f"seat {s}: kind is human or agent")
    hint = check_spec(_text(data, "hint", "heuristic") or "heuristic", rules, allow_code)
    return rules, seats, hint


def create_app(
    root: Path,
    key: str | None = None,
    pace: float = 0.6,
    max_tables: int = 64,
    allow_code: bool = True,
    review: bool = True,
) -> Starlette:
    """The application: `root` holds the run folders (web games go to `root/web`)."""
    root = Path(root).resolve()
    manager = Manager(root, pace=pace, max_tables=max_tables, review=review)

    async def page(request: Request) -> Response:
        name = request.scope["route"].name
        return FileResponse(STATIC / f"{name}.html", headers={"Cache-Control": "no-store"})

    async def options(request: Request) -> Response:
        return JSONResponse(
            {
                "presets": list(PRESETS),
                "agents": known_names(),
                "allow_code": allow_code,
                "defaults": {name: Rules.preset(name).to_dict() for name in PRESETS},
            }
        )

    async def new_table(request: Request) -> Response:
        try:
            rules, seats, hint = parse_new_table(await _body(request), allow_code)
            table = await manager.create(rules, seats, hint_agent=hint)
        except (TableError, AgentSpecError, ValueError) as exc:
            return _error(str(exc))
        # with an access key, each person's link carries it (they need it to get in)
        tail = f"?key={key}" if key else ""
        links = [
            {"seat": s, "name": i.name, "link": f"/table/{i.token}{tail}"}
            for s, i in enumerate(table.seats)
            if i.kind == "human"
        ]
        return JSONResponse({"table": table.id, "links": links})

    async def runs(request: Request) -> Response:
        return JSONResponse({"runs": replay.list_runs(root)})

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
        if where is None:
            await ws.close(code=4404)
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
            await ws.close(code=4429)
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
                raw = await ws.receive_text()
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
                if agent:
                    agent = check_spec(agent, live.table.rules, allow_code)
                async with live.lock:
                    hint = await asyncio.to_thread(live.table.hint, seat, agent)
                await send({"type": "hint", **hint})
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
    app = Starlette(routes=routes, middleware=[Middleware(AccessKey, key=key)])
    app.state.manager = manager
    return app
