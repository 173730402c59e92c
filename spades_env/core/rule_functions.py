"""Every rule of one game, once: scalar functions compiled with numba (RULES.md §1-§6).

Each function works on plain integers and small arrays of one game, with the variant
options as arguments (the trump suit, the number of players, the deck, ...), so the
batched engine (core/kernel.py), `SingleGame`, the search kernels and the double-dummy
solver all call the same code. `f.py_func` is the plain-Python function, for debugging.
Cards are indices (cards.py); hands are uint64 bitmasks.
"""

from __future__ import annotations

import platform

import llvmlite.binding as llvm
import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils, config
from numba.extending import intrinsic, overload

from spades_env.cards import CARD_RANK, CARD_SUIT, NUM_SUITS, SUIT_MASK, TWO_OF_CLUBS
from spades_env.core.compile import ensure_fresh
from spades_env.core.rules_vector import (
    BID_MIRROR,
    BID_SUICIDE,
    BID_WHIZ,
    BLIND_ALWAYS,
    BLIND_NEVER,
)

ensure_fresh()  # spades_env/core/compile.py: no stale kernels from the on-disk cache

_SUIT = CARD_SUIT.astype(np.int64)
_RANK = CARD_RANK.astype(np.int64)
_SUIT_MASK = SUIT_MASK.copy()
_TWO_CLUBS = np.uint64(1 << TWO_OF_CLUBS)
_ALL_SUITS = (1 << NUM_SUITS) - 1
_U0, _U1 = np.uint64(0), np.uint64(1)
_M1, _M2, _M4 = (
    np.uint64(0x5555555555555555),
    np.uint64(0x3333333333333333),
    np.uint64(0x0F0F0F0F0F0F0F0F),
)
_H01 = np.uint64(0x0101010101010101)


# ------------------------------------------------------------------ bit helpers
@njit(cache=True)
def popcount(x: np.uint64) -> int:
    """Set bits of a uint64 (cards in a hand)."""
    x = np.uint64(x)
    x = x - ((x >> _U1) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return int((x * _H01) >> np.uint64(56))


@njit(cache=True)
def lowest(x: np.uint64) -> int:
    """Index of the lowest set bit (x != 0): the lowest card of a hand."""
    x = np.uint64(x)
    return popcount((x & (~x + _U1)) - _U1)


@njit(cache=True)
def _kth_bit_halving(x: np.uint64, k: int) -> int:
    """`kth_bit` without BMI2: halving with popcounts and selects, no data-dependent
    branch (a random pick's `k` would mispredict a loop of k steps)."""
    x = np.uint64(x)
    pos = 0
    for width in (32, 16, 8, 4, 2, 1):
        low = popcount(x & ((_U1 << np.uint64(width)) - _U1))
        up = k >= low
        k = k - low if up else k
        x = x >> np.uint64(width) if up else x
        pos = pos + width if up else pos
    return pos


def deposit_bits(src: np.uint64, mask: np.uint64) -> np.uint64:
    """The low bits of `src`, in order, placed on the set bits of `mask` (x86 BMI2's pdep;
    plain Python here, one instruction when compiled)."""
    out, m, s, bit = 0, int(mask), int(src), 1
    while m:
        low = m & -m
        if s & bit:
            out |= low
        m &= m - 1
        bit <<= 1
    return np.uint64(out)


@intrinsic
def _pdep(typingctx, src, mask):
    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(i64, [i64, i64]), "llvm.x86.bmi.pdep.64"
        )
        return builder.call(fn, args)

    return types.uint64(types.uint64, types.uint64), codegen


@overload(deposit_bits)
def _deposit_bits_compiled(src, mask):
    return lambda src, mask: _pdep(np.uint64(src), np.uint64(mask))


@njit(cache=True)
def _kth_bit_deposit(x: np.uint64, k: int) -> int:
    """`kth_bit` with BMI2: bit k deposited on the set bits of `x` lands on the k-th."""
    return np.int64(lowest(deposit_bits(_U1 << np.uint64(k), np.uint64(x))))


