"""What one seat can work out about one game, compiled: card counting on int64 card masks
for the heuristic's card play (`agents.heuristic.play`).

Everything here is built from the seat's own view only: its hand, the cards played, the
voids players have shown, the bids. No hidden card is ever read. Rule text 000 "Räkna
spadern: 13 kort" (count the spades and the cards gone) is the habit this module gives
the agent.

A decision's scalars are an int64 array `t` indexed by the constants below (`SEAT`,
`HAND`, ...): the first `NT_GIVEN` are given, `prepare` derives the rest once per
decision, and the card play writes the reason of its choice into `CTX`, `WHY` and `NEED`.
A list of cards is a mask; a choice "the lowest by some key" scans the mask in ascending
card order and keeps the first of equal keys. The trump is `t[TRUMP]`: spades, or in
RULES.md §6 auction the named suit, which takes every role spades have (RULES.md §3);
`tmask` is its card mask (jokers are spades); which card beats which is the rules core's
`card_strength` under that trump.
"""

from __future__ import annotations

from agents.kernels.compile import jit
from agents.kernels.play import (
    bit_index,
    popcount,
)
from spades_env.cards import NUM_SUITS
from spades_env.core.rule_functions import card_strength

# the scalars of one decision, by index in the int64 array `t` (module doc)
SEAT, HAND, LEGAL, UNSEEN, LEADER, SIZE, LEAD, TRICKS = range(8)
P, TEAMS, PARTNERS, HAND_SIZE, NIL_COUNTS, TRUMP = range(8, 14)
NT_GIVEN = 14
PARTNER, LATER, OPPS, WIN_SEAT, WIN_CARD, CTX, WHY, NEED = range(14, 22)
HOLD = 22  # HOLD + seat: the unseen cards that seat may hold
SET_TRICKS = HOLD + 8  # contract made: take tricks while this many or fewer set the opponents
NT = SET_TRICKS + 1
#: the heuristic's `set_tricks` (see `agents.heuristic.agent`)
DEFAULT_SET_TRICKS = 3


@jit
def high_bit(x: int) -> int:
    i = -1
    while x:
        i = bit_index(x & -x)
        x &= x - 1
    return i


@jit
def _above(c, suit, suit_mask):
    """The cards of `c`'s suit that rank above it (jokers sit above A♠)."""
    return suit_mask[suit[c]] & ~((2 << c) - 1)


@jit
def low_card(cs, rank, tmask):
    """The lowest card of `cs`, a non-trump before a trump of the same rank."""
    best, best_k = -1, 1 << 30
    while cs:
        c = bit_index(cs & -cs)
        cs &= cs - 1
        k = rank[c] * 2 + (tmask >> c & 1)
        if k < best_k:
            best, best_k = c, k
    return best


@jit
def high_card(cs, rank, tmask):
    """The highest card of `cs`, a trump before a non-trump of the same rank (ties: the
    last in card order)."""
    best, best_k = -1, -1
    while cs:
        c = bit_index(cs & -cs)
        cs &= cs - 1
        k = rank[c] * 2 + (tmask >> c & 1)
        if k >= best_k:
            best, best_k = c, k
    return best


@jit
def side_cards(cs, tmask):
    """The non-trumps among `cs`, or all of them."""
    out = cs & ~tmask
    return out if out else cs


@jit
def prepare(t, trick, voids, suit_mask):
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
        if best < 0 or card_strength(c, t[LEAD], t[TRUMP]) > card_strength(best, t[LEAD], t[TRUMP]):
            best_seat, best = s, c
    t[WIN_SEAT], t[WIN_CARD] = best_seat, best
    for s in range(p):  # unseen cards seat s may hold: none of a suit it showed void in
        mask = t[UNSEEN]
        for k in range(NUM_SUITS):
            if voids[s] >> k & 1:
                mask &= ~suit_mask[k]
        t[HOLD + s] = mask


@jit
def team_need(t, bids, won, team):
    """Tricks the team still needs for its contract (<= 0: made; RULES.md §4; with
    nil_tricks=bags a nil bidder's tricks do not count for the contract)."""
    contract, taken = 0, 0
    for s in range(t[P]):
        if s % t[TEAMS] == team:
            contract += max(bids[s], 0)
            if t[NIL_COUNTS] or bids[s] != 0:
                taken += won[s]
    return contract - taken


@jit
def is_nil(bids, won, s):
    """Seat `s` bid nil (or blind nil) and has taken no trick yet: the nil still stands."""
    return bids[s] == 0 and won[s] == 0


