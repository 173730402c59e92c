"""The batched engine's kernels: a compiled loop over the games of a packed `State`.

Each game is one row of `State`'s (B, ROW) uint8 buffer (core/rules_vector.py gives the offsets
of its fields); the kernels read and write it through typed views and apply the rules of
core/rule_functions.py, core/scoring.py and core/deal.py. Every kernel takes the rules vector `r`
first, so one compilation plays every preset.

Phases (state.py): BLIND 0, BID 1, EXCHANGE 2, PLAY 3, DONE 4, DRAW 5, TRUMP 6.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.cards import BID_BASE, BLIND_NIL, DRAW_KEEP, NAME_TRUMP, SPADES
from spades_env.core import deal as _deal
from spades_env.core import rule_functions as core
from spades_env.core.borrow import borrow, prefetch, stack_array
from spades_env.core.compile import ensure_fresh
from spades_env.core.layout import BID, BLIND, DONE, DRAW, EXCHANGE, PLAY, TRUMP
from spades_env.core.rules_vector import (
    L_BAGS,
    L_BIDS,
    L_BLIND,
    L_BROKEN,
    L_CARD_SEAT,
    L_CARD_TRICK,
    L_DEAL,
    L_DEALER,
    L_HAND_NO,
    L_HANDS,
    L_HISTORY,
    L_HISTORY_LEN,
    L_LEAD_SUIT,
    L_LEADER,
    L_LEGAL,
    L_NUM_BIDS,
    L_PASSING,
    L_PHASE,
    L_PLAYED,
    L_SCORES,
    L_SEED,
    L_SEEN,
    L_STOCK,
    L_STOCK_POS,
    L_TO_ACT,
    L_TRICK,
    L_TRICK_SIZE,
    L_TRICKS_PLAYED,
    L_TRICKS_WON,
    L_TRUMP,
    L_VOIDS,
    L_WINNER,
    R_BID_RULE,
    R_BLIND,
    R_DECK,
    R_DECK_SIZE,
    R_DRAW,
    R_EXCHANGE,
    R_H,
    R_K,
    R_LAST_HAND,
    R_MAX_BID,
    R_MAX_TOTAL,
    R_MIN_BID,
    R_NAMED,
    R_P,
    R_PARTNERS,
    R_T,
    R_TWO_CLUBS,
    VECTOR_SIZE,
)
from spades_env.core.scoring import apply_bags, game_winner, score_hand
from spades_env.core.tuples import fixed_tuple

ensure_fresh()

#: first action of each phase: bit i of `legal` is action PHASE_BASE[phase] + i.
PHASE_BASE = np.array([BLIND_NIL, BID_BASE, 0, 0, 0, DRAW_KEEP, NAME_TRUMP], dtype=np.int64)
HISTORY_SEAT_SHIFT = 7  # history entries are (seat << 7) | action
_U1 = np.uint64(1)


# ------------------------------------------------------------------ small accessors
@njit(cache=True, inline="always")
def row_views(buf):
    """The packed rows as every dtype, borrowed for this call (core/borrow.py)."""
    buf = borrow(buf)
    return buf, buf.view(np.uint64), buf.view(np.int32), buf.view(np.int16), buf.view(np.int8)


_WORK_SIZE = _deal.WORK_SIZE + 64


@njit(cache=True, inline="always")
def new_work():
    """The work array of one kernel call: a deal's scratch (core/deal.py), on the stack
    of the calling kernel (core/borrow.py), so the hot kernels need no allocator."""
    return stack_array(_WORK_SIZE, np.uint64)


@njit(cache=True, inline="always")
def as_tuple(spec):
    """The rules vector as a tuple: its values are then plain registers inside a kernel,
    which no store into the state can change (an array would be re-read after each)."""
    return fixed_tuple(spec, VECTOR_SIZE)


@njit(cache=True, inline="always")
def _partner_bid(r, i8, g, seat):
    if r[R_PARTNERS] == 0:
        return -1
    return i8[g, r[L_BIDS] + core.partner_of(seat, r[R_P])]


@njit(cache=True, inline="always")
def blind_ok(r, i32, i8, g, seat):
    """RULES.md §2: may `seat` of game `g` declare blind nil now."""
    t = r[R_T]
    scores = i32[g, r[L_SCORES] : r[L_SCORES] + t]
    return core.blind_allowed(
        r[R_BLIND], r[R_BID_RULE], _partner_bid(r, i8, g, seat), scores, t, seat % t
    )


@njit(cache=True, inline="always")
def legal_bits(r, u64, i32, i8, g):
    """The legal actions of the seat to act, as bits above PHASE_BASE[phase]."""
    phase = i8[g, r[L_PHASE]]
    seat = i8[g, r[L_TO_ACT]]
    if phase == PLAY:
        held = u64[g, r[L_HANDS] + seat] & ~u64[g, r[L_PLAYED]]
        first = r[R_TWO_CLUBS] == 1 and i8[g, r[L_TRICKS_PLAYED]] == 0
        return core.legal_cards(
            held,
            i8[g, r[L_TRICK_SIZE]],
            i8[g, r[L_LEAD_SUIT]],
            i8[g, r[L_BROKEN]] != 0,
            i8[g, r[L_TRUMP]],
            first,
        )
    if phase == BID:
        p = r[R_P]
        bids = i8[g, r[L_BIDS] : r[L_BIDS] + p]
        top = core.bid_top(r[R_MAX_BID], r[R_MAX_TOTAL], bids, p)
        held = u64[g, r[L_HANDS] + seat]
        return core.legal_bids(r[R_MIN_BID], top, r[R_BID_RULE], held, _partner_bid(r, i8, g, seat))
    if phase == EXCHANGE:  # RULES.md §2: any card not chosen yet
        return u64[g, r[L_HANDS] + seat] & ~u64[g, r[L_PASSING] + seat]
    if phase in (BLIND, DRAW):  # blind nil / see hand; keep / discard
        return np.uint64(0b11)
    if phase == TRUMP:  # RULES.md §6 auction: any of the four suits
        return np.uint64(0b1111)
    return np.uint64(0)


# ------------------------------------------------------------------ the hand's flow
@njit(cache=True, inline="always")
def _offer_bid(r, i32, i8, g, seat):
    """The turn to bid passes to `seat`: first the blind-nil decision if it may."""
    i8[g, r[L_TO_ACT]] = seat
    i8[g, r[L_PHASE]] = BLIND if blind_ok(r, i32, i8, g, seat) else BID


@njit(cache=True, inline="always")
def _open_bidding(r, i32, i8, g):
    """RULES.md §2: bidding starts left of the dealer."""
    _offer_bid(r, i32, i8, g, core.seat_after(i8[g, r[L_DEALER]], 1, r[R_P]))


@njit(cache=True)
def _start_draw(r, u64, i32, i8, g, work):
    """RULES.md §6 two_player: lay out the shuffled stock; left of the dealer draws first."""
    p, stock = r[R_P], r[L_STOCK]
    for c in range(54):
        i8[g, stock + c] = -1
    _deal.shuffle_into(
        r[R_DECK], u64[g, r[L_SEED]], i32[g, r[L_HAND_NO]], i8[g, stock : stock + 54], work
    )
    i8[g, r[L_STOCK_POS]] = 0
    for s in range(p):
        u64[g, r[L_SEEN] + s] = 0
        u64[g, r[L_DEAL] + s] = 0
        u64[g, r[L_HANDS] + s] = 0
    i8[g, r[L_TO_ACT]] = core.seat_after(i8[g, r[L_DEALER]], 1, p)
    i8[g, r[L_PHASE]] = DRAW


@njit(cache=True)
def start_hand(r, u64, i32, i16, i8, g, given, work):
    """Deal hand `hand_no` of game `g` (or keep the `given` deal) and open the bidding."""
    p = r[R_P]
    if not given and r[R_DRAW] == 0:
        _deal.deal_into(
            r[R_DECK], u64[g, r[L_SEED]], i32[g, r[L_HAND_NO]], p, r[R_K],
            u64[g, r[L_DEAL] : r[L_DEAL] + p], work,
        )  # fmt: skip
    row8, row16 = i8[g], i16[g]
    for s in range(p):
        u64[g, r[L_HANDS] + s] = u64[g, r[L_DEAL] + s]
        u64[g, r[L_PASSING] + s] = 0
        row8[r[L_BIDS] + s] = -1
        row8[r[L_BLIND] + s] = 0
        row8[r[L_TRICK] + s] = -1
        row8[r[L_TRICKS_WON] + s] = 0
        row8[r[L_VOIDS] + s] = 0
    # slices: filled a vector at a time (a loop of indexed stores is not)
    row8[r[L_CARD_SEAT] : r[L_CARD_SEAT] + 54] = -1
    row8[r[L_CARD_TRICK] : r[L_CARD_TRICK] + 54] = -1
    row16[r[L_HISTORY] : r[L_HISTORY] + r[R_H]] = -1
    u64[g, r[L_PLAYED]] = 0
    u64[g, r[L_LEGAL]] = 0
    i8[g, r[L_NUM_BIDS]] = 0
    i8[g, r[L_TRICK_SIZE]] = 0
    i8[g, r[L_LEAD_SUIT]] = -1
    i8[g, r[L_TRICKS_PLAYED]] = 0
    i8[g, r[L_BROKEN]] = 0
    i8[g, r[L_TRUMP]] = -1 if r[R_NAMED] else SPADES  # RULES.md §6 auction: named later
    i16[g, r[L_HISTORY_LEN]] = 0
    if r[R_DRAW] and not given:
        _start_draw(r, u64, i32, i8, g, work)
    else:
        _open_bidding(r, i32, i8, g)
    u64[g, r[L_LEGAL]] = legal_bits(r, u64, i32, i8, g)


@njit(cache=True, inline="always")
def _start_play(r, u64, i8, g):
    """RULES.md §3: the first lead."""
    p = r[R_P]
    leader = core.first_leader(
        r[R_TWO_CLUBS] == 1, u64[g, r[L_HANDS] : r[L_HANDS] + p], i8[g, r[L_DEALER]], p
    )
    i8[g, r[L_LEADER]] = leader
    i8[g, r[L_TO_ACT]] = leader
    i8[g, r[L_PHASE]] = PLAY


@njit(cache=True)
def _next_pass(r, u64, i8, g):
    """RULES.md §2 exchange: the next seat to pass, or once every pass is chosen the cards
    change hands and the play starts."""
    p = r[R_P]
    seat = core.next_passer(
        i8[g, r[L_BLIND] : r[L_BLIND] + p],
        u64[g, r[L_PASSING] : r[L_PASSING] + p],
        i8[g, r[L_DEALER]],
        p,
    )
    if seat >= 0:
        i8[g, r[L_TO_ACT]] = seat
        i8[g, r[L_PHASE]] = EXCHANGE
        return
    hands, passing = r[L_HANDS], r[L_PASSING]
    for s in range(p):  # each hand changes by the passes alone: no order to keep
        given = u64[g, passing + s]
        got = u64[g, passing + core.partner_of(s, p)]
        u64[g, hands + s] = (u64[g, hands + s] & ~given) | got
    _start_play(r, u64, i8, g)


@njit(cache=True)
def _after_naming(r, u64, i8, g):
    """The bidding (and auction's naming of trump) is over: the exchange, or the play."""
    if r[R_EXCHANGE]:
        for s in range(r[R_P]):
            if i8[g, r[L_BLIND] + s]:
                _next_pass(r, u64, i8, g)
                return
    _start_play(r, u64, i8, g)


@njit(cache=True, inline="always")
def _bid_made(r, u64, i32, i8, g, seat):
    p = r[R_P]
    n = i8[g, r[L_NUM_BIDS]] + 1
    i8[g, r[L_NUM_BIDS]] = n
    if n < p:
        _offer_bid(r, i32, i8, g, core.seat_after(seat, 1, p))
    elif r[R_NAMED]:  # RULES.md §6 auction: the highest bidder names trump
        i8[g, r[L_TO_ACT]] = core.trump_namer(
            i8[g, r[L_DEALER]], i8[g, r[L_BIDS] : r[L_BIDS] + p], p
        )
        i8[g, r[L_PHASE]] = TRUMP
    else:
        _after_naming(r, u64, i8, g)


@njit(cache=True)
def _draw(r, u64, i32, i8, g, seat, a):
    """RULES.md §6 two_player: keep the top card (the next is discarded unseen), or
    discard it (seen) and take the next."""
    pos = i8[g, r[L_STOCK_POS]]
    top = i8[g, r[L_STOCK] + pos]
    nxt = i8[g, r[L_STOCK] + pos + 1]
    if a == DRAW_KEEP:
        u64[g, r[L_HANDS] + seat] |= core.bit(top)
    else:
        u64[g, r[L_HANDS] + seat] |= core.bit(nxt)
        u64[g, r[L_SEEN] + seat] |= core.bit(top)
    pos += 2
    i8[g, r[L_STOCK_POS]] = pos
    i8[g, r[L_TO_ACT]] = core.seat_after(seat, 1, r[R_P])
    if pos >= r[R_DECK_SIZE]:
        for s in range(r[R_P]):
            u64[g, r[L_DEAL] + s] = u64[g, r[L_HANDS] + s]
        _open_bidding(r, i32, i8, g)


@njit(cache=True)
def _end_hand(r, buf, u64, i32, i16, i8, g, fin, res, points):
    """RULES.md §4-§5: score the hand, carry bags, decide the game, deal the next hand
    (none with the rules vector's R_LAST_HAND: the game stops).
    The row as it stood is copied to `fin[g]`; `res[g]` gets points, bags gained,
    penalties (T each) and the winner (-1 while the game goes on)."""
    p, t = r[R_P], r[R_T]
    saved, row = fin.view(np.uint64), u64[g]  # the row as it stood, 8 bytes at a time
    for j in range(row.size):
        saved[g, j] = row[j]
    # One allocation for the whole hand end: the deal's scratch, scoring's before it.
    work = new_work()
    w32 = work.view(np.int32)
    contract, made = w32[0:t], w32[t : 2 * t]
    out = res[g]  # points, bags gained, penalty (T each), the winner
    pts, bags, penalty = out[0:t], out[t : 2 * t], out[2 * t : 3 * t]
    score_hand(
        r,
        i8[g, r[L_BIDS] : r[L_BIDS] + p],
        i8[g, r[L_BLIND] : r[L_BLIND] + p],
        i8[g, r[L_TRICKS_WON] : r[L_TRICKS_WON] + p],
        pts, bags, contract, made,
    )  # fmt: skip
    scores = i32[g, r[L_SCORES] : r[L_SCORES] + t]
    bag_count = i32[g, r[L_BAGS] : r[L_BAGS] + t]
    for team in range(t):
        scores[team] += pts[team]
        bag_count[team] += bags[team]
    apply_bags(r, scores, bag_count, penalty)
    hands = i32[g, r[L_HAND_NO]] + 1
    i32[g, r[L_HAND_NO]] = hands
    winner = game_winner(r, scores, hands)
    for team in range(t):
        points[g, team] = pts[team] - penalty[team]
    out[3 * t] = winner
    if winner >= 0 or r[R_LAST_HAND]:  # decided, or stopped after this hand (rules_vector.py)
        i8[g, r[L_PHASE]] = DONE
        i8[g, r[L_WINNER]] = winner
        u64[g, r[L_LEGAL]] = 0
        return
    # RULES.md §1: the deal passes left
    i8[g, r[L_DEALER]] = core.seat_after(i8[g, r[L_DEALER]], 1, p)
    start_hand(r, u64, i32, i16, i8, g, False, work)


@njit(cache=True, inline="always")
def _play(r, buf, u64, i32, i16, i8, g, seat, card, fin, res, points):
    """RULES.md §3: play `card`; close the trick when full, and the hand after the last.
    Leaves the legal bits of the next seat to act (the hot path: 52 of a hand's 56
    decisions, so it re-reads nothing it already holds). Returns True if the hand ended."""
    p = r[R_P]
    row8, row64 = i8[g], u64[g]
    size = row8[r[L_TRICK_SIZE]]
    trump = row8[r[L_TRUMP]]
    lead = row8[r[L_LEAD_SUIT]]
    broken = row8[r[L_BROKEN]] != 0
    voids = core.shown_voids(card, size, lead, broken, trump)
    if voids:
        row8[r[L_VOIDS] + seat] |= voids
    if size == 0:
        lead = core.suit_of(card)
        row8[r[L_LEAD_SUIT]] = lead
    if core.breaks_trump(card, trump):
        row8[r[L_BROKEN]] = 1
        broken = True
    played = row64[r[L_PLAYED]] | core.bit(card)
    row64[r[L_PLAYED]] = played
    row8[r[L_TRICK] + seat] = card
    row8[r[L_CARD_SEAT] + card] = seat
    tricks_played = row8[r[L_TRICKS_PLAYED]]
    row8[r[L_CARD_TRICK] + card] = tricks_played
    size += 1
    if size < p:
        nxt = core.seat_after(seat, 1, p)
        row8[r[L_TRICK_SIZE]] = size
        row8[r[L_TO_ACT]] = nxt
        held = row64[r[L_HANDS] + nxt] & ~played
        row64[r[L_LEGAL]] = core.legal_cards(held, size, lead, broken, trump, False)
        return False
    trick = row8[r[L_TRICK] : r[L_TRICK] + p]
    winner = core.trick_winner(trick, row8[r[L_LEADER]], p, lead, trump)
    row8[r[L_TRICKS_WON] + winner] += 1
    row8[r[L_LEADER]] = winner
    row8[r[L_TO_ACT]] = winner
    for s in range(p):
        trick[s] = -1
    row8[r[L_TRICK_SIZE]] = 0
    row8[r[L_LEAD_SUIT]] = -1
    tricks_played += 1
    row8[r[L_TRICKS_PLAYED]] = tricks_played
    if tricks_played == r[R_K]:
        _end_hand(r, buf, u64, i32, i16, i8, g, fin, res, points)
        return True
    held = row64[r[L_HANDS] + winner] & ~played
    row64[r[L_LEGAL]] = core.legal_cards(held, 0, -1, broken, trump, False)
    return False


_AHEAD = 16  # rows ahead to prefetch


@njit(cache=True, inline="always")
def _prefetch_row(r, buf, g, n):
    """Start loading the lines of row `g` that a step reads (its first 320 bytes: the
    play's fields, the cards' seats and tricks, the history), if `g` < `n`: a batch
    larger than the cache streams its rows from memory, and a step waits on each one."""
    if g < n:
        at = g * buf.strides[0]
        for line in range(0, 320, 64):
            prefetch(buf, at + line)


@njit(cache=True, inline="always")
def is_legal(r, u64, i8, g, a):
    """Is action `a` among the cached legal actions of game `g` (DONE games: any)."""
    phase = i8[g, r[L_PHASE]]
    if phase == DONE:
        return True
    rel = a - PHASE_BASE[phase]
    if rel < 0 or rel >= 64:
        return False
    return (u64[g, r[L_LEGAL]] >> np.uint64(rel)) & _U1 == _U1


@njit(cache=True, inline="always")
def step_game(r, buf, u64, i32, i16, i8, g, a, fin, res, points):
    """Apply legal action `a` of the seat to act in game `g`. Returns True if the hand
    ended (then `fin`, `res` and `points` hold its record, see `_end_hand`)."""
    phase = i8[g, r[L_PHASE]]
    if phase == DONE:
        return False
    seat = i8[g, r[L_TO_ACT]]
    n = i16[g, r[L_HISTORY_LEN]]
    i16[g, r[L_HISTORY] + n] = (seat << HISTORY_SEAT_SHIFT) | a
    i16[g, r[L_HISTORY_LEN]] = n + 1
    if phase == PLAY:
        return _play(r, buf, u64, i32, i16, i8, g, seat, a, fin, res, points)
    hands = i32[g, r[L_HAND_NO]]
    if phase == BID:
        i8[g, r[L_BIDS] + seat] = a - BID_BASE
        _bid_made(r, u64, i32, i8, g, seat)
    elif phase == BLIND:
        if a == BLIND_NIL:
            i8[g, r[L_BIDS] + seat] = 0
            i8[g, r[L_BLIND] + seat] = 1
            _bid_made(r, u64, i32, i8, g, seat)
        else:  # RULES.md §2: declined; sees the hand and bids
            i8[g, r[L_PHASE]] = BID
    elif phase == EXCHANGE:
        u64[g, r[L_PASSING] + seat] |= core.bit(a)
        _next_pass(r, u64, i8, g)
    elif phase == DRAW:
        _draw(r, u64, i32, i8, g, seat, a)
    elif phase == TRUMP:
        i8[g, r[L_TRUMP]] = a - NAME_TRUMP  # RULES.md §6 auction: the named suit
        _after_naming(r, u64, i8, g)
    if i8[g, r[L_PHASE]] != DONE:
        u64[g, r[L_LEGAL]] = legal_bits(r, u64, i32, i8, g)
    return i32[g, r[L_HAND_NO]] != hands


@njit(cache=True, _nrt=False, nogil=True)
def step_batch(spec, buf, actions, mode, flags, points, fin, res, lo, hi):
    """One action per game of rows `lo` to `hi` - 1 (DONE games ignore theirs). Illegal
    actions: in mode RAISE, nothing changes and `-1 - g` is returned for the first illegal
    game `g`; in mode REPORT, those games stay as they were and `flags[1, g]` is set; mode
    CHECKED steps without looking (the caller checked with `first_illegal`). Else returns
    the number of hands that ended (`flags[0, g]`; see `_end_hand` for `fin`, `res`,
    `points`) plus 2**32 times the number of games refused. `flags` and `points` must be
    zero on entry. Ranges of rows share nothing: threads may step them at once (the GIL
    is released)."""
    r = as_tuple(spec)
    buf, u64, i32, i16, i8 = row_views(buf)
    actions, flags, points = borrow(actions), borrow(flags), borrow(points)
    fin, res = borrow(fin), borrow(res)
    report = mode == REPORT
    if mode == RAISE:
        bad = _first_illegal(r, u64, i8, actions, lo, hi)
        if bad >= 0:
            return -1 - bad
    ended = refused = 0
    for g in range(lo, hi):
        _prefetch_row(r, buf, g + _AHEAD, hi)
        a = actions[g]
        if report and not is_legal(r, u64, i8, g, a):
            flags[1, g] = True
            refused += 1
            continue
        if step_game(r, buf, u64, i32, i16, i8, g, a, fin, res, points):
            flags[0, g] = True
            ended += 1
    pack_records(r, i32, flags, fin, res, lo, hi, ended)
    return ended + (refused << 32)


RAISE, REPORT, CHECKED = 0, 1, 2  # step_batch's modes


def record_width(teams: int) -> int:
    """Columns of the `res` array that `step_batch` packs its records into: `_end_hand`'s
    3T + 1 (points, bags gained, penalties, winner), then the scores and bags after the
    hand (T each), then the game's row."""
    return 5 * teams + 2


@njit(cache=True, inline="always")
def _append_scores(r, i32, res, k, g):
    """After `_end_hand`'s columns of record `k`: game `g`'s scores and bags, and `g`."""
    t = r[R_T]
    for team in range(t):
        res[k, 3 * t + 1 + team] = i32[g, r[L_SCORES] + team]
        res[k, 4 * t + 1 + team] = i32[g, r[L_BAGS] + team]
    res[k, 5 * t + 1] = g


@njit(cache=True, inline="always")
def pack_records(r, i32, flags, fin, res, lo, hi, ended):
    """The records of the `ended` hands that ended in rows `lo`..`hi` - 1, moved to the
    first `ended` rows from `lo` of `fin` and `res`, in game order (a game's record only
    moves down, so in place), with the scores and bags after the hand and the game's row
    appended to its `res` row (`record_width`): the caller copies one block."""
    if ended == 0:
        return
    t = r[R_T]
    rows = fin.view(np.uint64)  # 8 bytes at a time
    k = lo
    for g in range(lo, hi):
        if not flags[0, g]:
            continue
        if k != g:
            for j in range(rows.shape[1]):
                rows[k, j] = rows[g, j]
            for c in range(3 * t + 1):
                res[k, c] = res[g, c]
        _append_scores(r, i32, res, k, g)
        k += 1
        if k - lo == ended:
            return


@njit(cache=True, inline="always")
def _first_illegal(r, u64, i8, actions, lo, hi):
    for g in range(lo, hi):
        if not is_legal(r, u64, i8, g, actions[g]):
            return g
    return -1


@njit(cache=True, _nrt=False)
def first_illegal(spec, buf, actions):
    """The first game whose action is illegal, or -1 (`step_batch`'s check, alone)."""
    r = as_tuple(spec)
    buf, u64, _, _, i8 = row_views(buf)
    return _first_illegal(r, u64, i8, borrow(actions), 0, buf.shape[0])


@njit(cache=True, _nrt=False, nogil=True)
def step_batch_random(spec, buf, key, flags, points, fin, res, lo, hi):
    """`step_batch` with every game's action drawn here: a uniformly random legal action
    (`_pick`), `u` being `keyed(key[0], g)` (a key the caller draws from its generator per
    call), so no action array is built and no separate pass checks them. The picks of 64
    games at a time are made together (they vectorise, as in `random_legal`), then those
    games step. Rows `lo` to `hi` - 1 only (threads may step other ranges at once; the
    draws are the same whatever the ranges). Returns the number of hands that ended
    (`flags[0, g]`); a game in play with no legal action (a state edited into one) is left
    as it is, `flags[1, g]` is set and the return value is then -1 - (the number of such
    games)."""
    r = as_tuple(spec)
    buf, u64, i32, i16, i8 = row_views(buf)
    flags, points = borrow(flags), borrow(points)
    fin, res = borrow(fin), borrow(res)
    k = key[0]
    bits = stack_array(64, np.uint64)
    base = stack_array(64, np.int64)
    acts = stack_array(64, np.int64)
    n = hi
    ended = stuck = 0
    for start in range(lo, n, 64):
        m = min(64, n - start)
        for j in range(m):
            bits[j] = u64[start + j, r[L_LEGAL]]
            base[j] = PHASE_BASE[i8[start + j, r[L_PHASE]]]
        for j in range(m):
            acts[j] = _pick(bits[j], base[j], keyed(k, start + j))
        for j in range(m):
            g = start + j
            _prefetch_row(r, buf, g + _AHEAD, n)
            if i8[g, r[L_PHASE]] == DONE:
                continue
            if bits[j] == 0:
                flags[1, g] = True
                stuck += 1
                continue
            if step_game(r, buf, u64, i32, i16, i8, g, acts[j], fin, res, points):
                flags[0, g] = True
                ended += 1
    pack_records(r, i32, flags, fin, res, lo, hi, ended)
    return ended if stuck == 0 else -1 - stuck


_KEY_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_SCALE53 = 2.0**-53


@njit(cache=True, inline="always")
def keyed(key, g):
    """A uniform in [0, 1) for game `g` of a step keyed `key` (SplitMix64, core/deal.py)."""
    x = np.uint64(key) + np.uint64(g) * _KEY_GAMMA
    return float(_deal.splitmix64(x) >> np.uint64(11)) * _SCALE53


@njit(cache=True, _nrt=False)
def start_hands(spec, buf, rows, given):
    """Start the current hand of the games in `rows` (deal, or `given` deals kept)."""
    r = as_tuple(spec)
    buf, u64, i32, i16, i8 = row_views(buf)
    work = new_work()
    for g in rows:
        start_hand(r, u64, i32, i16, i8, g, given, work)


@njit(cache=True, _nrt=False)
def new_games(spec, buf, rows, seeds):
    """Start a fresh game (scores 0, dealer from the seed) in each game of `rows`."""
    r = as_tuple(spec)
    buf, u64, i32, i16, i8 = row_views(buf)
    work = new_work()
    for k in range(rows.size):
        new_game(r, u64, i32, i16, i8, rows[k], seeds[k], work)


@njit(cache=True)
def new_game(r, u64, i32, i16, i8, g, seed, work):
    """Start a fresh game in row `g`: deal key `seed`, scores 0, dealer from the seed."""
    u64[g, r[L_SEED]] = seed
    i32[g, r[L_HAND_NO]] = 0
    for team in range(r[R_T]):
        i32[g, r[L_SCORES] + team] = 0
        i32[g, r[L_BAGS] + team] = 0
    i8[g, r[L_WINNER]] = -1
    i8[g, r[L_DEALER]] = _deal.first_dealer(seed, r[R_P])
    start_hand(r, u64, i32, i16, i8, g, False, work)


@njit(cache=True, _nrt=False)
def stop_games(spec, buf, rows):
    """End the games of `rows` where they stand: phase DONE, no legal action. Their
    scores and `winner` stay as they are (-1 unless the game had been decided)."""
    r = as_tuple(spec)
    buf, u64, _, _, i8 = row_views(buf)
    for g in rows:
        i8[g, r[L_PHASE]] = DONE
        u64[g, r[L_LEGAL]] = 0


@njit(cache=True, _nrt=False)
def refresh_legal(spec, buf):
    """Recompute the cached legal bits of every game (after a caller edited the state)."""
    r = as_tuple(spec)
    buf, u64, i32, _, i8 = row_views(buf)
    for g in range(buf.shape[0]):
        u64[g, r[L_LEGAL]] = legal_bits(r, u64, i32, i8, g)


@njit(cache=True, _nrt=False)
def blind_allowed_rows(spec, buf, rows, seats, out):
    r = as_tuple(spec)
    buf, _, i32, _, i8 = row_views(buf)
    for k in range(rows.size):
        out[k] = blind_ok(r, i32, i8, rows[k], seats[k])


@njit(cache=True, _nrt=False)
def random_legal(legal, phase, u, out):
    """One uniformly random legal action per game: the k-th legal bit with
    k = floor(u * count) (`u` uniform in [0, 1) from the caller's generator); games with
    no legal action (DONE) get 0. A `State`'s legal bits and phases are strided views
    (one value per packed row): they are gathered 64 games at a time, so that the picks
    run in vector registers."""
    bits = stack_array(64, np.uint64)
    base = stack_array(64, np.int64)
    n = legal.size
    for start in range(0, n, 64):
        m = min(64, n - start)
        for j in range(m):
            bits[j] = legal[start + j]
            base[j] = PHASE_BASE[phase[start + j]]
        for j in range(m):
            out[start + j] = _pick(bits[j], base[j], u[start + j])


@njit(cache=True, inline="always")
def _pick(bits, base, u):
    """Action `base` + the k-th set bit of `bits`, k = floor(u * count); 0 if none
    (branch-free)."""
    count = core.popcount(bits)
    k = max(min(int(u * count), count - 1), 0)
    return core.kth_bit(bits, k) + base if count > 0 else 0


@njit(cache=True, inline="always")
def pick_legal(legal, phase, u):
    """The k-th legal action, k = floor(u * count) (`u` uniform in [0, 1)); 0 if none."""
    return _pick(np.uint64(legal), PHASE_BASE[phase], u)


@njit(cache=True, _nrt=False)
def action_mask(legal, phase, out):
    """(B, NUM_ACTIONS) bool from the legal bits."""
    n = out.shape[1]
    for g in range(legal.size):
        bits = np.uint64(legal[g])
        base = PHASE_BASE[phase[g]] if phase[g] != DONE else 0
        while bits:
            c = core.lowest(bits)
            if base + c < n:
                out[g, base + c] = True
            bits &= bits - _U1


@njit(cache=True, _nrt=False)
def step_one(spec, buf, a, fin, res):
    """`step_batch` for a batch of one (SingleGame): 0 stepped, 1 the hand ended (`fin`,
    `res` hold its record, as `pack_records` leaves it), -1 illegal (nothing changed)."""
    r = as_tuple(spec)
    buf, u64, i32, i16, i8 = row_views(buf)
    fin, res = borrow(fin), borrow(res)
    if not is_legal(r, u64, i8, 0, a):
        return -1
    points = stack_array(8, np.int32).reshape(1, 8)  # the hand's points: not kept
    if not step_game(r, buf, u64, i32, i16, i8, 0, a, fin, res, points):
        return 0
    _append_scores(r, i32, res, 0, 0)  # as `step_batch` packs its records
    return 1