def compiles_for_bmi2() -> bool:
    """Do the kernels compile for an x86 CPU with BMI2 (the host's, unless
    NUMBA_CPU_NAME names another)?"""
    if platform.machine().lower() not in ("x86_64", "amd64"):
        return False
    if config.CPU_NAME and config.CPU_NAME != "host":
        return "+bmi2" in (config.CPU_FEATURES or "")
    return bool(llvm.get_host_cpu_features().get("bmi2", False))


#: Index of the `k`-th lowest set bit of `x` (0-based, k < popcount(x)): the random
#: opponents' pick, on the critical path of every step. With BMI2 it is a deposit and a
#: count (`_kth_bit_deposit`, the faster of the two where the CPU has it); the halving gives
#: the same answers elsewhere.
kth_bit = _kth_bit_deposit if compiles_for_bmi2() else _kth_bit_halving


@njit(cache=True)
def bit(card: int) -> np.uint64:
    return _U1 << np.uint64(card)


@njit(cache=True)
def seat_after(seat: int, k: int, num_players: int) -> int:
    """The seat `k` places to the left of `seat` ((seat + k) mod P for 0 <= seat, k < P),
    without an integer division (the hot paths call it every step)."""
    s = seat + k
    return s - num_players if s >= num_players else s


@njit(cache=True)
def seat_rel(seat: int, observer: int, num_players: int) -> int:
    """`seat` relative to `observer` ((seat - observer) mod P), without a division."""
    d = seat - observer
    return d + num_players if d < 0 else d


@njit(cache=True)
def suit_of(card: int) -> int:
    """RULES.md §1: the suit of a card; §6 jokers are spades."""
    return _SUIT[card]


@njit(cache=True)
def suit_cards(suit: int) -> np.uint64:
    """Every card of a suit (spades include the jokers)."""
    return _SUIT_MASK[suit]


# ------------------------------------------------------------------ RULES.md §3: the play
@njit(cache=True)
def card_strength(card: int, lead_suit: int, trump: int) -> int:
    """RULES.md §3: a trump beats every other suit, then the led suit by rank; other
    cards never win (-1). The trump is spades, or RULES.md §6 auction's named suit."""
    suit = _SUIT[card]
    if suit == trump:
        return 32 + _RANK[card]
    if suit == lead_suit:
        return _RANK[card]
    return -1


@njit(cache=True)
def legal_cards(
    held: np.uint64, trick_size: int, lead_suit: int, broken: bool, trump: int, two_clubs: bool
) -> np.uint64:
    """RULES.md §3: the cards `held` may play. Follow suit when you can, else any card;
    no trump lead before trumps are broken unless only trumps are held; `two_clubs`:
    this is the first lead of a hand under first_lead=two_of_clubs (the 2C must lead)."""
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
def shown_voids(card: int, trick_size: int, lead_suit: int, broken: bool, trump: int) -> int:
    """RULES.md §3, public information: suits (bit s) the player of `card` has shown it
    holds none of. Not following shows a void in the led suit; leading an unbroken trump
    shows that only trumps were held."""
    suit = _SUIT[card]
    if trick_size == 0:
        if suit == trump and not broken:
            return _ALL_SUITS ^ (1 << trump)
        return 0
    if suit != lead_suit:
        return 1 << lead_suit
    return 0


@njit(cache=True)
def breaks_trump(card: int, trump: int) -> bool:
    """RULES.md §3: any trump played breaks trumps."""
    return _SUIT[card] == trump


@njit(cache=True)
def trick_winner(
    trick: np.ndarray, leader: int, num_players: int, lead_suit: int, trump: int
) -> int:
    """RULES.md §3: the seat whose card wins a full trick (`trick[seat]` = card)."""
    best, winner = -2, leader
    for k in range(num_players):
        seat = seat_after(leader, k, num_players)
        s = card_strength(trick[seat], lead_suit, trump)
        if s > best:
            best, winner = s, seat
    return winner


# ------------------------------------------------------------------ RULES.md §2: the bidding
@njit(cache=True)
def partner_of(seat: int, num_players: int) -> int:
    """RULES.md §1: partners sit opposite."""
    return seat_after(seat, num_players >> 1, num_players)


