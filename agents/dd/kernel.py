"""The numba kernel of the double-dummy search: one zero-window (boolean) search.

`search` answers one yes/no question about a position with every hand visible:

- mode `TRICKS`: can the MAX team take at least `need` of the remaining tricks?
- mode `SCORE`: can the MAX team force a final outcome whose value `VAL[acc]` is at
  least `thr`? (`acc` is a canonical index of the tricks each relevant seat has taken,
  see `agents.dd.objective`.)

The driver (`agents.dd.solver`) finds exact values by bisection over such questions,
MTD style; bounds learnt by one question are reused by the next through the table.

Representation: `H[seat, suit]` 13-bit masks of the cards held (bit = rank, 0 = '2');
`TP[suit]` the cards of the trick in progress; a card is `suit * 13 + rank` as in
`spades_env.cards`. The rules are RULES.md §3: follow suit when you can; spades may not
be led until broken unless the leader holds only spades; any spade played breaks them;
the highest spade wins the trick, else the highest card of the suit led.

Speed-ups, none of which changes a result:
- equivalent cards: a seat's cards that are adjacent among the cards still in play
  (hands and the trick on the table) win and lose the same tricks, so one is tried;
- transposition table at trick starts, keyed on *relative* ranks (the remaining cards
  of each suit renumbered from the top), the leader, broken, and `acc` in SCORE mode;
  entries hold lower / upper bounds, so they serve every threshold;
- quick tricks (TRICKS mode): top cards the leader can cash at once, capped where an
  opponent could ruff, bound the result before any search;
- SCORE mode: the least and greatest value reachable from `acc` with `r` tricks left
  (`FMIN`, `FMAX`) decide a question without search when they can;
- move ordering: the table's best lead first, then cashing masters, leading low to a
  partner's master, winning cheaply when an opponent is winning, and playing low.
"""

from __future__ import annotations

import numpy as np
from numba import njit

TRICKS, SCORE = 0, 1
#: Slots of the int64 parameter vector shared with the driver.
P_GEN, P_MODE, P_MAXT, P_NODES, P_MASK = 0, 1, 2, 3, 4
NUM_PARAMS = 5
MAX_DEPTH = 56  # 52 cards + slack: one row of move buffers per card played
INF = np.inf

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


@njit(cache=True, inline="always")
def pext13(x, m):
    """The bits of the 13-bit x at the set positions of m, packed into the low bits."""
    lo = m & 127
    return PEXT7[(x & 127) * 128 + lo] | (PEXT7[(x >> 7) * 128 + (m >> 7)] << POP[lo])


@njit(cache=True, inline="always")
def pdep13(x, m):
    """The low bits of x spread to the set positions of the 13-bit m (pext's inverse)."""
    lo = m & 127
    n = POP[lo]
    return PDEP7[(x & ((1 << n) - 1)) * 128 + lo] | (PDEP7[(x >> n) * 128 + (m >> 7)] << 7)


@njit(cache=True, inline="always")
def hand_size(H, seat):
    return POP[H[seat, 0]] + POP[H[seat, 1]] + POP[H[seat, 2]] + POP[H[seat, 3]]


@njit(cache=True, inline="always")
def quick_tricks(H, leader, broken):
    """Tricks the leader can surely cash from the top, keeping the lead (a lower bound).

    Only the leader's cards above every other card of the suit count (a partner's
    higher card would take the lead away), capped where an opponent could ruff, and
    where a partner holding spades could run out of the suit and be made to ruff.
    """
    o1 = (leader + 1) & 3
    o2 = (leader + 3) & 3
    pa = leader ^ 2
    opp_trumps = H[o1, 0] != 0 or H[o2, 0] != 0
    side = (H[leader, 1] | H[leader, 2] | H[leader, 3]) != 0
    best = 0
    total = 0
    for s in range(4):
        mine = H[leader, s]
        if mine == 0:
            continue
        if s == 0 and not broken and side:
            continue  # RULES.md §3: no spade lead before spades are broken
        w = POP[mine >> (HIGH[H[o1, s] | H[o2, s] | H[pa, s]] + 1)]
        keep = w  # cashed without the partner ever ruffing: the lead stays with me
        if s != 0:
            # an opponent holding spades ruffs once it runs out of the suit
            if H[o1, 0] != 0 and POP[H[o1, s]] < w:
                w = POP[H[o1, s]]
            if H[o2, 0] != 0 and POP[H[o2, s]] < w:
                w = POP[H[o2, s]]
            keep = w
            if H[pa, 0] != 0:
                keep = min(w, POP[H[pa, s]])
                w = min(w, POP[H[pa, s]] + 1)  # a forced ruff still wins, then leads
        total += keep
        if w > best:
            best = w
    # With no spade among the opponents nothing can be ruffed: every master cashes.
    return best if opp_trumps else max(best, total)


