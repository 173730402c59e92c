"""`spades play`: a scripted game through the real command, wrong inputs, save and load.

The subprocess tests drive `python -m experiments.cli play` over pipes the way a person
would: read the screen, answer each prompt with one of the choices it lists, and now
and then type something wrong. The in-process tests pin each wrong-input message to a
position where it applies.
"""

from __future__ import annotations

import io
import json
import random
import re
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from play_helpers import ROOT, WAIT, Driver, assert_loaded_as_saved, hand_on_screen, play_out
from rich.console import Console

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
from experiments.table.words import card_label
from spades_env.cards import (
    BLIND_NIL,
    CARD_SUIT,
    SEE_HAND,
    SUIT_NAMES,
    mask_to_cards,
    str_to_action,
    str_to_card,
)
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import BID, BLIND, EXCHANGE, PLAY

SEED = 11
GAME = ["--seed", str(SEED), "--option", "target=150", "--option", "max_hands=3"]
TEAMS = ("North–South", "East–West")
SHEET_ROW = re.compile(
    r"^\s*(\d+)\s+(North–South|East–West)\s+(\d+) \([^)]*\)\s+(\d+)\s+(-?\d+)\s+"
    r"(\d+)(?: \(-\d+\))?\s+(-?\d+)\s*$"
)


# ----------------------------------------------------------------------------- wrong cards
def wrong_card(hand: list[str], legal: list[str]) -> tuple[str, str, str] | None:
    """(kind, card, message) of an illegal card in the hand whose rule is clear from the
    prompt alone, or None."""
    ok = {str_to_card(c) for c in legal}
    bad = [c for c in map(str_to_card, hand) if c not in ok]
    others = [c for c in bad if CARD_SUIT[c] != 0]
    if others:  # a non-spade held back: the legal cards are the led suit
        suit = SUIT_NAMES[CARD_SUIT[next(iter(ok))]]
        return "must follow", card_label(others[0]), f"you must follow {suit}"
    if bad and len({int(CARD_SUIT[c]) for c in ok}) > 1:  # only spades held back: a lead
        return "not broken", card_label(bad[0]), "spades are not broken yet"
    return None


def sheet_rows(transcript: list[str]) -> list[tuple]:
    """The rows of the last score sheet printed."""
    start = max(i for i, line in enumerate(transcript) if "Score sheet" in line)
    rows = []
    for line in transcript[start:]:
        if m := SHEET_ROW.match(line):
            h, team, bid, tricks, pts, bags, total = m.groups()
            rows.append((int(h), team, int(bid), int(tricks), int(pts), int(bags), int(total)))
    return rows


def replayed_rows(save_file: Path) -> tuple[list[tuple], SingleGame]:
    """The score sheet rows of the saved actions replayed through the engine alone."""
    data = json.loads(save_file.read_text(encoding="utf-8"))
    game = SingleGame(Rules.from_dict(data["rules"]), seed=data["seed"])
    rows = []
    for seat, text in data["actions"]:
        assert game.to_act == seat
        info = game.step(str_to_action(text))
        if (f := info.finished) is None:
            continue
        for team in range(2):
            bids = [int(f.bids[0, s]) for s in (team, team + 2)]
            rows.append(
                (
                    int(f.hand_no[0]) + 1,
                    TEAMS[team],
                    sum(b for b in bids if b > 0),
                    int(f.tricks[0, team] + f.tricks[0, team + 2]),
                    int(f.points[0, team] - f.penalty[0, team]),
                    int(f.bags[0, team]),
                    int(f.scores[0, team]),
                )
            )
    return rows, game


