"""numba card counting of one seat (`agents.card_tracking.Table`) on int64 card masks,
for the heuristic's card play in `agents.heuristic_kernel`.

A decision's scalars are an int64 array `t` indexed by the constants below (`SEAT`,
`HAND`, ...); a list of cards is a mask, in the ascending card order of the Python
lists, and each `min`/`max` with a key keeps Python's tie rule (the first of equal keys
in that order). Spades are trumps (RULES.md §3).
"""

from __future__ import annotations

from agents.search_kernel import (
    _bit_index,
    _jit,
    _popcount,
)
from spades_env.cards import NUM_SUITS, SPADES

_ALL_SUITS = (1 << NUM_SUITS) - 1
_VOID_OTHERS = _ALL_SUITS ^ (1 << SPADES)


@_jit
def _high_bit(x: int) -> int:
    i = -1
    while x:
        i = _bit_index(x & -x)
        x &= x - 1
    return i


@_jit
def _above(c, suit, suit_mask):
    return suit_mask[suit[c]] & ~((2 << c) - 1)


@_jit
def _low(cs, rank, suit):
    """min by (rank, is spade, card)."""
    best, best_k = -1, 1 << 30
    while cs:
        c = _bit_index(cs & -cs)
        cs &= cs - 1
        k = rank[c] * 2 + (suit[c] == SPADES)
        if k < best_k:
            best, best_k = c, k
    return best


@_jit
def _high(cs, rank, suit):
    """max by (rank, is spade, card)."""
    best, best_k = -1, -1
    while cs:
        c = _bit_index(cs & -cs)
        cs &= cs - 1
        k = rank[c] * 2 + (suit[c] == SPADES)
        if k >= best_k:
            best, best_k = c, k
    return best


@_jit
def _side(cs, spade_mask):
    out = cs & ~spade_mask
    return out if out else cs


# the scalars of one decision (a `Table`), by index in the int64 array `t`; the first
# NT_GIVEN are given, the rest `_prepare` derives once per decision
SEAT, HAND, LEGAL, UNSEEN, LEADER, SIZE, LEAD, TRICKS = range(8)
P, TEAMS, PARTNERS, HAND_SIZE, NIL_COUNTS = range(8, 13)
NT_GIVEN = 13
PARTNER, LATER, OPPS, WIN_SEAT, WIN_CARD, HOLD = range(13, 19)  # HOLD + seat: can_hold
NT = HOLD + 8


