"""The tables a server holds: creating them, finding a seat by its token, the bots' turns,
telling every connected seat what changed, and keeping memory bounded.

At most `max_tables` tables are in memory. Every table is on disk after every action
(`experiments.web.game`), so a table nobody is connected to can be dropped from memory
and is loaded again when one of its seats reconnects; a new table is refused (one line)
only when every table in memory has someone connected. Seat tokens of the games on disk
are indexed at start, so a link still works after the server restarts.

Table calls run in worker threads (an agent may think for seconds), one at a time per
table (its asyncio lock), so one slow table never holds up another.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.web.game import ResumeError, SeatInfo, Table, TableError, create_table, load_table
from experiments.web.views import seat_state

log = logging.getLogger("spades.web")

Send = Callable[[dict[str, Any]], Awaitable[None]]


@dataclass
class Live:
    """A table in memory with its lock, its connections and its bot task."""

    table: Table
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    conns: dict[int, dict[int, Send]] = field(default_factory=dict)  # seat -> id -> send
    bots: asyncio.Task | None = None
    reviewing: set[int] = field(default_factory=set)

    def connected(self) -> int:
        return sum(len(c) for c in self.conns.values())


class Manager:
    """Every table of one server."""

    def __init__(
        self,
        root: Path,
        pace: float = 0.6,
        max_tables: int = 64,
        review: bool = True,
    ) -> None:
        self.root = root
        self.games = root / "web"
        self.pace = pace
        self.max_tables = max_tables
        self.review = review
        self.live: OrderedDict[str, Live] = OrderedDict()  # least recently used first
        self.tokens: dict[str, tuple[str, int]] = {}  # seat token -> (table id, seat)
        self._index()

    # ----------------------------------------------------------------- finding
    def _index(self) -> None:
        """The seat tokens of every game on disk (read from game.json, nothing replayed)."""
        if not self.games.is_dir():
            return
        for path in sorted(self.games.glob("*/game.json")):
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
                for s, seat in enumerate(data["seats"]):
                    if seat.get("kind") == "human" and seat.get("token"):
                        self.tokens[seat["token"]] = (path.parent.name, s)
            except (OSError, ValueError, KeyError, TypeError):
                log.warning("skipping %s: not a readable web game", path)

    def lookup(self, token: str) -> tuple[str, int] | None:
        """(table id, seat) of a seat token, compared in constant time."""
        found = None
        for known, where in self.tokens.items():
            if secrets.compare_digest(known.encode(), token.encode()):
                found = where
        return found

    async def get(self, table_id: str) -> Live:
        """The table in memory, loaded from disk if it was dropped or the server restarted."""
        live = self.live.get(table_id)
        if live is None:
            await self._make_room()
            try:
                table = await asyncio.to_thread(load_table, self.games / table_id)
            except ResumeError as exc:
                raise TableError(str(exc)) from None
            live = self.live.setdefault(table_id, Live(table))
        self.live.move_to_end(table_id)
        return live

    async def _make_room(self) -> None:
        """Drop idle tables (nobody connected, no move under way) until one more fits;
        a table whose bots are mid-move is waited for a moment, never cut off."""
        for _ in range(50):
            if len(self.live) < self.max_tables:
                return
            unseated = [k for k, v in self.live.items() if not v.connected()]
            idle = next((k for k in unseated if not self.live[k].lock.locked()), None)
            if idle is not None:
                dropped = self.live.pop(idle)
                if dropped.bots is not None:
                    dropped.bots.cancel()
                continue
            if not unseated:
                break
            await asyncio.sleep(0.05)
        raise TableError(f"the server holds {self.max_tables} tables in play; try again later")

    # ----------------------------------------------------------------- tables
    async def create(self, rules, seats: list[SeatInfo], seed=None, hint_agent="heuristic"):
        await self._make_room()
        table_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        table = await asyncio.to_thread(
            create_table, self.games / table_id, rules, seats, seed, hint_agent, table_id
        )
        for s, info in enumerate(table.seats):
            if info.kind == "human":
                self.tokens[info.token] = (table_id, s)
        live = self.live[table_id] = Live(table)
        self.kick(live)
        return table

    # ----------------------------------------------------------------- connections
    async def join(self, live: Live, seat: int, conn: int, send: Send) -> None:
        async with live.lock:  # no move half made while the seat's first view is built
            live.conns.setdefault(seat, {})[conn] = send
            data = seat_state(live.table, seat)
        await send(data)
        self.kick(live)

    def leave(self, live: Live, seat: int, conn: int) -> None:
        live.conns.get(seat, {}).pop(conn, None)

    @staticmethod
    def views(live: Live) -> list[tuple[list[Send], dict[str, Any]]]:
        """Each connected seat's own view (`seat_state`), built while the caller holds
        the table's lock, so no view is of a move half made."""
        return [
            (list(conns.values()), seat_state(live.table, seat))
            for seat, conns in list(live.conns.items())
            if conns
        ]

    @staticmethod
    async def send_views(views: list[tuple[list[Send], dict[str, Any]]]) -> None:
        for sends, data in views:
            for send in sends:
                with contextlib.suppress(Exception):  # a closing socket; its reader leaves
                    await send(data)

    async def broadcast(self, live: Live) -> None:
        """Every connected seat gets its own view."""
        async with live.lock:
            views = self.views(live)
        await self.send_views(views)

    async def act(self, live: Live, seat: int, action: int, move: int) -> None:
        async with live.lock:
            record = await asyncio.to_thread(live.table.act, seat, action, move)
            views = self.views(live)
        await self.send_views(views)
        if record is not None and self.review:
            self.start_review(live, record["hand_no"])
        self.kick(live)

    # ----------------------------------------------------------------- bots
    def kick(self, live: Live) -> None:
        """Start the table's bot task if a bot is to act and none runs."""
        if live.table.bot_to_act() and (live.bots is None or live.bots.done()):
            live.bots = asyncio.get_running_loop().create_task(self._bots(live))

    async def _bots(self, live: Live) -> None:
        while live.table.bot_to_act():
            if self.pace > 0:
                # a trick just taken stays in view a little longer before the next lead
                await asyncio.sleep(self.pace * (3 if live.table.trick_just_taken() else 1))
            async with live.lock:
                if not live.table.bot_to_act():
                    break
                record = await asyncio.to_thread(live.table.bot_move)
                views = self.views(live)
            await self.send_views(views)
            if record is not None and self.review:
                self.start_review(live, record["hand_no"])
                if self.pace > 0:  # time to look at the hand's result
                    await asyncio.sleep(3 * self.pace)

    # ----------------------------------------------------------------- reviews
    def start_review(self, live: Live, hand_no: int) -> None:
        if hand_no in live.table.reviews or hand_no in live.reviewing:
            return
        live.reviewing.add(hand_no)
        asyncio.get_running_loop().create_task(self._review(live, hand_no))

    async def _review(self, live: Live, hand_no: int) -> None:
        from experiments.web.review import review_hand

        record = next(r for r in live.table.session.records if r["hand_no"] == hand_no)
        try:
            live.table.reviews[hand_no] = await asyncio.to_thread(review_hand, record)
        except Exception as exc:  # the review is extra: never let it break the table
            log.warning("review of hand %s failed: %s", hand_no, exc)
            live.table.reviews[hand_no] = {"hand": hand_no + 1, "error": str(exc)}
        finally:
            live.reviewing.discard(hand_no)
        await self.broadcast(live)