# ----------------------------------------------------------------------------- full game
class Extras:
    """Types each help command once at the first prompt, then each kind of wrong input
    once where it applies, and checks the answer: the message alone, then the same prompt."""

    COMMANDS = ("help", "score", "last", "hint")

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = {}

    def _wrong(self, prompt: str, hand: list[str]) -> list[tuple[str, str, str]]:
        if prompt.startswith("Your bid"):
            return [
                ("blind", "blind nil", "blind nil is only allowed when your team trails by 100"),
                ("high", "14", "bids go from nil to 13"),
                ("junk", "hello", "'hello' is not a bid: type nil, a number, or blind nil"),
            ]
        if not prompt.startswith("Your card"):
            return []
        held = set(map(str_to_card, hand))
        absent = card_label(next(c for c in range(52) if c not in held))
        return [
            ("index", "99", f"there is no card 99: your cards are numbered 1 to {len(hand)}"),
            ("absent", absent, f"you do not hold {absent}"),
        ]

    def __call__(self, prompt: str, hand: list[str], legal: list[str]):
        for cmd in self.COMMANDS:
            if cmd not in self.answers:
                return cmd, lambda lines, after, cmd=cmd: self._answered(cmd, lines, legal, after)
        todo = self._wrong(prompt, hand)
        if prompt.startswith("Your card") and (card := wrong_card(hand, legal)):
            todo.append(card)
        for kind, text, message in todo:
            if kind not in self.answers:
                self.answers[kind] = []
                return text, lambda lines, after, k=kind, m=message: self._answered(
                    k, lines, legal, after, m
                )
        return None

    def _answered(self, kind, lines, legal, after, message=None) -> None:
        assert after == legal, f"{kind}: the prompt changed"
        if message is not None:
            assert lines == [message], (kind, lines)
        self.answers[kind] = lines


@pytest.fixture(scope="module")
def full_game(tmp_path_factory):
    """One scripted game to the end, with the commands and every wrong input typed once."""
    save = tmp_path_factory.mktemp("play") / "game.json"
    drv = Driver(*GAME, "--save", str(save))
    extras = Extras()
    moves = play_out(drv, random.Random(0), extra=extras)
    rc = drv.finish()
    return {"rc": rc, "lines": drv.transcript, "save": save, "moves": moves, "x": extras}


@pytest.mark.cli
def test_scripted_game_ends_with_the_score_sheet_of_its_replay(full_game):
    assert full_game["rc"] == 0, "\n".join(full_game["lines"][-20:])
    expected, game = replayed_rows(full_game["save"])
    assert game.done and expected
    assert sheet_rows(full_game["lines"]) == expected
    win = TEAMS[game.winner]
    assert any(
        line.startswith("Game over after ") and f"{win} win" in line for line in full_game["lines"]
    )
    assert json.loads(full_game["save"].read_text())["game_over"] is True


@pytest.mark.cli
def test_every_hand_ends_with_a_summary_of_bids_tricks_and_points(full_game):
    hands = len(replayed_rows(full_game["save"])[0]) // 2
    for k in range(1, hands + 1):
        assert f"Hand {k} is over" in "\n".join(full_game["lines"])


@pytest.mark.parametrize(
    "kind", ["blind", "high", "junk", "index", "absent", "must follow", "not broken"]
)
@pytest.mark.cli
def test_each_wrong_input_gets_its_message_and_the_game_goes_on(full_game, kind):
    # play_out checked the message and the repeated prompt right after each one
    assert full_game["rc"] == 0
    if kind in ("must follow", "not broken") and kind not in full_game["x"].answers:
        pytest.skip("the position did not come up; test_wrong_input_message covers it")
    assert kind in full_game["x"].answers


@pytest.mark.cli
def test_help_commands_answer_without_moving(full_game):
    answers = full_game["x"].answers
    assert any(line.startswith("hint   what the hint agent") for line in answers["help"])
    assert "no hand finished yet" in "\n".join(answers["score"])
    assert answers["last"] == ["last no trick played yet"]
    assert len(answers["hint"]) == 1 and re.match(
        r"hint \(heuristic\): bid \d+ — ", answers["hint"][0]
    )


@pytest.mark.cli
def test_screen_shows_the_hand_sorted_spades_first(full_game):
    hand = hand_on_screen(full_game["lines"][:40])
    suits = [int(CARD_SUIT[str_to_card(c)]) for c in hand]
    assert len(hand) == 13 and suits == sorted(suits)
    assert any("♠" in c for c in hand)


# ----------------------------------------------------------------------------- save / load
@pytest.mark.cli
def test_a_game_saved_at_end_of_input_and_loaded_ends_as_if_never_stopped(full_game, tmp_path):
    save = tmp_path / "split.json"
    rng = random.Random(0)  # the same answers as the full game, without the wrong inputs
    first = Driver(*GAME, "--save", str(save))
    made = play_out(first, rng, stop_after=20)  # within the second hand
    assert first.finish() == 0 and "end of input: saved to" in first.transcript[-1]
    assert len(json.loads(save.read_text())["actions"]) > made
    second = Driver("--load", str(save))
    play_out(second, rng)
    assert second.finish() == 0
    assert sheet_rows(second.transcript) == sheet_rows(full_game["lines"])


