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

from spades_env.tooling.files import (
    atomic_write,
    open_append,
    open_input,
    refuse_link,
    unshare,
    write_all,
)

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
    #: identity -> (digest of the row without its timing, start, end offset)
    rows: dict[Any, tuple[bytes, int, int]] = field(default_factory=dict)


def _digest(row: dict[str, Any]) -> bytes:
    """What a row holds, timing aside, as 16 bytes (two copies agree when these do)."""
    text = json.dumps(_strip_timing([row])[0], sort_keys=True, separators=(",", ":"))
    return hashlib.blake2b(text.encode(), digest_size=16).digest()


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
    units: dict[int, _Unit] = {}  # in the order of their first row
    dup_units: set[int] = set()
    refused: LogError | None = None  # the first row refused, raised once the file is read
    with open(path, "rb") as f:  # read line by line: a row is kept as its digest and span
        size_before = os.fstat(f.fileno()).st_size
        for number, start, end, row in _stream_spans(path, f):  # damage raises at once
            if refused is None:
                try:
                    _repair_row(path, tournament, units, dup_units, result, number, start, end, row)
                except LogError as exc:
                    refused = exc
    if refused is not None:  # (after the whole file: a damaged line is named first)
        raise refused
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
    kept = sum(b - a for a, b in keep)
    result.torn_bytes = size_before - kept
    prefix = all(a == b for (a, _), b in zip(keep, [0] + [e for _, e in keep], strict=False))
    if kept != size_before or not prefix:
        if prefix:
            os.truncate(path, kept)
        else:
            _rewrite_spans(path, keep)
    return result


def _repair_row(
    path: Path,
    tournament: str,
    units: dict[int, _Unit],
    dup_units: set[int],
    result: Repair,
    number: int,
    start: int,
    end: int,
    row: dict[str, Any],
) -> None:
    """`repair`'s account of one row: its unit, and whether it repeats a row."""
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
    key, digest = _key(row), _digest(row)
    seen = entry.rows.get(key)
    if seen is None:
        entry.rows[key] = (digest, start, end)
    elif seen[0] == digest:
        result.repeated_rows += 1
        dup_units.add(this)
    else:
        raise LogError(
            f"log {str(path)!r} holds unit {this} twice with different rows (line "
            f"{number} differs from an earlier copy); it mixes two runs, choose "
            "another --out"
        )


def _rewrite_spans(path: Path, spans: list[tuple[int, int]]) -> None:
    """Rewrite the log as its byte ranges `spans`, in that order, atomically (copied
    range by range: the log is never held in memory whole)."""
    with open(path, "rb") as src:

        def copy(out) -> None:
            for a, b in spans:
                src.seek(a)
                out.write(src.read(b - a))

        atomic_write(path, copy)


def read_rows(path: str | Path) -> list[dict[str, Any]]:
    """Every row of a log, as a list (`iter_rows`, which reads it with bounded memory)."""
    return list(iter_rows(path))


def iter_rows(path: str | Path) -> Iterator[dict[str, Any]]:
    """Every row of a log, one at a time: the file is read line by line, and what is kept
    to check it does not grow with its length (a summary of a million deals streams).

    A torn last line is ignored; damage elsewhere is a `LogError`, and so are a row logged
    twice (which `spades tournament --resume` repairs) and a row of another tournament
    than the one the run folder's config.json, or else the first row, names. A unit's rows
    are contiguous in a log the runner writes, so a repeated row is found by its unit: a
    row repeated inside its unit, or a unit whose rows come back after other units."""
    path = Path(path)
    if path.is_dir():
        path = path / "log.jsonl"
    try:  # a FIFO or a device is refused: it would block or never end
        f = open_input(path, "log")
    except FileNotFoundError:
        raise LogError(f"log {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise LogError(f"log {str(path)!r} is a folder, not a log file") from None
    with f:
        yield from _checked_rows(path, _stream(path, f))


def _checked_rows(
    path: Path, rows: Iterator[tuple[int, dict[str, Any]]]
) -> Iterator[dict[str, Any]]:
    owner, where = _config_tournament(path), "its run folder's config.json"
    unit_key: Any = object()  # the unit being read: (tournament, unit)
    in_unit: dict[Any, int] = {}  # its rows' (deal, side, hand) -> line
    units_read: dict[Any, int] = {}  # every unit read before it -> its first line
    for number, row in rows:
        if "tournament" in row:
            if owner is None:
                owner, where = row["tournament"], f"line {number}"
            elif row["tournament"] != owner:
                raise LogError(
                    f"log {str(path)!r} line {number} holds a row of tournament "
                    f"{row['tournament']!r}, not {owner!r} ({where}): a row of another run "
                    "was added to this log"
                )
        if "unit" in row and "deal" in row:
            this = (row.get("tournament"), row.get("unit"))
            if this != unit_key:
                if this in units_read:
                    raise LogError(
                        f"log {str(path)!r} line {number} repeats the rows of unit "
                        f"{row['unit']} (logged from line {units_read[this]}); run spades "
                        "tournament --resume on its run folder to repair it"
                    )
                units_read[this] = number
                unit_key, in_unit = this, {}
            key = (row.get("deal"), row.get("side"), row.get("hand"))
            if key in in_unit:
                raise LogError(
                    f"log {str(path)!r} line {number} repeats the row of line {in_unit[key]} "
                    f"(unit {row['unit']}, deal {row.get('deal')}, side {row.get('side')}); "
                    "run spades tournament --resume on its run folder to repair it"
                )
            in_unit[key] = number
        yield row


def _stream(path: Path, f) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, row) of each row of an open log (`_stream_spans`)."""
    for number, _, _, row in _stream_spans(path, f):
        yield number, row


def _stream_spans(path: Path, f) -> Iterator[tuple[int, int, int, dict[str, Any]]]:
    """(line number, start, end offset, row) of each row of an open log, read line by
    line: a torn last line (no newline) and blank lines at the end are left out; a line
    that is not JSON is damage (a `LogError` naming it) unless nothing but those follows
    it, and one that is not a JSON object or fails its checksum always is."""
    bad: tuple[int, str] | None = None  # a line that is not JSON, pending: last or not?
    end = 0
    for number, line in enumerate(f, 1):
        start, end = end, end + len(line)
        if not line.endswith(b"\n"):
            break  # text after the last newline: the line being written at a kill
        if not line.strip():
            if bad is None:
                bad = (number, "Expecting value: line 1 column 1 (char 0)")
            continue
        if bad is not None:
            _not_json(path, *bad)
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            bad = (number, str(exc))
            continue
        _check_row(path, number, line, row)
        yield number, start, end, row


def _not_json(path: Path, number: int, error: str) -> None:
    raise LogError(
        f"log {str(path)!r} line {number} is not valid JSON ({error}); only a torn "
        "last line is expected after a kill, so the log is damaged"
    )


def _check_row(path: Path, number: int, line: bytes, row: Any) -> None:
    """A parsed line must be a JSON object whose checksum, if any, holds."""
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


def _config_tournament(log: Path) -> str | None:
    """The tournament id in the config.json beside a log, if it holds a readable one."""
    try:
        saved = json.loads((log.parent / "config.json").read_text())
    except (OSError, ValueError):
        return None
    tid = saved.get("tournament") if isinstance(saved, dict) else None
    return tid if isinstance(tid, str) else None