@njit(cache=True)
def bid_top(max_bid: int, max_total: int, bids: np.ndarray, num_players: int) -> int:
    """RULES.md §2: the largest bid now: hand_size, and the max_total_bid cap (-1 = none)
    less the bids made so far."""
    if max_total < 0:
        return max_bid
    made = 0
    for s in range(num_players):
        if bids[s] > 0:
            made += bids[s]
    return min(max_bid, max_total - made)


@njit(cache=True)
def legal_bids(
    min_bid: int, top: int, bid_rule: int, held: np.uint64, partner_bid: int
) -> np.uint64:
    """RULES.md §2, §6: legal bids as bits (bit b = bid b, 0 = nil). `top` from `bid_top`;
    `partner_bid` -1 until the partner bid (and in games without partners).

    family (`min_bid` 1): no nil. mirror: the bid is the spades held (jokers count).
    whiz: nil or the spades held. suicide: the second partner to bid completes exactly
    one nil per partnership."""
    bits = (np.uint64(2) << np.uint64(top)) - _U1
    if min_bid > 0:
        bits &= ~_U1
    if bid_rule in (BID_MIRROR, BID_WHIZ):
        forced = _U1 << np.uint64(popcount(np.uint64(held) & _SUIT_MASK[0]))
        return forced if bid_rule == BID_MIRROR else forced | _U1
    if bid_rule == BID_SUICIDE and partner_bid >= 0:
        return bits & ~_U1 if partner_bid == 0 else _U1
    return bits


@njit(cache=True)
def blind_allowed(
    blind_mode: int, bid_rule: int, partner_bid: int, scores: np.ndarray, num_teams: int, team: int
) -> bool:
    """RULES.md §2 option blind_nil: may this seat declare blind nil now. `when_behind_100`
    means 100 or more behind the best other team; RULES.md §6 suicide: not once the
    partner bid nil (a blind nil is the team's nil)."""
    if blind_mode == BLIND_NEVER:
        return False
    if bid_rule == BID_SUICIDE and partner_bid == 0:
        return False
    if blind_mode == BLIND_ALWAYS:
        return True
    best = -(1 << 40)
    for t in range(num_teams):
        if t != team and scores[t] > best:
            best = scores[t]
    return best - scores[team] >= 100


@njit(cache=True)
def trump_namer(dealer: int, bids: np.ndarray, num_players: int) -> int:
    """RULES.md §6 auction: the highest bidder names trump (nil counts 0), the first in
    bidding order (from left of the dealer) among equals."""
    best, who = -1, seat_after(dealer, 1, num_players)
    for k in range(num_players):
        seat = seat_after(seat_after(dealer, 1, num_players), k, num_players)
        if bids[seat] > best:
            best, who = bids[seat], seat
    return who


# ------------------------------------------------------------------ the hand's flow
@njit(cache=True)
def first_leader(two_clubs: bool, hands: np.ndarray, dealer: int, num_players: int) -> int:
    """RULES.md §3: left of the dealer leads the first trick; first_lead=two_of_clubs:
    the holder of the 2C."""
    if two_clubs:
        for seat in range(num_players):
            if np.uint64(hands[seat]) & _TWO_CLUBS:
                return seat
    return seat_after(dealer, 1, num_players)


@njit(cache=True)
def must_pass(blind: np.ndarray, seat: int, num_players: int) -> bool:
    """RULES.md §2 blind_nil_exchange: a blind-nil bidder and its partner pass 2 cards."""
    return bool(blind[seat]) or bool(blind[partner_of(seat, num_players)])


@njit(cache=True)
def next_passer(blind: np.ndarray, passing: np.ndarray, dealer: int, num_players: int) -> int:
    """RULES.md §2: the next seat (from left of the dealer) still to choose its 2 cards to
    pass, or -1 when every pass is chosen."""
    for k in range(num_players):
        seat = seat_after(seat_after(dealer, 1, num_players), k, num_players)
        if must_pass(blind, seat, num_players) and popcount(passing[seat]) < 2:
            return seat
    return -1
