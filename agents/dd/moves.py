"""Bounds without search, move generation and move ordering of the double-dummy kernel."""

from __future__ import annotations

from numba import njit

from agents.dd.bits import HIGH, POP, pdep13, pext13


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
