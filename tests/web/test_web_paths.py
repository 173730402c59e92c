"""The replay readers against hostile run folders (experiments.web.replay): links out of
the root, FIFOs and devices, logs over the size limit, run paths from the browser, and
damaged rows. Each call runs under a time limit (a reader that waits on a FIFO fails the
test rather than hanging it), and every error must be a ReplayError of one line that
names no path of the server."""

from __future__ import annotations

import contextlib
import copy
import json
import os
import shutil
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("starlette")

from experiments.tournament.results_log import read_rows, seal
from experiments.web import replay
from experiments.web.replay import ReplayError, deal_data, deal_list, list_runs, resolve

LIMIT_S = 30  # seconds a reader may take here before it counts as hanging


# ----------------------------------------------------------------------------- helpers
def _run(fn: Callable, *args: Any, fifos: tuple[Path, ...] = ()) -> Any:
    """`fn(*args)` on a thread: its result, or the exception it raised. A call still running
    after `LIMIT_S` fails the test (after opening `fifos` for writing, which lets a reader
    stuck in opening one go)."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["value"] = fn(*args)
        except BaseException as exc:
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(LIMIT_S)
    if thread.is_alive():
        for fifo in fifos:
            with contextlib.suppress(OSError):
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"{fn.__name__} was still running after {LIMIT_S} s (waiting on a file?)")
    if "error" in box:
        raise box["error"]
    return box["value"]


def _clean(text: str, tmp_path: Path) -> None:
    """An error (or a note) for the page: one line, no path of the server in it."""
    assert "\n" not in text, text
    for server_path in {str(tmp_path), os.path.realpath(tmp_path), tempfile.gettempdir()}:
        assert server_path not in text, text


def _refused(tmp_path: Path, fn: Callable, *args: Any, fifos=(), names=()) -> str:
    """The message of the ReplayError that `fn(*args)` must raise (and nothing else)."""
    try:
        got = _run(fn, *args, fifos=fifos)
    except ReplayError as exc:
        message = str(exc)
    else:
        raise AssertionError(f"{fn.__name__}{args!r} was not refused: {str(got)[:200]}")
    _clean(message, tmp_path)
    for name in names:
        assert name in message, message
    return message


def _listed(root: Path) -> set[str]:
    return {r["path"] for r in _run(list_runs, root)}


@pytest.fixture
def root(tmp_path: Path, small_run: Path) -> Path:
    """A runs folder holding a copy of the small tournament as `tour`."""
    root = tmp_path / "root"
    shutil.copytree(small_run, root / "tour", ignore=shutil.ignore_patterns(".lock"))
    return root


@pytest.fixture
def outside(tmp_path: Path, small_run: Path) -> Path:
    """A good run folder outside the root: what a link may not lead to."""
    out = tmp_path / "outside"
    shutil.copytree(small_run, out, ignore=shutil.ignore_patterns(".lock"))
    return out


def _saved_game(path: Path) -> Path:
    """A game saved by `spades play`, one hand played, at `path`."""
    from experiments.play.session import PlaySession, make_setup
    from spades_env.rules import Rules

    session = PlaySession(make_setup(Rules(), seed=4))
    while not session.records:
        if session.human_to_act:
            session.apply(session.game.legal_list()[0])
        else:
            session.apply(session.bot_action())
    session.save(path)
    return path


def _linked_run(root: Path, name: str, target: Path | str) -> Path:
    """A run folder `name` whose log.jsonl is a symbolic link to `target`."""
    run = root / name
    run.mkdir(parents=True)
    shutil.copy(root / "tour" / "config.json", run / "config.json")
    (run / "log.jsonl").symlink_to(target)
    return run


# ----------------------------------------------------------------------------- links
LINKS_OUT = {
    "a log outside the root": lambda root, out: out / "log.jsonl",
    "a log outside, by a relative link": lambda root, out: Path("../../outside/log.jsonl"),
    "/dev/zero": lambda root, out: Path("/dev/zero"),
    "/dev/null": lambda root, out: Path("/dev/null"),
    "/etc/passwd": lambda root, out: Path("/etc/passwd"),
    "a missing file outside": lambda root, out: out / "gone.jsonl",
    "a missing file inside": lambda root, out: root / "tour" / "gone.jsonl",
    "itself (a loop)": lambda root, out: root / "linked" / "log.jsonl",
    "a link that leads out": lambda root, out: root / "hop.jsonl",
}


@pytest.mark.parametrize("target", sorted(LINKS_OUT))
def test_a_log_that_links_out_of_the_root_or_nowhere_is_refused_and_never_listed(
    root, outside, tmp_path, target
):
    (root / "hop.jsonl").symlink_to(outside / "log.jsonl")  # (in the root, leading out)
    _linked_run(root, "linked", LINKS_OUT[target](root, outside))
    assert _listed(root) == {"tour"}
    run = resolve(root, "linked")
    _refused(tmp_path, deal_list, run, names=["linked/log.jsonl"])
    _refused(tmp_path, deal_data, run, 0, 0, None, names=["linked/log.jsonl"])
    _refused(tmp_path, deal_list, root / "linked")  # a path given directly, not by resolve
    assert _run(deal_list, resolve(root, "tour"))["deals"]  # the good run beside it


@pytest.mark.parametrize("name", ["away", "away/", "loop", "saved.json", "zero.json"])
def test_a_run_path_that_is_a_link_out_of_the_root_is_refused_and_never_listed(
    root, outside, tmp_path, name
):
    (root / "away").symlink_to(outside)
    (root / "loop").symlink_to(root / "loop")
    (root / "saved.json").symlink_to(_saved_game(outside / "g.json"))
    (root / "zero.json").symlink_to("/dev/zero")
    assert _listed(root) == {"tour"}
    _refused(tmp_path, resolve, root, name)


def test_links_that_stay_inside_the_root_are_followed(root, tmp_path):
    want = _run(deal_list, resolve(root, "tour"))
    _linked_run(root, "relative", Path("../tour/log.jsonl"))
    _linked_run(root, "absolute", root / "tour" / "log.jsonl")
    (root / "alias").symlink_to(root / "tour")
    _saved_game(root / "games" / "real.json")
    (root / "games" / "link.json").symlink_to(root / "games" / "real.json")
    listed = _listed(root)
    assert {"relative", "absolute", "games/real.json", "games/link.json"} <= listed
    for name in ("relative", "absolute", "alias"):
        run = resolve(root, name)
        assert _run(deal_list, run) == want
        first = want["deals"][0]
        data = _run(deal_data, run, first["deal"], first["hand"], first["pair"])
        assert len(data["sides"]) == 2
    assert _run(deal_list, resolve(root, "games/link.json"))["rows"] == 1


# ----------------------------------------------------------------------------- FIFOs
def _fifo_at(root: Path, where: str) -> Path:
    """A FIFO where a run's file would be (no process ever writes to it)."""
    path = {
        "log.jsonl": root / "piped" / "log.jsonl",
        "config.json": root / "tour" / "config.json",
        "game.json": root / "tour" / "game.json",
        "the run itself": root / "piped",
        "a saved game": root / "piped.json",
    }[where]
    path.parent.mkdir(parents=True, exist_ok=True)
    path.unlink(missing_ok=True)
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    "where", ["log.jsonl", "config.json", "game.json", "the run itself", "a saved game"]
)
def test_a_fifo_is_refused_at_once_never_opened_and_never_listed(root, tmp_path, where):
    fifo = _fifo_at(root, where)
    assert _listed(root) == {"tour"}  # a FIFO config.json or game.json: tour is still a run
    if where in ("config.json", "game.json"):  # read only for what they add: tour still opens
        listing = _run(deal_list, resolve(root, "tour"), fifos=(fifo,))
        assert listing["deals"] and "damaged" not in listing
        return
    name = "piped.json" if where == "a saved game" else "piped"
    run = resolve(root, name)
    message = _refused(tmp_path, deal_list, run, fifos=(fifo,), names=[name])
    assert "named pipe" in message
    _refused(tmp_path, deal_data, run, 0, 0, None, fifos=(fifo,))