@jit
def is_master(t, c, suit, suit_mask):
    """No unseen card of its suit ranks higher: it wins its suit (if not trumped)."""
    return t[UNSEEN] & _above(c, suit, suit_mask) == 0


@jit
def _may_ruff(t, voids, seat, s, suit_mask):
    """Might `seat` trump a lead of suit `s`? Shown void, or the suit is nearly gone
    (rule text 000 "Räkna spadern": at most one card of it left among the other hands)."""
    trump = t[TRUMP]
    if s == trump or t[HOLD + seat] & suit_mask[trump] == 0:
        return False
    if voids[seat] >> s & 1:
        return True
    return popcount(t[UNSEEN] & suit_mask[s]) <= 1


@jit
def can_beat_later(t, voids, seat, c, lead, suit, suit_mask):
    """Could `seat`, still to play, beat card `c` in a trick led in `lead`?"""
    hold, trump = t[HOLD + seat], t[TRUMP]
    if suit[c] == lead and lead != trump:
        if hold & _above(c, suit, suit_mask):
            return True
        return _may_ruff(t, voids, seat, lead, suit_mask)
    if suit[c] == trump:
        if not hold & _above(c, suit, suit_mask):
            return False
        return lead == trump or _may_ruff(t, voids, seat, lead, suit_mask)
    return False  # a discard never wins


@jit
def _sure_win(t, voids, c, suit, suit_mask):
    """`c` beats the trick now and no opponent still to play can beat it."""
    lead = suit[c] if t[SIZE] == 0 else t[LEAD]
    best = t[WIN_CARD]
    if best >= 0 and not card_strength(c, lead, t[TRUMP]) > card_strength(best, lead, t[TRUMP]):
        return False
    seats = t[LATER] & t[OPPS]
    for s in range(t[P]):
        if seats >> s & 1 and can_beat_later(t, voids, s, c, lead, suit, suit_mask):
            return False
    return True


@jit
def sure_cards(t, voids, cs, suit, suit_mask):
    """The cards of `cs` that win the trick surely (`_sure_win`)."""
    out = 0
    while cs:
        c = bit_index(cs & -cs)
        cs &= cs - 1
        if _sure_win(t, voids, c, suit, suit_mask):
            out |= 1 << c
    return out


@jit
def beating(t, cs):
    """(the cards of cs that beat the trick's winner, those that do not); when leading
    (all, none)."""
    best = t[WIN_CARD]
    if best < 0:
        return cs, 0
    win = 0
    bits = cs
    while bits:
        c = bit_index(bits & -bits)
        bits &= bits - 1
        if card_strength(c, t[LEAD], t[TRUMP]) > card_strength(best, t[LEAD], t[TRUMP]):
            win |= 1 << c
    return win, cs & ~win


@jit
def higher_out(t, c, suit, suit_mask):
    """Unseen cards of the suit that outrank `c` (0: it is the master)."""
    return popcount(t[UNSEEN] & _above(c, suit, suit_mask))


@jit
def suit_len(t, s, suit_mask):
    return popcount(t[HAND] & suit_mask[s])


@jit
def max_danger(t, cs, rank, suit, suit_mask):
    """The card most likely to win a trick later: fewest higher cards out, then rank."""
    best, best_k = -1, -(1 << 30)
    while cs:
        c = bit_index(cs & -cs)
        cs &= cs - 1
        k = -higher_out(t, c, suit, suit_mask) * 100 + rank[c]
        if k > best_k:
            best, best_k = c, k
    return best


@jit
def max_rank(cs, rank):
    best, best_k = -1, -1
    while cs:
        c = bit_index(cs & -cs)
        cs &= cs - 1
        if rank[c] > best_k:
            best, best_k = c, rank[c]
    return best


@jit
def void_among(seats, voids, s, n):
    """Whether a seat of the bit set `seats` (of `n` seats) has shown a void in suit `s`."""
    for o in range(n):  # noqa: SIM110 (numba compiles no generator expressions)
        if seats >> o & 1 and voids[o] >> s & 1:
            return True
    return False


@jit
def ruffed(t, voids, s, suit_mask):
    """Might an opponent trump a lead of suit `s`?"""
    for o in range(t[P]):  # noqa: SIM110 (numba compiles no generator expressions)
        if t[OPPS] >> o & 1 and _may_ruff(t, voids, o, s, suit_mask):
            return True
    return False
