"""The tournament log: append-only JSONL, one row per hand, written in whole units.

A tournament's work is cut into units (see `experiments.tournament.runner`); every row carries
its `unit` and the number of rows that unit has (`unit_rows`). A unit's rows are appended
with one write, then flushed and fsynced, so after a kill at any moment the file is a
sequence of complete units followed by at most one partial unit, whose last line may be
torn. `repair` finds the complete units and truncates the file after the last of them;
the tournament then plays only the units that are missing.

Only that torn last line is normal. Any other line that is not a JSON object is damage,
and reading the log (`read_rows`, `repair`) raises `LogError` naming its line number
rather than taking the rows before it as the whole log. A unit logged twice (two
processes that resumed one run folder at once, before run folders were locked) is
repaired when both copies hold the same rows, and refused when they differ.

The log is plain JSON Lines: `pandas.read_json(path, lines=True)` reads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
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


def _lines(data: bytes) -> Iterator[tuple[int, int, int, bytes]]:
    """(line number, start offset, end offset, line) of each line; the text after the
    last newline, if any, comes last, ending at the end of the data."""
    start, number = 0, 0
    while start < len(data):
        end = data.find(b"\n", start)
        number += 1
        if end < 0:
            yield number, start, len(data), data[start:]
            return
        yield number, start, end + 1, data[start:end]
        start = end + 1


def parse(path: str | Path, data: bytes) -> list[tuple[int, int, int, dict[str, Any]]]:
    """(line number, start, end offset, row) of every row; a torn last line is left out.

    Any other line that is not a JSON object raises `LogError` naming it.
    """
    lines = list(_lines(data))
    if lines and not data.endswith(b"\n"):
        lines.pop()  # every row ends with a newline: text after the last one is torn
    while lines and not lines[-1][3].strip():
        lines.pop()  # blank lines at the end (a newline written twice) mean nothing
    out = []
    for number, start, end, line in lines:
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            if number == lines[-1][0]:
                break  # the line being written when the run was killed
            raise LogError(
                f"log {str(path)!r} line {number} is not valid JSON ({exc}); only a torn "
                "last line is expected after a kill, so the log is damaged"
            ) from None
        if not isinstance(row, dict):
            raise LogError(
                f"log {str(path)!r} line {number} is not a JSON object but "
                f"{type(row).__name__} {line[:40].decode(errors='replace')!r}; "
                "every line of a tournament log is one row"
            )
        out.append((number, start, end, row))
    return out


def _field(path: Path, number: int, row: dict[str, Any], key: str) -> Any:
    if key not in row:
        raise LogError(f"log {str(path)!r} line {number} lacks the field {key!r}")
    return row[key]


def _key(row: dict[str, Any]) -> tuple[Any, ...]:
    return row.get("deal"), row.get("side"), row.get("hand")


def _strip_timing(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in rows]


@dataclass
class Repair:
    """What `repair` found: the complete units, and what it dropped from the file."""

    done: set[int] = field(default_factory=set)
    duplicates: list[int] = field(default_factory=list)  # units logged more than once
    partial: list[int] = field(default_factory=list)  # units cut short before the end
    torn_bytes: int = 0  # bytes cut off the end (a partial last unit, a torn line)

    def notes(self) -> list[str]:
        out = []
        if self.duplicates:
            out.append(
                f"dropped {len(self.duplicates)} unit(s) logged twice: {_few(self.duplicates)}"
            )
        if self.partial:
            out.append(f"dropped {len(self.partial)} unit(s) cut short: {_few(self.partial)}")
        return out


def _few(units: Sequence[int]) -> str:
    shown = ", ".join(map(str, units[:5]))
    return shown + (", ..." if len(units) > 5 else "")


def repair(path: str | Path, tournament: str) -> Repair:
    """Make the log a sequence of complete units, each once; return what was found.

    A partial unit at the end (a kill) is cut off. A unit logged twice keeps its first
    copy when the copies hold the same rows (timing aside), and raises `LogError` when
    they differ; a unit cut short before the end is dropped (it is played again). Any
    such change rewrites the file atomically.
    """
    path = Path(path)
    result = Repair()
    if not path.exists():
        return result
    data = path.read_bytes()
    keep: list[tuple[int, int]] = []  # byte ranges of the units kept
    first: dict[int, list[dict[str, Any]]] = {}
    unit, begin, rows = None, 0, []
    good = 0  # byte offset after the last complete unit
    for number, start, end, row in parse(path, data):
        if row.get("tournament") != tournament:
            raise LogError(
                f"log {str(path)!r} line {number} holds a row of tournament "
                f"{row.get('tournament')!r}, not {tournament!r}; choose another --out"
            )
        this, size = _field(path, number, row, "unit"), _field(path, number, row, "unit_rows")
        if this != unit or (rows and "deal" in row and _key(row) == _key(rows[0])):  # or a copy
            if rows:
                result.partial.append(unit)  # the unit before was cut short
            unit, begin, rows = this, start, []
        rows.append(row)
        if len(rows) < size:
            continue
        if unit not in first:
            first[unit] = rows
            keep.append((begin, end))
            result.done.add(unit)
        elif _strip_timing(first[unit]) == _strip_timing(rows):
            result.duplicates.append(unit)
        else:
            raise LogError(
                f"log {str(path)!r} holds unit {unit} twice with different rows (the "
                f"second copy ends at line {number}); it mixes two runs, choose another --out"
            )
        unit, rows, good = None, [], end
    result.torn_bytes = len(data) - good
    if result.duplicates or result.partial:
        _rewrite(path, b"".join(data[a:b] for a, b in keep))
    elif good < len(data):
        os.truncate(path, good)
    return result


def _rewrite(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a log (a torn last line is ignored; damage elsewhere is a `LogError`,
    and so is a unit logged twice: `spades tournament --resume` repairs that)."""
    path = Path(path)
    if path.is_dir():
        path = path / "log.jsonl"
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise LogError(f"log {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise LogError(f"log {str(path)!r} is a folder, not a log file") from None
    rows, seen = [], {}
    for number, _, _, row in parse(path, data):
        key = (
            row.get("tournament"),
            row.get("unit"),
            row.get("deal"),
            row.get("side"),
            row.get("hand"),
        )
        if "unit" in row and "deal" in row and key in seen:
            raise LogError(
                f"log {str(path)!r} line {number} repeats the row of line {seen[key]} "
                f"(unit {row['unit']}, deal {row.get('deal')}, side {row.get('side')}); "
                "run spades tournament --resume on its run folder to repair it"
            )
        seen[key] = number
        rows.append(row)
    return rows
