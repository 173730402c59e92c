"""`spades play` at every table of RULES.md §6: 2 to 5 seats, partnerships or one-player
teams, two_player's draw and auction's trump.

For each preset one scripted hand runs through the real command (stdin not a terminal)
and is checked against the engine replaying its save file; save and load round-trip in
process. The draw phase's input, events and screen are pinned on the person's own draws.
"""

from __future__ import annotations

import io
import json
import random
import re
import subprocess
import sys

import pytest
from play_helpers import ROOT, WAIT, Driver, assert_loaded_as_saved, play_out
from rich.console import Console
from slow_cases import first_by_default

from experiments.play import screen as ui
from experiments.play.session import (
    InputError,
    PlayError,
    PlaySession,
    load,
    make_setup,
    parse_move,
    prompt_line,
)
from experiments.table.session import why_illegal
from experiments.table.words import card_label, describe, hint_label
from spades_env.cards import DRAW_DISCARD, DRAW_KEEP, mask_to_cards, str_to_action, str_to_card
from spades_env.rules import PRESETS, Rules
from spades_env.single import SingleGame
from spades_env.state import BID, DRAW, PLAY
from spades_env.stock_draw import stock_left

NAMES = ("North", "East", "South", "West", "Seat 4")  # seat 4: RULES.md §6 cutthroat_5
TEAMS = ("North–South", "East–West")
SEAT_HEAD = re.compile(r"(North|East|South|West|Seat 4) · ")
SEAT_FLAG = {"cutthroat_5": ["--seat", "4"]}  # the fifth seat, which has no compass name


def _names(rules: Rules, human: int) -> list[str]:
    """Team names as the sheets print them: partnerships, or the seat (yours marked)."""
    if rules.partnerships:
        return list(TEAMS)
    return [NAMES[s] + (" (you)" if s == human else "") for s in range(rules.num_players)]


def _sheet_row(rules: Rules) -> re.Pattern[str]:
    names = "|".join(re.escape(n) for n in (*TEAMS, *NAMES))
    bags = r"(\d+)(?: \(-\d+\))?\s+" if rules.scoring != "family" else r"()"
    return re.compile(
        rf"^\s*(\d+)\s+((?:{names})(?: \(you\))?)\s+(.+?)\s+(\d+)\s+(-?\d+)\s+{bags}(-?\d+)\s*$"
    )


def sheet_rows(lines: list[str], rules: Rules) -> list[tuple]:
    """(hand, name, tricks, points, bags, total) of the last score sheet printed."""
    start = max(i for i, line in enumerate(lines) if "Score sheet" in line)
    pattern, rows = _sheet_row(rules), []
    for line in lines[start:]:
        if m := pattern.match(line):
            h, name, _bid, tricks, pts, bags, total = m.groups()
            rows.append((int(h), name, int(tricks), int(pts), bags or "", int(total)))
    return rows


def replayed(save) -> tuple[list[tuple], SingleGame, Rules, int]:
    """The sheet rows of the saved actions replayed through the engine alone."""
    data = json.loads(save.read_text(encoding="utf-8"))
    rules, human = Rules.from_dict(data["rules"]), data["human_seat"]
    game, names, rows = SingleGame(rules, seed=data["seed"]), _names(rules, human), []
    for seat, text in data["actions"]:
        assert game.to_act == seat
        f = game.step(str_to_action(text)).finished
        if f is None:
            continue
        for team in range(rules.num_teams):
            seats = [s for s in range(rules.num_players) if rules.team_of(s) == team]
            rows.append(
                (
                    int(f.hand_no[0]) + 1,
                    names[team],
                    sum(int(f.tricks[0, s]) for s in seats),
                    int(f.points[0, team] - f.penalty[0, team]),
                    "" if rules.scoring == "family" else str(int(f.bags[0, team])),
                    int(f.scores[0, team]),
                )
            )
    return rows, game, rules, human


# ----------------------------------------------------------------------------- one hand each
#: The presets played to the end of a hand: first those whose screens differ most (the
#: draw, the trump naming, the jokers), then the rest (under -m slow)
DISTINCT = ("standard", "two_player", "auction", "jokers")
ONE_HAND_ORDER = [*DISTINCT, *(p for p in PRESETS if p not in DISTINCT)]


@pytest.fixture(scope="module", params=first_by_default(ONE_HAND_ORDER, keep=4))
def one_hand(request, tmp_path_factory):
    """One hand of the preset (max_hands=1) to the end of the game, random legal answers."""
    preset = request.param
    save = tmp_path_factory.mktemp(preset) / "game.json"
    args = ["--rules", preset, "--seed", "5", "--option", "max_hands=1", "--save", str(save)]
    drv = Driver(*args, *SEAT_FLAG.get(preset, []))
    first = drv.next_prompt()
    assert first is not None, "\n".join(drv.transcript)
    drv.send(random.choice(first[1]))
    play_out(drv, random.Random(preset))
    rc = drv.finish()
    return {"preset": preset, "rc": rc, "lines": drv.transcript, "first": first[0], "save": save}


