"""The transposition table of the double-dummy kernel (numba): open addressing, bounds.

Keys are four int64 words (each seat's cards in relative ranks plus the leader, broken
and the SCORE-mode index, see `bits.key_words`); entries keep a lower and an upper bound
of the searched quantity, so one entry serves every threshold. A generation number
empties the whole table in O(1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: Slots of the int64 parameter vector shared by the kernel and its driver.
P_GEN, P_MODE, P_MAXT, P_NODES, P_MASK = 0, 1, 2, 3, 4
NUM_PARAMS = 5
INF = np.inf


@njit(cache=True)
def _slot0(w0, w1, w2, w3, mask):
    h = w0 * -7046029254386353131
    h ^= w1 * -4658895280553007687
    h ^= w2 * -7723592293110705685
    h ^= w3 * 7109453100751455733
    h ^= (h >> 31) & 0x1FFFFFFFF
    h *= -4658895280553007687
    h ^= (h >> 29) & 0x7FFFFFFFF
    return h & mask


# A table entry is one 64-byte row of TT (int64) / TF (the same memory as float64):
# 4 key words, the generation, the best lead (relative), and the bounds [lo, hi).
T_GEN, T_MOVE, T_LO, T_HI = 4, 5, 6, 7
ENTRY = 8


@njit(cache=True, inline="always")
def tt_find(P, TT, w0, w1, w2, w3):
    """Slot holding this key in the current generation, or -1."""
    mask = P[P_MASK]
    gen = P[P_GEN]
    base = _slot0(w0, w1, w2, w3, mask)
    for j in range(8):
        i = (base + j) & mask
        if TT[i, T_GEN] != gen:
            return -1
        if TT[i, 0] == w0 and TT[i, 1] == w1 and TT[i, 2] == w2 and TT[i, 3] == w3:
            return i
    return -1


@njit(cache=True, inline="always")
def tt_store(P, TT, TF, w0, w1, w2, w3, lo, hi_excl, move):
    """Tighten the bounds [lo, hi_excl) kept for this key (a new slot if absent)."""
    mask = P[P_MASK]
    gen = P[P_GEN]
    base = _slot0(w0, w1, w2, w3, mask)
    slot = -1
    for j in range(8):
        i = (base + j) & mask
        if TT[i, T_GEN] != gen:
            break
        if TT[i, 0] == w0 and TT[i, 1] == w1 and TT[i, 2] == w2 and TT[i, 3] == w3:
            slot = i
            break
    if slot < 0:  # a free slot of the probe run, else replace the home slot
        slot = i if TT[i, T_GEN] != gen else base
        TT[slot, 0] = w0
        TT[slot, 1] = w1
        TT[slot, 2] = w2
        TT[slot, 3] = w3
        TT[slot, T_GEN] = gen
        TT[slot, T_MOVE] = -1
        TF[slot, T_LO] = -INF
        TF[slot, T_HI] = INF
    if lo > TF[slot, T_LO]:
        TF[slot, T_LO] = lo
    if hi_excl < TF[slot, T_HI]:
        TF[slot, T_HI] = hi_excl
    if move >= 0:
        TT[slot, T_MOVE] = move
