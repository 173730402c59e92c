"""Cards and the one action space: ids, strings and the documented layout."""

from __future__ import annotations

import pytest

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    DRAW_KEEP,
    NAME_TRUMP,
    NUM_ACTIONS,
    SEE_HAND,
    ActionParseError,
    action_to_str,
    card_to_str,
    str_to_action,
    str_to_card,
)


def test_action_layout_is_the_documented_one():
    # cards.py: 0..53 cards, 54 + b bids (54 = nil), 72 blind nil, 73 see hand, 74/75 keep
    # and discard (two_player), 76..79 name trump ♠ ♥ ♦ ♣ (auction).
    layout = (BID_BASE, BLIND_NIL, SEE_HAND, DRAW_KEEP, NAME_TRUMP, NUM_ACTIONS)
    assert layout == (54, 72, 73, 74, 76, 80)


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
        # RULES.md §6 auction: naming trump, by name, letter or symbol
        ("trump spades", 76),
        ("trump hearts", 77),
        ("Trump H", 77),
        ("trump ♥", 77),
        ("trump diamond", 78),
        ("trump c", 79),
    ],
)
def test_action_strings(text, action):
    assert str_to_action(text) == action


@pytest.mark.parametrize("action", range(NUM_ACTIONS))
def test_every_action_round_trips_through_its_string(action):
    assert str_to_action(action_to_str(action)) == action


@pytest.mark.parametrize("suit", range(4))
def test_trump_actions_read_back_from_their_unicode_strings(suit):
    action = NAME_TRUMP + suit
    assert str_to_action(action_to_str(action, unicode=True)) == action
    assert action_to_str(NAME_TRUMP + 1) == "trump hearts"


@pytest.mark.parametrize("card", range(52))
def test_unicode_card_strings_round_trip(card):
    assert str_to_card(card_to_str(card, unicode=True)) == card


@pytest.mark.parametrize("text", ["1S", "AX", "", "ace of spades", "99", "trump", "trump x"])
def test_bad_action_string_raises(text):
    with pytest.raises(ActionParseError):
        str_to_action(text)


def test_action_outside_the_space_raises():
    with pytest.raises(ActionParseError, match="outside"):
        action_to_str(NUM_ACTIONS)
