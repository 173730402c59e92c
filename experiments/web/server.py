"""The web app of `spades serve`: a Starlette application, served by uvicorn.

Pages (static files of `experiments/web/static`, no build step, nothing from the net):
`/` the lobby (a new table, the run folders to replay), `/table/TOKEN` a seat at a table,
`/replay` a run folder's deals. JSON endpoints under `/api/`, and one websocket per seat,
`/ws/TOKEN`, over which the seat gets its view (`experiments.web.views.seat_state`) after
every change and sends its moves (checked by `experiments.web.protocol`, which also
reads the lobby's form). `create_app` is the routes; `WebApp` holds their handlers.

Safety (docs/web.md, "Security"): no request chooses code, a file, a URL or an
environment variable. Clients seat and hint only the agents of the server's catalogue
(`experiments.web.catalogue`), and those agents run in a process per table
(`experiments.web.seats`), never in the server. The gates of `experiments.web.guards`
come first: every request's Host header must name this server (loopback names, IP
literals, or the names the server was started with), so a web page cannot reach it by
DNS rebinding; a request with an Origin must come from the same origin; with an access
key (`--token`, required off loopback) every request must carry it, as `?key=` once (the
page then keeps it in a cookie) or the cookie. Run folders are read only under the root
(`experiments.web.replay.resolve`); request bodies and messages are size- and
depth-capped; a websocket sending more than `RATE` messages a second (beyond a burst of
`BURST`), or a binary frame, is closed, which touches no other connection.
"""

from __future__ import annotations

import asyncio
import contextlib
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
from starlette.websockets import WebSocket, WebSocketDisconnect

from agents.registry import AgentSpecError
from experiments.web import replay, share
from experiments.web.catalogue import Catalogue, rules_catalogue
from experiments.web.game import DECISION_TIMEOUT, TableError
from experiments.web.guards import AccessKey, HostCheck, same_origin
from experiments.web.manager import Live, Manager
from experiments.web.protocol import MessageError, parse_message, parse_new_table, read_body
from spades_env.rules import PRESETS, Rules

STATIC = Path(str(resources.files("experiments.web") / "static"))
RATE, BURST = 20.0, 40.0  # websocket messages per second, and the burst allowed
MAX_CONNS_PER_SEAT = 4
_conn_ids = itertools.count()
log = logging.getLogger("spades.web")
Sender = Any  # async (dict) -> None: one connection's sender