@pytest.mark.parametrize("name", ["zero", "null", "full"])
def test_a_device_under_the_root_is_refused_without_being_read(tmp_path, name):
    if not Path("/dev", name).exists():
        pytest.skip(f"no /dev/{name} here")
    run = resolve(Path("/dev"), name)
    assert "character device" in _refused(tmp_path, deal_list, run, names=[name])


def test_a_log_linked_to_a_device_is_refused_even_under_the_root(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "log.jsonl").symlink_to("/dev/zero")
    # with / as the root, /dev/zero lies under it: it is refused as a device, unread
    run = resolve(Path("/"), str((tmp_path / "run").resolve().relative_to("/")))
    with pytest.raises(ReplayError, match="character device"):
        _run(deal_list, run)


# ----------------------------------------------------------------------------- sizes
def test_a_log_over_the_limit_is_refused_with_its_size_and_the_limit(root, tmp_path, monkeypatch):
    size = (root / "tour" / "log.jsonl").stat().st_size
    monkeypatch.setattr(replay, "MAX_LOG_BYTES", size)
    assert _run(deal_list, resolve(root, "tour"))["deals"]  # at the limit: read
    monkeypatch.setattr(replay, "MAX_LOG_BYTES", size - 1)
    for call in (deal_list, lambda run: deal_data(run, 0, 0)):
        message = _refused(tmp_path, call, resolve(root, "tour"), names=["tour/log.jsonl"])
        assert f"{size:,} bytes" in message and f"{size - 1:,} bytes" in message