@njit(cache=True, inline="always")
def trick_bounds(H, leader, broken, maxt, r):
    """(lo, hi): bounds on the tricks MAX takes from a trick start, without search.

    - quick tricks of the leader bound its own team from below;
    - a seat's spades above every spade of the other team each win a trick whenever
      they are played, and every card is played by the end (RULES.md §3).
    """
    lo = 0
    hi = r
    q = quick_tricks(H, leader, broken)
    if (leader & 1) == maxt:
        lo = q
    else:
        hi = r - q
    for seat in range(4):
        top_other = HIGH[H[(seat + 1) & 3, 0] | H[(seat + 3) & 3, 0]]
        sure = POP[H[seat, 0] >> (top_other + 1)]
        if (seat & 1) == maxt:
            if sure > lo:
                lo = sure
        elif r - sure < hi:
            hi = r - sure
    return lo, hi


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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _add_runs(mine, present, s, MV, d, n):
    """Append one card per run of `mine` among `present` (the run's lowest card)."""
    packed = pext13(mine, present)
    reps = pdep13(packed & ~(packed << 1), present)
    while reps:
        low = reps & -reps
        MV[d, n] = s * 13 + HIGH[low]
        n += 1
        reps ^= low
    return n


@njit(cache=True, inline="always")
def gen_moves(H, TP, seat, k, lead, broken, MV, d):
    """Legal cards of `seat` (RULES.md §3), one per class of equivalent cards."""
    n = 0
    if k > 0 and H[seat, lead] != 0:
        s = lead
        present = H[0, s] | H[1, s] | H[2, s] | H[3, s] | TP[s]
        return _add_runs(H[seat, s], present, s, MV, d, n)
    side = (H[seat, 1] | H[seat, 2] | H[seat, 3]) != 0
    for s in range(4):
        if H[seat, s] == 0:
            continue
        if k == 0 and s == 0 and not broken and side:
            continue  # RULES.md §3: spades may not be led until broken
        present = H[0, s] | H[1, s] | H[2, s] | H[3, s] | TP[s]
        n = _add_runs(H[seat, s], present, s, MV, d, n)
    return n


@njit(cache=True, inline="always")
def order_moves(H, seat, k, lead, wseat, wstr, MV, SC, d, n, hint):
    """Sort the moves of row `d` best-first by a cheap heuristic score."""
    partner = seat ^ 2
    o1 = (seat + 1) & 3
    o2 = (seat + 3) & 3
    for i in range(n):
        c = MV[d, i]
        s = c // 13
        rk = c - s * 13
        if k == 0:
            present = H[0, s] | H[1, s] | H[2, s] | H[3, s]
            top = HIGH[present]
            if c == hint:
                sc = 10000
            elif (present >> (rk + 1)) & ~H[seat, s] == 0:  # my run holds the top card
                ruff = s != 0 and (
                    (H[o1, s] == 0 and H[o1, 0] != 0) or (H[o2, s] == 0 and H[o2, 0] != 0)
                )
                sc = 1000 + rk if ruff else 3000 + rk
            elif HIGH[H[partner, s]] == top:
                sc = 2000 - rk
            else:
                sc = 500 - rk
        else:
            st = 32 + rk if s == 0 else (rk if s == lead else -1)
            cost = st if st >= 0 else rk
            if (wseat & 1) == (seat & 1):
                sc = 500 - cost  # partner is winning: play low
            elif st > wstr:
                sc = 2000 - st  # win as cheaply as possible
            else:
                sc = 500 - cost
        SC[d, i] = sc
    for i in range(1, n):  # insertion sort, descending
        c = MV[d, i]
        sc = SC[d, i]
        j = i - 1
        while j >= 0 and SC[d, j] < sc:
            MV[d, j + 1] = MV[d, j]
            SC[d, j + 1] = SC[d, j]
            j -= 1
        MV[d, j + 1] = c
        SC[d, j + 1] = sc


# Frame fields of the explicit search stack (numba cannot reload a cached recursive
# function safely, so the search keeps its own stack: one row per card played).
F_K, F_LEADER, F_LEAD, F_WSEAT, F_WSTR, F_BROKEN, F_NEED, F_ACC = 0, 1, 2, 3, 4, 5, 6, 7
F_N, F_I, F_MAXING, F_R, F_SEAT, F_HINT, F_RESULT, F_CUT = 8, 9, 10, 11, 12, 13, 14, 15
F_W0, F_TP0, F_H0 = 16, 20, 24  # 4 key words, 4 saved trick masks, 16 saved hands
NUM_FIELDS = 40


