"""The transposition table of the double-dummy kernel (numba): partition search.

An entry is a fact about every trick start that looks the same where it mattered: the
same leader, broken state, SCORE-mode index and suit length of every hand, and the same
holders of the *relevant* cards (in relative ranks, see `bits.wr_to_rel`). It keeps a
lower and an upper bound of the searched quantity, so it serves every threshold; one
position may match several entries (different relevant cards, different bounds).

Open addressing: entries of one (lengths, context) key live in a window of `WINDOW`
slots from its home slot. A generation number empties the whole table in O(1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.numba_cache import ensure_fresh

ensure_fresh()  # agents/numba_cache.py: no stale kernels from the on-disk cache

#: Slots of the int64 parameter vector shared by the kernel and its driver.
P_GEN, P_MODE, P_MAXT, P_NODES, P_MASK, P_HITS, P_STORES = 0, 1, 2, 3, 4, 5, 6
NUM_PARAMS = 7
INF = np.inf
WINDOW = 16

# A row of TT (int64) / TF (the same memory as float64): the lengths word, the context
# word with the generation above bit GEN_SHIFT, the relevance mask, the 4 masked seat words,
# the best lead (relative card) and the bounds [lo, hi).
T_LENS, T_CTX, T_MASK, T_W0, T_MOVE, T_LO, T_HI = 0, 1, 2, 3, 7, 8, 9
ENTRY = 10
GEN_SHIFT = 24  # above the context: leader 2 bits, broken, mode, acc < 14**4


@njit(cache=True, inline="always")
def _home(lens, ctx, mask):
    h = lens * -7046029254386353131
    h ^= ctx * -4658895280553007687
    h ^= (h >> 31) & 0x1FFFFFFFF
    h *= -7723592293110705685
    h ^= (h >> 29) & 0x7FFFFFFFF
    return h & mask


@njit(cache=True, inline="always")
def tt_probe(P, TT, TF, lens, ctx, w0, w1, w2, w3, lo_need, hi_need):
    """(slot, hint): an entry matching this position whose bounds reach `lo_need` (a lower
    bound >= it) or fall to `hi_need` (an upper bound <= it), or slot -1; `hint` is the
    best lead kept by a matching entry (relative card), or -1."""
    cg = ctx | (P[P_GEN] << GEN_SHIFT)
    base = _home(lens, ctx, P[P_MASK])
    hint = -1
    for j in range(WINDOW):
        i = (base + j) & P[P_MASK]
        if TT[i, T_CTX] >> GEN_SHIFT != P[P_GEN]:
            return -1, hint
        if TT[i, T_CTX] != cg or TT[i, T_LENS] != lens:
            continue
        m = TT[i, T_MASK]
        if (
            (w0 & m) == TT[i, T_W0]
            and (w1 & m) == TT[i, T_W0 + 1]
            and (w2 & m) == TT[i, T_W0 + 2]
            and (w3 & m) == TT[i, T_W0 + 3]
        ):
            if TF[i, T_LO] >= lo_need or TF[i, T_HI] <= hi_need:
                return i, hint
            if TT[i, T_MOVE] >= 0:
                hint = TT[i, T_MOVE]
    return -1, hint


@njit(cache=True, inline="always")
def tt_store(P, TT, TF, lens, ctx, w0, w1, w2, w3, m, lo, hi_excl, move):
    """Tighten the bounds [lo, hi_excl) kept for this pattern (a new entry if absent)."""
    cg = ctx | (P[P_GEN] << GEN_SHIFT)
    w0 &= m
    w1 &= m
    w2 &= m
    w3 &= m
    base = _home(lens, ctx, P[P_MASK])
    slot = -1
    for j in range(WINDOW):
        i = (base + j) & P[P_MASK]
        if TT[i, T_CTX] >> GEN_SHIFT != P[P_GEN]:
            slot = i
            break
        if (
            TT[i, T_CTX] == cg
            and TT[i, T_LENS] == lens
            and TT[i, T_MASK] == m
            and TT[i, T_W0] == w0
            and TT[i, T_W0 + 1] == w1
            and TT[i, T_W0 + 2] == w2
            and TT[i, T_W0 + 3] == w3
        ):
            if lo > TF[i, T_LO]:
                TF[i, T_LO] = lo
            if hi_excl < TF[i, T_HI]:
                TF[i, T_HI] = hi_excl
            if move >= 0:
                TT[i, T_MOVE] = move
            return
    if slot < 0:  # the window is full: replace one of its entries
        slot = (base + (P[P_STORES] & (WINDOW - 1))) & P[P_MASK]
    P[P_STORES] += 1
    TT[slot, T_LENS] = lens
    TT[slot, T_CTX] = cg
    TT[slot, T_MASK] = m
    TT[slot, T_W0] = w0
    TT[slot, T_W0 + 1] = w1
    TT[slot, T_W0 + 2] = w2
    TT[slot, T_W0 + 3] = w3
    TT[slot, T_MOVE] = move
    TF[slot, T_LO] = lo
    TF[slot, T_HI] = hi_excl
