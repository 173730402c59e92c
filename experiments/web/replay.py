"""Replays of run folders: which runs there are under the root, their deals, and one deal
step by step, both tables of the duplicate side by side.

A run is a folder under the root holding a `log.jsonl` (a tournament, an evaluation's
tournaments, a web game: `experiments.tournament.results_log`), or a game saved by
`spades play` (a `.json` file of format `spades-play`).

Paths come from the browser, so nothing is read that does not lie under the root:
`resolve` takes only a relative path without `..` and returns a `RunPath` that remembers
its root, and every file read (the log, a saved game, config.json) is resolved again,
symbolic links included, and refused once it leads out of the root (a link that stays
inside is followed). Only regular files are read, of at most `MAX_LOG_BYTES` (a log) or
`MAX_SAVE_BYTES` (a saved game): a FIFO or a device is refused from its `stat`, never
opened, and the open itself neither follows a link nor waits (`O_NOFOLLOW | O_NONBLOCK`,
checked again with `fstat`), so that nothing can hold a worker thread or fill its memory.
`list_runs` lists only what these checks would let through. Every error is a
`ReplayError` of one line that names files relative to the root (`abc/log.jsonl`), never
by their path on the server.

A log is read as `results_log.iter_rows` reads it (a torn last line is left out, a row
whose checksum fails is damage), but a damaged line does not hide the rest: it is left
out and named (`deal_list` lists the good deals and the damaged lines, `deal_data` of a
deal with a damaged row names that line). A row that is not a log row of a hand (a field
missing or of the wrong type, a null record, a record that does not replay) is damage
too, so what reaches the page is always either a deal or one line saying what is wrong.
A saved game is replayed from its actions as `spades play` loads it, but without
building its agents: the agent specs it names (a file of code among them) are only shown.

A deal's data is every action of each side with the position after it (the hands left,
the trick on the table, tricks won, bids), made by replaying the hand record through the
engine, plus the first action at which the two sides differ: the first decision where
the two tables of the duplicate went different ways.
"""

from __future__ import annotations

import json
import math
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

from experiments.table.words import card_label, seat_title
from experiments.tournament.results_log import CHECK_FIELD, TIMING_FIELDS, row_check
from experiments.tournament.summary import pair_of
from spades_env.cards import NUM_CARDS, str_to_action, str_to_card
from spades_env.engine import step
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import PHASE_NAMES, init

MAX_RUNS = 500
MAX_DEPTH = 4

#: The largest `log.jsonl` read (bytes): a bigger one is refused rather than held in memory.
MAX_LOG_BYTES = 256 * 2**20

#: The largest saved game (`spades play`'s `.json`) listed or read (bytes).
MAX_SAVE_BYTES = 5_000_000

#: The longest run path taken from the browser (characters).
MAX_REL_CHARS = 500

#: Damaged lines a deal list names (it always gives their count).
MAX_DAMAGED_SHOWN = 20

_CONFIG_BYTES = 2**20  # a run folder's config.json, read for its tournament id

#: Opening a file to read: never through a link (the path is resolved first), never
#: waiting (a FIFO or a device that got there after the `stat` check is refused on `fstat`).
_READ_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
)

#: Errors of replaying a hand record through the engine: the record holds values no hand
#: has (the engine checks them as it goes), so they are the record's damage, not a bug.
_RECORD_ERRORS = (KeyError, IndexError, TypeError, ValueError, OverflowError, AttributeError)


class ReplayError(ValueError):
    """A run path or deal that cannot be shown; one line for the page."""


class RunPath(type(Path())):  # PosixPath or WindowsPath (Python 3.11 cannot subclass Path)
    """A run `resolve` found: its resolved path, which remembers the root it lies under and
    its name there, so that what is read of it is checked against that root again and
    errors name it as the page does (`runs_root`, `run_name`). Paths made from it (`/`,
    `.parent`) do not carry these."""

    runs_root: Path
    run_name: str


def _shown(rel: str) -> str:
    """A run path from the browser as an error quotes it: shortened, one line."""
    return repr(rel if len(rel) <= 60 else rel[:57] + "...")