@_jit
def _prepare(t, trick, voids, strt, suit_mask):
    """Derive the seats and the trick's winner of the decision `t` (in place)."""
    seat, p = t[SEAT], t[P]
    t[PARTNER] = (seat + p // 2) % p if t[PARTNERS] else seat
    later = 0
    for k in range(1, p - t[SIZE]):  # the seats still to play to this trick after me
        later |= 1 << ((seat + k) % p)
    t[LATER] = later
    opps = 0
    for s in range(p):
        if s % t[TEAMS] != seat % t[TEAMS]:
            opps |= 1 << s
    t[OPPS] = opps
    best_seat, best = -1, -1
    for k in range(t[SIZE]):
        s = (t[LEADER] + k) % p
        c = trick[s]
        if best < 0 or strt[c, t[LEAD]] > strt[best, t[LEAD]]:
            best_seat, best = s, c
    t[WIN_SEAT], t[WIN_CARD] = best_seat, best
    for s in range(p):  # unseen cards seat s may hold: none of a suit it showed void in
        mask = t[UNSEEN]
        for k in range(NUM_SUITS):
            if voids[s] >> k & 1:
                mask &= ~suit_mask[k]
        t[HOLD + s] = mask


@_jit
def _partner(t):
    return t[PARTNER]


@_jit
def _later(t):
    """Bit s: seat s is still to play to this trick after me."""
    return t[LATER]


@_jit
def _opponents(t):
    return t[OPPS]


@_jit
def _team_need(t, bids, won, team):
    contract, taken = 0, 0
    for s in range(t[P]):
        if s % t[TEAMS] == team:
            contract += max(bids[s], 0)
            if t[NIL_COUNTS] or bids[s] != 0:
                taken += won[s]
    return contract - taken


@_jit
def _is_nil(bids, won, s):
    return bids[s] == 0 and won[s] == 0


@_jit
def _can_hold(t, voids, seat, suit_mask):
    return t[HOLD + seat]


@_jit
def _is_master(t, c, suit, suit_mask):
    return t[UNSEEN] & _above(c, suit, suit_mask) == 0


@_jit
def _may_ruff(t, voids, seat, s, suit_mask):
    if s == SPADES or _can_hold(t, voids, seat, suit_mask) & suit_mask[SPADES] == 0:
        return False
    if voids[seat] >> s & 1:
        return True
    return _popcount(t[UNSEEN] & suit_mask[s]) <= 1


@_jit
def _winner(t, trick, strt):
    """(seat, card) winning the trick so far; (-1, -1) before the lead."""
    return t[WIN_SEAT], t[WIN_CARD]


@_jit
def _can_beat_later(t, voids, seat, c, lead, suit, suit_mask):
    hold = _can_hold(t, voids, seat, suit_mask)
    if suit[c] == lead and lead != SPADES:
        if hold & _above(c, suit, suit_mask):
            return True
        return _may_ruff(t, voids, seat, lead, suit_mask)
    if suit[c] == SPADES:
        if not hold & _above(c, suit, suit_mask):
            return False
        return lead == SPADES or _may_ruff(t, voids, seat, lead, suit_mask)
    return False


@_jit
def _sure_win(t, trick, voids, c, strt, suit, suit_mask):
    lead = suit[c] if t[SIZE] == 0 else t[LEAD]
    _, best = _winner(t, trick, strt)
    if best >= 0 and not strt[c, lead] > strt[best, lead]:
        return False
    seats = _later(t) & _opponents(t)
    for s in range(t[P]):
        if seats >> s & 1 and _can_beat_later(t, voids, s, c, lead, suit, suit_mask):
            return False
    return True


@_jit
def _beating(t, trick, cs, strt):
    """(the cards of cs that beat the trick's winner, those that do not); when leading
    (all, none)."""
    _, best = _winner(t, trick, strt)
    if best < 0:
        return cs, 0
    win = 0
    bits = cs
    while bits:
        c = _bit_index(bits & -bits)
        bits &= bits - 1
        if strt[c, t[LEAD]] > strt[best, t[LEAD]]:
            win |= 1 << c
    return win, cs & ~win


@_jit
def _higher_out(t, c, suit, suit_mask):
    return _popcount(t[UNSEEN] & _above(c, suit, suit_mask))


@_jit
def _suit_len(t, s, suit_mask):
    return _popcount(t[HAND] & suit_mask[s])


@_jit
def _max_danger(t, cs, rank, suit, suit_mask):
    """max by danger_key: (-higher_out, rank)."""
    best, best_k = -1, -(1 << 30)
    while cs:
        c = _bit_index(cs & -cs)
        cs &= cs - 1
        k = -_higher_out(t, c, suit, suit_mask) * 100 + rank[c]
        if k > best_k:
            best, best_k = c, k
    return best


@_jit
def _max_rank(cs, rank):
    best, best_k = -1, -1
    while cs:
        c = _bit_index(cs & -cs)
        cs &= cs - 1
        if rank[c] > best_k:
            best, best_k = c, rank[c]
    return best


@_jit
def _discard_low(t, legal, rank, suit, suit_mask, spade_mask):
    """min over side(legal) by (is master, rank, length of its suit in my hand)."""
    cs = _side(legal, spade_mask)
    best, best_k = -1, 1 << 30
    while cs:
        c = _bit_index(cs & -cs)
        cs &= cs - 1
        k = _is_master(t, c, suit, suit_mask) * 10000 + rank[c] * 100
        k += _suit_len(t, suit[c], suit_mask)
        if k < best_k:
            best, best_k = c, k
    return best


@_jit
def _sure(t, trick, voids, cs, strt, suit, suit_mask):
    out = 0
    while cs:
        c = _bit_index(cs & -cs)
        cs &= cs - 1
        if _sure_win(t, trick, voids, c, strt, suit, suit_mask):
            out |= 1 << c
    return out


@_jit
def _ruffed(t, voids, s, opps, suit_mask):
    for o in range(t[P]):  # noqa: SIM110 (a loop: numba compiles no generator for any())
        if opps >> o & 1 and _may_ruff(t, voids, o, s, suit_mask):
            return True
    return False
