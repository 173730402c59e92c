"""Reproducible deals, compiled: the cards of hand `h` of a game are a pure function of
the game's 64-bit seed and `h` (RULES.md §1; §6 two_player's stock is the same shuffle).

Random words come from SplitMix64 (a counter-based generator): word i of hand h is
`splitmix64(splitmix64(seed ^ h * GOLDEN) + (i + 1) * STEP)`, one per card of the deck in
card order; the shuffled deck is the cards sorted by their words (ties, never seen in
practice, keep card order). The first dealer is `splitmix64(seed ^ DEALER_KEY) % P`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.core.compile import ensure_fresh

ensure_fresh()

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
MIX1 = np.uint64(0xBF58476D1CE4E5B9)  # SplitMix64's two multipliers
MIX2 = np.uint64(0x94D049BB133111EB)
STEP = np.uint64(0xD1B54A32D192ED03)
DEALER_KEY = np.uint64(0xA5A5A5A5A5A5A5A5)
_BUCKET_BITS = np.uint64(58)  # 64 buckets by the top 6 bits, then insertion within
_ONE = np.uint64(1)


@njit(cache=True)
def splitmix64(x: np.uint64) -> np.uint64:
    """The SplitMix64 finaliser of x + GOLDEN."""
    z = np.uint64(x) + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * MIX1
    z = (z ^ (z >> np.uint64(27))) * MIX2
    return z ^ (z >> np.uint64(31))


_MASK64 = (1 << 64) - 1
_GOLDEN_INT, _MIX1_INT, _MIX2_INT = int(GOLDEN), int(MIX1), int(MIX2)


def splitmix64_int(x: int) -> int:
    """`splitmix64` on one Python int, bit-identical (a few times faster than calling the
    compiled one from Python, which the per-decision keys of the envs need)."""
    z = (x + _GOLDEN_INT) & _MASK64
    z = ((z ^ (z >> 30)) * _MIX1_INT) & _MASK64
    z = ((z ^ (z >> 27)) * _MIX2_INT) & _MASK64
    return z ^ (z >> 31)


@njit(cache=True)
def first_dealer(seed: np.uint64, num_players: int) -> int:
    """RULES.md §1: the first dealer, drawn from the game's seed."""
    return int(splitmix64(np.uint64(seed) ^ DEALER_KEY) % np.uint64(num_players))


#: Size of the uint64 work array `shuffle_into` and `deal_into` take (the words, the
#: cards, their ranks, the buckets' bitmap and its prefix counts): the kernels pass one,
#: so that a deal allocates nothing.
WORK_SIZE = 64 * 5
_TOP = np.uint64(52)  # 4096 buckets by the top 12 bits of a word
_SIX = np.uint64(6)
_LOW6 = np.uint64(63)
_M1 = np.uint64(0x5555555555555555)
_M2 = np.uint64(0x3333333333333333)
_M4 = np.uint64(0x0F0F0F0F0F0F0F0F)
_H01 = np.uint64(0x0101010101010101)


@njit(cache=True, inline="always")
def _popcount(x):
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> np.uint64(2)) & _M2)
    x = (x + (x >> np.uint64(4))) & _M4
    return (x * _H01) >> np.uint64(56)


@njit(cache=True)
def shuffle(deck: np.uint64, seed: np.uint64, hand_no: int, out: np.ndarray) -> int:
    """Write the cards of `deck` in shuffled order into `out` (int8); return how many."""
    return shuffle_into(deck, seed, hand_no, out, np.empty(WORK_SIZE, dtype=np.uint64))


@njit(cache=True)
def shuffle_into(
    deck: np.uint64, seed: np.uint64, hand_no: int, out: np.ndarray, work: np.ndarray
) -> int:
    """`shuffle` with the caller's work array ((WORK_SIZE,) uint64)."""
    n = _rank(deck, seed, hand_no, work)
    cards, ranks = work[64:128], work[128:192]
    for i in range(n):
        out[ranks[i]] = cards[i]
    return n


