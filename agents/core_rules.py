"""Stand-in for `spades_env.core.rules` until the rules core lands: the same scalar
functions with the same signatures (RULES.md §3). To be replaced by the core's import."""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.cards import CARD_RANK, CARD_SUIT, NUM_SUITS, SUIT_MASK, TWO_OF_CLUBS

_SUIT = CARD_SUIT.astype(np.int64)
_RANK = CARD_RANK.astype(np.int64)
_SUIT_MASK = SUIT_MASK.copy()
_TWO_CLUBS = np.uint64(1 << TWO_OF_CLUBS)
_ALL_SUITS = (1 << NUM_SUITS) - 1
_U0 = np.uint64(0)


@njit(cache=True)
def card_strength(card: int, lead_suit: int, trump: int) -> int:
    suit = _SUIT[card]
    if suit == trump:
        return 32 + _RANK[card]
    if suit == lead_suit:
        return _RANK[card]
    return -1


@njit(cache=True)
def legal_cards(held, trick_size, lead_suit, broken, trump, two_clubs):
    held = np.uint64(held)
    if trick_size == 0:
        if two_clubs:
            return held & _TWO_CLUBS
        non_trump = held & ~_SUIT_MASK[trump]
        if broken or non_trump == _U0:
            return held
        return non_trump
    follow = held & _SUIT_MASK[lead_suit]
    return follow if follow != _U0 else held


@njit(cache=True)
def shown_voids(card, trick_size, lead_suit, broken, trump):
    suit = _SUIT[card]
    if trick_size == 0:
        if suit == trump and not broken:
            return _ALL_SUITS ^ (1 << trump)
        return 0
    if suit != lead_suit:
        return 1 << lead_suit
    return 0


@njit(cache=True)
def breaks_trump(card, trump):
    return _SUIT[card] == trump


@njit(cache=True)
def trick_winner(trick, leader, num_players, lead_suit, trump):
    best, winner = -2, leader
    for k in range(num_players):
        seat = (leader + k) % num_players
        s = card_strength(trick[seat], lead_suit, trump)
        if s > best:
            best, winner = s, seat
    return winner
