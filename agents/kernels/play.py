"""numba play-out of the rest of a hand, for the search agents' rollouts.

`play_out` plays the card play of one game to the end of the hand from a position
(hands now, the trick on the table, leader, trumps broken, tricks so far) with a random
or greedy policy, and returns the tricks per seat and the cards in play order. The rules
are the rules core's (RULES.md §3: `legal_cards`, `breaks_trump`, `trick_winner`, with
the trump suit as data, so RULES.md §6 auction's named trump plays as spades do); it is
differential-tested against the batched engine on the same positions and cards
(tests/agents/test_ismcts.py). Card masks are int64 (every card index is below 63).
"""

from __future__ import annotations

import numpy as np

from agents.kernels.compile import ensure_fresh, jit, jit_inline
from agents.kernels.streams import below
from spades_env.cards import BID_BASE, CARD_RANK, CARD_SUIT, NUM_CARDS, SPADES, SUIT_MASK
from spades_env.core.rule_functions import (
    breaks_trump,
    card_strength,
    kth_bit,
    legal_cards,
    partner_of,
    suit_of,
    trick_winner,
)

ensure_fresh()  # agents/kernels/compile.py: no stale kernels from the on-disk cache

SUIT_OF_CARD = np.asarray(CARD_SUIT, dtype=np.int64)
RANK_OF_CARD = np.asarray(CARD_RANK, dtype=np.int64)
SUIT_CARDS = np.asarray(SUIT_MASK, dtype=np.uint64).astype(np.int64)
RANDOM, GREEDY = 0, 1


@jit
def popcount(x: int) -> int:
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


# de Bruijn: the index of a single set bit by one multiplication and a table look-up
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.zeros(64, dtype=np.int64)
for _i in range(64):
    _DEBRUIJN_INDEX[int(((1 << _i) * 0x03F79D71B4CB0A89) % (1 << 64)) >> 58] = _i


@jit
def bit_index(low: int) -> int:
    """The index of the one set bit of `low` (a power of two below 2**63)."""
    return _DEBRUIJN_INDEX[(np.uint64(low) * _DEBRUIJN) >> np.uint64(58)]


@jit
def _greedy(legal, trick, trick_size, lead, seat, p, partnerships, trump):
    """The greedy policy's card (module doc of `agents.montecarlo.common`); the legal cards in
    ascending order, ties to the first."""
    big = 1 << 30
    best_c, best_v = -1, -big
    if trick_size == 0:  # lead the highest card, trumps last
        bits = legal
        while bits:
            c = bit_index(bits & -bits)
            bits &= bits - 1
            v = RANK_OF_CARD[c] - 16 * (SUIT_OF_CARD[c] == trump)
            if v > best_v:
                best_c, best_v = c, v
        return best_c
    top, winner = -1, -1
    for s in range(p):
        if trick[s] >= 0 and card_strength(trick[s], lead, trump) > top:
            top, winner = card_strength(trick[s], lead, trump), s
    if not (partnerships and winner == partner_of(seat, p)):
        cheapest, cheap_v = -1, big
        bits = legal
        while bits:
            c = bit_index(bits & -bits)
            bits &= bits - 1
            if top < card_strength(c, lead, trump) < cheap_v:
                cheapest, cheap_v = c, card_strength(c, lead, trump)
        if cheapest >= 0:
            return cheapest
    low_c, low_v = -1, big
    bits = legal
    while bits:
        c = bit_index(bits & -bits)
        bits &= bits - 1
        v = RANK_OF_CARD[c] + 16 * (SUIT_OF_CARD[c] == trump)
        if v < low_v:
            low_c, low_v = c, v
    return low_c


@jit
def _greedy_rows(legal, trick, trick_size, lead, seat, trump, partnerships, out):
    p = trick.shape[1]
    for i in range(legal.shape[0]):
        out[i] = _greedy(
            legal[i], trick[i], trick_size[i], lead[i], seat[i], p, partnerships, trump[i]
        )


def greedy_cards(state, rows) -> np.ndarray:
    """(len(rows),) the greedy policy's card in each game `rows` of an engine `State` in
    card play (`_greedy`, the trump of each game)."""
    i64 = np.int64
    out = np.empty(len(rows), dtype=i64)
    _greedy_rows(
        state.legal[rows].astype(i64), state.trick[rows].astype(i64),
        state.trick_size[rows].astype(i64), state.lead_suit[rows].astype(i64),
        state.to_act[rows].astype(i64), state.trump[rows].astype(i64),
        state.rules.partnerships, out,
    )  # fmt: skip
    return out


@jit
def quick_bid_hand(hand, legal) -> int:
    """The rollouts' bid (`search_common.quick_bid`) of one hand (int64 card bits) among
    the `legal` bid bits: aces, half the kings, the spades from the queen up (jokers
    included) and every spade past the third, counted in halves and rounded half to even;
    the nearest legal bid, ties to the lowest. Returns the bid action."""
    spades, aces, kings, top = 0, 0, 0, 0
    bits = hand
    while bits:
        c = bit_index(bits & -bits)
        bits &= bits - 1
        if SUIT_OF_CARD[c] == SPADES:
            spades += 1
            top += RANK_OF_CARD[c] >= 10
        elif RANK_OF_CARD[c] == 12:
            aces += 1
        elif RANK_OF_CARD[c] == 11:
            kings += 1
    halves = 2 * aces + kings + 2 * (top + max(spades - 3, 0))
    est = halves // 2
    if halves % 2 and est % 2:
        est += 1
    best, best_d = -1, 1 << 30
    for i in range(NUM_CARDS):
        d = abs(i - est) + (0 if legal >> i & 1 else 1000)
        if d < best_d:
            best, best_d = i, d
    return BID_BASE + best


