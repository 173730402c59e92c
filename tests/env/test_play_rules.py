"""Play rules on hand-built deals through the engine (RULES.md §3).

Dealer is West (3) unless stated, so North (0) bids first and leads the first trick.
"""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import (
    ALL_TO_NORTH,
    act,
    assert_same_state,
    bid_all,
    cards,
    fill_deal,
    hand_cards,
    snapshot,
    start,
)

from spades_env.cards import BID_BASE, CARD_SUIT, HEARTS, NUM_ACTIONS, SPADES, str_to_card
from spades_env.engine import IllegalActionError, legal_action_mask, legal_actions, step
from spades_env.rules import Rules
from spades_env.state import BID, PLAY, init

NEVER = Rules(blind_nil="never")


def to_play(deal, rules: Rules = NEVER, dealer: int = 3):
    """A game from `deal` with the bidding done (1 each), at the first lead."""
    state = start(rules, deal, dealer=dealer)
    bid_all(state, 1, 1, 1, 1)
    assert state.phase[0] == PLAY
    return state


def legal_cards(state, game: int = 0) -> set[int]:
    return set(legal_actions(state, game))


# ----------------------------------------------------------------------------- follow suit
FOLLOW_DEAL = fill_deal({0: "5H 2C", 1: "9H KH 3C 4D", 2: "2D", 3: "AH"}, voids={2: "H"})


def test_follower_holding_the_led_suit_may_play_only_that_suit():
    state = to_play(FOLLOW_DEAL)
    act(state, "5H")
    hearts = {c for c in hand_cards(state, 1) if CARD_SUIT[c] == HEARTS}
    assert hearts == set(cards("9H KH"))
    assert legal_cards(state) == hearts


def test_follower_void_in_the_led_suit_may_play_any_card_spade_included():
    state = to_play(FOLLOW_DEAL)
    act(state, "5H")
    act(state, "9H")
    # South holds no heart: every card is legal, spades too; nothing forces a trump.
    south = set(hand_cards(state, 2))
    assert any(CARD_SUIT[c] == SPADES for c in south)
    assert any(CARD_SUIT[c] != SPADES for c in south)
    assert legal_cards(state) == south


def test_revoke_raises_naming_game_seat_rule_and_legal_actions():
    state = to_play(FOLLOW_DEAL)
    act(state, "5H")
    with pytest.raises(IllegalActionError) as err:
        act(state, "3C")
    e = err.value
    assert (e.game, e.seat, e.action) == (0, 1, str_to_card("3C"))
    assert sorted(e.legal) == sorted(cards("9H KH"))
    msg = str(e)
    for part in ("game 0", "seat 1", "East", "3C", "must follow hearts", "RULES.md §3"):
        assert part in msg
    assert msg.endswith("legal: 9H, KH")


def two_games():
    """Two games of `FOLLOW_DEAL` (dealer West), at the first bid."""
    deal = np.concatenate([FOLLOW_DEAL, FOLLOW_DEAL])
    return init(NEVER, 2, seeds=[1, 2], deals=deal, dealer=3)


def two_games_after_the_lead():
    """Two games of `FOLLOW_DEAL`, the bidding done (1 each) and the 5H led in both."""
    state = two_games()
    for bid in (1, 1, 1, 1):
        step(state, [BID_BASE + bid] * 2)
    step(state, [str_to_card("5H")] * 2)
    return state


def test_illegal_action_in_a_batch_names_the_offending_game():
    state = two_games_after_the_lead()
    with pytest.raises(IllegalActionError, match=r"^game 1, seat 1 \(East\)"):
        step(state, [str_to_card("9H"), str_to_card("3C")])


def test_playing_a_card_not_held_is_illegal():
    state = to_play(FOLLOW_DEAL)
    with pytest.raises(IllegalActionError, match="not in the seat's hand"):
        act(state, "AH")  # West holds it