@pytest.mark.cli
def test_one_hand_ends_with_the_score_sheet_of_its_replay(one_hand):
    lines = one_hand["lines"]
    assert one_hand["rc"] == 0, "\n".join(lines[-30:])
    expected, game, rules, human = replayed(one_hand["save"])
    assert game.done and len(expected) == rules.num_teams
    assert sheet_rows(lines, rules) == expected
    assert "Hand 1 is over" in "\n".join(lines)
    win = _names(rules, human)[game.winner]
    verdict = [line for line in lines if line.startswith("Game over after 1 hand: ")]
    assert len(verdict) == 1 and verdict[0].endswith(
        "you win!" if game.winner == rules.team_of(human) else "you lose."
    )
    assert ("you win" if win.endswith("(you)") else win) in verdict[0]


@pytest.mark.cli
def test_the_screen_shows_every_seat_and_scores_by_team_or_player(one_hand):
    rules = Rules.preset(one_hand["preset"])
    screen = one_hand["first"]
    shown = {m for line in screen for m in SEAT_HEAD.findall(line)}
    assert shown == set(NAMES[: rules.num_players])
    top = next(i for i, line in enumerate(screen) if "Score" in line and "Tricks" in line)
    header = screen[top].split()
    assert header[0] == ("Team" if rules.partnerships else "Player")
    assert ("Bags" in header) == (rules.scoring != "family")  # family scoring has no bags
    rows = []
    for line in screen[top + 2 :]:  # below the rule under the header, to the blank line
        if not line.strip():
            break
        rows.append(line.strip().split("  ")[0])  # columns are 2+ spaces apart
    human = 4 if one_hand["preset"] == "cutthroat_5" else 0 if rules.draw else 2
    assert rows == _names(rules, human)  # by team, or one row per player (RULES.md §6)
    if rules.draw:
        assert any(line.strip().startswith("drawing: ") for line in screen)
    else:
        assert any(re.search(rf"trick 1 of {rules.hand_size}\b", line) for line in screen)


@pytest.mark.cli
def test_the_saved_game_loads_finished_with_the_same_scores(one_hand):
    data = json.loads(one_hand["save"].read_text(encoding="utf-8"))
    session = load(one_hand["save"])
    assert session.game.done and data["game_over"] is True
    assert list(session.game.scores) == data["scores"]
    assert len(session.records) == data["hands_done"] == 1


def advance(session: PlaySession, moves: int) -> PlaySession:
    """Let the hint agent answer for the person and the bots play `moves` moves."""
    for _ in range(moves):
        session.apply(session.hint()[0] if session.human_to_act else session.bot_action())
    return session


@pytest.mark.parametrize("preset", PRESETS)
def test_load_restores_a_game_mid_hand_exactly(tmp_path, preset):
    rules = Rules.preset(preset)
    a = advance(PlaySession(make_setup(rules, 7)), 2 * rules.num_players + 5)
    b = load(a.save(tmp_path / "g.json"))
    assert b.trick == a.trick and b.setup == a.setup
    assert_loaded_as_saved(a, b)


# ----------------------------------------------------------------------------- seats
def test_one_player_teams_have_no_partner_and_every_other_seat_is_an_opponent():
    setup = make_setup(Rules.preset("cutthroat"), 1, opponents="random")
    assert setup.names == ["random", "random", "human", "random"]
    with pytest.raises(PlayError, match="cutthroat has one-player teams, so there is no partner"):
        make_setup(Rules.preset("cutthroat"), 1, partner="random")


def test_the_partner_sits_opposite_in_partnerships():  # RULES.md §1
    setup = make_setup(Rules(), 1, human=1, partner="random", opponents="heuristic")
    assert setup.names == ["heuristic", "human", "heuristic", "random"]


def test_a_seat_missing_at_the_table_is_refused_and_two_players_default_to_north():
    with pytest.raises(PlayError, match=r"^seat 3 is not at this table of 3: the seats are North"):
        make_setup(Rules.preset("three_player"), 1, human=3)
    assert make_setup(Rules.preset("two_player"), 1).human == 0
    assert make_setup(Rules.preset("three_player"), 1).human == 2


@pytest.mark.cli
def test_partner_without_partnerships_is_refused_in_one_line():
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "experiments.cli",
            "play",
            "--rules",
            "family",
            "--partner",
            "random",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=WAIT,
    )
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr == (
        "spades play: error: family has one-player teams, so there is no partner: drop "
        "--partner (--opponents sets every other seat)\n"
    )


# ----------------------------------------------------------------------------- the draw
def _my_draw(seed: int = 1) -> PlaySession:
    """RULES.md §6 two_player: the person (North) decides on the top card of the stock."""
    session = PlaySession(make_setup(Rules.preset("two_player"), seed))
    while not (session.human_to_act and session.game.phase == DRAW):
        session.apply(session.bot_action())
    return session


def test_the_draw_prompt_names_the_card_the_person_looks_at():
    session = _my_draw()
    top = int(session.view().looking[0])
    assert top >= 0
    assert prompt_line(session) == (
        f"You see {card_label(top)}: keep it, or discard it and take the next card"
        " — legal: keep, discard"
    )


