"""Double-dummy tricks at scale: many deals on every core, kept in an on-disk cache.

`tricks_tables(deals)` is `tricks_table` for a batch of deals: (N, 4, 2) int8, the
tricks each team makes with each seat on lead. New deals are solved in worker processes
(one solver each); every answer goes into a `DDCache`, so a rerun, or another batch
holding the same deals, costs nothing.

The cache is one SQLite file (`default_cache_path()`, or any path) of rows
`key -> tricks of team 0` with one row per (deal, rules, leader). The key holds what a
double-dummy result depends on: the four hands, the leader, whether spades are already
broken, and the one rule option the solver reads beyond RULES.md §1-§3's fixed game
(`first_lead`); presets the solver does not play are refused before anything is solved.
A single-leader answer (what `spades analyze` needs) and a whole table share rows.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from contextlib import contextmanager
from multiprocessing import get_context
from pathlib import Path

import numpy as np
import numpy.typing as npt

from agents.dd.position import NUM_SEATS, Position, check_rules
from agents.processes import check_workers, exit_with_parent
from spades_env.rules import Rules

CACHE_ENV = "SPADES_DD_CACHE"
CHUNK = 8  # deals per task sent to a worker


def default_cache_path() -> Path:
    """`$SPADES_DD_CACHE`, else `$XDG_CACHE_HOME/spades-env/dd_tricks.sqlite` (default
    `~/.cache`)."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "spades-env" / "dd_tricks.sqlite"


def seeded_deals(n: int, seed: int = 0, rules: Rules | None = None) -> npt.NDArray[np.uint64]:
    """(n, 4) uint64: the first hands of the games with seeds `seed .. seed + n - 1`
    (RULES.md §1: the deal is drawn from the game's seed), the deals of `spades dd-table`
    and of `spades bench --only dd`."""
    from spades_env.state import deal_hands

    seeds = np.arange(seed, seed + n, dtype=np.uint64)
    return deal_hands(rules or Rules(), seeds, np.zeros(n, dtype=np.int64))


def dd_key(hands: Sequence[int], leader: int, rules: Rules, broken: bool = False) -> str:
    """The cache key of one double-dummy answer (see the module docstring)."""
    tail = ",".join(f"{int(h):x}" for h in hands)
    return f"{rules.first_lead}|{int(broken)}|{leader}|{tail}"


SQLITE_MAGIC = b"SQLite format 3\x00"  # the first 16 bytes of every SQLite file
MAX_TRICKS = 13  # RULES.md §1: tables are of 13-card hands


class DDCacheError(ValueError):
    """A double-dummy cache file that is not one, or holds what no deal can make."""


