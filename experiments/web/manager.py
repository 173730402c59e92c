"""The tables a server holds: creating them, finding a seat by its token, the bots' turns,
telling every connected seat what changed, and keeping memory bounded.

At most `max_tables` tables are in memory. Every table is on disk after every action
(`experiments.web.game`), so a table nobody is connected to can be dropped from memory
and is loaded again when one of its seats reconnects; a new table is refused (one line)
only when every table in memory has someone connected. Seat tokens of the games on disk
are indexed at start, so a link still works after the server restarts.

Table calls run in worker threads, one at a time per table (its asyncio lock), so one
slow table never holds up another. A bot thinks in the table's agents' process
(`experiments.web.seats`) without the lock held: a seat that connects meanwhile gets its
state at once. A bot that fails (raises, exits, hangs past the decision time limit)
stops the table's bots and is shown to the people, who retry the seat or give it another
agent of the catalogue (`seat_command`).

New tables are rate-limited (`tables_per_minute`, default NEW_TABLES_PER_MINUTE) and
capped on disk (`max_games`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import threading
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from experiments.web.catalogue import Catalogue
from experiments.web.game import (
    DECISION_TIMEOUT,
    Event,
    ResumeError,
    Table,
    TableError,
    create_table,
    load_table,
)
from experiments.web.records import SeatInfo, read_game, token_hash, write_reviews
from experiments.web.seats import SeatError
from experiments.web.views import seat_state

log = logging.getLogger("spades.web")

Send = Callable[[dict[str, Any]], Awaitable[None]]
#: new tables a server makes per minute at most (a burst of as many at once)
NEW_TABLES_PER_MINUTE = 30
#: seconds a table's agents' process may sit unused before it is closed (a later move
#: starts a new one, which replays the game)
IDLE_AGENTS = 120.0


@dataclass
class Live:
    """A table in memory with its lock, its connections and its bot task."""

    table: Table
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    conns: dict[int, dict[int, Send]] = field(default_factory=dict)  # seat -> id -> send
    bots: asyncio.Task | None = None
    reviewing: set[int] = field(default_factory=set)
    review_tasks: set[asyncio.Task] = field(default_factory=set)  # running reviews

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
        catalogue: Catalogue | None = None,
        decision_timeout: float = DECISION_TIMEOUT,
        max_games: int = 1000,
        tables_per_minute: int = 0,
        datasets: bool = True,
        review_nodes: int | None = None,
    ) -> None:
        self.root = root
        self.datasets = datasets  # the games keep the people's decisions as datasets
        self.games = root / "web"
        self.pace = pace
        self.max_tables = max_tables
        self.review = review
        # search nodes a hand's review spends on its early cards before it is shown (None:
        # `experiments.web.review.SCORE_NODES`); the cards left are judged in the background
        self.review_nodes = review_nodes
        self._completing: list[tuple[str, int]] = []  # (table, hand) reviews to complete
        self._completer: asyncio.Task | None = None
        self.catalogue = catalogue if catalogue is not None else Catalogue()
        self.decision_timeout = decision_timeout
        self.max_games = max_games
        self.live: OrderedDict[str, Live] = OrderedDict()  # least recently used first
        self.tokens: dict[str, tuple[str, int]] = {}  # SHA-256 of a seat token -> (table id, seat)
        self.on_disk: set[str] = set()  # the games under root/web
        self.tables_per_minute = tables_per_minute or NEW_TABLES_PER_MINUTE
        self._allowance, self._allowance_at = float(self.tables_per_minute), time.monotonic()
        self._index()

    # ----------------------------------------------------------------- finding
    def _web_folder(self) -> Path | None:
        """root/web, if it is a folder inside the root (a link out of it is not followed)."""
        if not self.games.is_dir() or self.games.resolve().parent != self.root.resolve():
            return None
        return self.games

    def _index(self) -> None:
        """The seat tokens of every game on disk (read from game.json, nothing replayed)."""
        games = self._web_folder()
        if games is None:
            return
        for folder in sorted(games.iterdir()):
            path = folder / "game.json"
            if folder.is_symlink() or not folder.is_dir() or not path.exists():
                continue
            self.on_disk.add(folder.name)
            try:
                data = read_game(path)
                for s, seat in enumerate(data["seats"]):
                    if seat.get("kind") != "human":
                        continue
                    sha = seat.get("token_sha256")
                    if not isinstance(sha, str) and isinstance(seat.get("token"), str):
                        sha = token_hash(seat["token"])  # written before tokens were hashed
                    if isinstance(sha, str):
                        self.tokens[sha] = (folder.name, s)
            except (OSError, ValueError, KeyError, TypeError, AttributeError, RecursionError):
                log.warning("skipping web/%s/game.json: not a readable web game", folder.name)

    def lookup(self, token: str) -> tuple[str, int] | None:
        """(table id, seat) of a seat token (found by its hash)."""
        if not isinstance(token, str) or not 0 < len(token) <= 200:
            return None
        return self.tokens.get(token_hash(token))

    def close(self) -> None:
        """End every table's agents' process (the server stops)."""
        for live in self.live.values():
            if live.bots is not None:
                live.bots.cancel()
            live.table.close()

    async def get(self, table_id: str) -> Live:
        """The table in memory, loaded from disk if it was dropped or the server restarted."""
        live = self.live.get(table_id)
        if live is None:
            await self._make_room()
            try:
                table = await asyncio.to_thread(
                    load_table,
                    self.games / table_id,
                    self.catalogue.spec,
                    self.decision_timeout,
                    f"web/{table_id}/game.json",
                    self.datasets,
                )
            except ResumeError as exc:
                raise TableError(str(exc)) from None
            live = self.live.setdefault(table_id, Live(table))
            self.review_missing(live)
        self.live.move_to_end(table_id)
        return live

    async def _make_room(self) -> None:
        """Drop idle tables (nobody connected, no move under way) until one more fits;
        a table whose bots are mid-move is waited for a moment, never cut off. Agents'
        processes unused for IDLE_AGENTS seconds are closed on the way."""
        now = time.monotonic()
        for live in self.live.values():
            agents = live.table.agents_started
            idle = agents is not None and now - agents.last_used > IDLE_AGENTS
            if idle and agents.running and not live.lock.locked():
                await asyncio.to_thread(agents.close)
        for _ in range(50):
            if len(self.live) < self.max_tables:
                return
            unseated = [k for k, v in self.live.items() if not v.connected()]
            idle = next((k for k in unseated if not self.live[k].lock.locked()), None)
            if idle is not None:
                dropped = self.live.pop(idle)
                if dropped.bots is not None:
                    dropped.bots.cancel()
                await asyncio.to_thread(dropped.table.close)
                continue
            if not unseated:
                break
            await asyncio.sleep(0.05)
        raise TableError(f"the server holds {self.max_tables} tables in play; try again later")

    # ----------------------------------------------------------------- tables
    def _take_allowance(self) -> None:
        """The rate limit of new tables: `tables_per_minute`, refilled continuously (a
        burst of as many at once)."""
        now = time.monotonic()
        rate = self.tables_per_minute / 60.0
        self._allowance = min(
            float(self.tables_per_minute), self._allowance + (now - self._allowance_at) * rate
        )
        self._allowance_at = now
        if self._allowance < 1:
            wait = (1 - self._allowance) / rate
            raise TableError(f"too many new tables: try again in {wait:.0f} s")
        self._allowance -= 1

    async def create(self, rules, seats: list[SeatInfo], seed=None, hint=None):
        """A new table (`hint`: the hint agent as (name, spec)); TableError past the rate
        limit, the games kept on disk, or when the root cannot be written."""
        if len(self.on_disk) >= self.max_games:
            raise TableError(
                f"the server keeps {self.max_games} games on disk and takes no new table "
                "(its owner can remove old ones from the root's web folder)"
            )
        self._take_allowance()
        await self._make_room()
        table_id = time.strftime("%Y%m%d-%H%M%S-") + secrets.token_hex(3)
        try:
            table = await asyncio.to_thread(
                create_table,
                self.games / table_id,
                rules,
                seats,
                seed,
                hint,
                table_id,
                self.decision_timeout,
                self.datasets,
            )
        except OSError as exc:
            raise TableError(
                f"the server cannot write the game under its root ({exc.strerror or exc})"
            ) from None
        self.on_disk.add(table_id)
        for s, info in enumerate(table.seats):
            if info.kind == "human":
                self.tokens[info.token_sha] = (table_id, s)
        live = self.live[table_id] = Live(table)
        self.kick(live)
        return table

    # ----------------------------------------------------------------- connections
    async def join(self, live: Live, seat: int, conn: int, send: Send) -> None:
        async with live.lock:  # no move half made while the seat's first view is built
            first = not live.conns.get(seat)
            live.conns.setdefault(seat, {})[conn] = send
            data = self.state(live, seat)
            others = self.views(live, but=seat) if first else []
        await send(data)
        await self.send_views(others)  # the others see this seat come back
        self.kick(live)

    def leave(self, live: Live, seat: int, conn: int) -> None:
        """A connection ends; when it was the seat's last, the others see the seat away."""
        conns = live.conns.get(seat, {})
        conns.pop(conn, None)
        if not conns:
            with contextlib.suppress(RuntimeError):  # no loop: the server is ending
                asyncio.get_running_loop().create_task(self.broadcast(live))

    @staticmethod
    def state(live: Live, seat: int) -> dict[str, Any]:
        """`seat`'s view (`seat_state`) with the table's presence: `present[s]` is False
        for a person's seat that no browser holds now (an agent's seat is always
        present). The game waits for an absent person as for any person."""
        data = seat_state(live.table, seat)
        data["present"] = [
            info.kind != "human" or bool(live.conns.get(s))
            for s, info in enumerate(live.table.seats)
        ]
        return data

    @classmethod
    def views(cls, live: Live, but: int = -1) -> list[tuple[list[Send], dict[str, Any]]]:
        """Each connected seat's own view (`state`), built while the caller holds the
        table's lock, so no view is of a move half made (`but`: a seat left out)."""
        return [
            (list(conns.values()), cls.state(live, seat))
            for seat, conns in list(live.conns.items())
            if conns and seat != but
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
        """Start the table's bot task if a bot is to act and none runs; end the agents'
        process of a finished game."""
        if live.table.bot_to_act() and (live.bots is None or live.bots.done()):
            live.bots = asyncio.get_running_loop().create_task(self._bots(live))
        elif live.table.game.done and live.table.agents_started is not None:
            asyncio.get_running_loop().run_in_executor(None, live.table.close)

    async def _bots(self, live: Live) -> None:
        table = live.table
        while table.bot_to_act():
            if self.pace > 0:
                # a trick just taken stays in view a little longer before the next lead
                await asyncio.sleep(self.pace * (3 if table.trick_just_taken() else 1))
            try:
                # the agent thinks in its own process, the table's lock not held
                moves, action = await asyncio.to_thread(table.bot_decide)
                async with live.lock:
                    record = await asyncio.to_thread(table.bot_apply, moves, action)
                    views = self.views(live)
            except SeatError as exc:
                async with live.lock:
                    table.fail(exc)
                    views = self.views(live)
                await self.send_views(views)
                return
            except TableError as exc:  # the table moved on, or could not save: shown, bots stop
                async with live.lock:
                    table.events.append(Event(str(exc)))
                    views = self.views(live)
                await self.send_views(views)
                if "moved on" in str(exc):
                    continue
                return
            await self.send_views(views)
            if record is not None and self.review:
                self.start_review(live, record["hand_no"])
                if self.pace > 0:  # time to look at the hand's result
                    await asyncio.sleep(3 * self.pace)
        if table.game.done:
            await asyncio.to_thread(table.close)

    async def seat_command(self, live: Live, do: str, agent: str | None) -> None:
        """A person's answer to a failed seat: `retry` it, or `replace` its agent by
        `agent` (a name of the server's catalogue)."""
        table = live.table
        async with live.lock:
            failure = table.failure
            if failure is None:
                raise TableError("no seat is waiting for a decision")
            if do == "retry":
                await asyncio.to_thread(table.retry)
            elif do == "replace":
                if failure["seat"] < 0 or agent is None:
                    raise TableError("name the agent to seat")
                spec = self.catalogue.spec(agent, table.rules, "the new agent")
                try:
                    await asyncio.to_thread(table.replace, failure["seat"], agent.strip(), spec)
                except OSError as exc:
                    raise TableError(f"the server cannot save the game ({exc.strerror})") from None
            else:
                raise TableError("seat: do is retry or replace")
            views = self.views(live)
        await self.send_views(views)
        self.kick(live)

    # ----------------------------------------------------------------- reviews
    def start_review(self, live: Live, hand_no: int) -> None:
        """Review a finished hand in a worker thread (`experiments.web.review`); the task
        is kept (`Live.review_tasks`) so that it runs to its end."""
        if hand_no in live.table.reviews or hand_no in live.reviewing:
            return
        live.reviewing.add(hand_no)
        task = asyncio.get_running_loop().create_task(self._review(live, hand_no))
        live.review_tasks.add(task)
        task.add_done_callback(live.review_tasks.discard)

    def review_missing(self, live: Live) -> None:
        """Review every finished hand that has no review of the current objective (a game
        loaded after a restart: the hands finished as the server stopped)."""
        if not self.review:
            return
        from experiments.web.review import OBJECTIVE

        for hand_no, _ in enumerate(live.table.session.records):
            have = live.table.reviews.get(hand_no)
            if have is not None and have.get("objective", {}).get("name") != OBJECTIVE["name"]:
                del live.table.reviews[hand_no]  # a review of an older kind: made again
            elif have is not None and "pending" in have:
                self.complete_later(live.table.id, hand_no)  # stopped mid-way: resumed
            self.start_review(live, hand_no)

    async def _review(self, live: Live, hand_no: int) -> None:
        from experiments.web.review import SCORE_NODES, review_hand

        table = live.table
        record = next(r for r in table.session.records if r["hand_no"] == hand_no)
        nodes = SCORE_NODES if self.review_nodes is None else self.review_nodes
        try:
            table.reviews[hand_no] = await asyncio.to_thread(review_hand, record, nodes=nodes)
            if "pending" in table.reviews[hand_no]:
                self.complete_later(table.id, hand_no)
        except Exception as exc:  # the review is extra: never let it break the table
            log.warning("review of hand %s failed: %s", hand_no, exc)
            table.reviews[hand_no] = {"hand": hand_no + 1, "error": str(exc)}
        finally:
            live.reviewing.discard(hand_no)
        try:  # kept with the game: the reviews are there after a restart
            await asyncio.to_thread(write_reviews, table.folder, dict(table.reviews))
        except OSError as exc:
            log.warning("table %s: reviews not saved: %s", table.id, exc)
        await self.broadcast(live)

    def complete_later(self, table_id: str, hand_no: int) -> None:
        """Judge in points, in the background, the cards a hand's review left in tricks
        only (`experiments.web.review.complete_card`): one card at a time for the whole
        server, the hands in the order they came, a hand's first review always first."""
        if (table_id, hand_no) not in self._completing:
            self._completing.append((table_id, hand_no))
        if self._completer is None or self._completer.done():
            self._completer = asyncio.get_running_loop().create_task(self._complete())

    async def _complete(self) -> None:
        from experiments.web.review import complete_card

        while self._completing:
            table_id, hand_no = self._completing[0]
            live = self.live.get(table_id)
            review = live.table.reviews.get(hand_no) if live is not None else None
            if review is None or "pending" not in review:
                # complete, or its table left memory: resumed when the table is loaded again
                self._completing.pop(0)
                continue
            table = live.table
            record = next(r for r in table.session.records if r["hand_no"] == hand_no)
            try:
                out = await _in_daemon_thread(complete_card, record, review)
            except Exception as exc:  # the review is extra: never let it break the table
                log.warning("review of hand %s not completed: %s", hand_no, exc)
                self._completing.pop(0)
                continue
            if out is None:  # a hand's first review is using the solver
                await asyncio.sleep(0.25)
                continue
            table.reviews[hand_no] = out
            try:  # each card kept: a restart goes on from the next one
                await asyncio.to_thread(write_reviews, table.folder, dict(table.reviews))
            except OSError as exc:
                log.warning("table %s: reviews not saved: %s", table.id, exc)
            if "pending" not in out:
                self._completing.pop(0)
                await self.broadcast(live)  # the pages showing it ask for it again


async def _in_daemon_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """`fn(*args)` in a daemon thread: a long solve there does not hold up the server's
    exit, as a worker thread of `asyncio.to_thread` would."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():
            (done.set_result if ok else done.set_exception)(value)

    def run() -> None:
        try:
            out = (True, fn(*args))
        except Exception as exc:
            out = (False, exc)
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits
            loop.call_soon_threadsafe(settle, *out)

    threading.Thread(target=run, daemon=True, name="review").start()
    return await done
