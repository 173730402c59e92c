"""Where a language-model agent keeps its exchanges: a JSONL log and a response cache.

- ``llm_exchanges.jsonl``: one line per decision (its record): the model, the hash of
  the prompt, the messages sent and the answers (raw), requests, re-asks, illegal and
  unreadable answers, transport errors, the tokens paid for (``tokens_in``/``_out``) and
  those replayed from the cache (``replayed_tokens_in``/``_out``) kept apart, reasoning
  and cached prompt tokens where the endpoint reports them, the decision's wall seconds
  (retries, backoff and timeouts included), whether the fallback agent played and why.
  Lines are appended whole (``O_APPEND``), so the processes of a tournament share the
  file; a line torn by a kill is skipped when read. Nothing is ever rewritten: a resumed
  unit replays its decisions and appends new records, and the summary takes each
  decision's outcome from its latest record and its costs from every record
  (`summarize_records`), so what a killed run paid stays counted.
- ``llm_cache.sqlite``: the model's answer to each request, keyed by the endpoint, the
  model, the messages and the request's settings (`request_key`). A rerun, or a
  ``--resume`` after a kill, takes an answered request from here instead of sending it
  again, so it plays the same actions without paying twice. SQLite serialises the
  writers of several processes. A cache that is damaged, of another schema or locked
  stops the run with one line naming it (`CacheError`); one deleted during the run is
  written again from the answers this process holds, with a warning.

The store holds no API key: the key is read from its environment variable when a request
is sent and is written nowhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

EXCHANGES_FILE = "llm_exchanges.jsonl"
CACHE_FILE = "llm_cache.sqlite"
#: a tournament names its run folder here while it plays (`LLMAgent.in_run_folder`,
#: agents.llm.run); an llm agent built in a worker of that run writes its exchanges and
#: cache there
RUN_DIR_ENV = "SPADES_RUN_DIR"
#: the default limit on the share of decisions the fallback agent plays
#: (``max_fallback_share``): past it a run stops, or its result is marked invalid
MAX_FALLBACK_SHARE = 0.05


class CacheError(ValueError):
    """The response cache cannot be used (damaged, another schema, locked): one line
    naming the file and the way out."""


def request_key(
    model: str,
    messages: list[dict[str, str]],
    sampling: dict[str, Any],
    endpoint: str = "",
    draw: Any = None,
) -> str:
    """The cache key of one request: SHA-256 of the endpoint, the model, the messages,
    the request's settings (temperature, token limit, extra fields) and `draw` (None at
    temperature 0; else what makes each decision of each agent a draw of its own, so a
    model playing itself is not served the other side's answers), canonical JSON."""
    blob = json.dumps(
        {
            "endpoint": endpoint,
            "model": model,
            "messages": messages,
            "sampling": sampling,
            "draw": draw,
        },
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """A short hash of a prompt (its messages), for the exchange log."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def view_hash(view: dict[str, Any]) -> str:
    """A short hash of a seat's view (`spades_env.text.seat_json`): what a decision saw,
    to find its record again from a replayed log (``spades export-chat``)."""
    blob = json.dumps(view, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class ResponseCache:
    """Answers by request key, in an SQLite file (None: a cache in memory only)."""

    def __init__(self, path: Path | None, timeout: float = 30.0) -> None:
        self.path = path
        self.timeout = timeout
        self._memory: dict[str, dict[str, Any]] = {}
        self._db: sqlite3.Connection | None = None
        self._lock = threading.Lock()  # one connection, used by the agent's threads
        self._inode: tuple[int, int] | None = None
        self.recreated = 0  # times the file was found deleted and written again
        if path is not None:
            self._open()

    def _open(self) -> None:
        assert self.path is not None
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            db = sqlite3.connect(
                str(self.path), timeout=self.timeout, isolation_level=None,
                check_same_thread=False,
            )  # fmt: skip
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )
            columns = [row[1] for row in db.execute("PRAGMA table_info(answers)")]
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None
        if columns != ["key", "value"]:
            db.close()
            raise CacheError(
                f"response cache {str(self.path)!r} has a table 'answers' of another schema "
                f"(columns {', '.join(columns)}): it is not this agent's cache; move it away "
                "or name another store= folder"
            )
        self._db = db
        st = os.stat(self.path)
        self._inode = (st.st_dev, st.st_ino)

    def _error(self, exc: sqlite3.DatabaseError) -> CacheError:
        what = str(exc)
        if "locked" in what or "busy" in what:
            why = (f"is locked by another program (waited {self.timeout:g} s); end it, or "
                   "name another store= folder")  # fmt: skip
        else:
            why = (f"is damaged ({what}); move it away (its answers are then sent and paid "
                   "for again) or name another store= folder")  # fmt: skip
        return CacheError(f"response cache {str(self.path)!r} {why}")

    def _check_file(self) -> None:
        """Write the file again, with every answer this process holds, if it was deleted
        or replaced during the run (said once on stderr: the answers of other processes
        in it are lost to replay, none of this one's)."""
        if self.path is None or self._inode is None:
            return
        try:
            st = os.stat(self.path)
            same = (st.st_dev, st.st_ino) == self._inode
        except OSError:
            same = False
        if same:
            return
        if self._db is not None:
            self._db.close()
            self._db = None
        self._open()
        for key, value in self._memory.items():
            self._write(key, value)
        self.recreated += 1
        print(
            f"warning: response cache {str(self.path)!r} was deleted during the run; written "
            f"again with the {len(self._memory)} answers this process holds",
            file=sys.stderr,
            flush=True,
        )

    def _write(self, key: str, value: dict[str, Any]) -> None:
        assert self._db is not None
        try:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)",
                (key, json.dumps(value, ensure_ascii=False)),
            )
        except sqlite3.DatabaseError as exc:
            raise self._error(exc) from None

    def get(self, key: str) -> dict[str, Any] | None:
        with self._lock:
            if key in self._memory:
                return self._memory[key]
            if self.path is None:
                return None
            self._check_file()
            assert self._db is not None
            try:
                row = self._db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
            except sqlite3.DatabaseError as exc:
                raise self._error(exc) from None
        if row is None:
            return None
        try:
            value = json.loads(row[0])
        except ValueError:
            return None  # a value this code did not write: asked again
        return value if isinstance(value, dict) and "content" in value else None

    def put(self, key: str, value: dict[str, Any]) -> None:
        with self._lock:
            self._memory[key] = value
            if self.path is None:
                return
            self._check_file()
            self._write(key, value)

    def keys(self) -> set[str]:
        """Every key held (for tests and reports)."""
        found = set(self._memory)
        if self._db is not None:
            found |= {k for (k,) in self._db.execute("SELECT key FROM answers")}
        return found

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None


