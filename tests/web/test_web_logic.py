"""The web table's logic without a server or a browser: message checks, turns, the
per-seat view on the wire, records on disk, resuming, replay paths and data."""

from __future__ import annotations

import json
import random

import pytest
from cli_helpers import spades

pytest.importorskip("starlette")

from experiments.tournament.results_log import read_rows
from experiments.web.catalogue import Catalogue
from experiments.web.game import TableError, create_table, load_table
from experiments.web.protocol import MessageError, parse_message
from experiments.web.records import SeatInfo
from experiments.web.replay import ReplayError, deal_data, deal_list, first_difference, resolve
from experiments.web.views import seat_state
from spades_env.cards import mask_to_cards
from spades_env.records import replay
from spades_env.rules import Rules

CATALOGUE = Catalogue()


def _agent(name, rules):
    return SeatInfo("agent", name, spec=CATALOGUE.spec(name, rules))


def _table(tmp_path, rules=None, seed=11, humans=(2,), name="g"):
    rules = rules or Rules()
    seats = [
        SeatInfo("human", f"p{s}") if s in humans else _agent("heuristic", rules)
        for s in range(rules.num_players)
    ]
    hint = ("heuristic", CATALOGUE.spec("heuristic", rules))
    return create_table(tmp_path / name, rules, seats, seed=seed, hint=hint)


def _play_hand(table, rng, on_state=None):
    """Play until a hand finishes: bots act, people pick a random legal action."""
    while True:
        if on_state is not None:
            on_state(table)
        if table.bot_to_act():
            record = table.bot_move()
        else:
            seat = table.game.to_act
            legal = seat_state(table, seat)["legal"]
            record = table.act(seat, rng.choice(legal)["action"], table.moves)
        if record is not None:
            return record


# ----------------------------------------------------------------------------- messages
@pytest.mark.parametrize(
    ("raw", "match"),
    [
        ("not json", "one JSON object"),
        ("[1, 2]", "one JSON object"),
        ('{"type": "cheat"}', "unknown message type"),
        ('{"type": "act", "action": 3}', "'move' is missing"),
        ('{"type": "act", "action": "3", "move": 0}', "whole number"),
        ('{"type": "act", "action": true, "move": 0}', "whole number"),
        ('{"type": "act", "action": 3, "move": 0, "hand": [1]}', "unexpected field"),
        ('{"type": "act", "action": 3, "move": 0, "seat": 1}', "forged"),
        ('{"type": "hint", "agent": 5}', "text"),
        ("x" * 5000, "too long"),
    ],
)
def test_bad_messages_are_refused(raw, match):
    with pytest.raises(MessageError, match=match):
        parse_message(raw, seat=2)


def test_a_good_message_passes():
    assert parse_message('{"type": "act", "action": 3, "move": 7, "seat": 2}', 2)["move"] == 7


# ----------------------------------------------------------------------------- turns
def test_out_of_turn_stale_and_illegal_moves_change_nothing(tmp_path):
    table = _table(tmp_path)
    while table.bot_to_act():
        table.bot_move()
    me = table.game.to_act
    other = (me + 1) % 4
    before = (table.moves, json.dumps(seat_state(table, me)))
    legal = [a["action"] for a in seat_state(table, me)["legal"]]
    with pytest.raises(TableError, match="not your turn"):
        table.act(other, legal[0], table.moves)
    with pytest.raises(TableError, match="out of date"):
        table.act(me, legal[0], table.moves - 1)
    with pytest.raises(TableError, match="no action"):
        table.act(me, 10_000, table.moves)
    assert (table.moves, json.dumps(seat_state(table, me))) == before


def test_an_illegal_card_is_refused_with_the_rule(tmp_path):
    rng = random.Random(3)
    for seed in range(20):
        table = _table(tmp_path, seed=seed, name=f"g{seed}")
        while True:  # to the first trick where the person must follow suit
            if table.bot_to_act():
                table.bot_move()
                continue
            view = seat_state(table, 2)
            if view["phase"] == "play":
                legal = {a["action"] for a in view["legal"]}
                held = {c["id"] for c in view["hand"]}
                if held - legal:
                    with pytest.raises(TableError, match=r"RULES\.md §3"):
                        table.act(2, min(held - legal), table.moves)
                    return
            table.act(2, rng.choice(view["legal"])["action"], table.moves)
            if table.session.records:
                break
    pytest.fail("no deal made the person hold an unplayable card")


# ----------------------------------------------------------------------------- the wire
def _wire_cards(data) -> set[int]:
    found = set()
    if isinstance(data, dict):
        if {"id", "label", "suit"} <= set(data):
            found.add(data["id"])
        for v in data.values():
            found |= _wire_cards(v)
    elif isinstance(data, list):
        for v in data:
            found |= _wire_cards(v)
    return found