@njit(cache=True, inline="always")
def _save_hands(FR, d, H):
    for seat in range(4):
        for s in range(4):
            FR[d, F_H0 + 4 * seat + s] = H[seat, s]


@njit(cache=True, inline="always")
def _restore_hands(FR, d, H):
    for seat in range(4):
        for s in range(4):
            H[seat, s] = FR[d, F_H0 + 4 * seat + s]


@njit(cache=True, inline="always")
def _enter(FR, d, H, TP, thr, P, COEF, MV, SC, TT, TF, VAL, FMIN, FMAX):
    """Start node `d`: 1 / 0 if decided without search, else -1 with its moves ready."""
    P[P_NODES] += 1
    mode = P[P_MODE]
    maxt = P[P_MAXT]
    k = FR[d, F_K]
    leader = FR[d, F_LEADER]
    broken = FR[d, F_BROKEN] != 0
    need = FR[d, F_NEED]
    acc = FR[d, F_ACC]
    hint = -1
    if k == 0:
        r = hand_size(H, leader)
        FR[d, F_R] = r
        if mode == TRICKS:
            if need <= 0:
                return 1
            if need > r:
                return 0
            if r == 1:  # the last trick plays itself
                return 1 if (last_trick_winner(H, leader) & 1) == maxt else 0
            lo, hi = trick_bounds(H, leader, broken, maxt, r)
            if lo >= need:
                return 1
            if hi < need:
                return 0
        else:
            if r == 0:
                return 1 if VAL[acc] >= thr else 0
            if r == 1:
                return 1 if VAL[acc + COEF[last_trick_winner(H, leader)]] >= thr else 0
            if FMIN[acc, r] >= thr:
                return 1
            if FMAX[acc, r] < thr:
                return 0
        # From here on the trick is searched in relative ranks; the parent's hands
        # come back when this node is left (`_restore_hands`).
        _save_hands(FR, d, H)
        canonicalize(H)
        w0, w1, w2, w3 = key_words(H, leader, broken, mode, acc)
        FR[d, F_W0] = w0
        FR[d, F_W0 + 1] = w1
        FR[d, F_W0 + 2] = w2
        FR[d, F_W0 + 3] = w3
        slot = tt_find(P, TT, w0, w1, w2, w3)
        if slot >= 0:
            lo = TF[slot, T_LO]
            hx = TF[slot, T_HI]
            if mode == TRICKS:
                if maxt == 1:  # stored bounds are team 0's tricks from here
                    lo, hx = r - hx + 1, r - lo + 1
                if lo >= need:
                    _restore_hands(FR, d, H)
                    return 1
                if hx <= need:
                    _restore_hands(FR, d, H)
                    return 0
            else:
                if lo >= thr:
                    _restore_hands(FR, d, H)
                    return 1
                if hx <= thr:
                    _restore_hands(FR, d, H)
                    return 0
            hint = TT[slot, T_MOVE]
    seat = (leader + k) & 3
    FR[d, F_SEAT] = seat
    FR[d, F_HINT] = hint
    n = gen_moves(H, TP, seat, k, FR[d, F_LEAD], broken, MV, d)
    order_moves(H, seat, k, FR[d, F_LEAD], FR[d, F_WSEAT], FR[d, F_WSTR], MV, SC, d, n, hint)
    FR[d, F_N] = n
    FR[d, F_I] = 0
    maxing = 1 if (seat & 1) == maxt else 0
    FR[d, F_MAXING] = maxing
    FR[d, F_RESULT] = 1 - maxing
    FR[d, F_CUT] = -1
    return -1