@jit
def quick_bid_rows(hands, legal, out):
    for i in range(hands.shape[0]):
        out[i] = quick_bid_hand(hands[i], legal[i])


@jit
def hand_legal_cards(h, trick_size, tricks_played, two_clubs, broken, lead, trump):
    """RULES.md §3 (the core's `legal_cards`): the cards of hand `h` the seat to act may
    play; `two_clubs`: the rules' first_lead=two_of_clubs."""
    first = two_clubs and tricks_played == 0
    return np.int64(legal_cards(h, trick_size, lead, broken, trump, first))


@jit
def play_card(hands, trick, won, seat, c, leader, trick_size, lead, broken, tricks_played,
               trump):  # fmt: skip
    """Seat `seat` plays card `c` (hands, trick and won in place); returns the new
    (leader, trick_size, lead, broken, tricks_played). RULES.md §3 by the core: the first
    card's suit is led (`suit_of`), a trump breaks trumps (`breaks_trump`), the trick
    goes to `trick_winner`."""
    p = hands.shape[0]
    hands[seat] &= ~(1 << c)
    trick[seat] = c
    if trick_size == 0:
        lead = suit_of(c)
    if breaks_trump(c, trump):
        broken = True
    trick_size += 1
    if trick_size == p:
        winner = trick_winner(trick, leader, p, lead, trump)
        won[winner] += 1
        leader = winner
        for s in range(p):
            trick[s] = -1
        trick_size = 0
        lead = -1
        tricks_played += 1
    return leader, trick_size, lead, broken, tricks_played


@jit_inline
def play_out_inline(
    hands, trick, leader, trick_size, lead, broken, won, tricks_played, hand_size,
    two_clubs, policy, partnerships, trump, seq, stream,
):  # fmt: skip
    """The random policy draws from `stream` (agents/kernels/streams.py)."""
    p = hands.shape[0]
    n = 0
    while tricks_played < hand_size:
        seat = (leader + trick_size) % p
        legal = hand_legal_cards(
            hands[seat], trick_size, tricks_played, two_clubs, broken, lead, trump
        )
        if policy == GREEDY:
            c = _greedy(legal, trick, trick_size, lead, seat, p, partnerships, trump)
        else:
            c = kth_bit(legal, below(stream, popcount(legal)))
        seq[n] = c
        n += 1
        leader, trick_size, lead, broken, tricks_played = play_card(
            hands, trick, won, seat, c, leader, trick_size, lead, broken, tricks_played, trump
        )
    return n


def play_out(
    hands, trick, leader, trick_size, lead, broken, won, tricks_played, rules, policy, stream,
    trump=0,
):  # fmt: skip
    """Play the hand out; returns (tricks per seat (P,), cards in play order).

    `hands`: (P,) cards each seat holds now; `trick`: (P,) card per seat on the table
    (-1 = none); `won`: (P,) tricks so far; `trump` the trump suit (spades, or RULES.md §6
    auction's named suit). Inputs are not changed; the random policy draws from `stream`
    (`agents.kernels.streams.new_stream`), which advances.
    """
    h = np.asarray(hands, dtype=np.uint64).astype(np.int64)
    t = np.asarray(trick, dtype=np.int64).copy()
    w = np.asarray(won, dtype=np.int64).copy()
    seq = np.empty(NUM_CARDS, dtype=np.int64)
    n = play_out_inline(
        h, t, int(leader), int(trick_size), int(lead), bool(broken), w, int(tricks_played),
        rules.hand_size, rules.first_lead == "two_of_clubs", policy, rules.partnerships,
        int(trump), seq, stream,
    )  # fmt: skip
    return w, seq[:n]


@jit
def _play_out_batch(
    hands, trick, leader, trick_size, lead, broken, won, tricks_played, trump, hand_size,
    two_clubs, policy, partnerships, stream,
):  # fmt: skip
    seq = np.empty(NUM_CARDS, dtype=np.int64)
    for i in range(hands.shape[0]):
        play_out_inline(
            hands[i], trick[i], leader[i], trick_size[i], lead[i], broken[i], won[i],
            tricks_played[i], hand_size, two_clubs, policy, partnerships, trump[i], seq, stream,
        )  # fmt: skip


def play_out_state(state, policy: int, stream) -> np.ndarray:
    """(B, P) tricks per seat at the end of the hand of every game of an engine `State`
    in PLAY (the state is not changed); the random policy draws from `stream`, the games
    in order."""
    rules = state.rules
    hands = (state.hands & ~state.played[:, None]).astype(np.int64)
    won = state.tricks_won.astype(np.int64)
    _play_out_batch(
        hands, state.trick.astype(np.int64), state.leader.astype(np.int64),
        state.trick_size.astype(np.int64), state.lead_suit.astype(np.int64),
        state.broken.copy(), won, state.tricks_played.astype(np.int64),
        state.trump.astype(np.int64), rules.hand_size, rules.first_lead == "two_of_clubs",
        policy, rules.partnerships, stream,
    )  # fmt: skip
    return won