@pytest.mark.parametrize("seat, name", [("W", "West"), ("north", "North"), ("1", "East")])
@pytest.mark.cli
def test_the_person_sits_where_seat_says_and_end_of_input_saves_like_quit(tmp_path, seat, name):
    drv = Driver("--seed", "2", "--seat", seat, cwd=tmp_path)
    assert drv.next_prompt() is not None
    assert any(f"you are {name}" in line for line in drv.transcript)
    assert any(f"▶ {name} · you" in line for line in drv.transcript)
    assert drv.finish() == 0
    # no --save: the game is not dropped but saved to a new file, named in one line
    saved = list(tmp_path.iterdir())
    assert len(saved) == 1 and saved[0].name.startswith("spades-play-")
    said = [x for x in drv.transcript if x.startswith("end of input: saved to")]
    assert said == [f"end of input: saved to {saved[0].name}; resume with: "
                    f"spades play --load {saved[0].name}"]  # fmt: skip
    assert load(saved[0]).setup.seed == 2


@pytest.mark.cli
def test_ctrl_c_saves_before_exiting(tmp_path):
    drv = Driver("--seed", "4", cwd=tmp_path)  # no --save: a default file in the folder
    assert drv.next_prompt() is not None
    drv.proc.send_signal(signal.SIGINT)
    # stdin stays open until the process has exited: closing it first races the signal, and
    # a slow process may read the end of input (a normal save and exit 0) before it.
    drv.proc.wait(timeout=WAIT)
    assert drv.finish() == 130
    saved = list(tmp_path.glob("spades-play-*.json"))
    assert len(saved) == 1 and any(f"saved to {saved[0].name}" in x for x in drv.transcript)
    assert load(saved[0]).setup.seed == 4


def advance(
    session: PlaySession, until: Callable[[PlaySession], bool], limit: int = 2000
) -> PlaySession:
    """Let the hint agent answer for the person and the bots play until `until` holds."""
    for _ in range(limit):
        if until(session):
            return session
        move = session.hint()[0] if session.human_to_act else session.bot_action()
        session.apply(move)
    raise AssertionError("the position never came")


def new_session(seed: int = 3, **options) -> PlaySession:
    return PlaySession(make_setup(Rules(**options), seed))


@pytest.mark.parametrize("moves", [0, 7, 60])
def test_load_restores_the_state_exactly(tmp_path, moves):
    a = new_session()
    advance(a, lambda s: len(s.actions) >= moves)
    b = load(a.save(tmp_path / "g.json"))
    assert b.records == a.records
    assert_loaded_as_saved(a, b)


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda d: d["actions"].__setitem__(0, [d["actions"][0][0], "14"]), "illegal"),
        (lambda d: d["actions"].__setitem__(0, [(d["actions"][0][0] + 1) % 4, "3"]), "turn"),
        (lambda d: d.__setitem__("format", "other"), "not a saved game"),
        (lambda d: d.__setitem__("scores", [999, 0]), "scores differ"),
    ],
)
def test_a_damaged_save_file_is_refused_with_a_reason(tmp_path, edit, message):
    session = advance(new_session(), lambda s: len(s.actions) >= 8)
    data = session.to_json()
    edit(data)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(data))
    with pytest.raises(PlayError, match=message):
        load(path)


@pytest.mark.cli
def test_load_refuses_game_flags_in_one_line(tmp_path):
    path = new_session().save(tmp_path / "g.json")
    out = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "play", "--load", str(path), "--seed", "3"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=WAIT,
    )
    assert out.returncode == 2
    assert (
        out.stderr.strip() == "spades play: error: --load takes the game from the file; drop --seed"
    )


# ----------------------------------------------------------------------------- messages
def _human_bids(s: PlaySession) -> bool:
    return s.human_to_act and s.game.phase == BID


def _human_blind(s: PlaySession) -> bool:
    return s.human_to_act and s.game.phase == BLIND


def _human_follows(s: PlaySession) -> bool:
    g = s.game
    return (
        s.human_to_act
        and g.phase == PLAY
        and g.trick_size > 0
        and len(g.legal_list()) < len(s.hand())
    )


def _human_leads_unbroken(s: PlaySession) -> bool:
    g = s.game
    return (
        s.human_to_act
        and g.phase == PLAY
        and g.trick_size == 0
        and not g.broken
        and any(CARD_SUIT[c] == 0 for c in s.hand())
        and len(g.legal_list()) < len(s.hand())
    )


