"""A game played hand after hand through the engine: nil modes, bags carried across
hands, dealer rotation and the end of the game (RULES.md §1, §4, §5).

Most tests use ALL_TO_NORTH (North holds every spade and wins all 13 tricks, whoever
leads), so each hand's outcome is fixed by the bids alone. Bids are written by seat
(North, East, South, West); the first dealer is West (3).
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from engine_helpers import (
    ALL_TO_NORTH,
    act,
    bid_all,
    deal_array,
    lowest_legal,
    play_out,
    snapshot,
    start,
)

from spades_env.cards import CARD_BIT
from spades_env.engine import step
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import BID, DONE, State

NEVER = Rules(blind_nil="never")


def play_hand(state: State, *bids) -> dict:
    """Bid (given by seat: North, East, South, West), play the hand out with the lowest
    legal card, return its record."""
    first = (int(state.dealer[0]) + 1) % 4  # RULES.md §2: bidding starts left of the dealer
    bid_all(state, *(bids[(first + i) % 4] for i in range(4)))
    (record,) = play_out(state)
    return record


def redeal(state: State, hands=ALL_TO_NORTH) -> None:
    """Replace the cards of the hand about to be bid (the deal does not affect bidding)."""
    assert state.phase[0] == BID and state.num_bids[0] == 0
    masks = np.bitwise_or.reduce(CARD_BIT[deal_array(hands)[0]], axis=1)
    state.deal[0] = masks
    state.hands[0] = masks


def outcome(record: dict) -> tuple:
    keys = ("tricks", "points", "bags_gained", "penalty", "scores", "bags")
    return tuple(record[k] for k in keys)


@pytest.mark.parametrize(
    ("mode", "expected"),
    [
        # North nil takes 13, South bids 4; East and West bid 1 and take nothing.
        # bags: contract judged on South (0 < 4): -40, nil -100, +13 for the nil's tricks,
        # 13 bags -> one penalty, 3 bags left.
        ("bags", ([13, 0, 0, 0], [-127, -20], [13, 0], [100, 0], [-227, -20], [3, 0])),
        # count: the team's 13 tricks judge the contract: 40 + 9, nil -100; 9 bags.
        ("count", ([13, 0, 0, 0], [-51, -20], [9, 0], [0, 0], [-51, -20], [9, 0])),
    ],
)
def test_nil_modes_on_a_played_hand(mode, expected):
    state = start(Rules(blind_nil="never", nil_tricks=mode), ALL_TO_NORTH)
    assert outcome(play_hand(state, "nil", 1, 4, 1)) == expected


def test_blind_nil_failed_on_a_played_hand():
    state = start(Rules(blind_nil="always"), ALL_TO_NORTH)
    record = play_hand(state, "blind nil", 1, 4, 1)
    assert record["blind"] == [True, False, False, False]
    assert record["points"] == [-40 - 200 + 13, -20]


def test_two_nils_on_a_played_hand():
    state = start(NEVER, ALL_TO_NORTH)
    record = play_hand(state, 4, "nil", 1, "nil")
    assert record["points"] == [58, 200]
    assert record["bags_gained"] == [8, 0]


def test_bag_penalty_across_hands_with_carry_over():
    state = start(NEVER, ALL_TO_NORTH, bags=(8, 0))
    # Hand 1: contract 10, 13 taken: +103 and 3 bags; 8 + 3 = 11 -> -100, 1 bag left.
    r1 = play_hand(state, 9, 1, 1, 1)
    assert (r1["points"][0], r1["penalty"][0], r1["scores"][0], r1["bags"][0]) == (103, 100, 3, 1)
    # Hand 2: +103 and 3 bags again: 1 + 3 = 4, no penalty.
    redeal(state)
    r2 = play_hand(state, 9, 1, 1, 1)
    assert r2["bags_before"] == [1, 0] and r2["scores_before"] == [3, -20]
    assert (r2["penalty"][0], r2["scores"][0], r2["bags"][0]) == (0, 106, 4)
    # Hand 3: contract 6, 7 bags: 4 + 7 = 11 -> -100, 1 bag left.
    redeal(state)
    r3 = play_hand(state, 4, 1, 2, 1)
    assert (r3["points"][0], r3["penalty"][0], r3["scores"][0], r3["bags"][0]) == (67, 100, 73, 1)
    assert state.bags[0].tolist() == [1, 0]


def test_set_hand_adds_no_bags_to_the_counter():
    state = start(NEVER, ALL_TO_NORTH, bags=(0, 7))
    record = play_hand(state, 7, 6, 6, 7)  # East and West bid 13 and take none
    assert record["points"] == [13 * 10, -130]
    assert record["bags"] == [0, 7]


@pytest.mark.parametrize("first_dealer", [0, 1, 2, 3])
def test_dealer_rotates_clockwise_every_hand(first_dealer):
    state = start(NEVER, dealer=first_dealer, seed=7)
    records = play_out(state, hands=5)
    dealers = [r["dealer"] for r in records]
    assert dealers == [(first_dealer + i) % 4 for i in range(5)]
    assert [r["hand_no"] for r in records] == list(range(5))
    for r in records:
        left = (r["dealer"] + 1) % 4
        assert r["actions"][0][0] == left  # bidding starts left of the dealer
        assert r["actions"][4][0] == left  # and so does the first lead


def test_scores_and_bags_carry_into_the_next_hand():
    state = start(NEVER, seed=3)
    records = play_out(state, hands=4)
    for before, after in itertools.pairwise(records):
        assert after["scores_before"] == before["scores"]
        assert after["bags_before"] == before["bags"]


def test_game_ends_after_the_hand_that_reaches_500():
    state = start(NEVER, ALL_TO_NORTH, scores=(450, 0))
    record = play_hand(state, 7, 1, 6, 1)
    assert record["scores"] == [580, -20]
    assert record["game_over"] and record["winner"] == 0
    assert state.phase[0] == DONE and state.winner[0] == 0


def test_game_below_the_target_goes_on_to_the_next_hand():
    state = start(NEVER, ALL_TO_NORTH, scores=(300, 0))
    record = play_hand(state, 7, 1, 6, 1)
    assert record["scores"] == [430, -20] and not record["game_over"]
    assert record["winner"] == -1
    assert state.phase[0] == BID and int(state.hand_no[0]) == 1 and int(state.dealer[0]) == 0


@pytest.mark.parametrize(
    ("scores", "final", "winner"),
    [
        pytest.param((480, 490), [538, 690], 1, id="team1-higher"),
        pytest.param((480, 300), [538, 500], 0, id="team0-higher"),
    ],
)
def test_both_teams_over_500_the_higher_score_wins(scores, final, winner):
    state = start(NEVER, ALL_TO_NORTH, scores=scores)
    record = play_hand(state, 4, "nil", 1, "nil")  # team 0 +58, team 1 +200
    assert record["scores"] == final
    assert record["game_over"] and record["winner"] == winner


def test_exact_tie_over_500_plays_another_hand():
    state = start(NEVER, ALL_TO_NORTH, scores=(480, 338))
    r1 = play_hand(state, 4, "nil", 1, "nil")
    assert r1["scores"] == [538, 538]
    assert not r1["game_over"] and r1["winner"] == -1
    assert state.phase[0] == BID and int(state.dealer[0]) == 0
    redeal(state, ALL_TO_NORTH)
    assert int(state.to_act[0]) == 1  # East, left of the new dealer North, bids first
    r2 = play_hand(state, 7, 1, 6, 1)
    assert r2["scores"] == [538 + 130, 538 - 20]
    assert r2["game_over"] and r2["winner"] == 0


def test_target_option():
    state = start(Rules(blind_nil="never", target=300), ALL_TO_NORTH, scores=(200, 0))
    record = play_hand(state, 7, 1, 6, 1)
    assert record["game_over"] and record["winner"] == 0


@pytest.mark.parametrize(
    ("scores", "bids", "over", "winner"),
    [
        pytest.param((0, 0), (4, "nil", 1, "nil"), True, 1, id="higher-total-wins"),
        pytest.param((200, 0), (4, "nil", 1, "nil"), True, 0, id="team0-higher"),
        pytest.param((142, 0), (4, "nil", 1, "nil"), False, -1, id="tie-plays-on"),
    ],
)
def test_max_hands_stops_after_that_many_hands(scores, bids, over, winner):
    state = start(Rules(blind_nil="never", max_hands=1), ALL_TO_NORTH, scores=scores)
    record = play_hand(state, *bids)
    assert (record["game_over"], record["winner"]) == (over, winner)


def test_max_hands_after_a_tie_the_next_hand_decides():
    state = start(Rules(blind_nil="never", max_hands=1), ALL_TO_NORTH, scores=(142, 0))
    play_hand(state, 4, "nil", 1, "nil")  # 200 - 200
    redeal(state, ALL_TO_NORTH)
    record = play_hand(state, 7, 1, 6, 1)
    assert record["hand_no"] == 1
    assert record["game_over"] and record["winner"] == 0


def test_max_hands_counts_hands_played():
    state = start(Rules(blind_nil="never", max_hands=3), seed=11)
    records = play_out(state, hands=10)
    assert [r["game_over"] for r in records][:2] == [False, False]
    assert len(records) >= 3
    if records[2]["scores"][0] != records[2]["scores"][1]:
        assert len(records) == 3 and records[2]["game_over"]


@pytest.mark.parametrize(
    ("scores", "over", "winner"),
    [
        pytest.param((0, -100), True, 0, id="team1-falls-below"),
        pytest.param((0, -70), True, 0, id="team1-exactly-at"),
        pytest.param((0, -69), False, -1, id="team1-one-above"),
    ],
)
def test_lose_at(scores, over, winner):
    state = start(Rules(blind_nil="never", lose_at=-200), ALL_TO_NORTH, scores=scores)
    record = play_hand(state, 7, 7, 6, 6)  # team 0 +130, team 1 set: -130
    assert (record["game_over"], record["winner"]) == (over, winner)


def test_actions_after_the_game_is_over_are_ignored():
    state = start(NEVER, ALL_TO_NORTH, scores=(450, 0))
    play_hand(state, 7, 1, 6, 1)
    before = snapshot(state)
    info = act(state, 0)
    assert info.finished is None and not info.illegal.any()
    after = snapshot(state)
    for name in before:
        np.testing.assert_array_equal(before[name], after[name], err_msg=name)


@pytest.mark.parametrize("path", ["engine", "SingleGame"])
def test_last_hand_stops_the_game_where_its_hand_ends(path):
    # engine.step / SingleGame.step with last_hand=True (the envs' one-hand episodes): the
    # hand is scored and the game stops there, DONE with no winner, and no hand is dealt.
    state = start(NEVER, hands=ALL_TO_NORTH)
    dealt = state.deal.copy()
    game = SingleGame.from_state(state) if path == "SingleGame" else None
    ended = False
    while not ended:
        view = state if game is None else game.state
        (action,) = lowest_legal(view)
        if game is None:
            info = step(state, [action], last_hand=True)
        else:
            info = game.step(int(action), last_hand=True)
        ended = info.finished is not None
    after = state if game is None else game.state
    assert after.phase[0] == DONE and after.winner[0] == -1 and after.legal[0] == 0
    assert after.hand_no[0] == 1 and after.scores[0].tolist() == info.finished.scores[0].tolist()
    np.testing.assert_array_equal(after.deal, dealt)  # the hand played, not a new one
    assert after.played[0] == np.bitwise_or.reduce(dealt[0])  # every card played


def test_without_last_hand_the_next_hand_is_dealt_at_once():
    state = start(NEVER, hands=ALL_TO_NORTH)
    play_out(state)
    assert state.phase[0] == BID and state.hand_no[0] == 1 and state.played[0] == 0