def test_a_saved_game_over_the_limit_is_refused_and_not_listed(root, tmp_path, monkeypatch):
    game = _saved_game(root / "saved" / "g.json")
    assert "saved/g.json" in _listed(root)
    monkeypatch.setattr(replay, "MAX_SAVE_BYTES", game.stat().st_size - 1)
    assert "saved/g.json" not in _listed(root)
    message = _refused(tmp_path, deal_list, resolve(root, "saved/g.json"), names=["saved/g.json"])
    assert f"{game.stat().st_size:,} bytes" in message


# ----------------------------------------------------------------------------- run paths
BAD_RELS = [
    "",
    "..",
    "../x",
    "../root/tour",
    "a/../../x",
    "tour/../../outside",
    "tour/..",
    "/",
    "/etc",
    "/etc/passwd",
    "~",
    "~/x",
    "\\x",
    "\x00",
    "tour\x00",
    "tour/\x00/log.jsonl",
    "a" * 256,  # one name longer than a file system allows
    "a/" * 250,  # deep, and missing
    "x" * (replay.MAX_REL_CHARS + 1),
    "missing",
    "tour/missing",
    "tour/log.jsonl/x",
]


@pytest.mark.parametrize("rel", BAD_RELS, ids=lambda r: repr(r[:20]) + f"[{len(r)}]")
def test_a_bad_run_path_is_refused_in_one_line(root, tmp_path, rel):
    _refused(tmp_path, resolve, root, rel)


@pytest.mark.parametrize("rel", [None, 5, b"tour", ["tour"]])
def test_a_run_path_that_is_not_text_is_refused(root, tmp_path, rel):
    _refused(tmp_path, resolve, root, rel)


def test_an_absolute_path_is_refused_even_inside_the_root(root, outside, tmp_path):
    for path in (root / "tour", root, outside, tmp_path):
        _refused(tmp_path, resolve, root, str(path))


@pytest.mark.parametrize("rel", ["tour", "tour/", "./tour", "tour/.", "tour//"])
def test_a_good_run_path_resolves_to_the_run(root, rel):
    run = resolve(root, rel)
    assert run == (root / "tour").resolve() and run.run_name == "tour"
    assert _run(deal_list, run)["rows"] == len(read_rows(root / "tour"))


def test_errors_name_files_relative_to_the_root(root, tmp_path):
    (root / "deep" / "er" / "empty").mkdir(parents=True)
    message = _refused(tmp_path, deal_list, resolve(root, "deep/er/empty"))
    assert message.startswith("deep/er/empty/log.jsonl does not exist"), message
    (root / "tour" / "log.jsonl").write_bytes(b"[1]\n" + (root / "tour" / "log.jsonl").read_bytes())
    notes = _run(deal_list, resolve(root, "tour"))["damaged"]
    assert notes[0].startswith("tour/log.jsonl line 1: is not a JSON object"), notes
    for note in notes:
        _clean(note, tmp_path)