def _error(text: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": text}, status_code=status)


class WebApp:
    """The handlers of the routes: pages, the JSON endpoints, a seat's websocket."""

    def __init__(self, root: Path, key: str | None, catalogue: Catalogue, manager: Manager):
        self.root, self.key, self.catalogue, self.manager = root, key, catalogue, manager
        self.rules = rules_catalogue()  # the presets and options the lobby offers, built once

    async def page(self, request: Request) -> Response:
        name = request.scope["route"].name
        return FileResponse(STATIC / f"{name}.html", headers={"Cache-Control": "no-store"})

    async def favicon(self, request: Request) -> Response:
        return FileResponse(STATIC / "favicon.svg", media_type="image/svg+xml")

    async def options(self, request: Request) -> Response:
        return JSONResponse(
            {
                "presets": list(PRESETS),
                "agents": self.catalogue.names(),
                "catalogue": self.catalogue.to_json(),
                "defaults": {name: Rules.preset(name).to_dict() for name in PRESETS},
                "rules": self.rules,
                # what each game writes besides its record: the people's decisions
                "datasets": self.manager.datasets,
            }
        )

    async def new_table(self, request: Request) -> Response:
        try:
            rules, seats, hint = parse_new_table(await read_body(request), self.catalogue)
            table = await self.manager.create(rules, seats, hint=hint)
        except (TableError, AgentSpecError, ValueError) as exc:
            status = 429 if str(exc).startswith("too many new tables") else 400
            return _error(str(exc), status)
        # with an access key, each person's link carries it (they need it to get in)
        tail = f"?key={quote(self.key, safe='')}" if self.key else ""
        links = [
            {"seat": s, "name": i.name, "link": f"/table/{i.token}{tail}"}
            for s, i in enumerate(table.seats)
            if i.kind == "human"
        ]
        return JSONResponse({"table": table.id, "links": links})

    async def runs(self, request: Request) -> Response:
        return JSONResponse({"runs": await asyncio.to_thread(replay.list_runs, self.root)})

    async def deals(self, request: Request) -> Response:
        try:
            folder = replay.resolve(self.root, request.query_params.get("run", ""))
            return JSONResponse(await asyncio.to_thread(replay.deal_list, folder))
        except replay.ReplayError as exc:
            return _error(str(exc), 404 if "no run folder" in str(exc) else 400)

    async def deal(self, request: Request) -> Response:
        q = request.query_params
        try:
            folder = replay.resolve(self.root, q.get("run", ""))
            number, hand = int(q.get("deal", "0")), int(q.get("hand", "0"))
            pair = q.get("pair") or None
            data = await asyncio.to_thread(replay.deal_data, folder, number, hand, pair)
            if q.get("showdown") == "1":  # the proven ends of the hand, for the showdown
                for side in data["sides"]:
                    side["claims"] = await asyncio.to_thread(share.claims, side.pop("record"))
            for side in data["sides"]:
                side.pop("record", None)
            return JSONResponse(data)
        except ValueError as exc:  # ReplayError included
            return _error(str(exc))

    async def export(self, request: Request) -> Response:
        """A run's hand records (or one deal's) as JSON Lines, to download."""
        q = request.query_params
        try:
            folder = replay.resolve(self.root, q.get("run", ""))
            deal = int(q["deal"]) if q.get("deal") else None
            hand = int(q.get("hand", "0"))
            text = await asyncio.to_thread(
                share.export_records, folder, deal, hand, q.get("pair") or None
            )
        except ValueError as exc:  # ReplayError included
            return _error(str(exc))
        safe = "".join(
            ch if ch.isascii() and (ch.isalnum() or ch in "._-") else "_" for ch in folder.name
        )
        name = safe + (f"-deal{deal}-hand{hand}" if deal is not None else "")
        return Response(
            text,
            media_type="application/x-ndjson",
            headers={"Content-Disposition": f'attachment; filename="{name}.jsonl"'},
        )

    async def import_file(self, request: Request) -> Response:
        """A record file from the person's machine, checked action by action and sent
        back ready to step through (nothing is stored)."""
        if not same_origin(request.headers, request.headers.get("host")):
            return _error("requests come from this server's own pages only", 403)
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > share.MAX_IMPORT_BYTES:
                return _error(f"the file is over {share.MAX_IMPORT_BYTES:,} bytes", 413)
        try:
            data = await asyncio.to_thread(share.import_records, raw)
        except ValueError as exc:  # ShareError included
            return _error(str(exc))
        for deal in data["hands"]:
            for side in deal["sides"]:
                side["claims"] = await asyncio.to_thread(share.claims, side.pop("record"))
        return JSONResponse(data)

    # ----------------------------------------------------------------- a seat's websocket
    async def _open(self, ws: WebSocket) -> tuple[Live, int] | None:
        """The seat a connection opens, accepted; None when it was refused and closed."""
        if not same_origin(ws.headers, ws.headers.get("host")):
            await ws.close(code=4403)
            return None
        where = self.manager.lookup(ws.path_params["token"])
        if where is None:  # accepted, then closed: the page reads the code (not a 403)
            await ws.accept()
            await ws.close(code=4404, reason="unknown seat link")
            return None
        table_id, seat = where
        try:
            live = await self.manager.get(table_id)
        except TableError as exc:
            await ws.accept()
            await ws.send_json({"type": "error", "error": str(exc)})
            await ws.close(code=4500)
            return None
        await ws.accept()
        if len(live.conns.get(seat, {})) >= MAX_CONNS_PER_SEAT:
            await ws.close(code=4429, reason="too many connections to this seat")
            return None
        return live, seat

    async def seat_socket(self, ws: WebSocket) -> None:
        opened = await self._open(ws)
        if opened is None:
            return
        live, seat = opened
        conn = next(_conn_ids)
        sending = asyncio.Lock()

        async def send(data: dict[str, Any]) -> None:
            async with sending:
                await ws.send_text(json.dumps(data, separators=(",", ":")))

        tokens, last = BURST, time.monotonic()
        try:
            await self.manager.join(live, seat, conn, send)
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
                await self.message(live, seat, raw, send)
        except (WebSocketDisconnect, RuntimeError):  # gone (a send after the close: RuntimeError)
            pass
        finally:
            self.manager.leave(live, seat, conn)

    async def message(self, live: Live, seat: int, raw: str, send: Sender) -> None:
        """One message of a seat: checked, then handled by its type's method; a refusal
        is one line to the sender, and nothing else fails the connection."""
        try:
            msg = parse_message(raw, seat)
            await getattr(self, f"on_{msg['type']}")(live, seat, msg, send)
        except (MessageError, TableError, AgentSpecError, ValueError) as exc:
            await send({"type": "error", "error": str(exc)})
        except Exception:  # never the server's traceback for the person, nor its end
            log.exception("table %s, seat %s: a message failed", live.table.id, seat)
            await send(
                {"type": "error", "error": "the server could not do that (its log says why)"}
            )

    async def on_act(self, live: Live, seat: int, msg: dict[str, Any], send: Sender) -> None:
        await self.manager.act(live, seat, msg["action"], msg["move"])

    async def on_hint(self, live: Live, seat: int, msg: dict[str, Any], send: Sender) -> None:
        agent = msg.get("agent")
        spec = self.catalogue.spec(agent, live.table.rules, "hint") if agent else None
        hint = await asyncio.to_thread(live.table.hint, seat, spec)
        await send({"type": "hint", **hint})

    async def on_seat(self, live: Live, seat: int, msg: dict[str, Any], send: Sender) -> None:
        await self.manager.seat_command(live, msg["do"], msg.get("agent"))

    async def on_review(self, live: Live, seat: int, msg: dict[str, Any], send: Sender) -> None:
        review = live.table.reviews.get(msg["hand"] - 1)
        if review is None:
            raise TableError(f"no review of hand {msg['hand']} yet")
        await send({"type": "review", "review": review})

    async def on_state(self, live: Live, seat: int, msg: dict[str, Any], send: Sender) -> None:
        async with live.lock:
            data = self.manager.state(live, seat)
        await send(data)

    async def on_ping(self, live: Live, seat: int, msg: dict[str, Any], send: Sender) -> None:
        await send({"type": "pong"})


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
    datasets: bool = True,
    review_nodes: int | None = None,
) -> Starlette:
    """The application: `root` holds the run folders (web games go to `root/web`).
    `agents` lists the agents the server offers besides the registry's
    (`NAME=SPEC,...`, `experiments.web.catalogue`), `hosts` the names the Host header may
    give besides loopback names and IP literals; `datasets=False`: the games keep no
    dataset of the people's decisions; `review_nodes`: the search nodes a hand's review
    spends before it is shown (`Manager`)."""
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
        datasets=datasets,
        review_nodes=review_nodes,
    )
    web = WebApp(root, key, catalogue, manager)
    routes = [
        Route("/", web.page, name="index"),
        Route("/table/{token}", web.page, name="table"),
        Route("/replay", web.page, name="replay"),
        Route("/favicon.ico", web.favicon),
        Route("/api/options", web.options),
        Route("/api/tables", web.new_table, methods=["POST"]),
        Route("/api/runs", web.runs),
        Route("/api/deals", web.deals),
        Route("/api/deal", web.deal),
        Route("/api/export", web.export),
        Route("/api/import", web.import_file, methods=["POST"]),
        WebSocketRoute("/ws/{token}", web.seat_socket),
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
