"""The RL encoding of what a seat knows (observation.py documents the blocks), compiled.

`encode_rows` writes, for each game of a packed `State` and one observing seat, the int16
row `observation.encode` returns; `obs_offsets(rules)` gives where each block starts.
One implementation serves the batched envs and `SingleGame`.
"""

from __future__ import annotations

import functools

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic

from spades_env.cards import MAX_BID, NUM_CARDS
from spades_env.core.borrow import borrow
from spades_env.core.compile import ensure_fresh
from spades_env.core.kernel import (
    BID,
    DONE,
    DRAW,
    PHASE_BASE,
    PLAY,
    as_tuple,
    blind_ok,
    row_views,
)
from spades_env.core.layout import obs_slices
from spades_env.core.rule_functions import partner_of, seat_after, seat_rel
from spades_env.core.rules_vector import (
    L_BAGS,
    L_BIDS,
    L_BLIND,
    L_BROKEN,
    L_CARD_TRICK,
    L_DEALER,
    L_HAND_NO,
    L_HANDS,
    L_LEAD_SUIT,
    L_LEADER,
    L_LEGAL,
    L_PASSING,
    L_PHASE,
    L_PLAYED,
    L_SCORES,
    L_SEEN,
    L_STOCK,
    L_STOCK_POS,
    L_TO_ACT,
    L_TRICK,
    L_TRICK_SIZE,
    L_TRICKS_WON,
    L_TRUMP,
    L_VOIDS,
    R_DECK_SIZE,
    R_DRAW,
    R_NAMED,
    R_OPEN_HANDS,
    R_P,
    R_T,
)
from spades_env.core.tuples import fixed_tuple
from spades_env.rules import Rules

ensure_fresh()

_U1 = np.uint64(1)

#: the blocks of the encoding, in order (observation.obs_blocks names them)
BLOCKS = (
    "hand", "played_by", "played_trick", "table", "bids", "blind", "tricks_won", "passed",
    "received", "scores", "bags", "dealer", "leader", "to_act", "lead_suit", "broken",
    "phase", "voids", "hand_no", "open_hands", "looking", "seen", "stock", "trump",
)  # fmt: skip
(
    O_HAND, O_PLAYED_BY, O_PLAYED_TRICK, O_TABLE, O_BIDS, O_BLIND, O_TRICKS_WON, O_PASSED,
    O_RECEIVED, O_SCORES, O_BAGS, O_DEALER, O_LEADER, O_TO_ACT, O_LEAD_SUIT, O_BROKEN,
    O_PHASE, O_VOIDS, O_HAND_NO, O_OPEN_HANDS, O_LOOKING, O_SEEN, O_STOCK, O_TRUMP,
) = range(len(BLOCKS))  # fmt: skip
NUM_BLOCKS = len(BLOCKS)
# encode_one writes the first three blocks whole, and zeroes the row from table on
assert BLOCKS[:4] == ("hand", "played_by", "played_trick", "table")
_BID_SLOTS = MAX_BID + 2  # not bid yet, then bids 0..MAX_BID


@functools.cache
def obs_offsets(rules: Rules) -> np.ndarray:
    """(len(BLOCKS),) int64 start of each block in the encoding of `rules`."""
    sl = obs_slices(rules)
    return np.array([sl[name].start for name in BLOCKS], dtype=np.int64)


@njit(cache=True, inline="always")
def low_bit(m):
    """Index of the lowest set bit of `m` (not 0): one instruction (LLVM's cttz), where
    core.rule_functions.lowest counts bits; the encoders call it for every card they write."""
    return int(trailing_zeros(m))


@njit(cache=True, inline="always")
def _bits(row, start, mask):
    """1 at `start + c` for each card c of `mask` (for masks that are mostly empty)."""
    m = np.uint64(mask)
    while m:
        row[start + low_bit(m)] = 1
        m &= m - _U1


@intrinsic
def _store4(typingctx, row, index, value):
    """`row[index : index + 4] = the four int16 lanes of value` (a uint64) in one store;
    `row` a 1-D int16 array, `index` any cell (the store need not be aligned)."""
    if not (isinstance(row, types.Array) and row.ndim == 1 and row.dtype == types.int16):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(row)(context, builder, value=args[0])
        ptr = cgutils.get_item_pointer(context, builder, row, ary, [args[1]], wraparound=False)
        builder.store(args[2], builder.bitcast(ptr, ir.IntType(64).as_pointer()), align=2)
        return context.get_dummy_value()

    return types.void(row, types.intp, types.uint64), codegen