@pytest.mark.parametrize(
    "typed, action",
    [
        ("keep", DRAW_KEEP),
        ("k", DRAW_KEEP),
        (" Keep ", DRAW_KEEP),
        ("discard", DRAW_DISCARD),
        ("D", DRAW_DISCARD),
    ],
)
def test_draw_answers_parse(typed, action):
    assert parse_move(_my_draw(), typed) == action


@pytest.mark.parametrize("typed", ["QH", "1", "nil", "hearts"])
def test_a_draw_answer_that_is_no_draw_gets_its_reason(typed):
    with pytest.raises(InputError) as err:
        parse_move(_my_draw(), typed)
    assert str(err.value) == (
        f"{typed!r} is not a draw: type keep (k) to keep the card you see, or discard (d) "
        "to take the next"
    )


def test_why_illegal_in_the_draw_and_keep_after_it():
    session = _my_draw()
    assert why_illegal(session, str_to_card("QH")) == (
        "you are drawing from the stock: type keep (k) or discard (d)"
    )
    while not (session.human_to_act and session.game.phase == BID):
        session.apply(session.hint()[0] if session.human_to_act else session.bot_action())
    with pytest.raises(InputError, match=r"^keep and discard are for drawing from the stock"):
        parse_move(session, "keep")
    while not (session.human_to_act and session.game.phase == PLAY):
        session.apply(session.hint()[0] if session.human_to_act else session.bot_action())
    with pytest.raises(InputError, match=r"^'k' is not a card"):
        parse_move(session, "k")


def test_keep_puts_the_seen_card_in_the_hand_and_says_so():
    session = _my_draw()
    top = int(session.view().looking[0])
    events, _ = session.apply(DRAW_KEEP)
    assert events == [f"You keep {card_label(top)}"]
    assert session.hand() == [top]


def test_discard_takes_the_next_card_and_names_both():
    session = _my_draw()
    top, before = int(session.view().looking[0]), set(session.hand())
    events, _ = session.apply(DRAW_DISCARD)
    (taken,) = set(session.hand()) - before
    assert taken != top and top not in session.hand()
    assert events == [f"You discard {card_label(top)} and take the next card ({card_label(taken)})"]


def test_the_opponents_draws_reveal_nothing():
    assert describe(1, DRAW, DRAW_KEEP, False) == describe(1, DRAW, DRAW_DISCARD, False)
    assert describe(1, DRAW, DRAW_KEEP, False) == "East draws"
    session = _my_draw()
    session.apply(DRAW_KEEP)
    events, _ = session.apply(session.bot_action())
    assert events == ["East draws"]


def test_the_hint_decides_the_draw():
    action, why = _my_draw().hint()
    assert (
        hint_label(action)
        == {
            DRAW_KEEP: "keep the card you see",
            DRAW_DISCARD: "discard the card you see and take the next",
        }[action]
    )
    assert why is not None and why.startswith("keep" if action == DRAW_KEEP else "discard")


def test_the_draw_screen_shows_the_top_card_the_stock_and_the_growing_hand():
    session = _my_draw()
    for _ in range(3):  # three of the person's draws, with the opponent's between
        session.apply(session.hint()[0])
        while not session.human_to_act:
            session.apply(session.bot_action())
    g, v = session.game, session.view()
    out = Console(record=True, width=100, file=io.StringIO())
    left = int(stock_left(g.state)[0])
    out.print(ui.screen(v, session.setup.names, 0, "", None, [], left))
    text = out.export_text()
    assert f"drawing: {left} cards left in the stock" in text
    assert left == 52 - 2 * (len(session.hand()) + len(mask_to_cards(g.hands[1])))
    assert f"On top of the stock, for you: {card_label(int(v.looking[0]))}" in text
    assert len(session.hand()) == 3
    assert all(card_label(c) in text for c in session.hand())
    for card in mask_to_cards(g.hands[1]):  # nothing of the opponent's hand
        assert card_label(card) not in text


@pytest.mark.slow
@pytest.mark.parametrize("preset", PRESETS)
@pytest.mark.cli
def test_a_game_stopped_and_loaded_ends_as_if_never_stopped(tmp_path, preset):
    args = ["--rules", preset, "--seed", "9", "--option", "max_hands=3", *SEAT_FLAG.get(preset, [])]
    whole = Driver(*args, "--save", str(tmp_path / "whole.json"))
    play_out(whole, random.Random(1))
    assert whole.finish() == 0
    save, rng = tmp_path / "split.json", random.Random(1)  # the same answers
    first = Driver(*args, "--save", str(save))
    play_out(first, rng, stop_after=20)  # two_player: mid-draw
    assert first.finish() == 0 and "end of input: saved to" in first.transcript[-1]
    second = Driver("--load", str(save))
    play_out(second, rng)
    assert second.finish() == 0
    rules = Rules.preset(preset)
    expected = replayed(tmp_path / "whole.json")[0]
    assert sheet_rows(second.transcript, rules) == sheet_rows(whole.transcript, rules) == expected
