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


@njit(cache=True)
def hand_size(H, seat):
    return POP[H[seat, 0]] + POP[H[seat, 1]] + POP[H[seat, 2]] + POP[H[seat, 3]]


@njit(cache=True)
def quick_tricks(H, leader, broken):
    """Tricks the leader can surely cash from the top, without help (a lower bound)."""
    o1 = (leader + 1) & 3
    o2 = (leader + 3) & 3
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
        top_opp = HIGH[H[o1, s] | H[o2, s]]
        w = POP[mine >> (top_opp + 1)]  # my cards above every opponent card of the suit
        if s != 0:
            # an opponent holding spades ruffs once it runs out of the suit
            if H[o1, 0] != 0 and POP[H[o1, s]] < w:
                w = POP[H[o1, s]]
            if H[o2, 0] != 0 and POP[H[o2, s]] < w:
                w = POP[H[o2, s]]
        total += w
        if w > best:
            best = w
    # With no spade among the opponents nothing can be ruffed: every master cashes.
    return best if opp_trumps else total


@njit(cache=True)
def canonical_key(H, leader, broken, mode, acc):
    """Four int64 words: each seat's cards in relative ranks, plus leader/broken/acc."""
    w0 = 0
    w1 = 0
    w2 = 0
    w3 = 0
    for s in range(4):
        present = H[0, s] | H[1, s] | H[2, s] | H[3, s]
        pos = 12
        while present:
            b = HIGH[present]
            bit = 1 << b
            cb = 1 << (s * 13 + pos)
            if H[0, s] & bit:
                w0 |= cb
            elif H[1, s] & bit:
                w1 |= cb
            elif H[2, s] & bit:
                w2 |= cb
            else:
                w3 |= cb
            pos -= 1
            present ^= bit
    w0 |= (leader << 52) | (np.int64(broken) << 54) | (mode << 55)
    w1 |= (acc & 4095) << 52
    w2 |= ((acc >> 12) & 4095) << 52
    return w0, w1, w2, w3


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


@njit(cache=True)
def tt_find(P, TK, TG, w0, w1, w2, w3):
    """Slot holding this key in the current generation, or -1."""
    mask = P[P_MASK]
    gen = P[P_GEN]
    base = _slot0(w0, w1, w2, w3, mask)
    for j in range(8):
        i = (base + j) & mask
        if TG[i] != gen:
            return -1
        if TK[i, 0] == w0 and TK[i, 1] == w1 and TK[i, 2] == w2 and TK[i, 3] == w3:
            return i
    return -1


@njit(cache=True)
def tt_store(P, TK, TG, TLO, THI, TMV, w0, w1, w2, w3, lo, hi_excl, move):
    """Tighten the bounds [lo, hi_excl) kept for this key (a new slot if absent)."""
    mask = P[P_MASK]
    gen = P[P_GEN]
    base = _slot0(w0, w1, w2, w3, mask)
    slot = base
    for j in range(8):
        i = (base + j) & mask
        if TG[i] != gen:
            slot = i
            TG[i] = gen
            TK[i, 0] = w0
            TK[i, 1] = w1
            TK[i, 2] = w2
            TK[i, 3] = w3
            TLO[i] = -INF
            THI[i] = INF
            TMV[i] = -1
            break
        if TK[i, 0] == w0 and TK[i, 1] == w1 and TK[i, 2] == w2 and TK[i, 3] == w3:
            slot = i
            break
    else:  # probe run full: replace the home slot
        TK[slot, 0] = w0
        TK[slot, 1] = w1
        TK[slot, 2] = w2
        TK[slot, 3] = w3
        TLO[slot] = -INF
        THI[slot] = INF
        TMV[slot] = -1
    if lo > TLO[slot]:
        TLO[slot] = lo
    if hi_excl < THI[slot]:
        THI[slot] = hi_excl
    if move >= 0:
        TMV[slot] = move


@njit(cache=True)
def to_relative(H, card):
    """A card's relative form: its rank renumbered among the suit's cards still held."""
    s = card // 13
    present = H[0, s] | H[1, s] | H[2, s] | H[3, s]
    return s * 13 + 12 - POP[present >> (card - s * 13 + 1)]


@njit(cache=True)
def _add_runs(mine, present, s, MV, d, n):
    """Append one card per run of `mine` among `present` (the run's lowest card)."""
    prev = False
    while present:
        b = HIGH[present]
        bit = 1 << b
        if mine & bit:
            if prev:
                MV[d, n - 1] = s * 13 + b
            else:
                MV[d, n] = s * 13 + b
                n += 1
            prev = True
        else:
            prev = False
        present ^= bit
    return n