@njit(cache=True, inline="always")
def _apply(FR, d, H, TP, COEF, maxt, c):
    """Play card `c` at node `d` and fill node `d + 1`."""
    k = FR[d, F_K]
    seat = FR[d, F_SEAT]
    s = c // 13
    rk = c - s * 13
    bit = 1 << rk
    lead = FR[d, F_LEAD]
    wseat = FR[d, F_WSEAT]
    wstr = FR[d, F_WSTR]
    if k == 0:
        lead = s
        wseat = seat
        wstr = 32 + rk if s == 0 else rk
    else:
        st = 32 + rk if s == 0 else (rk if s == lead else -1)
        if st > wstr:
            wseat = seat
            wstr = st
    H[seat, s] ^= bit
    e = d + 1
    FR[e, F_BROKEN] = 1 if (FR[d, F_BROKEN] != 0 or s == 0) else 0
    if k == 3:
        for j in range(4):
            FR[d, F_TP0 + j] = TP[j]
            TP[j] = 0
        FR[e, F_K] = 0
        FR[e, F_LEADER] = wseat
        FR[e, F_LEAD] = -1
        FR[e, F_WSEAT] = -1
        FR[e, F_WSTR] = -1
        FR[e, F_NEED] = FR[d, F_NEED] - (1 if (wseat & 1) == maxt else 0)
        FR[e, F_ACC] = FR[d, F_ACC] + COEF[wseat]
    else:
        TP[s] ^= bit
        FR[e, F_K] = k + 1
        FR[e, F_LEADER] = FR[d, F_LEADER]
        FR[e, F_LEAD] = lead
        FR[e, F_WSEAT] = wseat
        FR[e, F_WSTR] = wstr
        FR[e, F_NEED] = FR[d, F_NEED]
        FR[e, F_ACC] = FR[d, F_ACC]


@njit(cache=True, inline="always")
def _undo(FR, d, H, TP, c):
    s = c // 13
    bit = 1 << (c - s * 13)
    H[FR[d, F_SEAT], s] ^= bit
    if FR[d, F_K] == 3:
        for j in range(4):
            TP[j] = FR[d, F_TP0 + j]
    else:
        TP[s] ^= bit


@njit(cache=True, inline="always")
def _finish(FR, d, H, thr, P, TT, TF):
    """Node `d` is decided: keep what it proved in the table (trick starts only)."""
    result = FR[d, F_RESULT] != 0
    if FR[d, F_K] != 0:
        return result
    _restore_hands(FR, d, H)
    maxt = P[P_MAXT]
    move = FR[d, F_CUT]  # in relative ranks, like the key
    r = FR[d, F_R]
    need = FR[d, F_NEED]
    if P[P_MODE] == TRICKS:
        if result == (maxt == 0):  # team 0 reached >= need / team 1 held it below
            lo, hx = (need, INF) if maxt == 0 else (r - need + 1, INF)
        else:
            lo, hx = (-INF, need) if maxt == 0 else (-INF, r - need + 1)
    else:
        lo, hx = (thr, INF) if result else (-INF, thr)
    tt_store(
        P, TT, TF, FR[d, F_W0], FR[d, F_W0 + 1], FR[d, F_W0 + 2],
        FR[d, F_W0 + 3], lo, hx, move,
    )  # fmt: skip
    return result


@njit(cache=True)
def search(
    H, TP, k, leader, lead, wseat, wstr, broken, need, acc, thr,
    P, COEF, FR, MV, SC, TT, TF, VAL, FMIN, FMAX,
):  # fmt: skip
    """Can the MAX team reach the goal (see the module docstring) from this position?

    k: cards already in the current trick (led by `leader`, suit `lead`, best card so
    far of `wseat` with strength `wstr`). need: tricks MAX still needs (TRICKS mode).
    acc: canonical tricks index (SCORE mode). FR: (MAX_DEPTH, NUM_FIELDS) stack.
    """
    maxt = P[P_MAXT]
    FR[0, F_K] = k
    FR[0, F_LEADER] = leader
    FR[0, F_LEAD] = lead
    FR[0, F_WSEAT] = wseat
    FR[0, F_WSTR] = wstr
    FR[0, F_BROKEN] = 1 if broken else 0
    FR[0, F_NEED] = need
    FR[0, F_ACC] = acc
    d = 0
    ret = _enter(FR, 0, H, TP, thr, P, COEF, MV, SC, TT, TF, VAL, FMIN, FMAX)
    if ret >= 0:
        return ret == 1
    while True:
        if ret >= 0:  # a child of node d answered: take the move back, maybe cut
            c = MV[d, FR[d, F_I]]
            _undo(FR, d, H, TP, c)
            if ret == FR[d, F_MAXING]:
                FR[d, F_RESULT] = ret
                FR[d, F_CUT] = c
                FR[d, F_I] = FR[d, F_N]
            else:
                FR[d, F_I] += 1
        if FR[d, F_I] < FR[d, F_N]:  # try the next move
            _apply(FR, d, H, TP, COEF, maxt, MV[d, FR[d, F_I]])
            d += 1
            ret = _enter(FR, d, H, TP, thr, P, COEF, MV, SC, TT, TF, VAL, FMIN, FMAX)
            if ret < 0:
                continue
            d -= 1
            continue
        ret = 1 if _finish(FR, d, H, thr, P, TT, TF) else 0
        if d == 0:
            return ret == 1
        d -= 1
