"""Bounds without search, move generation and move ordering of the double-dummy kernel."""

from __future__ import annotations

import numpy as np
from numba import njit

from agents.dd.bits import high, pdep13, pext13, pop
from spades_env.cards import SPADES
from spades_env.core.rule_functions import card_strength, legal_cards


@njit(cache=True, inline="always")
def _nth_high(m, n):
    """Rank of the `n`-th highest card of the 13-bit mask `m` (n >= 1, n <= pop(m))."""
    for _ in range(n - 1):
        m ^= 1 << high(m)
    return high(m)


@njit(cache=True, inline="always")
def _top_n(m, n):
    """The top `n` cards of the 13-bit mask `m` (n >= 1)."""
    return m & ~((1 << _nth_high(m, n)) - 1)


@njit(cache=True, inline="always")
def _cash(H, ld, broken, skip):
    """(keep, extra, wr): tricks seat `ld` cashes from the top while keeping the lead, the
    most one more suit adds before the lead passes to its partner, and the cards used.

    Only suits `ld` may lead now count (RULES.md §3, the rules core's `legal_cards`: no
    spade lead before spades are broken unless only spades are held), and only `ld`'s
    cards above every other card of a suit (a partner's higher card would take the lead
    away), capped where an opponent holding spades runs out of the suit and could ruff,
    and where a partner holding spades runs out of it (a ruff by the partner still wins
    the trick, then the partner leads). Cashing one suit leaves the others' lengths
    alone, since everyone follows, so the suits add up.
    """
    o1 = (ld + 1) & 3
    o2 = (ld + 3) & 3
    pa = ld ^ 2
    held = H[ld, 0] | (H[ld, 1] << 13) | (H[ld, 2] << 26) | (H[ld, 3] << 39)
    leadable = np.int64(legal_cards(held, 0, -1, broken, SPADES, False))
    keep_sum = 0
    extra = 0
    wr = 0
    for s in range(4):
        mine = H[ld, s]
        if mine == 0 or s == skip or (leadable >> (13 * s)) & 0x1FFF == 0:
            continue
        top = high(H[o1, s] | H[o2, s] | H[pa, s]) + 1
        w = pop(mine >> top)
        if w == 0:
            continue
        if s != 0:
            if H[o1, 0] != 0 and pop(H[o1, s]) < w:
                w = pop(H[o1, s])
            if H[o2, 0] != 0 and pop(H[o2, s]) < w:
                w = pop(H[o2, s])
        keep = w
        if s != 0 and H[pa, 0] != 0:
            keep = min(w, pop(H[pa, s]))
            w = min(w, pop(H[pa, s]) + 1)
        keep_sum += keep
        if w - keep > extra:
            extra = w - keep
        if w:  # the bound holds wherever `ld` keeps its top `w` cards of the suit
            wr |= _top_n(mine, w) << (13 * s)
    return keep_sum, extra, wr


@njit(cache=True, inline="always")
def quick_tricks(H, leader, broken):
    """(tricks, wr): tricks the leader's team surely takes from the top (a lower bound),
    and the cards the bound rests on (winning ranks, absolute).

    The leader cashes its masters (`_cash`); or it leads a low card to a side suit whose
    top card its partner holds, where no opponent can ruff that first round, and the
    partner, now on lead, cashes its own masters in the other suits.
    """
    keep, extra, wr = _cash(H, leader, broken, -1)
    best = keep + extra
    pa = leader ^ 2
    o1 = (leader + 1) & 3
    o2 = (leader + 3) & 3
    for s in range(1, 4):
        if H[leader, s] == 0 or H[pa, s] == 0:
            continue
        if high(H[pa, s]) < high(H[leader, s] | H[o1, s] | H[o2, s]):
            continue
        if (H[o1, s] == 0 and H[o1, 0] != 0) or (H[o2, s] == 0 and H[o2, 0] != 0):
            continue  # an opponent could ruff the entry
        k2, e2, w2 = _cash(H, pa, broken, s)
        if 1 + k2 + e2 > best:
            best = 1 + k2 + e2
            wr = w2 | ((1 << high(H[pa, s])) << (13 * s))
    return best, wr


