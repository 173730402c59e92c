"""The transposition table of the double-dummy kernel (numba): partition search.

An entry is a fact about every trick start that looks the same where it mattered: the
same leader, broken state, SCORE-mode index and suit length of every hand, and the same
holders of the *relevant* cards (in relative ranks, see `bits.wr_to_rel`). It keeps a
lower and an upper bound of the searched quantity, so it serves every threshold; one
position may match several entries (different relevant cards, different bounds).

Open addressing: entries of one (lengths, context) key live in a window of `WINDOW`
slots from its home slot. One key gathers many entries (every pattern of relevant cards
met under those suit lengths), so the window is wide: with 16 slots most new entries
evicted a live one and the worst deals searched several times more nodes. A probe first
scans `SG`, one int64 a slot (generation, a hash of the key, and the holders of the top
card of every suit the entry's relevant cards touch: partition search keeps a suit's
cards from the top down, so a position with another holder of such a top card cannot
match), and reads the slot itself only on a match of all three. An entry that answers
a probe swaps places with the first entry of its key in the window (move to front), so
the entries a search keeps asking for are met first: on the slowest deals a probe that
found its entry had scanned 65 slots on average, 52 with the swap, and the swaps left a
few percent fewer nodes. A generation number empties the whole table in O(1).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.kernels.compile import ensure_fresh

ensure_fresh()  # agents/kernels/compile.py: no stale kernels from the on-disk cache

#: Slots of the int64 parameter vector shared by the kernel and its driver.
P_GEN, P_MODE, P_MAXT, P_NODES, P_MASK, P_HITS, P_STORES = 0, 1, 2, 3, 4, 5, 6
P_LIMIT = 7  # nodes a search may visit (P_NODES counted from the driver's start), then gives up
P_KILL = 8  # 56 slots: the last lead that cut, per (tricks left, leader), or -1
NUM_PARAMS = P_KILL + 56
INF = np.inf
WINDOW = 256

# A row of TT (int64) / TF (the same memory as float64): the lengths word, the context
# word with the generation above bit GEN_SHIFT, the relevance mask, the 4 masked seat words,
# the best lead (relative card) and the bounds [lo, hi).
T_LENS, T_CTX, T_MASK, T_W0, T_MOVE, T_LO, T_HI = 0, 1, 2, 3, 7, 8, 9
ENTRY = 10
GEN_SHIFT = 24  # above the context: leader 2 bits, broken, mode, acc < 14**4
KEY_MASK = (1 << 36) - 1  # SG: generation (16 bits), key hash (36), suits (4), top holders (8)
#: the 2-bit holder fields of the suits in a 4-bit set
TOPS_OF = np.array([sum(3 << (2 * s) for s in range(4) if u >> s & 1) for u in range(16)])


@njit(cache=True, inline="always")
def _home(lens, ctx, mask):
    h = lens * -7046029254386353131
    h ^= ctx * -4658895280553007687
    h ^= (h >> 31) & 0x1FFFFFFFF
    h *= -7723592293110705685
    h ^= (h >> 29) & 0x7FFFFFFFF
    return h & mask, (h >> 20) & KEY_MASK


@njit(cache=True, inline="always")
def _tops(w0, w1, w2, w3):
    """The holder (2 bits a suit) of every suit's top card, from the relative words."""
    t = 0
    for s in range(4):
        b = 13 * s + 12
        if (w1 >> b) & 1:
            t |= 1 << (2 * s)
        elif (w2 >> b) & 1:
            t |= 2 << (2 * s)
        elif (w3 >> b) & 1:
            t |= 3 << (2 * s)
    return t


@njit(cache=True, inline="always")
def _suits(m):
    """4 bits: the suits a relevance mask touches (each then holds its top card)."""
    u = 0
    for s in range(4):
        if (m >> (13 * s + 12)) & 1:
            u |= 1 << s
    return u


@njit(cache=True, inline="always")
def _sig(gen, key, suits, tops):
    return ((gen & 0xFFFF) << 48) | (key << 12) | (suits << 8) | (tops & TOPS_OF[suits])


@njit(cache=True, inline="always")
def tt_probe(P, TT, TF, SG, lens, ctx, w0, w1, w2, w3, lo_need, hi_need):
    """(slot, hint): an entry matching this position whose bounds reach `lo_need` (a lower
    bound >= it) or fall to `hi_need` (an upper bound <= it), or slot -1; `hint` is the
    best lead kept by a matching entry (relative card), or -1."""
    cg = ctx | (P[P_GEN] << GEN_SHIFT)
    gen = P[P_GEN] & 0xFFFF
    base, key = _home(lens, ctx, P[P_MASK])
    tops = _tops(w0, w1, w2, w3)
    hint = -1
    first = -1  # the first slot of this key's entries met
    mask = P[P_MASK]
    gk = (gen << 48) | (key << 12)  # an entry of this generation and key, in one compare
    for j in range(WINDOW):
        i = (base + j) & mask
        g = SG[i]
        if (g & -4096) != gk:
            if (g >> 48) & 0xFFFF != gen:
                return -1, hint
            continue
        if first < 0:
            first = i
        u = (g >> 8) & 15
        if (tops & TOPS_OF[u]) != (g & 0xFF):
            continue
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
                if i != first:  # move to the front of the key's entries
                    for f in range(ENTRY):
                        x = TT[i, f]
                        TT[i, f] = TT[first, f]
                        TT[first, f] = x
                    x = SG[i]
                    SG[i] = SG[first]
                    SG[first] = x
                return first, hint
            if TT[i, T_MOVE] >= 0:
                hint = TT[i, T_MOVE]
    return -1, hint


@njit(cache=True, inline="always")
def tt_store(P, TT, TF, SG, lens, ctx, w0, w1, w2, w3, m, lo, hi_excl, move):
    """Tighten the bounds [lo, hi_excl) kept for this pattern (a new entry if absent)."""
    cg = ctx | (P[P_GEN] << GEN_SHIFT)
    gen = P[P_GEN] & 0xFFFF
    base, key = _home(lens, ctx, P[P_MASK])
    u = _suits(m)
    sig = _sig(gen, key, u, _tops(w0, w1, w2, w3))
    w0 &= m
    w1 &= m
    w2 &= m
    w3 &= m
    slot = -1
    mask = P[P_MASK]
    for j in range(WINDOW):
        i = (base + j) & mask
        g = SG[i]
        if g != sig:
            if (g >> 48) & 0xFFFF != gen:
                slot = i
                break
            continue
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
        slot = (base + (P[P_STORES] & (WINDOW - 1))) & mask
    P[P_STORES] += 1
    SG[slot] = sig
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
