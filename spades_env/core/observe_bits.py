"""The packed observation (obs_bits.py documents the format), compiled.

`encode_bits_one` writes the packed row of one seat in one game: the card words are the
state's own bitmasks (a hand, a seat's played cards, its card on the table), so the row
costs a few dozen stores. The played_trick planes are kept per game in a small memo that
the vector env keeps from step to step, updated only with the cards played since
(`trick_planes`).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.cards import MAX_BID, NUM_CARDS
from spades_env.core.borrow import borrow, stack_array
from spades_env.core.compile import ensure_fresh
from spades_env.core.kernel import DRAW, PLAY, as_tuple, row_views
from spades_env.core.layout import NUM_KERNEL_KEYS
from spades_env.core.observe import hand_hidden, low_bit, team_scores
from spades_env.core.rule_functions import partner_of, seat_after, seat_rel
from spades_env.core.rules_vector import (
    L_BIDS,
    L_BLIND,
    L_BROKEN,
    L_CARD_TRICK,
    L_DEALER,
    L_HAND_NO,
    L_HANDS,
    L_LEAD_SUIT,
    L_LEADER,
    L_PASSING,
    L_PHASE,
    L_PLAYED,
    L_SEED,
    L_SEEN,
    L_STOCK,
    L_STOCK_POS,
    L_TO_ACT,
    L_TRICK,
    L_TRICK_SIZE,
    L_TRICKS_WON,
    L_TRUMP,
    L_VOIDS,
    R_DECK_SIZE,
    R_DRAW,
    R_NAMED,
    R_OPEN_HANDS,
    R_P,
)
from spades_env.core.tuples import fixed_tuple

ensure_fresh()

(
    K_HAND, K_PLAYED_BY, K_TABLE, K_PASSED, K_RECEIVED, K_OPEN_HANDS, K_LOOKING, K_SEEN,
    K_TRICK, K_PLANES, F_BIDS, F_BLIND, F_DEALER, F_LEADER, F_TO_ACT, F_LEAD_SUIT,
    F_BROKEN, F_PHASE, F_VOIDS, F_TRUMP, I_TRICKS_WON, I_SCORES, I_BAGS, I_HAND_NO,
    I_STOCK, K_FLAG_WORD, K_INT_WORD, K_WORDS,
) = range(NUM_KERNEL_KEYS)  # fmt: skip
_BID_SLOTS = MAX_BID + 2
_U1 = np.uint64(1)
#: memo of one game's trick planes: its key (seed and hand), the cards they hold, planes
MEMO_KEY, MEMO_PLAYED, MEMO_PLANES = 0, 1, 2
MEMO_SIZE = MEMO_PLANES + 8  # room for the planes of any hand size
HAND_KEY_MULT = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, inline="always")
def layout_tuple(lay):
    """`BitsLayout.kernel` as a tuple (values in registers inside the kernel)."""
    return fixed_tuple(lay, NUM_KERNEL_KEYS)


@njit(cache=True, inline="always")
def _card(card):
    """The bit of one card, none for -1."""
    return _U1 << np.uint64(card) if card >= 0 else np.uint64(0)


@njit(cache=True, inline="always")
def _put(f0, f1, f2, pos, v):
    """(f0, f1, f2) with the bits of `v` (at most 8) ORed in at bit `pos` (< 192) of the
    three words read as one; no branch, as the positions and values vary game by game."""
    sh = np.uint64(pos & 63)
    q = pos >> 6
    lo = v << sh
    hi = (v >> _U1) >> (np.uint64(63) - sh)  # what spills into the next word
    on0 = np.uint64(0) - np.uint64(q == 0)
    on1 = np.uint64(0) - np.uint64(q == 1)
    on2 = np.uint64(0) - np.uint64(q == 2)
    return f0 | (lo & on0), f1 | (lo & on1) | (hi & on0), f2 | (lo & on2) | (hi & on1)


@njit(cache=True, inline="always")
def trick_planes(r, u64, i32, i8, g, memo):
    """Bring the played_trick planes of game `g` in `memo` ((MEMO_PLANES + planes,)
    uint64) up to date: add the cards played since it was last brought up to date, or
    start again in another hand (a different key, or cards taken back)."""
    played = u64[g, r[L_PLAYED]]
    key = u64[g, r[L_SEED]] + HAND_KEY_MULT * np.uint64(i32[g, r[L_HAND_NO]] + 1)
    done = memo[MEMO_PLAYED]
    if memo[MEMO_KEY] != key or done & ~played:
        for j in range(MEMO_PLANES, memo.size):
            memo[j] = 0
        memo[MEMO_KEY] = key
        done = np.uint64(0)
    new = played & ~done
    planes = memo.size - MEMO_PLANES
    while new:
        c = np.uint64(low_bit(new))
        v = np.uint64(i8[g, r[L_CARD_TRICK] + c] + 1)
        for j in range(planes):  # no branch per bit: the trick numbers are random
            memo[MEMO_PLANES + j] |= ((v >> np.uint64(j)) & _U1) << c
        new &= new - _U1
    memo[MEMO_PLAYED] = played


@njit(cache=True, inline="always")
def encode_bits_one(r, lay, u64, i32, i8, g, seat, w, memo):
    """Write the packed row of `seat` in game `g` into `w` ((words,) uint64); `memo` holds
    the game's trick planes (`trick_planes`). `r` and `lay` are tuples (kernel.as_tuple,
    `layout_tuple`). The cells are those of core/observe.py `encode_one`."""
    p, c = r[R_P], NUM_CARDS
    phase = i8[g, r[L_PHASE]]
    played = u64[g, r[L_PLAYED]]
    hidden = hand_hidden(r, i32, i8, g, seat)
    w[lay[K_HAND]] = np.uint64(0) if hidden else u64[g, r[L_HANDS] + seat] & ~played
    for rel in range(p):
        s = seat_after(seat, rel, p)
        # a seat's hand keeps the cards it played (the engine tracks play in `played`)
        w[lay[K_PLAYED_BY] + rel] = u64[g, r[L_HANDS] + s] & played
        w[lay[K_TABLE] + rel] = _card(i8[g, r[L_TRICK] + s])
    w[lay[K_PASSED]] = u64[g, r[L_PASSING] + seat]
    if phase >= PLAY:  # the exchange is over: what the partner passed
        w[lay[K_RECEIVED]] = u64[g, r[L_PASSING] + partner_of(seat, p)]
    else:
        w[lay[K_RECEIVED]] = 0
    if r[R_OPEN_HANDS]:  # RULES.md §6 open_hands: every hand is shown to every seat
        for rel in range(1, p):
            held = u64[g, r[L_HANDS] + seat_after(seat, rel, p)] & ~played
            w[lay[K_OPEN_HANDS] + rel - 1] = held
    if r[R_DRAW]:  # RULES.md §6 two_player: what this drawer has seen
        pos = i8[g, r[L_STOCK_POS]]
        look = np.uint64(0)
        if phase == DRAW and i8[g, r[L_TO_ACT]] == seat:
            look = _card(i8[g, r[L_STOCK] + min(pos, c - 1)])
        w[lay[K_LOOKING]] = look
        w[lay[K_SEEN]] = u64[g, r[L_SEEN] + seat]
    trick_planes(r, u64, i32, i8, g, memo)
    for j in range(lay[K_PLANES]):
        w[lay[K_TRICK] + j] = memo[MEMO_PLANES + j]
    # The flags are gathered in three registers (f0, f1, f2: the flag words), then stored.
    at = lay[K_FLAG_WORD] * 64  # flag positions in `lay` count from the row's bit 0
    f0 = f1 = f2 = np.uint64(0)
    for rel in range(p):
        s = seat_after(seat, rel, p)
        bid = lay[F_BIDS] - at + rel * _BID_SLOTS + 1 + i8[g, r[L_BIDS] + s]
        f0, f1, f2 = _put(f0, f1, f2, bid, _U1)
        f0, f1, f2 = _put(f0, f1, f2, lay[F_BLIND] - at + rel, np.uint64(i8[g, r[L_BLIND] + s]))
        voids = np.uint64(i8[g, r[L_VOIDS] + s] & 15)
        f0, f1, f2 = _put(f0, f1, f2, lay[F_VOIDS] - at + rel * 4, voids)
    dealer = seat_rel(i8[g, r[L_DEALER]], seat, p)
    f0, f1, f2 = _put(f0, f1, f2, lay[F_DEALER] - at + dealer, _U1)
    leader = seat_rel(i8[g, r[L_LEADER]], seat, p)
    led = np.uint64(i8[g, r[L_TRICK_SIZE]] > 0)
    f0, f1, f2 = _put(f0, f1, f2, lay[F_LEADER] - at + leader, led)
    f0, f1, f2 = _put(f0, f1, f2, lay[F_TO_ACT] - at + seat_rel(i8[g, r[L_TO_ACT]], seat, p), _U1)
    lead = i8[g, r[L_LEAD_SUIT]]  # no branch: where the trick stands differs game to game
    f0, f1, f2 = _put(f0, f1, f2, lay[F_LEAD_SUIT] - at + max(lead, 0), np.uint64(lead >= 0))
    f0, f1, f2 = _put(f0, f1, f2, lay[F_BROKEN] - at, np.uint64(i8[g, r[L_BROKEN]] != 0))
    f0, f1, f2 = _put(f0, f1, f2, lay[F_PHASE] - at + phase, _U1)
    if r[R_NAMED]:  # RULES.md §6 auction: the named suit, once named
        trump = i8[g, r[L_TRUMP]]
        if trump >= 0:
            f0, f1, f2 = _put(f0, f1, f2, lay[F_TRUMP] - at + trump, _U1)
    flags = lay[K_INT_WORD] - lay[K_FLAG_WORD]
    w[lay[K_FLAG_WORD]] = f0
    if flags > 1:
        w[lay[K_FLAG_WORD] + 1] = f1
    if flags > 2:
        w[lay[K_FLAG_WORD] + 2] = f2
    for j in range(lay[K_INT_WORD], lay[K_WORDS]):
        w[j] = 0
    ints = w.view(np.int16)
    for rel in range(p):
        ints[lay[I_TRICKS_WON] + rel] = i8[g, r[L_TRICKS_WON] + seat_after(seat, rel, p)]
    team_scores(r, i32, g, seat, ints, lay[I_SCORES], lay[I_BAGS])
    ints[lay[I_HAND_NO]] = i32[g, r[L_HAND_NO]]
    if r[R_DRAW]:
        pos = i8[g, r[L_STOCK_POS]]
        ints[lay[I_STOCK]] = r[R_DECK_SIZE] - pos if phase == DRAW else 0


@njit(cache=True, _nrt=False)
def encode_bits_rows(spec, lay, buf, seats, out):
    """Row g of `out` ((B, 8 W) uint8): the packed row of game g seen from `seats[g]`."""
    r, k = as_tuple(spec), layout_tuple(lay)
    buf, u64, i32, _, i8 = row_views(buf)
    seats, out = borrow(seats), borrow(out)
    words = out.view(np.uint64)
    memo = stack_array(MEMO_SIZE, np.uint64)[: MEMO_PLANES + k[K_PLANES]]
    for g in range(buf.shape[0]):
        memo[MEMO_PLAYED] = ~np.uint64(0)  # holds no game: built from scratch
        encode_bits_one(r, k, u64, i32, i8, g, seats[g], words[g], memo)