def test_illegal_action_raised_leaves_the_state_unchanged():
    state = to_play(FOLLOW_DEAL)
    act(state, "5H")
    before = snapshot(state)
    with pytest.raises(IllegalActionError):
        act(state, "3C")
    assert_same_state(before, snapshot(state))


def test_illegal_action_raised_in_a_mixed_phase_batch_changes_no_game():
    # Game 0 still bids while game 1 plays; game 1's illegal card must not let game 0's
    # bid through either: an error never leaves the batch half-stepped (RULES.md §3).
    state = two_games()
    for _ in range(4):  # game 1 bids, game 0's refused action keeps it at its first bid
        step(state, [BID_BASE + 14, BID_BASE + 1], on_illegal="report")
    assert state.phase.tolist() == [BID, PLAY]
    before = snapshot(state)
    with pytest.raises(IllegalActionError, match="game 1"):
        step(state, [BID_BASE + 1, str_to_card("AS")])
    assert_same_state(before, snapshot(state))


def test_report_mode_flags_the_illegal_game_and_leaves_it_unchanged():
    state = two_games_after_the_lead()
    before = state.take([1])
    info = step(state, [str_to_card("9H"), str_to_card("3C")], on_illegal="report")
    assert info.illegal.tolist() == [False, True]
    assert_same_state(snapshot(before), snapshot(state.take([1])))
    assert int(state.trick[0, 1]) == str_to_card("9H")  # the legal game moved on
    # The refused game still accepts a legal action afterwards.
    info = step(state, [str_to_card("2D"), str_to_card("KH")])
    assert not info.illegal.any()


def test_report_mode_never_replaces_the_action():
    state = to_play(FOLLOW_DEAL)
    act(state, "5H")
    info = act(state, "3C", on_illegal="report")
    assert info.illegal.tolist() == [True]
    assert int(state.to_act[0]) == 1 and int(state.trick_size[0]) == 1


# ----------------------------------------------------------------------------- spades
def test_spades_cannot_be_led_before_they_are_broken():
    state = to_play(FOLLOW_DEAL)
    north = set(hand_cards(state, 0))
    assert any(CARD_SUIT[c] == SPADES for c in north)
    assert legal_cards(state) == {c for c in north if CARD_SUIT[c] != SPADES}
    spade = next(c for c in north if CARD_SUIT[c] == SPADES)
    with pytest.raises(IllegalActionError, match=r"spades are not broken yet \(RULES.md §3\)"):
        act(state, spade)


def test_leader_holding_only_spades_may_lead_one_and_it_breaks_spades():
    state = to_play(ALL_TO_NORTH)
    assert not state.broken[0]
    assert legal_cards(state) == set(cards(ALL_TO_NORTH[0]))
    act(state, "2S")
    assert state.broken[0]


def test_spade_discarded_on_another_suit_breaks_spades_for_the_next_lead():
    deal = fill_deal({0: "AH 3D", 1: "2S 4D", 2: "2H", 3: "3H"}, voids={1: "H"})
    state = to_play(deal)
    act(state, "AH")
    assert not state.broken[0]
    act(state, "2S")  # East is void in hearts and trumps
    assert state.broken[0]
    act(state, "2H")
    act(state, "3H")
    assert int(state.to_act[0]) == 1  # East won and leads
    east = set(hand_cards(state, 1))
    assert legal_cards(state) == east  # spades included now
    assert any(CARD_SUIT[c] == SPADES for c in east)


def test_spades_stay_unbroken_after_a_trick_without_spades():
    state = to_play(FOLLOW_DEAL)
    for card in ("5H", "9H", "2D", "AH"):
        act(state, card)
    assert not state.broken[0]
    west = set(hand_cards(state, 3))
    assert legal_cards(state) == {c for c in west if CARD_SUIT[c] != SPADES}


