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

from spades_env.numba_cache import ensure_fresh

ensure_fresh()

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
STEP = np.uint64(0xD1B54A32D192ED03)
DEALER_KEY = np.uint64(0xA5A5A5A5A5A5A5A5)
_BUCKET_BITS = np.uint64(58)  # 64 buckets by the top 6 bits, then insertion within
_ONE = np.uint64(1)


@njit(cache=True)
def splitmix64(x: np.uint64) -> np.uint64:
    """The SplitMix64 finaliser of x + GOLDEN."""
    z = np.uint64(x) + GOLDEN
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


@njit(cache=True)
def first_dealer(seed: np.uint64, num_players: int) -> int:
    """RULES.md §1: the first dealer, drawn from the game's seed."""
    return int(splitmix64(np.uint64(seed) ^ DEALER_KEY) % np.uint64(num_players))


#: Size of the uint64 work array `shuffle_into` and `deal_into` take (words, cards,
#: bucket counts, order): the kernels pass one, so that a deal allocates nothing.
WORK_SIZE = 64 + 64 + 65 + 64


@njit(cache=True)
def shuffle(deck: np.uint64, seed: np.uint64, hand_no: int, out: np.ndarray) -> int:
    """Write the cards of `deck` in shuffled order into `out` (int8); return how many."""
    return shuffle_into(deck, seed, hand_no, out, np.empty(WORK_SIZE, dtype=np.uint64))


@njit(cache=True)
def shuffle_into(
    deck: np.uint64, seed: np.uint64, hand_no: int, out: np.ndarray, work: np.ndarray
) -> int:
    """`shuffle` with the caller's work array ((WORK_SIZE,) uint64)."""
    words, cards = work[0:64], work[64:128]
    counts, order = work[128:193], work[193:257]
    n = 0
    d = np.uint64(deck)
    for c in range(64):
        if (d >> np.uint64(c)) & np.uint64(1):
            cards[n] = c
            n += 1
    base = splitmix64(np.uint64(seed) ^ (np.uint64(hand_no) * GOLDEN))
    for i in range(n):
        words[i] = splitmix64(base + np.uint64(i + 1) * STEP)
    # Stable sort by word: a counting sort on the top 6 bits, then insertion sort inside
    # each bucket (about one card per bucket), so a deal costs O(n).
    for b in range(65):
        counts[b] = 0
    for i in range(n):
        counts[int(words[i] >> _BUCKET_BITS) + 1] += _ONE
    for b in range(64):
        counts[b + 1] += counts[b]
    for i in range(n):
        b = int(words[i] >> _BUCKET_BITS)
        order[counts[b]] = i
        counts[b] += _ONE
    for i in range(1, n):  # insertion sort: only equal-bucket neighbours move
        j, cur = i, order[i]
        while j > 0 and words[order[j - 1]] > words[cur]:
            order[j] = order[j - 1]
            j -= 1
        order[j] = cur
    for i in range(n):
        out[i] = cards[order[i]]
    return n


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
    work = np.empty(WORK_SIZE + 64, dtype=np.uint64)
    deal_into(deck, seed, hand_no, num_players, hand_size, hands, work)


@njit(cache=True)
def deal_into(deck, seed, hand_no, num_players, hand_size, hands, work):
    """`deal` with the caller's work array ((WORK_SIZE + 64,) uint64): no allocation."""
    order = work[WORK_SIZE : WORK_SIZE + 64]  # the shuffled cards, after the shuffle's part
    shuffle_into(deck, seed, hand_no, order, work)
    for s in range(num_players):
        h = np.uint64(0)
        for i in range(s * hand_size, (s + 1) * hand_size):
            h |= _ONE << np.uint64(order[i])
        hands[s] = h
