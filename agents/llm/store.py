"""Where a language-model agent keeps its exchanges: a JSONL log and a response cache.

- ``llm_exchanges.jsonl``: one line per decision (`DecisionRecord`): the model, the hash of
  the prompt, the answers, tokens in and out, seconds, requests, re-asks, illegal and
  unreadable answers, transport errors, whether it came from the cache and whether the
  fallback agent played. Lines are appended whole (``O_APPEND``), so the processes of a
  tournament share the file; a line torn by a kill is skipped when read.
- ``llm_cache.sqlite``: the model's answer to each request, keyed by the hash of the
  model, the messages and the sampling settings (`request_key`). A rerun, or a
  ``--resume`` after a kill, takes an answered request from here instead of sending it
  again, so it plays the same actions without paying twice. SQLite serialises the
  writers of several processes.

The store holds no API key: the key is read from its environment variable when a request
is sent and is written nowhere.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

EXCHANGES_FILE = "llm_exchanges.jsonl"
CACHE_FILE = "llm_cache.sqlite"
#: a tournament names its run folder here while it plays (`LLMAgent.in_run_folder`,
#: agents.llm.run); an llm agent built in a worker of that run writes its exchanges and
#: cache there
RUN_DIR_ENV = "SPADES_RUN_DIR"


def request_key(model: str, messages: list[dict[str, str]], sampling: dict[str, Any]) -> str:
    """The cache key of one request: SHA-256 of the model, the messages and the sampling
    settings (temperature, max_tokens), canonical JSON."""
    blob = json.dumps(
        {"model": model, "messages": messages, "sampling": sampling},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(blob.encode()).hexdigest()


def prompt_hash(messages: list[dict[str, str]]) -> str:
    """A short hash of a prompt (its messages), for the exchange log."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


class ResponseCache:
    """Answers by request key, in an SQLite file (None: a cache in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._memory: dict[str, dict[str, Any]] = {}
        self._db: sqlite3.Connection | None = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._db = sqlite3.connect(str(path), timeout=60, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS answers (key TEXT PRIMARY KEY, value TEXT NOT NULL)"
            )

    def get(self, key: str) -> dict[str, Any] | None:
        if key in self._memory:
            return self._memory[key]
        if self._db is None:
            return None
        row = self._db.execute("SELECT value FROM answers WHERE key = ?", (key,)).fetchone()
        return None if row is None else json.loads(row[0])

    def put(self, key: str, value: dict[str, Any]) -> None:
        self._memory[key] = value
        if self._db is not None:
            self._db.execute(
                "INSERT OR REPLACE INTO answers (key, value) VALUES (?, ?)",
                (key, json.dumps(value, ensure_ascii=False)),
            )

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


def read_records(path: Path) -> list[dict[str, Any]]:
    """The decision records of an exchange log, each decision once (the last record of a
    decision key wins: a resumed unit replays the decisions of the killed one); torn
    lines are skipped."""
    if not path.is_file():
        return []
    by_key: dict[str, dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if isinstance(rec, dict) and "decision" in rec:
            by_key[json.dumps([rec.get("agent"), rec["decision"]])] = rec
    return list(by_key.values())


def summarize_records(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per agent: decisions, requests, re-asks, illegal and unreadable answers,
    fallbacks, transport errors, tokens in/out and seconds, totals and per decision."""
    out: dict[str, dict[str, Any]] = {}
    for rec in records:
        s = out.setdefault(
            rec["agent"],
            {
                "model": rec.get("model"),
                "decisions": 0,
                "requests": 0,
                "reasks": 0,
                "illegal": 0,
                "unreadable": 0,
                "fallbacks": 0,
                "transport_errors": 0,
                "tokens_in": 0,
                "tokens_out": 0,
                "seconds": 0.0,
                "cached": 0,
            },
        )
        s["decisions"] += 1
        for k in ("requests", "reasks", "illegal", "unreadable", "transport_errors"):
            s[k] += int(rec.get(k, 0))
        s["tokens_in"] += int(rec.get("tokens_in", 0))
        s["tokens_out"] += int(rec.get("tokens_out", 0))
        s["seconds"] += float(rec.get("seconds", 0.0))
        s["fallbacks"] += bool(rec.get("fallback"))
        s["cached"] += bool(rec.get("cached"))
    for s in out.values():
        n = max(s["decisions"], 1)
        for k in ("reasks", "illegal", "unreadable", "fallbacks", "tokens_in", "tokens_out"):
            s[f"{k}_per_decision"] = s[k] / n
        s["seconds_per_decision"] = s["seconds"] / n
        s["seconds"] = round(s["seconds"], 3)
    return out


def run_stats(run_dir: Path) -> dict[str, dict[str, Any]]:
    """`summarize_records` of a run folder's exchange log ({} when it has none)."""
    return summarize_records(read_records(Path(run_dir) / EXCHANGES_FILE))
