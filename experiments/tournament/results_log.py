"""The tournament log: append-only JSONL, one row per hand, written in whole units.

A tournament's work is cut into units (see `experiments.tournament.runner`); every row carries
its `unit` and the number of rows that unit has (`unit_rows`). A unit's rows are appended
with one write, then flushed and fsynced, so after a kill at any moment the file is a
sequence of complete units followed by at most one partial unit, whose last line may be
torn. `repair` keeps the units whose rows are all there, each row once, and drops the
rest; the tournament then plays only the units that are missing.

Rows are told apart by their identity (unit, deal, side, hand), never by their place or
count. A row logged twice (two processes that resumed one run folder at once, before run
folders were locked, or a line copied by hand) is repaired when both copies hold the
same row, and refused when they differ. Every row the runner writes carries a checksum of
its content (`CHECK_FIELD`), so a changed byte is found on reading.

Only that torn last line is normal. Any other line that is not a JSON object, fails its
checksum, or belongs to another tournament is damage, and reading the log (`read_rows`,
`repair`) raises `LogError` naming its line number rather than taking the rows before it
as the whole log; a refused repair leaves the file as it was.

The log is never written through a link: a log that is a symbolic link is refused (its
rows would land in what it points to, another run's log), and one that is a hard link
gets a copy of its own before it is repaired or appended to. A unit the disk cuts short
(full) is cut off again at once.

The log is plain JSON Lines: `pandas.read_json(path, lines=True)` reads it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from contextlib import suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spades_env.files import atomic_write, open_append, refuse_link, unshare, write_all

#: The field holding a row's checksum (`row_check`): a changed byte is found on reading.
CHECK_FIELD = "check"

#: Fields the log adds when it writes a row (its time, its checksum), not the games':
#: left out when comparing two runs of the same tournament, or a row with its unit's.
TIMING_FIELDS = ("logged_at", CHECK_FIELD)


class LogError(ValueError):
    """A log that does not belong to this tournament, or cannot be read."""


def encode_unit(rows: Sequence[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in rows).encode()


def append_unit(path: str | Path, rows: Sequence[dict[str, Any]]) -> None:
    """Append one unit's rows as a single write, flushed and fsynced. A log that is a
    symbolic or hard link is refused (`UnsafeFileError`): the rows would land in what it
    points to. A write the disk cuts short (full) is cut back off, so the log still ends
    with whole units."""
    data = encode_unit(rows)
    fd = open_append(path)
    try:
        size = os.fstat(fd).st_size
        try:
            write_all(fd, data)
        except OSError as exc:
            with suppress(OSError):
                os.ftruncate(fd, size)  # a partial unit would be dropped on resume anyway
            if exc.filename is None and exc.errno is not None:  # say which file
                raise OSError(exc.errno, exc.strerror, str(path)) from None
            raise
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
        if CHECK_FIELD in row and row[CHECK_FIELD] != row_check(row):
            raise LogError(
                f"log {str(path)!r} line {number} was changed after it was written (its "
                "checksum fails); put the original log back, or delete that line and "
                "spades tournament --resume plays its unit again"
            )
        out.append((number, start, end, row))
    return out


def _field(path: Path, number: int, row: dict[str, Any], key: str) -> Any:
    if key not in row:
        raise LogError(f"log {str(path)!r} line {number} lacks the field {key!r}")
    return row[key]


def _key(row: dict[str, Any]) -> Any:
    """A row's identity within its unit: (deal, side, hand), or, for a hand-made row
    without a deal, its whole content."""
    if "deal" in row:
        return row.get("deal"), row.get("side"), row.get("hand")
    return json.dumps(_strip_timing([row])[0], sort_keys=True)


def _strip_timing(rows: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in rows]


def row_check(row: dict[str, Any]) -> str:
    """The checksum of a row: a hash of its content, timing and the checksum aside."""
    body = {k: v for k, v in row.items() if k not in TIMING_FIELDS}
    blob = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(blob.encode(), digest_size=8).hexdigest()


def seal(row: dict[str, Any]) -> dict[str, Any]:
    """Add the row's checksum (`CHECK_FIELD`), which `parse` verifies on every read."""
    row[CHECK_FIELD] = row_check(row)
    return row


@dataclass
class Repair:
    """What `repair` found: the complete units, and what it dropped from the file."""

    done: set[int] = field(default_factory=set)
    duplicates: list[int] = field(default_factory=list)  # units with a row logged twice
    partial: list[int] = field(default_factory=list)  # units that lack rows (played again)
    torn_bytes: int = 0  # bytes cut off the end (a partial last unit, a torn line)
    repeated_rows: int = 0  # copies of rows dropped

    def notes(self) -> list[str]:
        out = []
        if self.duplicates:
            out.append(
                f"dropped {self.repeated_rows} row(s) logged twice, of unit(s) "
                f"{_few(self.duplicates)} (each row is kept once)"
            )
        if self.partial:
            out.append(
                f"dropped {len(self.partial)} unit(s) cut short: {_few(self.partial)} "
                "(played again)"
            )
        return out