# ----------------------------------------------------------------------------- damaged rows
def _resealed(**change: Any) -> Callable[[dict], bytes]:
    """A row with fields changed (a key mapped to `...` is removed), its checksum made
    again: damage that only the row's fields show."""

    def make(row: dict) -> bytes:
        row = copy.deepcopy(row)
        row.pop("check", None)
        for key, value in change.items():
            if value is ...:
                row.pop(key)
            else:
                row[key] = value
        return json.dumps(seal(row)).encode() + b"\n"

    return make


def _record(edit: Callable[[dict], None]) -> Callable[[dict], bytes]:
    """A row whose hand record `edit` changes, resealed (its checksum holds)."""

    def make(row: dict) -> bytes:
        row = copy.deepcopy(row)
        edit(row["record"])
        return _resealed()(row)

    return make


def _line(row: dict) -> bytes:
    return json.dumps(row).encode() + b"\n"


def _unchecked(row: dict) -> bytes:
    row = copy.deepcopy(row)
    row["hand_score"] = [s + 1 for s in row["hand_score"]]  # its checksum now fails
    return _line(row)


ROW_DAMAGE: dict[str, Callable[[dict], bytes]] = {
    "truncated JSON": lambda row: _line(row)[:80] + b"\n",
    "not UTF-8": lambda row: b'{"deal": "\xff\xfe"}\n',
    "a list": lambda row: b"[1, 2]\n",
    "a number": lambda row: b"5\n",
    "null": lambda row: b"null\n",
    "a string": lambda row: b'"row"\n',
    "a blank line": lambda row: b"\n",
    "nested too deeply": lambda row: b"[" * 100_000 + b"]" * 100_000 + b"\n",
    "a number too long": lambda row: b"1" * 5000 + b"\n",
    "a failed checksum": _unchecked,
    "record null": _resealed(record=None),
    "record a list": _resealed(record=[]),
    "record a string": _resealed(record="hand"),
    "deal a string": _resealed(deal="0"),
    "deal true": _resealed(deal=True),
    "deal null": _resealed(deal=None),
    "hand a fraction": _resealed(hand=0.5),
    "side a list": _resealed(side=[1]),
    "no deal": _resealed(deal=...),
    "no hand": _resealed(hand=...),
    "no record": _resealed(record=...),
    "no seats": _resealed(seats=...),
    "no teams": _resealed(teams=...),
    "no hand_score": _resealed(hand_score=...),
    "seats numbers": _resealed(seats=[1, 2, 3, 4]),
    "teams a string": _resealed(teams="random,heuristic"),
    "teams one name": _resealed(teams=["random"]),
    "hand_score text": _resealed(hand_score=["a", 1]),
    "hand_score NaN": _resealed(hand_score=[float("nan"), 1]),
    "hand_score a number": _resealed(hand_score=5),
    "another tournament": _resealed(tournament="t-other"),
}


def _first_play(record: dict) -> int:
    return next(k for k, (_, a) in enumerate(record["actions"]) if len(a) == 2 and a[1] in "SHDC")


def _illegal_card(record: dict) -> None:
    k = _first_play(record)
    seat = record["actions"][k][0]
    other = record["deal"][(seat + 1) % len(record["deal"])][0]  # a card it does not hold
    record["actions"][k][1] = other


def _out_of_turn(record: dict) -> None:
    record["actions"][0][0] = (record["actions"][0][0] + 1) % 4