def resolve(root: Path, rel: str) -> Path:
    """The run at `rel` under `root` (a `RunPath`), or ReplayError: no absolute path, no
    `..`, nothing that resolves outside the root (a symbolic link out of it included)."""
    if not isinstance(rel, str) or not rel:
        raise ReplayError("no run folder given")
    if "\x00" in rel:
        raise ReplayError("the run path holds a NUL character")
    if len(rel) > MAX_REL_CHARS:
        raise ReplayError(f"the run path is {len(rel):,} characters long, over {MAX_REL_CHARS}")
    if Path(rel).is_absolute() or rel.startswith(("/", "\\", "~")):
        raise ReplayError("the run path must be relative to the runs folder")
    if ".." in Path(rel).parts:
        raise ReplayError(f"{_shown(rel)} is outside the runs folder")
    base = Path(os.path.realpath(root))
    real = Path(os.path.realpath(base / rel))
    if not real.is_relative_to(base):
        raise ReplayError(f"{_shown(rel)} is outside the runs folder")
    try:
        os.stat(real)
    except OSError:  # missing, a dangling link, a name too long, a loop of links
        raise ReplayError(f"no run folder {_shown(rel)}") from None
    path = RunPath(real)
    path.runs_root, path.run_name = base, real.relative_to(base).as_posix()
    return path


# ----------------------------------------------------------------------------- files
def _inside(root: Path, path: Path | str) -> Path | None:
    """`path` resolved (links followed), if that lies under `root` (resolved); else None."""
    real = Path(os.path.realpath(path))
    return real if real.is_relative_to(root) else None


def _join(name: str, file: str) -> str:
    """A file of the run `name` as errors name it, relative to the root."""
    return file if name in ("", ".") else f"{name}/{file}"