def append_records(path: Path, records: list[dict[str, Any]]) -> None:
    """Append JSON lines with one write per line on an O_APPEND file (whole lines from
    every process)."""
    if not records:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        for rec in records:
            os.write(fd, (json.dumps(rec, ensure_ascii=False) + "\n").encode())
    finally:
        os.close(fd)


def read_all_records(path: Path) -> list[dict[str, Any]]:
    """Every decision record of an exchange log, in order, a decision replayed by a
    resume included; torn lines are skipped."""
    if not path.is_file():
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "decision" in rec and "agent" in rec:
            out.append(rec)
    return out


def _decision_key(rec: dict[str, Any]) -> str:
    return json.dumps([rec.get("agent"), rec["decision"]])


def read_records(path: Path) -> list[dict[str, Any]]:
    """The decision records of an exchange log, each decision once: its latest record
    (the one a resumed unit played); torn lines are skipped."""
    by_key: dict[str, dict[str, Any]] = {}
    for rec in read_all_records(path):
        by_key.pop(_decision_key(rec), None)
        by_key[_decision_key(rec)] = rec
    return list(by_key.values())


#: what a decision's latest record says (its outcome), summed over decisions
_OUTCOME = ("requests", "reasks", "illegal", "unreadable", "cached_requests")
#: what every record cost (a decision replayed by a resume too), summed over records
_COST = ("sent", "transport_errors", "tokens_in", "tokens_out", "replayed_tokens_in",
         "replayed_tokens_out", "reasoning_tokens", "cached_prompt_tokens")  # fmt: skip