@njit(cache=True)
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


@njit(cache=True)
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
            if hint >= 0 and to_relative(H, c) == hint:
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


@njit(cache=True)
def search(
    H, TP, k, leader, lead, wseat, wstr, broken, need, acc, thr, d,
    P, COEF, MV, SC, TK, TLO, THI, TMV, TG, VAL, FMIN, FMAX,
):  # fmt: skip
    """Can the MAX team reach the goal (see the module docstring) from here?

    k: cards already in the current trick (led by `leader`, suit `lead`, best card so
    far of `wseat` with strength `wstr`). need: tricks MAX still needs (TRICKS mode).
    acc: canonical tricks index (SCORE mode). d: depth, the row of the move buffers.
    """
    P[P_NODES] += 1
    mode = P[P_MODE]
    maxt = P[P_MAXT]
    r = 0
    hint = -1
    w0 = w1 = w2 = w3 = 0
    if k == 0:
        r = hand_size(H, leader)
        if mode == TRICKS:
            if need <= 0:
                return True
            if need > r:
                return False
            q = quick_tricks(H, leader, broken)
            if (leader & 1) == maxt:
                if q >= need:
                    return True
            elif r - q < need:
                return False
        else:
            if r == 0:
                return VAL[acc] >= thr
            if FMIN[acc, r] >= thr:
                return True
            if FMAX[acc, r] < thr:
                return False
        w0, w1, w2, w3 = canonical_key(H, leader, broken, mode, acc)
        slot = tt_find(P, TK, TG, w0, w1, w2, w3)
        if slot >= 0:
            lo = TLO[slot]
            hx = THI[slot]
            if mode == TRICKS:
                if maxt == 1:  # stored bounds are team 0's tricks from here
                    lo, hx = r - hx + 1, r - lo + 1
                if lo >= need:
                    return True
                if hx <= need:
                    return False
            else:
                if lo >= thr:
                    return True
                if hx <= thr:
                    return False
            hint = TMV[slot]
    seat = (leader + k) & 3
    n = gen_moves(H, TP, seat, k, lead, broken, MV, d)
    order_moves(H, seat, k, lead, wseat, wstr, MV, SC, d, n, hint)
    maximizing = (seat & 1) == maxt
    result = not maximizing
    cut = -1
    for i in range(n):
        c = MV[d, i]
        s = c // 13
        rk = c - s * 13
        bit = 1 << rk
        if k == 0:
            nlead = s
            nws = seat
            nwstr = 32 + rk if s == 0 else rk
        else:
            nlead = lead
            st = 32 + rk if s == 0 else (rk if s == lead else -1)
            if st > wstr:
                nws = seat
                nwstr = st
            else:
                nws = wseat
                nwstr = wstr
        nb = broken or s == 0
        H[seat, s] ^= bit
        if k == 3:
            t0, t1, t2, t3 = TP[0], TP[1], TP[2], TP[3]
            TP[0] = 0
            TP[1] = 0
            TP[2] = 0
            TP[3] = 0
            nneed = need - 1 if (nws & 1) == maxt else need
            sub = search(
                H, TP, 0, nws, -1, -1, -1, nb, nneed, acc + COEF[nws], thr, d + 1,
                P, COEF, MV, SC, TK, TLO, THI, TMV, TG, VAL, FMIN, FMAX,
            )  # fmt: skip
            TP[0] = t0
            TP[1] = t1
            TP[2] = t2
            TP[3] = t3
        else:
            TP[s] ^= bit
            sub = search(
                H, TP, k + 1, leader, nlead, nws, nwstr, nb, need, acc, thr, d + 1,
                P, COEF, MV, SC, TK, TLO, THI, TMV, TG, VAL, FMIN, FMAX,
            )  # fmt: skip
            TP[s] ^= bit
        H[seat, s] ^= bit
        if sub == maximizing:
            result = maximizing
            cut = c
            break
    if k == 0:
        move = to_relative(H, cut) if cut >= 0 else -1
        if mode == TRICKS:
            if result == (maxt == 0):  # team 0 reached >= need / team 1 held it below
                lo, hx = (need, INF) if maxt == 0 else (r - need + 1, INF)
            else:
                lo, hx = (-INF, need) if maxt == 0 else (-INF, r - need + 1)
        else:
            lo, hx = (thr, INF) if result else (-INF, thr)
        tt_store(P, TK, TG, TLO, THI, TMV, w0, w1, w2, w3, lo, hx, move)
    return result
