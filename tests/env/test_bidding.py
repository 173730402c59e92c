"""Bidding on hand-built deals: bid range, max_total_bid, blind nil gating and the hidden
hand (RULES.md §2). Dealer is West (3), so North (0) bids first."""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import ALL_TO_NORTH, act, bid_all, start

from spades_env.cards import BID_BASE, BLIND_NIL, SEE_HAND
from spades_env.engine import IllegalActionError, legal_action_mask, legal_actions
from spades_env.observation import encode, hand_hidden, obs_slices, seat_view
from spades_env.rules import Rules
from spades_env.state import BID, BLIND, PLAY

NEVER = Rules(blind_nil="never")
ALWAYS = Rules(blind_nil="always")


def bid_actions(*bids: int) -> list[int]:
    return [BID_BASE + b for b in bids]


def test_bids_are_nil_and_one_to_thirteen():
    state = start(NEVER, ALL_TO_NORTH)
    assert state.phase[0] == BID
    assert legal_actions(state, 0) == bid_actions(*range(14))


def test_bid_above_thirteen_is_illegal():
    state = start(NEVER, ALL_TO_NORTH)
    with pytest.raises(IllegalActionError, match=r"bids are 0\.\.13 \(RULES.md §2"):
        act(state, BID_BASE + 14)


def test_a_card_is_illegal_during_bidding():
    state = start(NEVER, ALL_TO_NORTH)
    with pytest.raises(IllegalActionError, match="a bid is expected"):
        act(state, "AS")


def test_bids_may_total_more_than_thirteen_by_default():
    state = start(NEVER, ALL_TO_NORTH)
    bid_all(state, 13, 13, 13, 13)
    assert state.bids[0].tolist() == [13, 13, 13, 13]
    assert state.phase[0] == PLAY


@pytest.mark.parametrize(
    ("made", "top"),
    [
        pytest.param([], 13, id="first-bidder"),
        pytest.param([5], 8, id="after-5"),
        pytest.param([5, 4], 4, id="after-5-4"),
        pytest.param([5, 4, 4], 0, id="last-bidder-nil-only"),
        pytest.param([0, 6], 7, id="nil-adds-nothing"),
    ],
)
def test_max_total_bid_caps_the_sum_of_bids(made, top):
    state = start(Rules(blind_nil="never", max_total_bid=13), ALL_TO_NORTH)
    bid_all(state, *made)
    assert legal_actions(state, 0) == bid_actions(*range(top + 1))
    if top < 13:
        with pytest.raises(IllegalActionError, match="max_total_bid=13"):
            act(state, BID_BASE + top + 1)


def test_a_bid_is_recorded_and_passes_the_turn_clockwise():
    state = start(NEVER, ALL_TO_NORTH, dealer=1)  # South bids first
    act(state, "4")
    assert state.bids[0].tolist() == [-1, -1, 4, -1]
    assert int(state.to_act[0]) == 3
    act(state, "nil")
    assert state.bids[0].tolist() == [-1, -1, 4, 0]
    assert not state.blind[0].any()


# ----------------------------------------------------------------------------- blind nil
def offered_blind(state) -> list[int]:
    """Seats offered the blind-nil decision in this bidding round (each then bids 1)."""
    offered = []
    for _ in range(4):
        if state.phase[0] == BLIND:
            offered.append(int(state.to_act[0]))
            act(state, SEE_HAND)
        act(state, "1")
    return offered


@pytest.mark.parametrize(
    ("option", "scores", "offered"),
    [
        pytest.param("never", (0, 0), [], id="never"),
        pytest.param("never", (0, 400), [], id="never-even-far-behind"),
        pytest.param("when_behind_100", (0, 0), [], id="behind-0"),
        pytest.param("when_behind_100", (0, 99), [], id="behind-99"),
        pytest.param("when_behind_100", (0, 100), [0, 2], id="team0-behind-100"),
        pytest.param("when_behind_100", (-150, 200), [0, 2], id="team0-behind-350"),
        pytest.param("when_behind_100", (250, 100), [1, 3], id="team1-behind-150"),
        pytest.param("always", (0, 0), [0, 1, 2, 3], id="always"),
        pytest.param("always", (300, 0), [0, 1, 2, 3], id="always-even-ahead"),
    ],
)
def test_blind_nil_gating(option, scores, offered):
    state = start(Rules(blind_nil=option), ALL_TO_NORTH, scores=scores)
    assert offered_blind(state) == offered


def test_blind_decision_allows_only_blind_nil_or_see_hand():
    state = start(ALWAYS, ALL_TO_NORTH)
    assert legal_actions(state, 0) == [BLIND_NIL, SEE_HAND]
    with pytest.raises(IllegalActionError, match=r"blind nil or see hand \(RULES.md §2\)"):
        act(state, "3")


def test_declining_blind_nil_then_bids_normally():
    state = start(ALWAYS, ALL_TO_NORTH)
    act(state, SEE_HAND)
    assert state.phase[0] == BID and int(state.to_act[0]) == 0
    act(state, "nil")
    assert state.bids[0, 0] == 0 and not state.blind[0, 0]
    assert int(state.to_act[0]) == 1


def test_blind_nil_is_the_seats_bid():
    state = start(ALWAYS, ALL_TO_NORTH)
    act(state, "blind nil")
    assert state.bids[0].tolist() == [0, -1, -1, -1]
    assert state.blind[0].tolist() == [True, False, False, False]
    assert int(state.to_act[0]) == 1 and state.phase[0] == BLIND


def test_own_hand_is_hidden_before_the_blind_decision():
    state = start(ALWAYS, ALL_TO_NORTH)
    view = seat_view(state)
    assert view.hand_hidden.tolist() == [True] and int(view.hand[0]) == 0
    obs = encode(state)
    assert not obs[0, obs_slices(state.rules)["hand"]].any()


def test_hand_is_seen_after_declining_blind_nil():
    state = start(ALWAYS, ALL_TO_NORTH)
    act(state, SEE_HAND)
    view = seat_view(state)
    assert view.hand_hidden.tolist() == [False]
    assert int(view.hand[0]) == int(state.hands[0, 0])
    obs = encode(state)
    assert obs[0, obs_slices(state.rules)["hand"]].sum() == 13


def test_hand_is_seen_after_bidding_blind_nil():
    state = start(ALWAYS, ALL_TO_NORTH)
    act(state, "blind nil")
    view = seat_view(state, seats=0)
    assert not view.hand_hidden[0] and int(view.hand[0]) == int(state.hands[0, 0])


def test_seats_still_to_decide_blind_nil_do_not_see_their_hands_while_waiting():
    state = start(Rules(), ALL_TO_NORTH, scores=(0, 100))  # team 0 may bid blind
    hidden = [bool(hand_hidden(state, np.array([s]))[0]) for s in range(4)]
    assert hidden == [True, False, True, False]
    views = [seat_view(state, seats=s) for s in range(4)]
    assert [int(v.hand[0]) == 0 for v in views] == [True, False, True, False]
    offered_blind(state)  # every seat has now bid
    assert not hand_hidden(state, np.array([2]))[0]


def test_blind_phase_mask_offers_only_the_two_decisions():
    state = start(ALWAYS, ALL_TO_NORTH)
    mask = legal_action_mask(state)[0]
    assert np.flatnonzero(mask).tolist() == [BLIND_NIL, SEE_HAND]
