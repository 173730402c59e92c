"""Bit tricks on 13-bit suit masks for the double-dummy kernel (numba).

A hand in the kernel is `H[seat, suit]`, one 13-bit mask per suit (bit = rank, 0 = '2').
"""

from __future__ import annotations

import numpy as np
from numba import njit

POP = np.array([bin(i).count("1") for i in range(1 << 13)], dtype=np.int64)
HIGH = np.array([i.bit_length() - 1 for i in range(1 << 13)], dtype=np.int64)  # -1 for 0


def _bit_tables() -> tuple[np.ndarray, np.ndarray]:
    """PEXT7[x * 128 + m]: the bits of x at m's set positions, packed low (and PDEP7,
    the inverse: the low bits of x spread to m's set positions), for 7-bit x and m."""
    pext = np.zeros(128 * 128, dtype=np.int64)
    pdep = np.zeros(128 * 128, dtype=np.int64)
    for m in range(128):
        pos = [b for b in range(7) if m >> b & 1]
        for x in range(128):
            pext[x * 128 + m] = sum(1 << j for j, b in enumerate(pos) if x >> b & 1)
            pdep[x * 128 + m] = sum(1 << b for j, b in enumerate(pos) if x >> j & 1)
    return pext, pdep


PEXT7, PDEP7 = _bit_tables()


@njit(cache=True)
def pext13(x, m):
    """The bits of the 13-bit x at the set positions of m, packed into the low bits."""
    lo = m & 127
    return PEXT7[(x & 127) * 128 + lo] | (PEXT7[(x >> 7) * 128 + (m >> 7)] << POP[lo])


@njit(cache=True)
def pdep13(x, m):
    """The low bits of x spread to the set positions of the 13-bit m (pext's inverse)."""
    lo = m & 127
    n = POP[lo]
    return PDEP7[(x & ((1 << n) - 1)) * 128 + lo] | (PDEP7[(x >> n) * 128 + (m >> 7)] << 7)


@njit(cache=True, inline="always")
def hand_size(H, seat):
    return POP[H[seat, 0]] + POP[H[seat, 1]] + POP[H[seat, 2]] + POP[H[seat, 3]]


@njit(cache=True, inline="always")
def last_trick_winner(H, leader):
    """Winner of the last trick, each seat holding one card (RULES.md §3)."""
    best = -1
    winner = leader
    lead = 0
    for j in range(4):
        seat = (leader + j) & 3
        for s in range(4):
            if H[seat, s]:
                rk = HIGH[H[seat, s]]
                if j == 0:
                    lead = s
                st = 32 + rk if s == 0 else (rk if s == lead else -1)
                if st > best:
                    best = st
                    winner = seat
    return winner


@njit(cache=True, inline="always")
def canonicalize(H):
    """Renumber each suit's cards still held from the top (relative ranks), in place.

    Only the order of the cards in play matters (RULES.md §3 compares ranks within a
    suit), so positions that differ only in which low cards are gone become equal.
    """
    for s in range(4):
        p = H[0, s] | H[1, s] | H[2, s] | H[3, s]
        shift = 13 - POP[p]
        for seat in range(4):
            H[seat, s] = pext13(H[seat, s], p) << shift


@njit(cache=True, inline="always")
def key_words(H, leader, broken, mode, acc):
    """Four int64 words: each seat's (relative) cards, plus leader, broken and acc."""
    w0 = H[0, 0] | (H[0, 1] << 13) | (H[0, 2] << 26) | (H[0, 3] << 39)
    w1 = H[1, 0] | (H[1, 1] << 13) | (H[1, 2] << 26) | (H[1, 3] << 39)
    w2 = H[2, 0] | (H[2, 1] << 13) | (H[2, 2] << 26) | (H[2, 3] << 39)
    w3 = H[3, 0] | (H[3, 1] << 13) | (H[3, 2] << 26) | (H[3, 3] << 39)
    w0 |= (leader << 52) | ((1 if broken else 0) << 54) | (mode << 55)
    w1 |= (acc & 4095) << 52
    w2 |= ((acc >> 12) & 4095) << 52
    return w0, w1, w2, w3