def test_a_seat_is_sent_only_what_it_may_see(tmp_path):
    table = _table(tmp_path, humans=(0, 2), seed=987_654_321_987_654)
    seed = table.session.setup.seed
    checked = []

    def check(t):
        state = t.game.state
        played = int(state.played[0])
        for seat in range(4):
            view = seat_state(t, seat)
            text = json.dumps(view)
            assert str(seed) not in text and "seed" not in text  # never the deck's seed
            assert "token" not in text
            own = 0 if view["hand_hidden"] else int(state.hands[0, seat])
            allowed = set(mask_to_cards(own | played))
            assert _wire_cards(view) <= allowed, (seat, _wire_cards(view) - allowed)
            checked.append(seat)

    _play_hand(table, random.Random(1), check)
    assert len(checked) > 4 * 52


# ----------------------------------------------------------------------------- records
def test_hands_are_logged_and_read_by_show_and_analyze(tmp_path):
    table = _table(tmp_path)
    rng = random.Random(2)
    records = [_play_hand(table, rng), _play_hand(table, rng)]
    rows = read_rows(table.folder)
    assert [r["record"] for r in rows] == records
    assert all(replay(r["record"]) == r["record"] for r in rows)  # the engine's own record
    assert rows[0]["seats"][2] == "human:p2" and rows[0]["seats"][0] == "heuristic"
    shown = spades("show", str(table.folder), "--deal", "0", "--hand", "1")
    assert shown.returncode == 0, shown.stderr
    assert "human:p2" in shown.stdout
    analyzed = spades("analyze", str(table.folder), "--no-dd", "--by", "seat")
    assert analyzed.returncode == 0, analyzed.stderr


def test_a_killed_game_resumes_with_every_hand(tmp_path):
    table = _table(tmp_path)
    rng = random.Random(4)
    _play_hand(table, rng)
    for _ in range(9):  # into the second hand
        if table.bot_to_act():
            table.bot_move()
        else:
            table.act(2, seat_state(table, 2)["legal"][0]["action"], table.moves)
    # the log loses its last hand (a kill between the two writes): the resume logs it again
    (table.folder / "log.jsonl").write_text("")
    again = load_table(table.folder, CATALOGUE.spec)
    assert again.moves == table.moves
    assert seat_state(again, 2)["hand"] == seat_state(table, 2)["hand"]
    assert [r["record"] for r in read_rows(table.folder)] == table.session.records


# ----------------------------------------------------------------------------- replay
def test_paths_outside_the_root_are_refused(tmp_path):
    root = tmp_path / "root"
    (root / "run").mkdir(parents=True)
    (tmp_path / "secret").mkdir()
    (root / "link").symlink_to(tmp_path / "secret")
    for bad in ("../secret", "/etc", "run/../../secret", "link", "~/x", ""):
        with pytest.raises(ReplayError):
            resolve(root, bad)
    assert resolve(root, "run") == (root / "run").resolve()


def test_a_tournament_deal_replays_both_sides(small_run):
    deals = deal_list(small_run)["deals"]
    assert deals and set(deals[0]["sides"]) == {"0", "1"}
    data = deal_data(small_run, deals[0]["deal"], deals[0]["hand"], deals[0]["pair"])
    rows = [
        r
        for r in read_rows(small_run)
        if r["deal"] == deals[0]["deal"] and r["hand"] == deals[0]["hand"]
    ]
    for side in data["sides"]:
        logged = next(r for r in rows if r["side"] == side["side"])["record"]["actions"]
        stepped = [[f["action"]["seat"], f["action"]["index"]] for f in side["frames"][1:]]
        assert [s for s, _ in stepped] == [s for s, _ in logged]
        assert side["actions"] == logged
        plays = [f for f in side["frames"][1:] if f["action"]["phase"] == "play"]
        for n in range(3, len(plays), 4):  # a trick's fourth card: the whole trick in view
            assert all(plays[n]["trick"])
        assert side["frames"][-1]["tricks_won"] == side["tricks"]
    a, b = (s["actions"] for s in data["sides"])
    k = data["first_difference"]
    assert k is None or (a[:k] == b[:k] and a[k] != b[k])


def test_first_difference():
    assert first_difference([[0, "1"], [1, "2"]], [[0, "1"], [1, "3"]]) == 1
    assert first_difference([[0, "1"]], [[0, "1"]]) is None


def test_peoples_decisions_are_a_behaviour_cloning_dataset(tmp_path):
    from spades_env.cards import str_to_action
    from training.bc_data import load_dataset, read_meta

    table = _table(tmp_path)
    rng = random.Random(6)
    records = [_play_hand(table, rng), _play_hand(table, rng)]
    folder = table.decisions.seat_folder(2)
    assert read_meta(folder)["teacher"] == "human:p2"
    data = load_dataset(folder)
    mine = [str_to_action(a) for r in records for s, a in r["actions"] if s == 2]
    # every decision of the person that had a choice, in order, legal in its mask
    assert len(data["action"]) <= len(mine)
    assert data["mask"][range(len(data["action"])), data["action"]].all()
    it = iter(mine)
    assert all(any(a == b for b in it) for a in data["action"].tolist())  # a subsequence
    assert len(data["action"]) >= 20
    again = load_table(table.folder, CATALOGUE.spec)  # a resume writes the same shards again
    assert again.decisions.seat_folder(2) == folder
    assert (load_dataset(folder)["action"] == data["action"]).all()


