"""The 2-card exchange of option blind_nil_exchange (RULES.md §2): after bidding, a
blind-nil bidder and partner each pass 2 cards to the other. Dealer is West (3)."""

from __future__ import annotations

import pytest
from engine_helpers import ALL_TO_NORTH, act, bid_all, cards, fill_deal, hand_cards, start

from spades_env.cards import str_to_card
from spades_env.engine import IllegalActionError, legal_actions
from spades_env.observation import encode, obs_slices, seat_view
from spades_env.rules import Rules
from spades_env.state import EXCHANGE, PLAY

EXCHANGE_RULES = Rules(blind_nil="always", blind_nil_exchange=True)


def mask(text: str) -> int:
    return sum(1 << c for c in cards(text))


def passers(state) -> list[int]:
    """Seats in the order they pass, each passing its two lowest cards."""
    order = []
    while state.phase[0] == EXCHANGE:
        seat = int(state.to_act[0])
        order.append(seat)
        act(state, legal_actions(state, 0)[0])
    return order


@pytest.mark.parametrize(
    ("bids", "order"),
    [
        pytest.param(("blind nil", 2, 4, 3), [0, 0, 2, 2], id="north-blind"),
        pytest.param((2, 4, "blind nil", 3), [0, 0, 2, 2], id="south-blind"),
        pytest.param((2, 4, 3, "blind nil"), [1, 1, 3, 3], id="west-blind"),
        pytest.param(("blind nil", "blind nil", 3, 3), [0, 0, 1, 1, 2, 2, 3, 3], id="both-teams"),
        pytest.param(("blind nil", 2, "blind nil", 3), [0, 0, 2, 2], id="both-partners"),
        pytest.param((2, 4, 3, 3), [], id="no-blind-nil-no-exchange"),
        pytest.param(("nil", 4, 3, 3), [], id="plain-nil-no-exchange"),
    ],
)
def test_who_passes_and_in_what_order(bids, order):
    state = start(EXCHANGE_RULES, ALL_TO_NORTH)
    bid_all(state, *bids)
    assert passers(state) == order
    assert state.phase[0] == PLAY


def test_exchange_order_starts_left_of_the_dealer():
    state = start(EXCHANGE_RULES, ALL_TO_NORTH, dealer=0)  # East bids first
    bid_all(state, "blind nil", 2, 3, "blind nil")  # East and North blind
    assert passers(state) == [1, 1, 2, 2, 3, 3, 0, 0]


def north_blind_exchange():
    state = start(EXCHANGE_RULES, ALL_TO_NORTH)
    bid_all(state, "blind nil", 2, 4, 3)
    assert state.phase[0] == EXCHANGE and int(state.to_act[0]) == 0
    return state


def test_cards_move_only_after_every_pass_is_chosen():
    state = north_blind_exchange()
    act(state, "AS")
    act(state, "KS")
    assert int(state.hands[0, 0]) == mask(ALL_TO_NORTH[0])  # nothing moved yet
    act(state, "2D")
    assert int(state.hands[0, 2]) == mask(ALL_TO_NORTH[2])
    act(state, "3D")
    assert state.phase[0] == PLAY
    north = mask(ALL_TO_NORTH[0]) & ~mask("AS KS") | mask("2D 3D")
    south = mask(ALL_TO_NORTH[2]) & ~mask("2D 3D") | mask("AS KS")
    assert int(state.hands[0, 0]) == north
    assert int(state.hands[0, 2]) == south
    assert int(state.hands[0, 1]) == mask(ALL_TO_NORTH[1])  # East and West keep theirs
    assert int(state.deal[0, 0]) == mask(ALL_TO_NORTH[0])  # the deal is kept as dealt
    assert len(hand_cards(state, 0)) == len(hand_cards(state, 2)) == 13


def test_a_card_already_chosen_cannot_be_passed_again():
    state = north_blind_exchange()
    act(state, "AS")
    assert str_to_card("AS") not in legal_actions(state, 0)
    with pytest.raises(IllegalActionError, match="already chosen to pass"):
        act(state, "AS")


def test_only_own_cards_can_be_passed():
    state = north_blind_exchange()
    with pytest.raises(IllegalActionError, match="not in the seat's hand"):
        act(state, "2D")


def test_passes_are_hidden_from_the_partner_until_the_exchange_is_done():
    state = north_blind_exchange()
    act(state, "AS")
    act(state, "KS")
    sl = obs_slices(state.rules)
    south = seat_view(state, seats=2)
    assert int(south.received[0]) == 0
    assert int(south.hand[0]) == mask(ALL_TO_NORTH[2])
    obs = encode(state, seats=2)
    assert not obs[0, sl["received"]].any()
    north = seat_view(state, seats=0)
    assert int(north.passed[0]) == mask("AS KS")
    assert int(north.received[0]) == 0
    # Another seat's encoding does not depend on what North chose to pass.
    other = north_blind_exchange()
    act(other, "2S")
    act(other, "3S")
    for seat in (1, 2, 3):
        assert (encode(state, seats=seat) == encode(other, seats=seat)).all()


def test_each_side_sees_what_it_received_once_the_exchange_is_done():
    state = north_blind_exchange()
    for card in ("AS", "KS", "2D", "3D"):
        act(state, card)
    north, south = seat_view(state, seats=0), seat_view(state, seats=2)
    assert int(north.received[0]) == mask("2D 3D")
    assert int(south.received[0]) == mask("AS KS")
    assert int(south.passed[0]) == mask("2D 3D")
    assert int(seat_view(state, seats=1).received[0]) == 0


def test_play_after_the_exchange_uses_the_new_hands():
    state = north_blind_exchange()
    for card in ("AS", "KS", "2D", "3D"):
        act(state, card)
    assert int(state.to_act[0]) == 0  # left of the dealer leads
    # North now holds diamonds, so spades (unbroken) may not be led.
    assert legal_actions(state, 0) == cards("2D 3D")


def test_two_of_clubs_passed_in_the_exchange_moves_the_first_lead():
    rules = Rules(blind_nil="always", blind_nil_exchange=True, first_lead="two_of_clubs")
    state = start(rules, fill_deal({0: "2C 3C"}))
    bid_all(state, 2, 3, "blind nil", 3)  # South blind: North and South pass
    act(state, "2C")
    act(state, "3C")
    low_south = legal_actions(state, 0)[:2]
    for card in low_south:
        act(state, card)
    assert state.phase[0] == PLAY
    assert int(state.to_act[0]) == 2  # South now holds 2C and leads it
    assert legal_actions(state, 0) == [str_to_card("2C")]