def _new_entry(rec: dict[str, Any]) -> dict[str, Any]:
    return {
        "model": rec.get("model"),
        "decisions": 0,
        "answers": 0,
        "fallbacks": 0,
        "cached": 0,
        **dict.fromkeys(_OUTCOME, 0),
        **dict.fromkeys(_COST, 0),
        "seconds": 0.0,
        "superseded_records": 0,
        "_reasons": Counter(),
        "_limit": None,
        "_prices": None,
    }


def summarize_records(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent, from every record of a log (`read_all_records`): each decision's
    outcome from its latest record (decisions, answers, re-asks, illegal and unreadable
    answers, fallbacks), the costs from every record (requests sent, transport errors,
    tokens paid and replayed, wall seconds), the shares that judge the run
    (``fallback_share``, ``not_understood_share``), whether it is ``invalid`` and why,
    and its price in dollars where prices are known."""
    latest: dict[str, dict[str, Any]] = {}
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        s = out.setdefault(rec["agent"], _new_entry(rec))
        key = _decision_key(rec)
        if key in latest:
            s["superseded_records"] += 1
        latest.pop(key, None)
        latest[key] = rec
        for k in _COST:
            s[k] += _int(rec.get(k, rec.get("requests", 0) - rec.get("cached_requests", 0)
                                 if k == "sent" else 0))  # fmt: skip
        s["seconds"] += _float(rec.get("seconds", 0.0))
        limit = rec.get("max_fallback_share")
        if isinstance(limit, (int, float)):
            s["_limit"] = limit if s["_limit"] is None else min(s["_limit"], limit)
        if isinstance(rec.get("price_in"), (int, float)) and isinstance(
            rec.get("price_out"), (int, float)
        ):
            s["_prices"] = (rec["price_in"], rec["price_out"])
    for rec in latest.values():
        s = out[rec["agent"]]
        s["decisions"] += 1
        for k in _OUTCOME:
            s[k] += _int(rec.get(k, 0))
        s["answers"] += len(rec.get("answers") or ())
        s["fallbacks"] += bool(rec.get("fallback"))
        s["cached"] += bool(rec.get("cached"))
        if rec.get("fallback"):
            s["_reasons"][str(rec.get("fallback_reason") or "unknown")] += 1
    for s in out.values():
        _finish(s)
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _float(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else 0.0


def _finish(s: dict[str, Any]) -> None:
    n = max(s["decisions"], 1)
    for k in ("reasks", "illegal", "unreadable", "fallbacks", "tokens_in", "tokens_out"):
        s[f"{k}_per_decision"] = s[k] / n
    s["seconds_per_decision"] = s["seconds"] / n
    s["seconds"] = round(s["seconds"], 3)
    s["fallback_share"] = s["fallbacks"] / n
    s["not_understood_share"] = s["unreadable"] / s["answers"] if s["answers"] else 0.0
    limit = s.pop("_limit")
    s["max_fallback_share"] = MAX_FALLBACK_SHARE if limit is None else limit
    reasons: Counter = s.pop("_reasons")
    s["fallback_reasons"] = dict(reasons.most_common())
    s["invalid"] = s["decisions"] > 0 and s["fallback_share"] > s["max_fallback_share"]
    s["invalid_reason"] = None
    if s["invalid"]:
        cause = reasons.most_common(1)[0][0] if reasons else "unknown"
        s["invalid_reason"] = (
            f"{s['fallbacks']} of {s['decisions']} decisions ({s['fallback_share']:.1%}) were "
            f"played by the fallback agent, over the limit {s['max_fallback_share']:.1%} "
            f"(max_fallback_share); most often: {cause}"
        )
    prices = s.pop("_prices")
    s["price_in"], s["price_out"] = prices if prices else (None, None)
    s["dollars"] = (
        round((s["tokens_in"] * prices[0] + s["tokens_out"] * prices[1]) / 1e6, 6)
        if prices
        else None
    )


def run_stats(run_dir: Path) -> dict[str, dict[str, Any]]:
    """`summarize_records` of a run folder's exchange log ({} when it has none)."""
    return summarize_records(read_all_records(Path(run_dir) / EXCHANGES_FILE))
