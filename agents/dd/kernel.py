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

from numba import njit

from agents.dd.bits import canonicalize, hand_size, key_words, last_trick_winner
from agents.dd.moves import gen_moves, order_moves, trick_bounds
from agents.dd.table import (
    ENTRY,
    INF,
    NUM_PARAMS,
    P_GEN,
    P_MASK,
    P_MAXT,
    P_MODE,
    P_NODES,
    T_HI,
    T_LO,
    T_MOVE,
    tt_find,
    tt_store,
)

__all__ = [
    "ENTRY",
    "MAX_DEPTH",
    "NUM_FIELDS",
    "NUM_PARAMS",
    "P_GEN",
    "P_MASK",
    "P_MAXT",
    "P_MODE",
    "P_NODES",
    "SCORE",
    "TRICKS",
    "search",
]

TRICKS, SCORE = 0, 1
MAX_DEPTH = 56  # 52 cards + slack: one row of move buffers per card played

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
    ret = -1
    entering = True
    while True:
        if entering:  # one call site: numba inlines `_enter` once
            entering = False
            ret = _enter(FR, d, H, TP, thr, P, COEF, MV, SC, TT, TF, VAL, FMIN, FMAX)
            if ret >= 0:
                if d == 0:
                    return ret == 1
                d -= 1
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
            entering = True
            ret = -1
            continue
        ret = 1 if _finish(FR, d, H, thr, P, TT, TF) else 0
        if d == 0:
            return ret == 1
        d -= 1