def _few(units: Sequence[int]) -> str:
    shown = ", ".join(map(str, units[:5]))
    return shown + (", ..." if len(units) > 5 else "")


@dataclass
class _Unit:
    size: int
    first_line: int
    rows: dict[Any, tuple[dict[str, Any], int, int]] = field(default_factory=dict)


def repair(path: str | Path, tournament: str) -> Repair:
    """Make the log a sequence of complete units, each row once; return what was found.

    Rows are matched by their identity (unit, deal, side, hand), not by their place: a
    row logged twice keeps its first copy when the copies hold the same row (timing
    aside), and raises `LogError` when they differ; a unit that lacks rows is dropped (it
    is played again, to the same rows). A row of another tournament, or one whose
    checksum fails (bytes changed after it was written), raises `LogError`, the file
    untouched. Any change rewrites the file atomically (a torn end alone is truncated).
    """
    path = Path(path)
    result = Repair()
    if not path.exists() and not path.is_symlink():
        return result
    if path.is_symlink():  # repaired and appended to in place: never through a link
        refuse_link(path, f"log {str(path)!r}")
    unshare(path)  # a hard link (a `cp -al` copy of a run) gets a copy of its own
    data = path.read_bytes()
    units: dict[int, _Unit] = {}  # in the order of their first row
    dup_units: set[int] = set()
    for number, start, end, row in parse(path, data):
        if row.get("tournament") != tournament:
            raise LogError(
                f"log {str(path)!r} line {number} holds a row of tournament "
                f"{row.get('tournament')!r}, not {tournament!r}; choose another --out"
            )
        this, size = _field(path, number, row, "unit"), _field(path, number, row, "unit_rows")
        if not isinstance(this, int) or not isinstance(size, int) or size < 1:
            raise LogError(
                f"log {str(path)!r} line {number}: unit {this!r} of {size!r} rows is not a "
                "unit of a tournament; the log is damaged"
            )
        entry = units.setdefault(this, _Unit(size, number))
        if size != entry.size:
            raise LogError(
                f"log {str(path)!r} line {number} says unit {this} has {size} rows, line "
                f"{entry.first_line} says {entry.size}; it mixes two runs, choose another --out"
            )
        key = _key(row)
        seen = entry.rows.get(key)
        if seen is None:
            entry.rows[key] = (row, start, end)
        elif _strip_timing([seen[0]]) == _strip_timing([row]):
            result.repeated_rows += 1
            dup_units.add(this)
        else:
            raise LogError(
                f"log {str(path)!r} holds unit {this} twice with different rows (line "
                f"{number} differs from an earlier copy); it mixes two runs, choose "
                "another --out"
            )
    keep: list[tuple[int, int]] = []
    for unit, entry in units.items():
        if len(entry.rows) > entry.size:
            raise LogError(
                f"log {str(path)!r} holds {len(entry.rows)} different rows of unit {unit}, "
                f"which has {entry.size}; it mixes two runs, choose another --out"
            )
        if len(entry.rows) < entry.size:
            result.partial.append(unit)
            continue
        result.done.add(unit)
        keep.extend((start, end) for _, start, end in entry.rows.values())
    result.duplicates = sorted(dup_units & result.done)
    new = b"".join(data[a:b] for a, b in keep)
    result.torn_bytes = len(data) - len(new)
    if new != data:
        if data.startswith(new):
            os.truncate(path, len(new))
        else:
            _rewrite(path, new)
    return result


def _rewrite(path: Path, data: bytes) -> None:
    atomic_write(path, data)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a log (a torn last line is ignored; damage elsewhere is a `LogError`,
    and so are a row logged twice, which `spades tournament --resume` repairs, and a row
    of another tournament than the one the run folder's config.json, or else the first
    row, names)."""
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
    owner, where = _config_tournament(path), "its run folder's config.json"
    for number, _, _, row in parse(path, data):
        if "tournament" in row:
            if owner is None:
                owner, where = row["tournament"], f"line {number}"
            elif row["tournament"] != owner:
                raise LogError(
                    f"log {str(path)!r} line {number} holds a row of tournament "
                    f"{row['tournament']!r}, not {owner!r} ({where}): a row of another run "
                    "was added to this log"
                )
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


def _config_tournament(log: Path) -> str | None:
    """The tournament id in the config.json beside a log, if it holds a readable one."""
    try:
        saved = json.loads((log.parent / "config.json").read_text())
    except (OSError, ValueError):
        return None
    tid = saved.get("tournament") if isinstance(saved, dict) else None
    return tid if isinstance(tid, str) else None