REC_DAMAGE: dict[str, Callable[[dict], bytes]] = {
    "no actions": _record(lambda r: r.pop("actions")),
    "no rules": _record(lambda r: r.pop("rules")),
    "no bids": _record(lambda r: r.pop("bids")),
    "actions not pairs": _record(lambda r: r.update(actions=[[1]])),
    "actions a string": _record(lambda r: r.update(actions="1 3")),
    "an action's seat text": _record(lambda r: r["actions"][0].__setitem__(0, "1")),
    "an action not an action": _record(lambda r: r["actions"][0].__setitem__(1, "fly")),
    "an illegal card": _record(_illegal_card),
    "out of turn": _record(_out_of_turn),
    "an action after the end": _record(lambda r: r["actions"].append(list(r["actions"][-1]))),
    "rules not an object": _record(lambda r: r.update(rules="standard")),
    "rules of no table": _record(lambda r: r["rules"].update(num_players="four")),
    "rules with an unknown field": _record(lambda r: r["rules"].update(jokers=2)),
    "two_player rules": _record(lambda r: r["rules"].update(draw=True)),
    "a card that is none": _record(lambda r: r["deal"][0].__setitem__(0, "ZZ")),
    "a card twice": _record(lambda r: r["deal"][1].__setitem__(0, r["deal"][0][0])),
    "a hand short": _record(lambda r: r["deal"][0].pop()),
    "a hand missing": _record(lambda r: r["deal"].pop()),
    "a negative seed": _record(lambda r: r.update(seed=-1)),
    "a seed too big": _record(lambda r: r.update(seed=2**70)),
    "a seed fraction": _record(lambda r: r.update(seed=0.5)),
    "dealer 9": _record(lambda r: r.update(dealer=9)),
    "dealer null": _record(lambda r: r.update(dealer=None)),
    "hand_no too big": _record(lambda r: r.update(hand_no=10**30)),
    "scores for three teams": _record(lambda r: r.update(scores_before=[0, 0, 0])),
    "scores text": _record(lambda r: r.update(scores_before=["a", "b"])),
    "scores too big": _record(lambda r: r.update(scores_before=[10**12, 0])),
    "bids text": _record(lambda r: r.update(bids=["a"])),
    "blind numbers": _record(lambda r: r.update(blind=[0, 0, 0, 0])),
    "tricks null": _record(lambda r: r.update(tricks=None)),
}


def _damaged_log(root: Path, make: Callable[[dict], bytes]) -> tuple[int, int]:
    """Replace the row of deal 0, side 1 of tour's log with `make(row)`; (its line, the
    number of rows of the log)."""
    rows = read_rows(root / "tour")
    k = next(i for i, r in enumerate(rows) if r["deal"] == 0 and r["side"] == 1)
    lines = [_line(r) for r in rows]
    lines[k] = make(rows[k])
    (root / "tour" / "log.jsonl").write_bytes(b"".join(lines))
    return k + 1, len(rows)


def _names_line(text: str, line: int) -> bool:
    return f"tour/log.jsonl line {line}:" in text or f"line {line} of tour/log.jsonl" in text


@pytest.mark.parametrize("damage", sorted(ROW_DAMAGE))
def test_a_damaged_row_is_named_and_the_good_rows_stay_readable(root, tmp_path, damage):
    line, total = _damaged_log(root, ROW_DAMAGE[damage])
    run = resolve(root, "tour")
    listing = _run(deal_list, run)
    assert listing["rows"] == total - 1 and listing["damaged_lines"] == 1
    assert _names_line(listing["damaged"][0], line), listing["damaged"]
    _clean(listing["damaged"][0], tmp_path)
    assert {d["deal"] for d in listing["deals"]} == {0, 1, 2, 3}
    for d in listing["deals"]:
        if d["deal"] != 0:  # the other deals, both sides, replay
            assert set(d["sides"]) == {"0", "1"}
            assert len(_run(deal_data, run, d["deal"], d["hand"], d["pair"])["sides"]) == 2
    try:  # the damaged deal: refused naming the line, or its good side with the line named
        shown = _run(deal_data, run, 0, 0, None)
    except ReplayError as exc:
        assert _names_line(str(exc), line), str(exc)
        _clean(str(exc), tmp_path)
    else:
        assert [s["side"] for s in shown["sides"]] == [0]
        assert _names_line(shown["damaged"][0], line), shown["damaged"]


@pytest.mark.parametrize("damage", sorted(REC_DAMAGE))
def test_a_damaged_record_is_a_replay_error_naming_its_line(root, tmp_path, damage):
    line, total = _damaged_log(root, REC_DAMAGE[damage])
    run = resolve(root, "tour")
    assert _run(deal_list, run)["rows"] == total  # the row itself is whole
    message = _refused(tmp_path, deal_data, run, 0, 0, None)
    assert _names_line(message, line), message
    assert len(_run(deal_data, run, 1, 0, None)["sides"]) == 2  # other deals replay


@pytest.mark.parametrize(
    "damage", ["a list", "record null", "deal a string", "a failed checksum", "no record"]
)
def test_a_log_of_damaged_rows_only_is_a_replay_error(root, tmp_path, damage):
    row = read_rows(root / "tour")[0]
    (root / "tour" / "log.jsonl").write_bytes(ROW_DAMAGE[damage](row) * 2)
    for call in (deal_list, lambda run: deal_data(run, 0, 0)):
        message = _refused(tmp_path, call, resolve(root, "tour"))
        assert _names_line(message, 1), message