# ----------------------------------------------------------------------------- tricks
TRICKS = [
    # (cards played from North round to West, voids needed, winning seat)
    pytest.param("5H 9H 2H KH", {}, 3, id="highest-of-led-suit"),
    pytest.param("2H AD AC 3H", {1: "H", 2: "H"}, 3, id="off-suit-ace-does-not-win"),
    pytest.param("AH 2S KH QH", {1: "H"}, 1, id="lowest-spade-trumps-ace"),
    pytest.param("AH 2S 3H 3S", {1: "H", 3: "H"}, 3, id="over-trump"),
    pytest.param("AH KS 2H 2S", {1: "H", 3: "H"}, 1, id="under-trump-loses"),
    pytest.param("AD 5S 9S 2D", {1: "D", 2: "D"}, 2, id="partner-over-trumps"),
    pytest.param("7C 2C AS KC", {2: "C"}, 2, id="ace-of-spades-trumps"),
    pytest.param("2D 3D 4D 5D", {}, 3, id="all-follow-low-to-high"),
    pytest.param("AD 3D 4D 5D", {}, 0, id="leader-holds-it"),
]


@pytest.mark.parametrize(("played", "voids", "winner"), TRICKS)
def test_trick_winner(played, voids, winner):
    fixed = {seat: card for seat, card in enumerate(played.split())}
    state = to_play(fill_deal(fixed, voids))
    for card in played.split():
        act(state, card)
    assert state.tricks_won[0].tolist() == [int(s == winner) for s in range(4)]
    assert int(state.to_act[0]) == winner  # RULES.md §3: the winner leads next
    assert int(state.leader[0]) == winner


def test_spade_lead_is_won_by_the_highest_spade():
    deal = fill_deal({0: "AH QS", 1: "2S 3S", 2: "2H 9S", 3: "3H 4S"}, voids={1: "H"})
    state = to_play(deal)
    for card in ("AH", "2S", "2H", "3H"):  # East trumps, breaks spades, leads
        act(state, card)
    for card in ("3S", "9S", "4S", "QS"):
        act(state, card)
    assert state.tricks_won[0].tolist() == [1, 1, 0, 0]
    assert int(state.to_act[0]) == 0


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_bidding_and_first_lead_start_left_of_the_dealer(dealer):
    state = start(NEVER, ALL_TO_NORTH, dealer=dealer)
    first = (dealer + 1) % 4
    order = []
    for _ in range(4):
        order.append(int(state.to_act[0]))
        act(state, "1")
    assert order == [(first + i) % 4 for i in range(4)]
    assert int(state.to_act[0]) == first and int(state.leader[0]) == first


def test_first_lead_two_of_clubs_holder_must_lead_it():
    rules = Rules(blind_nil="never", first_lead="two_of_clubs")
    deal = fill_deal({1: "3C", 2: "2C AH"})
    state = to_play(deal, rules)
    assert int(state.to_act[0]) == 2  # South holds 2C, not North left of the dealer
    assert legal_cards(state) == {str_to_card("2C")}
    with pytest.raises(IllegalActionError, match=r"first lead must be the 2C"):
        act(state, "AH")
    act(state, "2C")
    assert int(state.to_act[0]) == 3


def test_first_lead_two_of_clubs_only_constrains_the_first_trick():
    rules = Rules(blind_nil="never", first_lead="two_of_clubs")
    deal = fill_deal({0: "3C", 1: "KC AD", 2: "2C", 3: "5C"})
    state = to_play(deal, rules)
    for card in ("2C", "5C", "3C", "KC"):
        act(state, card)
    assert int(state.to_act[0]) == 1  # East won with KC and may lead any non-spade
    east = set(hand_cards(state, 1))
    assert str_to_card("AD") in east
    assert legal_cards(state) == {c for c in east if CARD_SUIT[c] != SPADES}


def test_legal_action_mask_matches_the_legal_cards():
    state = to_play(FOLLOW_DEAL)
    act(state, "5H")
    mask = legal_action_mask(state)
    assert mask.shape == (1, NUM_ACTIONS)
    assert set(np.flatnonzero(mask[0]).tolist()) == set(cards("9H KH"))
