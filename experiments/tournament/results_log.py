"""The tournament log: append-only JSONL, one row per hand, written in whole units.

A tournament's work is cut into units (see `experiments.tournament.runner`); every row carries
its `unit` and the number of rows that unit has (`unit_rows`). A unit's rows are appended
with one write, then flushed and fsynced, so after a kill at any moment the file is a
sequence of complete units followed by at most one partial unit, whose last line may be
torn. `repair` finds the complete units and truncates the file after the last of them;
the tournament then plays only the units that are missing.

The log is plain JSON Lines: `pandas.read_json(path, lines=True)` reads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

#: Fields that depend on when a row was written, not on the games (left out when
#: comparing two runs of the same tournament).
TIMING_FIELDS = ("logged_at",)


class LogError(ValueError):
    """A log that does not belong to this tournament, or cannot be read."""


def encode_unit(rows: Sequence[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()


def append_unit(path: str | Path, rows: Sequence[dict[str, Any]]) -> None:
    """Append one unit's rows as a single write, flushed and fsynced."""
    data = encode_unit(rows)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        view = memoryview(data)
        while view:
            n = os.write(fd, view)
            view = view[n:]
        os.fsync(fd)
    finally:
        os.close(fd)


def _lines(data: bytes) -> Iterator[tuple[int, bytes]]:
    """(end offset, line) for each newline-terminated line; a torn tail is skipped."""
    start = 0
    while True:
        end = data.find(b"\n", start)
        if end < 0:
            return
        yield end + 1, data[start:end]
        start = end + 1


def repair(path: str | Path, tournament: str) -> set[int]:
    """Truncate the log after its last complete unit; return the complete units' ids."""
    path = Path(path)
    if not path.exists():
        return set()
    data = path.read_bytes()
    done: set[int] = set()
    good = 0  # byte offset after the last complete unit
    unit, count = None, 0
    for end, line in _lines(data):
        try:
            row = json.loads(line)
        except json.JSONDecodeError:
            break  # a torn line can only be the last one written
        if row.get("tournament") != tournament:
            raise LogError(
                f"log {str(path)!r} holds rows of tournament {row.get('tournament')!r}, "
                f"not {tournament!r}; choose another --out"
            )
        if row["unit"] != unit:
            unit, count = row["unit"], 0
        count += 1
        if count == row["unit_rows"]:
            done.add(unit)
            good = end
    if good < len(data):
        os.truncate(path, good)
    return done


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every complete row of a log (a torn last line is ignored)."""
    path = Path(path)
    if path.is_dir():
        path = path / "log.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LogError(f"log {str(path)!r} does not exist") from None
    rows = []
    for _, line in _lines(data):
        try:
            rows.append(json.loads(line))
        except json.JSONDecodeError:
            break
    return rows