def test_a_repeated_row_is_shown_once_and_a_different_copy_refuses_its_deal(root, tmp_path):
    rows = read_rows(root / "tour")
    log = root / "tour" / "log.jsonl"
    log.write_bytes(b"".join(_line(r) for r in rows) + _line(rows[0]))
    listing = _run(deal_list, resolve(root, "tour"))
    assert listing["rows"] == len(rows) and "the same row" in listing["damaged"][0]
    assert len(_run(deal_data, resolve(root, "tour"), 0, 0, None)["sides"]) == 2
    changed = _resealed(hand_score=[1, 2])(rows[0])
    log.write_bytes(b"".join(_line(r) for r in rows) + changed)
    message = _refused(tmp_path, deal_data, resolve(root, "tour"), 0, 0, None)
    assert "different content" in message and _names_line(message, len(rows) + 1)


def test_a_torn_last_line_is_left_out_quietly(root):
    want = _run(deal_list, resolve(root, "tour"))
    log = root / "tour" / "log.jsonl"
    log.write_bytes(log.read_bytes() + b'{"deal": 9, "side"')  # a kill while writing
    assert _run(deal_list, resolve(root, "tour")) == want
    log.write_bytes(log.read_bytes()[: -len(b'{"deal": 9, "side"')] + b'{"deal": 9\n\n')
    assert _run(deal_list, resolve(root, "tour")) == want  # a last line cut, then blank


SAVED_DAMAGE: dict[str, Callable[[bytes], bytes]] = {
    "truncated": lambda data: data[: len(data) // 2],
    "not UTF-8": lambda data: b"\xff\xfe" + data,
    "empty": lambda data: b"",
    "a list": lambda data: b"[1]",
    "nested too deeply": lambda data: b"[" * 100_000 + b"]" * 100_000,
    "another format": lambda data: data.replace(b'"spades-play"', b'"other"'),
    "another version": lambda data: data.replace(b'"version": 1', b'"version": 99'),
    "no actions": lambda data: _json_edit(data, lambda d: d.pop("actions")),
    "an illegal action": lambda data: _json_edit(
        data, lambda d: d["actions"][0].__setitem__(1, "AS")
    ),
    "actions not pairs": lambda data: _json_edit(data, lambda d: d.update(actions=[1, 2])),
    "rules of no table": lambda data: _json_edit(data, lambda d: d["rules"].update(num_players=0)),
    "a seed of text": lambda data: _json_edit(data, lambda d: d.update(seed="x")),
}


def _json_edit(data: bytes, edit: Callable[[dict], Any]) -> bytes:
    saved = json.loads(data)
    edit(saved)
    return json.dumps(saved).encode()


@pytest.mark.parametrize("damage", sorted(SAVED_DAMAGE))
def test_a_damaged_saved_game_is_a_replay_error_naming_it(root, tmp_path, damage):
    game = _saved_game(root / "saved" / "g.json")
    game.write_bytes(SAVED_DAMAGE[damage](game.read_bytes()))
    run = resolve(root, "saved/g.json")
    message = _refused(tmp_path, deal_list, run, names=["saved/g.json"])
    assert "spades-replay" not in message  # not the copy load() read
    _refused(tmp_path, deal_data, run, 0, 0, None, names=["saved/g.json"])


def test_showing_a_saved_game_never_builds_its_agents(root, tmp_path):
    """A saved game may name any agent spec, a file of code included: the replay shows its
    hands from the actions without building (importing, running) any agent."""
    marker = tmp_path / "ran"
    code = tmp_path / "evil.py"
    code.write_text(f"open({str(marker)!r}, 'w').close()\n\nclass Evil:\n    pass\n")
    game = _saved_game(root / "saved" / "g.json")
    saved = json.loads(game.read_text())
    saved["players"] = [f"{code}:Evil" if p != "human" else p for p in saved["players"]]
    game.write_text(json.dumps(saved))
    run = resolve(root, "saved/g.json")
    listing = _run(deal_list, run)
    assert listing["rows"] == 1
    first = listing["deals"][0]
    assert _run(deal_data, run, first["deal"], first["hand"], first["pair"])["sides"]
    assert not marker.exists(), "the saved game's agent code ran"