@intrinsic
def _load4(typingctx, row, index):
    """The four int8 values `row[index : index + 4]` as the low 32 bits of a uint64
    (little-endian), in one load; `row` a 1-D int8 array."""
    if not (isinstance(row, types.Array) and row.ndim == 1 and row.dtype == types.int8):
        return None

    def codegen(context, builder, signature, args):
        ary = context.make_array(row)(context, builder, value=args[0])
        ptr = cgutils.get_item_pointer(context, builder, row, ary, [args[1]], wraparound=False)
        word = builder.load(builder.bitcast(ptr, ir.IntType(32).as_pointer()), align=1)
        return builder.zext(word, ir.IntType(64))

    return types.uint64(row, types.intp), codegen


_NIBBLE = np.uint64(0xF)
#: x * _SPREAD4, x < 16: bit i of x lands on bit 16 i (x shifted by 0, 15, 30 and 45: the
#: copies do not overlap, so no carry), the low bit of int16 lane i.
_SPREAD4 = np.uint64(0x0000200040008001)
_LANES = np.uint64(0x0001000100010001)
assert NUM_CARDS == 54  # _cells: 13 stores of four cells, then two


@njit(cache=True, inline="always")
def _cells(row, start, mask):
    """Cells `start .. start + 53` = bits 0..53 of `mask` as 0/1, four cells to a
    64-bit store: no branch per card (a hand's cards are random, a loop over them
    mispredicts)."""
    m = np.uint64(mask)
    for q in range(13):
        nibble = (m >> np.uint64(4 * q)) & _NIBBLE
        _store4(row, start + 4 * q, (nibble * _SPREAD4) & _LANES)
    row[start + 52] = (m >> np.uint64(52)) & _U1
    row[start + 53] = (m >> np.uint64(53)) & _U1


@njit(cache=True, inline="always")
def hand_hidden(r, i32, i8, g, seat):
    """RULES.md §2: a seat that may still bid blind nil has not looked at its hand."""
    phase = i8[g, r[L_PHASE]]
    if i8[g, r[L_BIDS] + seat] >= 0 or phase >= PLAY:
        return False
    if phase == BID and i8[g, r[L_TO_ACT]] == seat:
        return False
    return blind_ok(r, i32, i8, g, seat)


_PAIRS = np.uint64(0x0000FFFF0000FFFF)
_BYTES = np.uint64(0x00FF00FF00FF00FF)


@njit(cache=True, inline="always")
def _tricks_plus_one(row, start, tricks, at):
    """Cells `start .. start + 53` = `tricks[at + c] + 1` (int8 values -1..K-1), four
    cells to a load and a store: the bytes are spread to 16-bit lanes, and the +1 of
    a -1 carries out of its byte, which the mask then drops (0xFF + 1 -> 0x100 -> 0)."""
    for q in range(13):
        x = _load4(tricks, at + 4 * q)
        x = (x | (x << np.uint64(16))) & _PAIRS
        x = (x | (x << np.uint64(8))) & _BYTES
        _store4(row, start + 4 * q, (x + _LANES) & _BYTES)
    row[start + 52] = tricks[at + 52] + 1
    row[start + 53] = tricks[at + 53] + 1


@njit(cache=True, inline="always")
def team_scores(r, i32, g, seat, cells, scores_at, bags_at):
    """The scores and bags blocks of both encodings (this one and core/observe_bits.py):
    `cells[scores_at + j]` the score (clipped to int16) and `cells[bags_at + j]` the bags
    of the j-th team counted from `seat`'s own, own team first."""
    t = r[R_T]
    own = seat % t
    for j in range(t):
        team = own + j
        if team >= t:
            team -= t
        cells[scores_at + j] = max(-32768, min(32767, i32[g, r[L_SCORES] + team]))
        cells[bags_at + j] = i32[g, r[L_BAGS] + team]