@njit(cache=True, inline="always")
def spade_tricks(mine, theirs, want):
    """(sure, low): tricks a seat holding spades `mine` surely wins for its team, against
    the other team's spades `theirs`, counted up to `want`, and the lowest of the
    seat's spades the count rests on (a 13-bit mask of that one card; 0 if none).

    Soundness (RULES.md §3: the highest spade in a trick wins it; every card is played
    by the end of the hand, one per trick per seat). The seat's spades lie in distinct
    tricks. Such a trick goes to the seat's team unless a higher spade of the other team
    lies in it (a higher spade of the partner keeps it in the team); one spade of the
    other team sits in one trick only, so at most M of the seat's spades are beaten,
    where M is the largest matching of the seat's spades to distinct higher spades of
    the other team. Whoever leads, whatever is broken or void, and whether a card is
    discarded or not, the team takes at least (spades held) - M tricks. Counting the
    seat's top k spades only gives k - M_k, which grows with k; the greedy matching
    (the seat's spades from the top, each to the highest other spade still unused, if
    that one is higher) is largest. Only the seat's top k spades and the other team's
    spades above the k-th matter, so the bound holds wherever those cards (every spade
    from the k-th down, in relative ranks) have the same holders.
    """
    sure = 0
    low = 0
    m = mine
    o = theirs
    while m and sure < want:
        x = high(m)
        m ^= 1 << x
        low = 1 << x
        if o and high(o) > x:
            o ^= 1 << high(o)  # beaten by the highest unused spade of the other team
        else:
            sure += 1
    return sure, low


@njit(cache=True, inline="always")
def spade_bounds(H, maxt, r, want_lo, want_hi):
    """(lo, hi, wlo, whi): bounds on the tricks MAX takes from a trick start that hold
    for every play of the hand (`spade_tricks` of each seat), and the cards each rests
    on. Sure tricks are counted up to `want_lo` for MAX and `want_hi` for the other team:
    a yes/no question needs no more, and fewer counted cards make the proof hold for more
    positions."""
    lo = 0
    hi = r
    wlo = 0
    whi = 0
    for seat in range(4):
        if H[seat, 0] == 0:
            continue
        theirs = H[(seat + 1) & 3, 0] | H[(seat + 3) & 3, 0]
        if (seat & 1) == maxt:
            sure, low = spade_tricks(H[seat, 0], theirs, want_lo)
            if sure > lo:
                lo = sure
                wlo = low
        else:
            sure, low = spade_tricks(H[seat, 0], theirs, want_hi)
            if r - sure < hi:
                hi = r - sure
                whi = low
    return lo, hi, wlo, whi


@njit(cache=True, inline="always")
def trick_bounds(H, leader, broken, maxt, r, want_lo, want_hi):
    """(lo, hi, wlo, whi): bounds on the tricks MAX can force from a trick start, without
    search, and the cards each rests on (winning ranks, absolute).

    - quick tricks of the leader: its team can force that many (a lower bound of the
      side on lead);
    - `spade_bounds`: each seat's spades that the other team's spades cannot all beat
      win for its team in every play, whichever side is on lead: this is the upper
      bound of the side on lead.
    """
    lo, hi, wlo, whi = spade_bounds(H, maxt, r, want_lo, want_hi)
    q, wq = quick_tricks(H, leader, broken)
    if (leader & 1) == maxt:
        if q > lo:
            lo = q
            wlo = wq
    elif r - q < hi:
        hi = r - q
        whi = wq
    return lo, hi, wlo, whi


@njit(cache=True, inline="always")
def _add_runs(mine, present, s, MV, d, n):
    """Append one card per run of `mine` among `present` (the run's lowest card)."""
    packed = pext13(mine, present)
    reps = pdep13(packed & ~(packed << 1), present)
    while reps:
        low = reps & -reps
        MV[d, n] = s * 13 + high(low)
        n += 1
        reps ^= low
    return n