def _illegal_card(s: PlaySession) -> str:
    return card_label(next(c for c in s.hand() if c not in s.game.legal_list()))


@pytest.mark.parametrize(
    "options, where, typed, message",
    [
        ({}, _human_bids, "blind nil", "blind nil is only allowed when your team trails by 100"),
        ({"blind_nil": "never"}, _human_bids, "blind nil", "blind nil is not played under"),
        ({"blind_nil": "always"}, _human_blind, "4", "first decide: type 'blind nil'"),
        ({}, _human_bids, "14", "bids go from nil to 13"),
        ({}, _human_bids, "QH", "it is your turn to bid"),
        ({}, _human_follows, "nil", "'nil' is not a card: type it like QH"),
        ({}, _human_follows, "0", "there is no card 0"),
        ({}, _human_follows, "ten of hearts", "is not a card"),
        ({}, _human_follows, _illegal_card, "you must follow "),
        ({}, _human_leads_unbroken, _illegal_card, "spades are not broken yet"),
    ],
)
def test_wrong_input_message(options, where, typed, message):
    session = advance(new_session(**options), where)
    text = typed(session) if callable(typed) else typed
    with pytest.raises(InputError, match=re.escape(message)):
        parse_move(session, text)


def test_blind_nil_after_seeing_the_hand_is_refused():
    session = advance(new_session(blind_nil="always"), _human_blind)
    assert prompt_line(session).endswith("legal: blind nil, see")
    assert session.view().hand_hidden[0] and session.hand() == []
    session.apply(parse_move(session, "see"))
    assert session.game.phase == BID and len(session.hand()) == 13
    with pytest.raises(InputError, match="before you look at your cards"):
        parse_move(session, "blind nil")


def test_blind_nil_after_the_partners_nil_under_suicide_is_refused():
    """RULES.md §6 suicide: a blind nil is the partnership's nil, so once the partner bid
    nil the engine offers none, and the message says why."""
    session = advance(new_session(bid_constraint="suicide", blind_nil="always"), _human_bids)
    bids = session.game.bids
    bids[(session.setup.human + 2) % 4] = 0
    session.game.bids = bids
    with pytest.raises(InputError, match="your partner bid nil, and under suicide"):
        parse_move(session, "blind nil")


@pytest.mark.parametrize("typed", ["QH", "qh", "q♥", "Q♥", "10h", "th", "1"])
def test_cards_can_be_typed_as_written_or_by_number(typed):
    session = advance(new_session(), lambda s: s.human_to_act and s.game.phase == PLAY)
    hand = session.hand()
    card = hand[0] if typed == "1" else str_to_card(typed.replace("♥", "H"))
    legal = session.game.legal_list()
    if card not in hand or card not in legal:
        with pytest.raises(InputError):
            parse_move(session, typed)
    else:
        assert parse_move(session, typed) == card


def test_bids_and_blind_nil_parse_to_their_actions():
    session = advance(new_session(blind_nil="always"), _human_blind)
    assert parse_move(session, "blind nil") == BLIND_NIL
    assert parse_move(session, "SEE") == SEE_HAND


def test_bid_over_the_total_cap_names_the_option():
    session = advance(new_session(max_total_bid=8), _human_bids)
    with pytest.raises(InputError, match="the bids would total more than max_total_bid=8"):
        parse_move(session, "13")


def test_blind_nil_exchange_asks_for_cards_to_pass():
    session = new_session(blind_nil="always", blind_nil_exchange=True)
    while not (session.human_to_act and session.game.phase == EXCHANGE):
        if not session.human_to_act:
            session.apply(session.bot_action())
        else:
            session.apply(BLIND_NIL if session.game.phase == BLIND else session.hint()[0])
    assert prompt_line(session).startswith("Pass a card to your partner — legal: ")
    first = session.hand()[0]
    session.apply(parse_move(session, "1"))
    assert first not in session.hand() and len(session.hand()) == 12  # chosen, not offered again


def test_the_screen_shows_no_card_the_person_may_not_see():
    session = advance(new_session(), lambda s: s.human_to_act and s.game.tricks_played == 3)
    out = Console(record=True, width=100, file=io.StringIO())
    out.print(ui.screen(session.view(), session.setup.names, 2, "", None, []))
    table = out.export_text().split("Your hand")[0]  # all but the person's own cards
    g = session.game
    for seat in (0, 1, 3):
        for card in mask_to_cards(g.hands[seat] & ~g.played):
            assert card in g.trick or card_label(card) not in table