@njit(cache=True, inline="always")
def encode_one(r, ob, u64, i32, i8, g, seat, out, k):
    """Write the encoding of `seat` in game `g` into row `k` of `out` (every cell).
    `r` and `ob` are tuples (kernel.as_tuple, `offsets_tuple`): values in registers."""
    p, c = r[R_P], NUM_CARDS
    row = out[k]
    for j in range(row.size):
        row[j] = 0
    phase = i8[g, r[L_PHASE]]
    played = u64[g, r[L_PLAYED]]
    held = u64[g, r[L_HANDS] + seat] & ~played
    _cells(row, ob[O_HAND], np.uint64(0) if hand_hidden(r, i32, i8, g, seat) else held)
    # unplayed cards have trick -1: 0
    _tricks_plus_one(row, ob[O_PLAYED_TRICK], i8[g], r[L_CARD_TRICK])
    for rel in range(p):
        s = seat_after(seat, rel, p)
        # a seat's hand keeps the cards it played (the engine tracks play in `played`)
        _cells(row, ob[O_PLAYED_BY] + rel * c, u64[g, r[L_HANDS] + s] & played)
        card = i8[g, r[L_TRICK] + s]
        # no branch: with no card on the table, cell 0 of the block gets its own 0
        row[ob[O_TABLE] + rel * c + max(card, 0)] = card >= 0
        row[ob[O_BIDS] + rel * _BID_SLOTS + 1 + i8[g, r[L_BIDS] + s]] = 1
        row[ob[O_BLIND] + rel] = i8[g, r[L_BLIND] + s]
        row[ob[O_TRICKS_WON] + rel] = i8[g, r[L_TRICKS_WON] + s]
        voids = i8[g, r[L_VOIDS] + s]
        for suit in range(4):
            row[ob[O_VOIDS] + rel * 4 + suit] = (voids >> suit) & 1
    _bits(row, ob[O_PASSED], u64[g, r[L_PASSING] + seat])
    if phase >= PLAY:  # the exchange is over: what the partner passed
        _bits(row, ob[O_RECEIVED], u64[g, r[L_PASSING] + partner_of(seat, p)])
    team_scores(r, i32, g, seat, row, ob[O_SCORES], ob[O_BAGS])
    row[ob[O_DEALER] + seat_rel(i8[g, r[L_DEALER]], seat, p)] = 1
    # no branch on where the trick stands (it differs game to game): without a lead the
    # cell written gets its own 0
    row[ob[O_LEADER] + seat_rel(i8[g, r[L_LEADER]], seat, p)] = i8[g, r[L_TRICK_SIZE]] > 0
    row[ob[O_TO_ACT] + seat_rel(i8[g, r[L_TO_ACT]], seat, p)] = 1
    lead = i8[g, r[L_LEAD_SUIT]]
    row[ob[O_LEAD_SUIT] + max(lead, 0)] = lead >= 0
    row[ob[O_BROKEN]] = i8[g, r[L_BROKEN]]
    row[ob[O_PHASE] + phase] = 1
    row[ob[O_HAND_NO]] = i32[g, r[L_HAND_NO]]
    if r[R_OPEN_HANDS]:  # RULES.md §6 open_hands: every hand is shown to every seat
        for rel in range(1, p):
            held = u64[g, r[L_HANDS] + seat_after(seat, rel, p)] & ~played
            _bits(row, ob[O_OPEN_HANDS] + (rel - 1) * c, held)
    if r[R_DRAW]:  # RULES.md §6 two_player: what this drawer has seen
        pos = i8[g, r[L_STOCK_POS]]
        if phase == DRAW and i8[g, r[L_TO_ACT]] == seat:
            row[ob[O_LOOKING] + i8[g, r[L_STOCK] + min(pos, c - 1)]] = 1
        _bits(row, ob[O_SEEN], u64[g, r[L_SEEN] + seat])
        row[ob[O_STOCK]] = r[R_DECK_SIZE] - pos if phase == DRAW else 0
    if r[R_NAMED]:  # RULES.md §6 auction: the named suit, once named
        trump = i8[g, r[L_TRUMP]]
        if trump >= 0:
            row[ob[O_TRUMP] + trump] = 1


@njit(cache=True, inline="always")
def offsets_tuple(ob):
    """`obs_offsets` as a tuple (values in registers inside the kernel)."""
    return fixed_tuple(ob, NUM_BLOCKS)


@njit(cache=True)
def encode_rows(spec, offsets, buf, seats, out):
    """Row g of `out`: the encoding of game g seen from `seats[g]`."""
    r, ob = as_tuple(spec), offsets_tuple(offsets)
    buf, u64, i32, _, i8 = row_views(buf)
    seats, out = borrow(seats), borrow(out)
    for g in range(buf.shape[0]):
        encode_one(r, ob, u64, i32, i8, g, seats[g], out, g)


@njit(cache=True)
def encode_seats(spec, offsets, buf, g, out):
    """Row s of `out`: the encoding of game g seen from seat s, for every seat."""
    r, ob = as_tuple(spec), offsets_tuple(offsets)
    buf, u64, i32, _, i8 = row_views(buf)
    out = borrow(out)
    for seat in range(r[R_P]):
        encode_one(r, ob, u64, i32, i8, g, seat, out, seat)


@njit(cache=True)
def encode_masked(spec, offsets, buf, seat, masked, out, mask):
    """Game 0 of `buf` seen from `seat`: its encoding in `out[0]` and, if `masked`, the
    legal actions of the seat to act as 1s in `mask` ((NUM_ACTIONS,) int8, zeroed by
    the caller). One call for a PettingZoo observation."""
    r, ob = as_tuple(spec), offsets_tuple(offsets)
    buf, u64, i32, _, i8 = row_views(buf)
    out, mask = borrow(out), borrow(mask)
    encode_one(r, ob, u64, i32, i8, 0, seat, out, 0)
    if masked:
        phase = i8[0, r[L_PHASE]]
        bits = u64[0, r[L_LEGAL]]
        base = PHASE_BASE[phase] if phase != DONE else 0
        while bits:
            c = base + low_bit(bits)
            if c < mask.size:
                mask[c] = 1
            bits &= bits - np.uint64(1)