def test_a_whole_game_to_its_target(tmp_path):
    table = _table(tmp_path, rules=Rules.build("standard", ["target=150"]))
    rng = random.Random(8)
    while not table.game.done:
        record = _play_hand(table, rng)
    view = seat_state(table, 2)
    assert view["game_over"] and view["winner"] == record["winner"] >= 0
    assert view["scores"] == record["scores"] and len(view["sheet"]) == len(read_rows(table.folder))
    with pytest.raises(TableError, match="game is over"):
        table.act(2, 0, table.moves)


@pytest.mark.parametrize(
    ("preset", "options"),
    [
        ("standard", ["blind_nil_exchange=true", "blind_nil=always"]),
        ("auction", []),
        ("two_player", []),
        ("cutthroat_5", []),
        ("standard", ["blind_nil=never,open_hands=true"]),
    ],
)
def test_every_table_plays_a_hand_through_the_view(tmp_path, preset, options):
    """The choices the page offers (the view's legal list) play a hand of any table, and
    each seat's wire data holds only the cards it may know (open hands: every hand)."""
    rules = Rules.build(preset, options)
    table = _table(tmp_path, rules=rules, humans=(0,), seed=21)
    phases = set()

    def check(t):
        view = seat_state(t, 0)
        phases.add(view["phase"])
        if rules.open_hands:
            assert sum(len(h) for h in view["open_hands"]) > 0
            return
        state = t.game.state
        own = 0 if view["hand_hidden"] else int(state.hands[0, 0])
        looking = {view["looking"]["id"]} if view["looking"] else set()
        allowed = set(mask_to_cards(own | int(state.played[0]))) | looking
        allowed |= {c["id"] for c in view["received"]} | {c["id"] for c in view["passed"]}
        assert _wire_cards(view) <= allowed

    record = _play_hand(table, random.Random(5), check)
    assert replay(record) == record
    assert "play" in phases


@pytest.mark.slow
@pytest.mark.torch
@pytest.mark.cli
def test_spades_train_bc_trains_on_a_web_game(tmp_path):
    pytest.importorskip("torch")
    table = _table(tmp_path)
    rng = random.Random(9)
    _play_hand(table, rng)
    _play_hand(table, rng)
    out = spades(
        "train", "bc", "--hands", "20", "--hands-per-shard", "10", "--epochs", "1",
        "--eval-deals", "0", "--extra-data", str(table.decisions.seat_folder(2)),
        "--runs-dir", str(tmp_path / "runs"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "final.pt" in out.stdout + out.stderr


def test_a_hint_names_a_legal_choice_with_values_where_the_agent_has_them(tmp_path):
    table = _table(tmp_path, seed=13)
    while table.bot_to_act() or seat_state(table, 2)["phase"] != "play":
        if table.bot_to_act():
            table.bot_move()
        else:
            table.act(2, seat_state(table, 2)["legal"][0]["action"], table.moves)
    legal = {a["action"] for a in seat_state(table, 2)["legal"]}
    before = table.moves
    plain = table.hint(2, CATALOGUE.spec("heuristic", table.rules))
    assert plain["action"] in legal and plain["values"] == {}
    valued = table.hint(2, CATALOGUE.spec("pimc:worlds=4", table.rules))
    assert valued["action"] in legal
    assert {int(a) for a in valued["values"]} == legal  # a value for every legal card
    assert valued["values"][str(valued["action"])] == max(valued["values"].values())
    assert table.moves == before  # a hint plays nothing
    with pytest.raises(TableError, match="your turn"):
        table.hint(0, None)


def test_the_runs_under_the_root_open(tmp_path, small_run):
    import shutil

    from experiments.play.session import PlaySession, make_setup
    from experiments.web.replay import list_runs

    root = tmp_path / "root"
    shutil.copytree(small_run, root / "tour")
    table = _table(root / "web", name="g1")
    _play_hand(table, random.Random(3))
    session = PlaySession(make_setup(Rules(), seed=4))  # a game saved by spades play
    while not session.records:
        if session.human_to_act:
            session.apply(session.game.legal_list()[0])
        else:
            session.apply(session.bot_action())
    session.save(root / "saved" / "game1.json")
    runs = {r["path"]: r["kind"] for r in list_runs(root)}
    assert runs == {"tour": "tournament", "web/g1": "web game", "saved/game1.json": "saved game"}
    for path in runs:
        deals = deal_list(resolve(root, path))["deals"]
        first = deals[0]
        data = deal_data(resolve(root, path), first["deal"], first["hand"], first["pair"])
        assert data["sides"][0]["frames"][-1]["tricks_won"] == data["sides"][0]["tricks"]