def _what(mode: int) -> str:
    for test, what in (
        (stat.S_ISDIR, "a folder"),
        (stat.S_ISFIFO, "a named pipe (FIFO)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return what
    return "not a regular file"


def _check_regular(st: os.stat_result, label: str, limit: int) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise ReplayError(f"{label} is {_what(st.st_mode)}; only regular files are read")
    if st.st_size > limit:
        raise ReplayError(
            f"{label} is {st.st_size:,} bytes, over the limit of {limit:,} bytes; it is not read"
        )


def _regular(root: Path, path: Path) -> os.stat_result | None:
    """The `stat` of `path` if it is a regular file under `root` (links followed), without
    opening it; else None."""
    real = _inside(root, path)
    if real is None:
        return None
    try:
        st = os.stat(real)
    except OSError:
        return None
    return st if stat.S_ISREG(st.st_mode) else None


def _open(root: Path, path: Path, label: str, limit: int) -> int:
    """A descriptor of the regular file `path` for reading, or ReplayError naming it
    `label`: it must resolve under `root` and be a regular file of at most `limit` bytes,
    checked on its `stat` before it is opened (a FIFO or a device never is) and on its
    `fstat` after (it may have been replaced in between)."""
    real = _inside(root, path)
    if real is None:
        raise ReplayError(f"{label} leads outside the runs folder; it is not read")
    try:
        st = os.stat(real)
    except FileNotFoundError:
        raise ReplayError(f"{label} does not exist") from None
    except OSError as exc:
        raise ReplayError(f"{label} cannot be read ({exc.strerror})") from None
    _check_regular(st, label, limit)
    try:
        fd = os.open(real, _READ_FLAGS)
    except OSError as exc:
        raise ReplayError(f"{label} cannot be read ({exc.strerror})") from None
    try:
        _check_regular(os.fstat(fd), label, limit)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_all(fd: int, label: str, limit: int) -> bytes:
    """What the descriptor holds (closed after), at most `limit` bytes (more is refused:
    the file grew since it was checked)."""
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ReplayError(f"{label} is over the limit of {limit:,} bytes; it is not read")
    return data


def _one_line(exc: BaseException) -> str:
    text = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


# ----------------------------------------------------------------------------- runs
def _kind(root: Path, path: Path) -> tuple[str, float] | None:
    """What run `path` is, and its time, or None. Only regular files under the root count,
    and only a saved game's first bytes are read (a FIFO or a device is never opened)."""
    if path.is_dir():  # a folder os.walk went into: never a link
        log = _regular(root, path / "log.jsonl")
        if log is None:
            return None
        web = _regular(root, path / "game.json") is not None
        return ("web game" if web else "tournament"), log.st_mtime
    st = _regular(root, path)
    if path.suffix != ".json" or st is None or st.st_size > MAX_SAVE_BYTES:
        return None
    try:
        fd = _open(root, path, path.name, MAX_SAVE_BYTES)
    except ReplayError:
        return None
    try:
        head = os.read(fd, 200)
    except OSError:
        return None
    finally:
        os.close(fd)
    return ("saved game", st.st_mtime) if b'"spades-play"' in head else None


def list_runs(root: Path) -> list[dict[str, Any]]:
    """The runs under `root` (newest first), at most `MAX_RUNS`, `MAX_DEPTH` levels deep;
    what `resolve` and the readers would refuse (a link out of the root, a FIFO) is left
    out."""
    root = Path(os.path.realpath(root))
    found = []
    if not root.is_dir():
        return []
    for dirpath, dirnames, filenames in os.walk(root):  # (links to folders are not followed)
        here = Path(dirpath)
        depth = len(here.relative_to(root).parts)
        if depth >= MAX_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        candidates = [here] + [here / f for f in filenames if f.endswith(".json")]
        for path in candidates:
            kind = _kind(root, path) if path != root else None
            if kind:
                found.append(
                    {"path": path.relative_to(root).as_posix(), "kind": kind[0], "mtime": kind[1]}
                )
        if len(found) >= MAX_RUNS:
            break
    found.sort(key=lambda r: -r["mtime"])
    return found


# ----------------------------------------------------------------------------- rows
class _Row(NamedTuple):
    where: str  # "abc/log.jsonl line 3", "saved/g.json hand 2": for its errors
    row: dict[str, Any]


class _Damage(NamedTuple):
    line: int
    deal_hand: tuple[int, int] | None  # its deal and hand, where they could be read
    what: str


@dataclass
class _Log:
    """A run's rows as the page reads them: the good rows, and the damaged lines left out."""

    label: str  # the log (or saved game) relative to the root
    rows: list[_Row] = field(default_factory=list)
    damaged: list[_Damage] = field(default_factory=list)

    def error(self, d: _Damage) -> ReplayError:
        return ReplayError(f"{self.label} line {d.line}: {d.what}")

    def notes(self) -> dict[str, Any]:
        """The damaged lines, for the page: `damaged` (the first `MAX_DAMAGED_SHOWN`, one
        line each) and `damaged_lines` (how many); nothing where there are none."""
        if not self.damaged:
            return {}
        shown = self.damaged[:MAX_DAMAGED_SHOWN]
        return {
            "damaged": [f"{self.label} line {d.line}: {d.what}" for d in shown],
            "damaged_lines": len(self.damaged),
        }


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _numbers(value: Any) -> bool:
    """A list of numbers JSON can send back (no NaN or infinity)."""
    return isinstance(value, list) and all(
        _whole(v) or (isinstance(v, float) and math.isfinite(v)) for v in value
    )


def _action_pairs(value: Any) -> bool:
    """A list of [seat, action text] pairs, as records and saved games hold their actions."""
    return isinstance(value, list) and all(
        isinstance(a, list) and len(a) == 2 and _whole(a[0]) and isinstance(a[1], str)
        for a in value
    )


def _row_problem(row: Any) -> str | None:
    """What keeps a parsed line from being a log row of a hand, or None."""
    if not isinstance(row, dict):
        return f"is not a JSON object but {_type(row)}; every line is one row"
    if CHECK_FIELD in row and row[CHECK_FIELD] != row_check(row):
        return "was changed after it was written (its checksum fails)"
    for key in ("deal", "hand", "seats", "teams", "hand_score", "record"):
        if key not in row:
            return f"lacks the field {key!r}"
    for key, ok, kind in (
        ("deal", _whole, "a whole number"),
        ("hand", _whole, "a whole number"),
        ("side", _whole, "a whole number"),
        ("seats", _texts, "a list of names"),
        ("teams", _texts, "a list of names"),
        ("hand_score", _numbers, "a list of numbers"),
        ("record", lambda v: isinstance(v, dict), "a JSON object (the hand record)"),
    ):
        if key in row and not ok(row[key]):
            return f"its {key!r} is {_type(row[key])}, not {kind}"
    if len(row["teams"]) < 2:
        return f"its 'teams' names {len(row['teams'])} team(s), not at least 2"
    return None


def _type(value: Any) -> str:
    """A JSON value as an error names it: a short one as JSON, else its kind."""
    if isinstance(value, list):
        return f"a list of {len(value)}"
    if isinstance(value, dict):
        return f"an object of {len(value)} field(s)"
    text = json.dumps(value)
    return text if len(text) <= 40 else f"a {'string' if isinstance(value, str) else 'number'}"


def _deal_hand(row: Any) -> tuple[int, int] | None:
    if isinstance(row, dict) and _whole(row.get("deal")) and _whole(row.get("hand")):
        return row["deal"], row["hand"]
    return None


def _read(path: Path) -> _Log:
    """The rows of the run at `path`: a folder's log, or a saved `spades play` game's hands
    as one-side rows. A path from `resolve` is read under its root; any other path, under
    its parent folder (which stands for the root, in errors too)."""
    root, name = getattr(path, "runs_root", None), getattr(path, "run_name", None)
    if root is None or name is None:
        real = Path(os.path.realpath(path))
        root, name = real.parent, real.name
    real_run = _inside(root, path)
    if real_run is None:
        raise ReplayError(f"{_shown(name)} is outside the runs folder")
    try:
        st = os.stat(real_run)
    except OSError:
        raise ReplayError(f"no run folder {_shown(name)}") from None
    if stat.S_ISDIR(st.st_mode):
        label = _join(name, "log.jsonl")
        fd = _open(root, real_run / "log.jsonl", label, MAX_LOG_BYTES)
        return _log_rows(fd, label, _config_tournament(root, real_run))
    if stat.S_ISREG(st.st_mode):
        return _saved_rows(root, real_run, name)
    raise ReplayError(f"{_shown(name)} is {_what(st.st_mode)}, not a run folder or a saved game")


def _config_tournament(root: Path, run: Path) -> str | None:
    """The tournament id in the run folder's config.json, where it holds a readable one
    (as `results_log` reads it: the rows of another tournament are damage)."""
    try:
        data = _read_all(_open(root, run / "config.json", "", _CONFIG_BYTES), "", _CONFIG_BYTES)
        saved = json.loads(data)
    except (ReplayError, OSError, ValueError, RecursionError):
        return None
    tid = saved.get("tournament") if isinstance(saved, dict) else None
    return tid if isinstance(tid, str) else None


def _log_rows(fd: int, label: str, owner: str | None) -> _Log:
    """The rows of an open log, read line by line to at most `MAX_LOG_BYTES`, as
    `results_log` reads them: a torn last line (no newline) and blank lines at the end are
    left out; a line that is not JSON is damage unless only those follow it. Each damaged
    line is left out and noted (`_Log.damaged`), and so is a row of another tournament
    (`owner`, else the first row's) or a second copy of a row (a copy that holds the same
    row, timing aside, leaves the first one shown; a different one makes the deal
    unreadable, as which is right cannot be told)."""
    log = _Log(label)
    limit, total = MAX_LOG_BYTES, 0
    pending: _Damage | None = None  # a line that is not JSON: damage unless it is the last
    seen: dict[str, tuple[int, str]] = {}  # each row's identity -> its line, its content
    where_owner = "its run folder's config.json"
    with os.fdopen(fd, "rb") as f:
        number = 0
        while True:
            line = f.readline(limit + 1 - total)
            if not line:
                break
            number += 1
            total += len(line)
            if total > limit:
                raise ReplayError(f"{label} grew over the limit of {limit:,} bytes as it was read")
            if not line.endswith(b"\n"):
                break  # the line being written at a kill
            if not line.strip():
                pending = pending or _Damage(number, None, "is blank")
                continue
            if pending is not None:
                log.damaged.append(pending)
                pending = None
            try:
                row = json.loads(line)
            except (ValueError, RecursionError) as exc:  # (UnicodeDecodeError included)
                pending = _Damage(number, None, f"is not valid JSON ({_one_line(exc)})")
                continue
            try:
                problem = _row_problem(row)
            except RecursionError:  # (the checksum of a row nested deeper than JSON allows)
                problem = "is nested too deeply to be a row"
            where_hand = _deal_hand(row)
            if problem is None and "tournament" in row:
                if owner is None:
                    owner, where_owner = row["tournament"], f"line {number}"
                elif row["tournament"] != owner:
                    problem = (
                        f"holds a row of tournament {_type(row['tournament'])}, not "
                        f"{_type(owner)} ({where_owner}): a row of another run"
                    )
            if problem is None:
                ident = [row.get(k) for k in ("tournament", "unit", "deal", "side", "hand")]
                key = json.dumps([*ident, _pair(row)])
                body = {k: v for k, v in row.items() if k not in TIMING_FIELDS}
                content = json.dumps(body, sort_keys=True)
                first = seen.setdefault(key, (number, content))
                if first[0] != number:
                    same = first[1] == content
                    problem = f"repeats the row of line {first[0]}" + (
                        " (the same row: shown once)" if same else " with different content"
                    )
                    where_hand = None if same else where_hand
            if problem is None:
                log.rows.append(_Row(f"{label} line {number}", row))
            else:
                log.damaged.append(_Damage(number, where_hand, problem))
    return log


def _saved_rows(root: Path, path: Path, name: str) -> _Log:
    """A saved `spades play` game's hands as one-side rows, replayed from its actions
    through the engine as `session.load` replays them, but from the bytes read safely here
    and without building its agents: a saved game may name any agent spec, a file of code
    included, and showing it must not run that."""
    from experiments.table.session import SAVE_FORMAT, SAVE_VERSION

    data = _read_all(_open(root, path, name, MAX_SAVE_BYTES), name, MAX_SAVE_BYTES)
    try:
        saved = json.loads(data)
    except (ValueError, RecursionError) as exc:  # (UnicodeDecodeError included)
        raise ReplayError(f"{name}: not a saved game ({_one_line(exc)})") from None
    if not isinstance(saved, dict) or saved.get("format") != SAVE_FORMAT:
        raise ReplayError(f"{name}: not a saved game of spades play")
    if saved.get("version") != SAVE_VERSION:
        version = _type(saved.get("version"))
        raise ReplayError(f"{name}: save version {version}; this reads {SAVE_VERSION}")
    try:
        players, records = _replay_saved(saved)
    except ReplayError as exc:
        raise ReplayError(f"{name}: {exc}; the file is damaged") from None
    except _RECORD_ERRORS as exc:
        what = (
            f"lacks {exc}" if isinstance(exc, KeyError) else f"does not replay ({_one_line(exc)})"
        )
        raise ReplayError(f"{name}: not a valid saved game: it {what}") from None
    log = _Log(name)
    for r in records:
        row = {
            "deal": 0,
            "side": 0,
            "hand": r["hand_no"],
            "seats": players,  # "human" for the person, the agents' specs
            "teams": players[: Rules.from_dict(r["rules"]).num_teams],
            "hand_score": [r["scores"][k] - r["scores_before"][k] for k in range(len(r["scores"]))],
            "record": r,
        }
        log.rows.append(_Row(f"{name} hand {r['hand_no']}", row))
    return log


def _replay_saved(saved: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """(the players, the hand records) of a saved game, played again from its seed."""
    rules = Rules.from_dict(saved["rules"])
    seed, players, actions = saved["seed"], saved["players"], saved["actions"]
    if not _whole(seed) or seed < 0:
        raise ReplayError(f"its seed is {_type(seed)}, not a whole number >= 0")
    if not _texts(players) or len(players) != rules.num_players:
        raise ReplayError(f"its players are not {rules.num_players} names")
    if not _action_pairs(actions):
        raise ReplayError("its actions are not [seat, action] pairs")
    game, records = SingleGame(rules, seed=seed), []
    for k, (seat, text) in enumerate(actions):
        if game.done or game.to_act != seat:
            raise ReplayError(f"action {k + 1} (seat {seat} {text}) is not that seat's turn")
        info = game.step(str_to_action(text))
        if info.finished is not None:
            records.append(hand_records(rules, info.finished)[0])
    if "scores" in saved and list(game.scores) != saved["scores"]:
        raise ReplayError("the replayed scores differ from the saved ones")
    return players, records


def deal_list(path: Path) -> dict[str, Any]:
    """One line per (deal, hand, pair) of the run: its sides and the points each gained.
    Damaged lines of the log are left out and named (`damaged`, their count in
    `damaged_lines`); a log with no good row but damaged ones is a ReplayError."""
    log = _read(path)
    if not log.rows and log.damaged:
        raise log.error(log.damaged[0])
    out: dict[tuple, dict[str, Any]] = {}
    for _, r in log.rows:
        pair = _pair(r)
        key = (r["deal"], r["hand"], pair)
        entry = out.setdefault(
            key,
            {"deal": r["deal"], "hand": r["hand"], "pair": ",".join(pair), "sides": {}},
        )
        entry["sides"][str(r.get("side", 0))] = r["hand_score"]
    deals = sorted(out.values(), key=lambda e: (e["deal"], e["hand"], e["pair"]))
    return {"deals": deals[:5000], "rows": len(log.rows), **log.notes()}


def _pair(row: dict[str, Any]) -> tuple[str, ...]:
    try:
        return tuple(pair_of(row))
    except (KeyError, IndexError, TypeError):
        return tuple(row.get("teams", ()))


def start_state(record: dict[str, Any]):
    """The engine state at the start of a record's hand (as `records.replay` builds it)."""
    rules = Rules.from_dict(record["rules"])
    if rules.draw:
        raise ReplayError("two_player games are not replayed here (their hands are drawn)")
    deal = np.array([[[str_to_card(c) for c in hand] for hand in record["deal"]]])
    state = init(
        rules,
        1,
        seeds=np.array([record["seed"]], dtype=np.uint64),
        deals=deal,
        dealer=record["dealer"],
        scores=np.array(record["scores_before"])[None],
        bags=np.array(record["bags_before"])[None],
    )
    state.hand_no[:] = record["hand_no"]
    return state


def _cards(mask: int) -> list[dict[str, Any]]:
    from experiments.table.words import sort_hand

    return [
        {"id": c, "label": card_label(c), "suit": c // 13 if c < 52 else 4}
        for c in sort_hand(mask)
        if c < NUM_CARDS
    ]


def frames(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The position before the first action and after each one, for the page's stepping.
    A finished trick stays on the table until the next card is led, and the last frame
    is the hand's end (no cards left, the recorded tricks), not the next deal. An action
    by a seat whose turn it is not, or after the hand ended, is a ReplayError (as
    `records.replay` finds it): the record is damaged."""
    state = start_state(record)
    p = state.rules.num_players
    current: dict[int, int] = {}  # the trick being played (or just taken): seat -> card

    def snap(action: dict[str, Any] | None, finished: bool) -> dict[str, Any]:
        played = int(state.played[0])
        trick: list[dict[str, Any] | None] = [None] * p
        for seat, c in current.items():
            trick[seat] = _cards(1 << c)[0]
        return {
            "action": action,
            "hands": [[] for _ in range(p)]
            if finished
            else [_cards(int(h) & ~played) for h in state.hands[0].tolist()],
            "trick": trick,
            "tricks_won": record["tricks"] if finished else state.tricks_won[0].tolist(),
            "bids": record["bids"] if finished else state.bids[0].tolist(),
            "phase": "done" if finished else PHASE_NAMES[int(state.phase[0])],
        }

    out = [snap(None, False)]
    finished = False
    for k, (seat, text) in enumerate(record["actions"]):
        if finished:
            raise ReplayError(f"the hand ended at action {k}, before the record's end")
        if int(state.to_act[0]) != seat:
            raise ReplayError(
                f"action {k}: seat {seat} acts, but it is seat {state.to_act[0]}'s turn"
            )
        phase = PHASE_NAMES[int(state.phase[0])]
        action = str_to_action(text)
        trick_no = int(state.tricks_played[0]) + 1
        info = step(state, [action])
        if phase == "play":
            if len(current) == p:
                current = {}
            current[seat] = action
        label = card_label(action) if 0 <= action < NUM_CARDS and phase == "play" else text
        step_info = {
            "index": k,
            "seat": seat,
            "who": seat_title(seat),
            "phase": phase,
            "text": label,
            "trick": trick_no if phase == "play" else None,
        }
        finished = info.finished is not None
        out.append(snap(step_info, finished))
    return out


def first_difference(a: list[list], b: list[list]) -> int | None:
    """The index of the first action where two sides' hands differ (None: identical)."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return k
    return None if len(a) == len(b) else min(len(a), len(b))


#: The fields of a hand record the page shows or replays from, and what each must be.
_RECORD_FIELDS: tuple[tuple[str, Callable[[Any], bool], str], ...] = (
    ("rules", lambda v: isinstance(v, dict), "a JSON object"),
    ("deal", lambda v: isinstance(v, list) and all(_texts(h) for h in v), "lists of cards"),
    ("seed", _whole, "a whole number"),
    ("hand_no", _whole, "a whole number"),
    ("dealer", _whole, "a whole number"),
    ("scores_before", _numbers, "a list of numbers"),
    ("bags_before", _numbers, "a list of numbers"),
    ("bids", _numbers, "a list of numbers"),
    ("blind", lambda v: isinstance(v, list) and all(isinstance(b, bool) for b in v), "flags"),
    ("tricks", _numbers, "a list of numbers"),
    ("points", _numbers, "a list of numbers"),
    ("scores", _numbers, "a list of numbers"),
    ("actions", _action_pairs, "[seat, action] pairs"),
)


def _side(row: dict[str, Any]) -> dict[str, Any]:
    """One side of a deal for the page; ReplayError where its record is damaged."""
    rec = row["record"]
    for key, ok, kind in _RECORD_FIELDS:
        if key not in rec:
            raise ReplayError(f"its record lacks the field {key!r}")
        if not ok(rec[key]):
            raise ReplayError(f"its record's {key!r} is {_type(rec[key])}, not {kind}")
    try:
        stepped = frames(rec)
    except ReplayError:
        raise
    except _RECORD_ERRORS as exc:
        raise ReplayError(f"its record does not replay ({_one_line(exc)})") from None
    return {
        "side": row.get("side", 0),
        "seats": row["seats"],
        "teams": row.get("teams"),
        "bids": rec["bids"],
        "blind": rec["blind"],
        "tricks": rec["tricks"],
        "points": rec["points"],
        "hand_score": row["hand_score"],
        "scores": rec["scores"],
        "scores_before": rec["scores_before"],
        "actions": [list(a) for a in rec["actions"]],
        "frames": stepped,
        "record": rec,  # for the showdown (the server drops it before sending)
    }


def deal_data(path: Path, deal: int, hand: int = 0, pair: str | None = None) -> dict[str, Any]:
    """Both sides of one deal (one pair: `pair`, else the first), ready to step through.
    A damaged row of that deal and hand, or a side whose record does not replay, is a
    ReplayError naming its line; the log's other damaged lines are named beside the deal
    (`damaged`, as in `deal_list`): one of them may be a side of it whose deal was lost."""
    log = _read(path)
    for d in log.damaged:
        if d.deal_hand == (deal, hand):
            raise log.error(d)
    rows = [r for r in log.rows if r.row["deal"] == deal and r.row["hand"] == hand]
    if not rows:
        unknown = [d for d in log.damaged if d.deal_hand is None]
        also = f" (line {unknown[0].line} of {log.label} is damaged: {unknown[0].what})"
        raise ReplayError(f"no deal {deal} hand {hand} in this run" + (also if unknown else ""))
    pairs = sorted({_pair(r.row) for r in rows})
    want = tuple(pair.split(",")) if pair else pairs[0]
    rows = sorted((r for r in rows if _pair(r.row) == want), key=lambda r: r.row.get("side", 0))
    if not rows:
        raise ReplayError(f"no pair {_shown(pair or '')} at deal {deal}")
    sides = []
    for where, r in rows:
        try:
            sides.append(_side(r))
        except ReplayError as exc:
            raise ReplayError(f"{where}: {exc}") from None
    diff = first_difference(sides[0]["actions"], sides[1]["actions"]) if len(sides) == 2 else None
    return {
        "deal": deal,
        "hand": hand,
        "pair": list(want),
        "pairs": [",".join(p) for p in pairs],
        "sides": sides,
        "first_difference": diff,
        **log.notes(),
    }


#: what the record importer (`experiments.web.share`) shares with this reader
RECORD_ERRORS = _RECORD_ERRORS
RECORD_FIELDS = _RECORD_FIELDS
read_log = _read
type_name = _type
log_pair = _pair