@njit(cache=True, inline="always")
def gen_moves(H, TP, seat, k, lead, broken, MV, d):
    """Legal cards of `seat` (RULES.md §3, the rules core's `legal_cards`), one per
    class of equivalent cards."""
    held = H[seat, 0] | (H[seat, 1] << 13) | (H[seat, 2] << 26) | (H[seat, 3] << 39)
    legal = np.int64(legal_cards(held, k, lead, broken, SPADES, False))
    n = 0
    for s in range(4):
        mine = (legal >> (13 * s)) & 0x1FFF
        if mine == 0:
            continue
        present = H[0, s] | H[1, s] | H[2, s] | H[3, s] | TP[s]
        n = _add_runs(mine, present, s, MV, d, n)
    return n


@njit(cache=True, inline="always")
def _later_best(H, seat, k, lead):
    """The strongest card an opponent still to play in this trick could play (RULES.md
    §3 strength: 32 + rank for a spade, the rank in the suit led), or -1."""
    best = -1
    for j in range(1, 4 - k):
        o = (seat + j) & 3
        if (o & 1) == (seat & 1):
            continue
        if H[o, lead]:
            top = card_strength(13 * lead + high(H[o, lead]), lead, SPADES)
        elif H[o, SPADES]:
            top = card_strength(13 * SPADES + high(H[o, SPADES]), lead, SPADES)
        else:
            continue
        if top > best:
            best = top
    return best


@njit(cache=True, inline="always")
def _lead_score(H, seat, c, hint, killer):
    """Heuristic worth of leading `c`: the table's best lead, then the last lead that cut
    at this trick number (a killer: one of the run `c` stands for), then cash masters,
    reach partner's masters, give partner a ruff, stay out of the opponents' ruffs, and
    otherwise lead low."""
    s = c // 13
    rk = c - s * 13
    if c == hint:
        return 10000
    if killer >= 0 and killer // 13 == s and (H[seat, s] >> (killer - 13 * s)) & 1:
        kr = killer - 13 * s
        lo, hi = (rk, kr) if rk < kr else (kr, rk)
        between = ((1 << hi) - 1) & ~((1 << (lo + 1)) - 1)
        others = (H[0, s] | H[1, s] | H[2, s] | H[3, s]) & ~H[seat, s]
        if others & between == 0:
            return 9000
    partner = seat ^ 2
    o1 = (seat + 1) & 3
    o2 = (seat + 3) & 3
    present = H[0, s] | H[1, s] | H[2, s] | H[3, s]
    top = high(present)
    ruff = s != 0 and ((H[o1, s] == 0 and H[o1, 0] != 0) or (H[o2, s] == 0 and H[o2, 0] != 0))
    if (present >> (rk + 1)) & ~H[seat, s] == 0:  # my run holds the top card
        return 1000 + rk if ruff else 3000 + rk
    if high(H[partner, s]) == top:
        return 800 - rk if ruff else 2000 - rk
    if s != 0 and H[partner, s] == 0 and H[partner, 0] != 0 and not ruff:
        return 1500 - rk  # partner ruffs
    return 300 - rk if ruff else 500 - rk


@njit(cache=True, inline="always")
def _follow_score(k, c, lead, wseat, wstr, seat, later):
    """Heuristic worth of playing `c` to a trick (`later`: see `_later_best`): let a
    partner's sure winner stand, else win as cheaply as is safe, else play low."""
    s = c // 13
    rk = c - s * 13
    st = card_strength(c, lead, SPADES)
    cost = st if st >= 0 else rk
    if (wseat & 1) == (seat & 1) and later < wstr:
        return 500 - cost  # partner wins the trick anyway: play low
    if st > wstr:
        if later < st:
            return 2000 - st  # a sure win: the cheapest one first
        return 1000 - st if k == 2 else 400 - st  # 3rd hand high, 2nd hand low
    return 500 - cost


@njit(cache=True, inline="always")
def order_moves(H, seat, k, lead, wseat, wstr, MV, SC, d, n, hint, killer):
    """Sort the moves of row `d` best-first by a cheap heuristic score."""
    if n < 2:
        return
    later = _later_best(H, seat, k, lead) if k > 0 else -1
    for i in range(n):
        c = MV[d, i]
        if k == 0:
            SC[d, i] = _lead_score(H, seat, c, hint, killer)
        else:
            SC[d, i] = _follow_score(k, c, lead, wseat, wstr, seat, later)
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
