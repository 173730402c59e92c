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
- `search` and `playout` are compiled without numba's reference counting (`_nrt=False`):
  every array lives for the whole call, and counting them at each inlined helper (an
  atomic increment and decrement) would cost more than the search itself;
- equivalent cards: a seat's cards that are adjacent among the cards still in play
  (hands and the trick on the table) win and lose the same tricks, so one is tried;
- partition search (DDS's "winning ranks"): every search returns, with its answer, the
  cards whose ranks the answer rests on (a trick's winning card where it beat a card of
  its suit; the cards a bound counted; for a cut, the cutting move's; else every
  move's). The table, probed at trick starts, keeps each answer as lower / upper bounds
  for every position with the same leader, broken state, `acc`, suit lengths per hand
  and holders of those cards (in relative ranks), so one entry serves many positions
  and every threshold (`agents.dd.transposition`);
- lowest winning rank (DDS): once a card has failed and its proof did not depend on
  the low cards of its suit, this seat's other low cards of the suit are skipped;
- bounds without search (TRICKS mode, `agents.dd.moves.trick_bounds`): masters the
  leader, or its partner reached by an entry, can cash bound the side on lead from
  below; each seat's spades that the other team's spades cannot all beat bound its
  team from below, which bounds the side on lead from above too;
- SCORE mode: the least and greatest value reachable from `acc` with `r` tricks left
  (`FMIN`, `FMAX`), and the same over the tricks of MAX's team that the bounds above
  allow (`TMIN`, `TMAX`, see `agents.dd.objective`), decide a question without search
  when they can;
- move ordering: the table's best lead first, then the last lead that cut at the same
  trick number with the same leader (a killer move), then cashing masters, leading low to a
  partner's master or for a partner's ruff, away from the opponents' ruffs; following,
  letting a partner's sure winner stand, else winning as cheaply as is safe, else low.
"""

from __future__ import annotations

from numba import njit

from agents.dd.bits import (
    hand_size,
    high,
    last_trick_winner,
    last_trick_wr,
    pdep13,
    pext13,
    pop,
    rel_key,
    rel_to_wr,
    wr_to_rel,
)
from agents.dd.moves import gen_moves, order_moves, quick_tricks, spade_bounds, trick_bounds
from agents.dd.transposition import (
    INF,
    P_HITS,
    P_KILL,
    P_LIMIT,
    P_MAXT,
    P_MODE,
    P_NODES,
    T_LO,
    T_MASK,
    tt_probe,
    tt_store,
)
from spades_env.cards import SPADES
from spades_env.core.rule_functions import breaks_trump, card_strength

__all__ = [
    "MAX_DEPTH",
    "NUM_FIELDS",
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
F_W0, F_LENS, F_CTX, F_WR, F_TWR, F_TP0 = 16, 20, 21, 22, 23, 24  # F_TP0: 4 trick masks
F_LW0 = 28  # 4 fields: per suit, ranks below this are settled by a move already tried
NUM_FIELDS = 32


@njit(cache=True, inline="always")
def _abs_card(H, rc):
    """The absolute card of relative card `rc` (suit * 13 + top-aligned relative rank)."""
    s = rc // 13
    p = H[0, s] | H[1, s] | H[2, s] | H[3, s]
    b = pdep13((1 << (rc - 13 * s)) >> (13 - pop(p)), p)
    return s * 13 + high(b) if b else -1


@njit(cache=True, inline="always")
def _rel_card(H, c):
    s = c // 13
    p = H[0, s] | H[1, s] | H[2, s] | H[3, s]
    return s * 13 + high(pext13(1 << (c - 13 * s), p) << (13 - pop(p)))


@njit(cache=True, inline="always")
def _score_bounds(H, leader, broken, maxt, r, acc, thr, TMIN, TMAX):
    """SCORE mode at a trick start: (1 or 0, winning ranks) if bounds on the tricks of
    MAX's team decide the question, else (-1, 0).

    In every play MAX's team takes t in [alo, ahi] of the r tricks (`spade_bounds`). The
    leader's team can also force its quick tricks, but need not take them (a nil bidder
    or bags may make fewer tricks better), so they bound only what that team can force:
    MAX forcing t >= q gives a value of at least min TMIN[acc, r, t] over t in [q, ahi];
    the other team forcing t <= r - q caps it at max TMAX[acc, r, t] over t in [alo, r - q].
    """
    alo, ahi, walo, wahi = spade_bounds(H, maxt, r, r, r)
    q, wq = quick_tricks(H, leader, broken)
    flo, fhi, wf = alo, ahi, walo | wahi
    if q > 0 and (leader & 1) == maxt and q > alo:
        flo = q
        wf |= wq
    elif q > 0 and (leader & 1) != maxt and r - q < ahi:
        fhi = r - q
        wf |= wq
    if flo > alo or ahi < r:  # MAX forces at least flo, and takes at most ahi
        vmin = TMIN[acc, r, flo]
        for t in range(flo + 1, ahi + 1):
            vmin = min(vmin, TMIN[acc, r, t])
        if flo <= ahi and vmin >= thr:
            return 1, wf
    if alo > 0 or fhi < r:  # MAX takes at least alo, and is held to at most fhi
        vmax = TMAX[acc, r, alo]
        for t in range(alo + 1, fhi + 1):
            vmax = max(vmax, TMAX[acc, r, t])
        if alo <= fhi and vmax < thr:
            return 0, wf
    return -1, 0


@njit(cache=True, inline="always")
def _enter(FR, d, H, TP, thr, P, COEF, MV, SC, TT, TF, SG, VAL, FMIN, FMAX, TMIN, TMAX):
    """Start node `d`: (1 or 0, winning ranks) if decided without search, else (-1, 0)
    with its moves ready."""
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
                return 1, 0
            if need > r:
                return 0, 0
            if r == 1:  # the last trick plays itself
                w = last_trick_winner(H, leader)
                return (1 if (w & 1) == maxt else 0), last_trick_wr(H, w)
            lo, hi, wlo, whi = trick_bounds(H, leader, broken, maxt, r, need, r - need + 1)
            if lo >= need:
                return 1, wlo
            if hi < need:
                return 0, whi
            x = float(need if maxt == 0 else r - need + 1)  # in team 0's tricks
        else:
            if r == 0:
                return (1 if VAL[acc] >= thr else 0), 0
            if r == 1:
                w = last_trick_winner(H, leader)
                return (1 if VAL[acc + COEF[w]] >= thr else 0), last_trick_wr(H, w)
            if FMIN[acc, r] >= thr:
                return 1, 0
            if FMAX[acc, r] < thr:
                return 0, 0
            if TMIN.shape[0] > 1:
                ret, wr = _score_bounds(H, leader, broken, maxt, r, acc, thr, TMIN, TMAX)
                if ret >= 0:
                    return ret, wr
            x = thr
        w0, w1, w2, w3, lens, ctx = rel_key(H, leader, broken, mode, acc)
        FR[d, F_W0] = w0
        FR[d, F_W0 + 1] = w1
        FR[d, F_W0 + 2] = w2
        FR[d, F_W0 + 3] = w3
        FR[d, F_LENS] = lens
        FR[d, F_CTX] = ctx
        slot, rhint = tt_probe(P, TT, TF, SG, lens, ctx, w0, w1, w2, w3, x, x)
        if slot >= 0:
            P[P_HITS] += 1
            wr = rel_to_wr(H, TT[slot, T_MASK])
            high = TF[slot, T_LO] >= x  # the stored quantity reaches x
            if mode == TRICKS and maxt == 1:
                high = not high
            return (1 if high else 0), wr
        if rhint >= 0:
            hint = _abs_card(H, rhint)
    seat = (leader + k) & 3
    FR[d, F_SEAT] = seat
    FR[d, F_HINT] = hint
    n = gen_moves(H, TP, seat, k, FR[d, F_LEAD], broken, MV, d)
    killer = P[P_KILL + 4 * FR[d, F_R] + leader] if k == 0 else -1
    lead = FR[d, F_LEAD]
    order_moves(H, seat, k, lead, FR[d, F_WSEAT], FR[d, F_WSTR], MV, SC, d, n, hint, killer)
    FR[d, F_N] = n
    FR[d, F_I] = 0
    maxing = 1 if (seat & 1) == maxt else 0
    FR[d, F_MAXING] = maxing
    FR[d, F_RESULT] = 1 - maxing
    FR[d, F_CUT] = -1
    FR[d, F_WR] = 0
    for j in range(4):
        FR[d, F_LW0 + j] = -1
    return -1, 0


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
        wstr = card_strength(c, s, SPADES)
    else:
        st = card_strength(c, lead, SPADES)
        if st > wstr:
            wseat = seat
            wstr = st
    H[seat, s] ^= bit
    e = d + 1
    FR[e, F_BROKEN] = 1 if (FR[d, F_BROKEN] != 0 or breaks_trump(c, SPADES)) else 0
    if k == 3:
        # Winning rank of the trick: the winning card, if it beat a card of its suit
        # (the core's strength of a trump is 32 + its rank).
        ws = SPADES if wstr >= 32 else lead
        wrk = wstr - 32 if wstr >= 32 else wstr
        same = TP[ws] | (bit if s == ws else 0)
        FR[d, F_TWR] = (1 << (13 * ws + wrk)) if pop(same) >= 2 else 0
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
def _widen_runs(FR, d, H, TP, MV):
    """Winning ranks of node `d`, closed over the runs of equivalent cards it merged.

    A move stands for a run of cards adjacent among the cards in play. Where the run
    reaches the relevant cards of its suit (at or above the lowest winning rank) but
    starts below them, a position alike only above that rank could split the run (a
    relevant card played, a low one kept), so the whole run becomes relevant.
    """
    wr = FR[d, F_WR]
    seat = FR[d, F_SEAT]
    cut = FR[d, F_CUT]
    lo = 0
    hi = FR[d, F_N]
    if cut >= 0:  # a cut rests on the cutting move alone
        while MV[d, lo] != cut:
            lo += 1
        hi = lo + 1
    changed = True
    while changed:
        changed = False
        for i in range(lo, hi):
            c = MV[d, i]
            s = c // 13
            rk = c - 13 * s
            w = (wr >> (13 * s)) & 0x1FFF
            if w == 0 or (w >> rk) & 1 or (w & -w) < (1 << rk):
                continue  # no relevant card in the suit, or the run is already relevant
            mine = H[seat, s]
            others = (H[0, s] | H[1, s] | H[2, s] | H[3, s] | TP[s]) & ~mine
            above = others >> (rk + 1)
            run = mine if above == 0 else mine & (((above & -above) << (rk + 1)) - 1)
            top = high(run)
            if (1 << top) >= (w & -w):
                wr |= 1 << c
                changed = True
    return wr


@njit(cache=True, inline="always")
def _finish(FR, d, H, TP, MV, thr, P, TT, TF, SG):
    """Node `d` is decided: widen its winning ranks over merged runs (`_widen_runs`) and
    keep what it proved in the table (trick starts only)."""
    result = FR[d, F_RESULT] != 0
    FR[d, F_WR] = _widen_runs(FR, d, H, TP, MV)
    if FR[d, F_K] != 0:
        return result
    maxt = P[P_MAXT]
    cut = FR[d, F_CUT]
    move = _rel_card(H, cut) if cut >= 0 else -1
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
        P, TT, TF, SG, FR[d, F_LENS], FR[d, F_CTX], FR[d, F_W0], FR[d, F_W0 + 1],
        FR[d, F_W0 + 2], FR[d, F_W0 + 3], wr_to_rel(H, FR[d, F_WR]), lo, hx, move,
    )  # fmt: skip
    return result


# nogil: a long search in a worker thread (a web review) leaves the other threads running
@njit(cache=True, _nrt=False, nogil=True)  # no reference counting (spades_env/core/borrow.py)
def search(
    H, TP, k, leader, lead, wseat, wstr, broken, need, acc, thr,
    P, COEF, FR, MV, SC, TT, TF, SG, VAL, FMIN, FMAX, TMIN, TMAX,
):  # fmt: skip
    """Can the MAX team reach the goal (see the module docstring) from this position?

    k: cards already in the current trick (led by `leader`, suit `lead`, best card so
    far of `wseat` with strength `wstr`). need: tricks MAX still needs (TRICKS mode).
    acc: canonical tricks index (SCORE mode). FR: (MAX_DEPTH, NUM_FIELDS) stack.
    Once `P[P_NODES]` reaches `P[P_LIMIT]` the search stops at once and its answer means
    nothing (the table keeps only what finished searches proved; H and TP are left
    mid-play).
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
    wr = 0
    entering = True
    while True:
        if entering:  # one call site: numba inlines `_enter` once
            entering = False
            if P[P_NODES] >= P[P_LIMIT]:
                return False  # given up: the driver sees P_NODES past P_LIMIT
            ret, wr = _enter(
                FR, d, H, TP, thr, P, COEF, MV, SC, TT, TF, SG, VAL, FMIN, FMAX, TMIN, TMAX
            )
            if ret >= 0:
                if d == 0:
                    return ret == 1
                d -= 1
        if ret >= 0:  # a child of node d answered: take the move back, maybe cut
            c = MV[d, FR[d, F_I]]
            if FR[d, F_K] == 3:
                wr |= FR[d, F_TWR]
            _undo(FR, d, H, TP, c)
            if ret == FR[d, F_MAXING]:
                if FR[d, F_K] == 0:  # the killer lead of this trick number and leader
                    P[P_KILL + 4 * FR[d, F_R] + FR[d, F_LEADER]] = c
                FR[d, F_RESULT] = ret
                FR[d, F_CUT] = c
                FR[d, F_I] = FR[d, F_N]
                FR[d, F_WR] = wr  # the cutting move's proof is the node's
            else:
                FR[d, F_WR] |= wr  # every move failed: the node needs all their proofs
                FR[d, F_I] += 1
                # Lowest winning rank (DDS): if card c and the suit's cards below the
                # child's lowest winning rank were all irrelevant to its proof, any
                # other card of this seat down there would fail the same way.
                s = c // 13
                rk = c - 13 * s
                ws = (wr >> (13 * s)) & 0x1FFF
                low = high(ws & -ws) if ws else 13
                if rk < low and low > FR[d, F_LW0 + s]:
                    FR[d, F_LW0 + s] = low
                while FR[d, F_I] < FR[d, F_N]:
                    m = MV[d, FR[d, F_I]]
                    if m - 13 * (m // 13) >= FR[d, F_LW0 + m // 13]:
                        break
                    FR[d, F_I] += 1
        if FR[d, F_I] < FR[d, F_N]:  # try the next move
            _apply(FR, d, H, TP, COEF, maxt, MV[d, FR[d, F_I]])
            d += 1
            entering = True
            ret = -1
            continue
        ret = 1 if _finish(FR, d, H, TP, MV, thr, P, TT, TF, SG) else 0
        wr = FR[d, F_WR]
        if d == 0:
            return ret == 1
        d -= 1


@njit(cache=True, _nrt=False, nogil=True)
def playout(H, TP, k, leader, lead, wseat, wstr, broken, maxt, COEF, FR, MV, SC):
    """Tricks team `maxt` takes (the trick in progress included) when every seat plays
    the first card of the move ordering: the driver's guess for its first question.

    H and TP are left as they were.
    """
    FR[0, F_K] = k
    FR[0, F_LEADER] = leader
    FR[0, F_LEAD] = lead
    FR[0, F_WSEAT] = wseat
    FR[0, F_WSTR] = wstr
    FR[0, F_BROKEN] = 1 if broken else 0
    FR[0, F_NEED] = 0
    FR[0, F_ACC] = 0
    cards = hand_size(H, 0) + hand_size(H, 1) + hand_size(H, 2) + hand_size(H, 3)
    for d in range(cards):
        kk = FR[d, F_K]
        seat = (FR[d, F_LEADER] + kk) & 3
        FR[d, F_SEAT] = seat
        n = gen_moves(H, TP, seat, kk, FR[d, F_LEAD], FR[d, F_BROKEN] != 0, MV, d)
        lead = FR[d, F_LEAD]
        order_moves(H, seat, kk, lead, FR[d, F_WSEAT], FR[d, F_WSTR], MV, SC, d, n, -1, -1)
        _apply(FR, d, H, TP, COEF, maxt, MV[d, 0])
    won = -FR[cards, F_NEED]
    for d in range(cards - 1, -1, -1):
        _undo(FR, d, H, TP, MV[d, 0])
    return won