class DDCache:
    """Double-dummy answers on disk: key -> tricks of team 0 (seats 0 and 2).

    A file that is not SQLite, a SQLite file of another kind (other tables), a damaged
    one, or one holding a value that is not a trick count 0-13 raises `DDCacheError`
    naming it: such a value is never taken as tricks."""

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else default_cache_path()
        if self.path.exists() and self.path.is_dir():
            raise DDCacheError(f"dd cache {str(self.path)!r} is a folder; give a file path")
        if self.path.is_file() and self.path.stat().st_size > 0:
            with open(self.path, "rb") as f:
                if f.read(len(SQLITE_MAGIC)) != SQLITE_MAGIC:
                    raise self._error("is not a SQLite file")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._guard():
            self._db = sqlite3.connect(self.path, timeout=60)
            tables = dict(
                self._db.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
            )
            columns = [
                (name, kind.upper())
                for _, name, kind, *_ in self._db.execute("PRAGMA table_info(tricks)")
            ]
            if tables and (set(tables) != {"tricks"} or columns != _COLUMNS):
                self._db.close()
                names = ", ".join(sorted(tables)[:3])
                raise self._error(f"is a SQLite file of another kind (tables {names})")
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS tricks (key TEXT PRIMARY KEY, team0 INTEGER NOT NULL)"
            )
            self._db.commit()

    def _error(self, what: str) -> DDCacheError:
        return DDCacheError(
            f"dd cache {str(self.path)!r} {what}; give another cache file, or delete this "
            "one if it is a damaged double-dummy cache"
        )

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite's errors as one `DDCacheError`: a full, read-only or unwritable disk
        said as such (the cache is intact), a damaged file as damage."""
        try:
            yield
        except sqlite3.DatabaseError as exc:
            disk = _DISK_ERRORS.get(getattr(exc, "sqlite_errorcode", 0) & 0xFF)
            if disk is not None:
                raise DDCacheError(
                    f"dd cache {str(self.path)!r}: {disk} ({exc}); the cache is intact: free "
                    "some space or make it writable, or give another cache file"
                ) from None
            raise self._error(f"cannot be read as a double-dummy cache ({exc})") from None

    def get(self, keys: Iterable[str]) -> dict[str, int]:
        """The cached answers among `keys`; a value that is not 0-13 tricks raises."""
        keys = list(keys)
        out: dict[str, int] = {}
        with self._guard():
            for i in range(0, len(keys), 500):
                part = keys[i : i + 500]
                marks = ",".join("?" * len(part))
                query = f"SELECT key, team0 FROM tricks WHERE key IN ({marks})"
                out.update(self._db.execute(query, part).fetchall())
        for value in out.values():
            if type(value) is not int or not 0 <= value <= MAX_TRICKS:
                raise self._error(f"holds {value!r} as a deal's tricks, not 0-{MAX_TRICKS}")
        return out

    def put(self, answers: dict[str, int]) -> None:
        with self._guard():
            self._db.executemany(
                "INSERT OR REPLACE INTO tricks VALUES (?, ?)",
                [(k, int(v)) for k, v in answers.items()],
            )
            self._db.commit()

    def __len__(self) -> int:
        with self._guard():
            return int(self._db.execute("SELECT COUNT(*) FROM tricks").fetchone()[0])

    def close(self) -> None:
        self._db.close()


_COLUMNS = [("key", "TEXT"), ("team0", "INTEGER")]

#: SQLite's primary result codes of the disk rather than the file (sqlite.org/rescode.html):
#: these say nothing of the cache's content.
_DISK_ERRORS = {
    3: "permission denied",  # SQLITE_PERM
    5: "it is in use by another process for too long",  # SQLITE_BUSY
    8: "the file or its folder is read-only",  # SQLITE_READONLY
    10: "the disk could not read or write it (full, or removed?)",  # SQLITE_IOERR
    13: "the disk is full",  # SQLITE_FULL
    14: "it cannot be opened (its folder is read-only or missing?)",  # SQLITE_CANTOPEN
}


# --------------------------------------------------------------------------- workers
def _solve_chunk(
    items: list[tuple[tuple[int, ...], tuple[int, ...], bool]], rules: Rules
) -> list[list[int]]:
    """Per (hands, leaders, broken): team 0's tricks with each of those leaders on lead."""
    from agents.dd import kernel
    from agents.dd.solver import default_solver

    solver = default_solver()
    out = []
    for hands, leaders, broken in items:
        # One table for the leaders of a deal: bounds on tricks are facts about
        # positions (the leader is part of every key), so the solves share endings.
        solver._start(kernel.TRICKS, fresh=True)
        row: list[int] = []
        for leader in leaders:
            pos = Position.from_deal(np.asarray(hands, dtype=np.uint64), leader, broken, rules)
            # another leader's answer is the driver's first guess: leads change a
            # deal's tricks by a trick or so, and a near guess saves searches
            row.append(solver._tricks(pos, 0, row[-1] if row else None))
        out.append(row)
    return out