@njit(cache=True, inline="always")
def _rank(deck, seed, hand_no, work):
    """The cards of `deck` (work[64:128]) and the place of each in the shuffled deck
    (work[128:192]): its word's rank among the words, equal words in card order
    (`places`). Returns how many cards."""
    words, cards, ranks = work[0:64], work[64:128], work[128:192]
    occ, below = work[192:256], work[256:320]
    d = np.uint64(deck)
    n = int(_popcount(d))
    if d == (_ONE << np.uint64(n)) - _ONE:  # the standard deck: cards 0..n-1
        for c in range(64):
            cards[c] = c
    else:
        j = 0
        for c in range(64):
            cards[j] = c
            j += int((d >> np.uint64(c)) & _ONE)
    base = splitmix64(np.uint64(seed) ^ (np.uint64(hand_no) * GOLDEN))
    for i in range(64):  # all 64: a loop of known length runs in vector registers
        words[i] = splitmix64(base + np.uint64(i + 1) * STEP)
    places(words, n, ranks, occ, below)
    return n


@njit(cache=True, inline="always")
def places(words, n, ranks, occ, below):
    """ranks[i] = the rank of words[i] among words[:n], equal words in index order (a
    stable sort's positions), counted rather than sorted for: the words fall into 4096
    buckets by their top 12 bits, marked in a bitmap (`occ`, 64 words), so a word's rank
    is the number of marked buckets below its own (popcounts; `below` holds the counts
    of the bitmap's words before each). A bucket that two words share (a third of the
    deals have one) is then corrected for, word by word."""
    for k in range(64):
        occ[k] = 0
    shared = np.uint64(0)  # words whose bucket an earlier word holds
    for i in range(n):
        b = words[i] >> _TOP
        k = b >> _SIX
        shared |= ((occ[k] >> (b & _LOW6)) & _ONE) << np.uint64(i)
        occ[k] |= _ONE << (b & _LOW6)
    for k in range(64):
        below[k] = _popcount(occ[k])
    total = np.uint64(0)
    for k in range(64):  # counts of the words before: an exclusive prefix sum
        total, below[k] = total + below[k], total
    for i in range(n):
        b = words[i] >> _TOP
        k = b >> _SIX
        ranks[i] = below[k] + _popcount(occ[k] & ((_ONE << (b & _LOW6)) - _ONE))
    while shared:  # rare: one more word below every word of a higher bucket, and the
        d_bit = shared & (~shared + _ONE)  # order within the shared bucket
        c = int(_popcount(d_bit - _ONE))
        shared ^= d_bit
        wc, bc = words[c], words[c] >> _TOP
        for i in range(n):
            bi = words[i] >> _TOP
            ranks[i] += np.uint64(bi > bc)
            if bi == bc and i < c:  # each pair of the bucket once, from its later card
                if words[i] <= wc:  # i < c: equal words keep card order
                    ranks[c] += _ONE
                else:
                    ranks[i] += _ONE


@njit(cache=True)
def deal(
    deck: np.uint64,
    seed: np.uint64,
    hand_no: int,
    num_players: int,
    hand_size: int,
    hands: np.ndarray,
) -> None:
    """RULES.md §1: `hand_size` cards to each seat from the shuffled deck (uint64 masks):
    seat s gets positions s*hand_size .. (s+1)*hand_size - 1."""
    work = np.empty(WORK_SIZE, dtype=np.uint64)
    deal_into(deck, seed, hand_no, num_players, hand_size, hands, work)


@njit(cache=True)
def deal_into(deck, seed, hand_no, num_players, hand_size, hands, work):
    """`deal` with the caller's work array ((WORK_SIZE,) uint64): no allocation, and no
    shuffled deck written: each seat's mask is gathered from the cards' places."""
    n = _rank(deck, seed, hand_no, work)
    cards, ranks, order = work[64:128], work[128:192], work[192:256]
    for i in range(n):
        order[ranks[i]] = cards[i]
    for s in range(num_players):
        h = np.uint64(0)
        for i in range(s * hand_size, (s + 1) * hand_size):
            h |= _ONE << order[i]
        hands[s] = h
