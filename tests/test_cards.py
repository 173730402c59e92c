"""Cards and the one action space: ids, strings and the documented layout."""

from __future__ import annotations

import pytest

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    NUM_ACTIONS,
    SEE_HAND,
    ActionParseError,
    action_to_str,
    card_to_str,
    str_to_action,
    str_to_card,
)


def test_action_layout_is_the_documented_one():
    # cards.py: 0..53 cards, 54 + b bids (54 = nil), 72 blind nil, 73 see hand.
    assert (BID_BASE, BLIND_NIL, SEE_HAND, NUM_ACTIONS) == (54, 72, 73, 76)


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("2S", 0),
        ("AS", 12),
        ("2H", 13),
        ("TD", 2 * 13 + 8),
        ("10d", 2 * 13 + 8),
        ("2C", 39),
        ("AC", 51),
        ("q♥", 13 + 10),
        ("K♣", 39 + 11),
        ("LJ", 52),
        ("BJ", 53),
    ],
)
def test_card_strings(text, card):
    assert str_to_card(text) == card


@pytest.mark.parametrize(
    ("text", "action"),
    [
        ("nil", 54),
        ("0", 54),
        ("4", 58),
        ("13", 67),
        ("blind nil", 72),
        ("Blind  Nil", 72),
        ("see hand", 73),
        ("AS", 12),
    ],
)
def test_action_strings(text, action):
    assert str_to_action(text) == action


@pytest.mark.parametrize("action", range(NUM_ACTIONS))
def test_every_action_round_trips_through_its_string(action):
    assert str_to_action(action_to_str(action)) == action


@pytest.mark.parametrize("card", range(52))
def test_unicode_card_strings_round_trip(card):
    assert str_to_card(card_to_str(card, unicode=True)) == card


@pytest.mark.parametrize("text", ["1S", "AX", "", "ace of spades", "99"])
def test_bad_action_string_raises(text):
    with pytest.raises(ActionParseError):
        str_to_action(text)


def test_action_outside_the_space_raises():
    with pytest.raises(ActionParseError, match="outside"):
        action_to_str(NUM_ACTIONS)