def solve_many(
    items: Sequence[tuple[tuple[int, ...], tuple[int, ...], bool]],
    rules: Rules,
    workers: int | None = None,
    on_done: Callable[[int, int], None] | None = None,
) -> Iterator[tuple[int, list[int]]]:
    """(index, answers) for each item of `_solve_chunk`, in completion order, on
    `workers` processes (default: every core; 1: in this process)."""
    workers = (os.cpu_count() or 1) if workers is None else workers
    if workers < 1:
        raise ValueError("workers must be at least 1")
    check_workers(workers, "workers")
    chunks = [list(range(i, min(i + CHUNK, len(items)))) for i in range(0, len(items), CHUNK)]
    done = 0
    if workers == 1 or len(items) <= 1:
        for idx in chunks:
            for i, ans in zip(idx, _solve_chunk([items[i] for i in idx], rules), strict=True):
                done += 1
                if on_done is not None:
                    on_done(done, len(items))
                yield i, ans
        return
    # The platform's default start method (fork on Linux: the workers inherit the loaded
    # kernels); the progress bar draws without a thread, so nothing is forked mid-lock.
    with ProcessPoolExecutor(
        min(workers, len(chunks)),
        mp_context=get_context(),
        initializer=exit_with_parent,  # a killed table leaves no worker behind
        initargs=(os.getpid(),),
    ) as pool:
        pending: dict[Future, list[int]] = {}
        queue = iter(chunks)
        try:
            for idx in queue:
                pending[pool.submit(_solve_chunk, [items[i] for i in idx], rules)] = idx
                if len(pending) >= 2 * workers:
                    break
            while pending:
                finished, _ = wait(pending, return_when=FIRST_COMPLETED)
                for fut in finished:
                    idx = pending.pop(fut)
                    for i, ans in zip(idx, fut.result(), strict=True):
                        done += 1
                        if on_done is not None:
                            on_done(done, len(items))
                        yield i, ans
                    nxt = next(queue, None)
                    if nxt is not None:
                        pending[pool.submit(_solve_chunk, [items[i] for i in nxt], rules)] = nxt
        except BaseException:
            pool.shutdown(wait=False, cancel_futures=True)
            for proc in list((getattr(pool, "_processes", None) or {}).values()):
                proc.kill()  # an interrupted table stops now; the cache keeps what is done
            raise


def _progress(total: int, enabled: bool):
    """A rich progress bar on stderr, redrawn on each advance (no refresh thread)."""
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    return Progress(
        TextColumn("double dummy"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=Console(stderr=True),
        auto_refresh=False,
        disable=not enabled,
    )


def tricks_tables(
    deals: npt.ArrayLike,
    rules: Rules | None = None,
    broken: bool = False,
    cache: DDCache | str | Path | None = None,
    workers: int | None = None,
    progress: bool = False,
    counts: dict[str, int] | None = None,
) -> npt.NDArray[np.int8]:
    """(N, 4, 2) int8: `tricks_table` of each of the (N, 4) uint64 deals.

    Cached answers are read from `cache` (a `DDCache`, a path, or None for the default
    path); the others are solved on `workers` processes (default: every core) and saved
    as they come, so an interrupted run keeps its work. `progress` shows a bar.
    `counts`, if given, gets the number of deals `solved` now and found `cached`.
    """
    rules = rules or Rules()
    check_rules(rules)
    arr = np.asarray(deals, dtype=np.uint64).reshape(-1, NUM_SEATS)
    if rules.hand_size != 13:
        raise ValueError("tricks tables need 13-card hands (RULES.md §1)")
    store = cache if isinstance(cache, DDCache) else DDCache(cache)
    first_two_clubs = rules.first_lead == "two_of_clubs"
    hands = [tuple(int(h) for h in d) for d in arr]
    # RULES.md §3 first_lead=two_of_clubs: the holder of 2C leads whoever "leads".
    leaders = [
        (Position.from_deal(d, 0, broken, rules).leader,) if first_two_clubs else (0, 1, 2, 3)
        for d in arr
    ]
    keys = [
        [dd_key(h, ld, rules, broken) for ld in lds] for h, lds in zip(hands, leaders, strict=True)
    ]
    known = store.get(k for row in keys for k in row)
    todo = [i for i, row in enumerate(keys) if any(k not in known for k in row)]
    items = [(hands[i], leaders[i], broken) for i in todo]
    if counts is not None:
        counts.update(solved=len(todo), cached=len(arr) - len(todo))
    with _progress(len(items), progress and bool(items)) as bar:
        task = bar.add_task("dd", total=len(items))
        batch: dict[str, int] = {}
        try:
            for j, answers in solve_many(items, rules, workers):
                i = todo[j]
                for key, t0 in zip(keys[i], answers, strict=True):
                    batch[key] = t0
                    known[key] = t0
                bar.advance(task)
                bar.refresh()
                if len(batch) >= 64:
                    store.put(batch)
                    batch = {}
        finally:  # an interrupted run keeps every answer it has
            store.put(batch)
    out = np.zeros((len(arr), NUM_SEATS, 2), dtype=np.int8)
    for i, row in enumerate(keys):
        t0s = [known[k] for k in row]
        for leader in range(NUM_SEATS):
            t0 = t0s[0] if first_two_clubs else t0s[leader]
            out[i, leader] = (t0, rules.hand_size - t0)
    if not isinstance(cache, DDCache):
        store.close()
    return out
