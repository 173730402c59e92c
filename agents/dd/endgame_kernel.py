"""numba exact solve of the last tricks of a hand, in many worlds at once.

`solve_rows` takes R rows, each one world (every hand visible) of one decision, and
gives the exact value of each root card: the card is played, then the rest of the hand
by minimax with alpha-beta pruning, the deciding seat's team maximising the value of the
final tricks per seat and the other team minimising it (double dummy). The value is a
table over the final tricks of seats 0, 1 and 2 (seat 3 takes the rest), such as the
relative hand score of `agents.dd.score_objective` (`agents.learned.endgame` builds it).

The rules are the rules core's through `agents.kernels.play` (`hand_legal_cards`,
`play_card`: RULES.md §3), so no second copy of them lives here. Two cards of one seat
and suit with no card between them still in play (hands or table) win and lose the same
tricks, so the lower is skipped (as the double-dummy solver does). Exact, and
differential-tested against `agents.dd.DDSolver.move_values` (tests/agents/test_endgame.py).
The search keeps its own stack (no recursion: numba's cache cannot reload a recursive
function), one row per card played; it is meant for endgames, where the tree is small
(the cost grows about tenfold per trick added).
"""

from __future__ import annotations

import numpy as np

from agents.kernels.compile import jit
from agents.kernels.play import SUIT_CARDS, bit_index, hand_legal_cards, play_card
from agents.kernels.streams import below
from spades_env.cards import CARD_SUIT, SPADES
from spades_env.core.borrow import borrow

#: stack rows: one per card still to play (52) and the root
MAX_DEPTH = 56
_SUIT_OF = np.asarray(CARD_SUIT, dtype=np.int64)
_INF = 1e18


@jit
def _distinct(legal, hands, trick, suit_mask):
    """`legal` without the lower of two cards with no card between them in play."""
    present = hands[0] | hands[1] | hands[2] | hands[3]
    for s in range(4):
        if trick[s] >= 0:
            present |= 1 << trick[s]
    out = legal
    bits = legal
    while bits:
        low = bits & -bits
        bits &= bits - 1
        c = bit_index(low)
        suit = suit_mask[c // 13]
        above = present & suit & ~((low << 1) - 1)
        if above and (above & -above) & legal:
            out &= ~low  # the next card up in play is also mine and legal
    return out


@jit
def _node(d, H, T, S, TODO, MX, BEST, team, two_clubs, trump, suit_mask):
    """Set up the moves of node `d` (not terminal)."""
    leader, size, lead, broken, played = S[d, 0], S[d, 1], S[d, 2], S[d, 3], S[d, 4]
    seat = (leader + size) % 4
    legal = hand_legal_cards(H[d, seat], size, played, two_clubs, broken != 0, lead, trump)
    TODO[d] = _distinct(legal, H[d], T[d], suit_mask)
    MX[d] = 1 if seat % 2 == team else 0
    BEST[d] = -_INF if MX[d] else _INF


@jit
def _play(d, c, H, T, Wn, S, trump):
    """Row d + 1 = row d after the seat to act plays card `c`."""
    for s in range(4):
        H[d + 1, s] = H[d, s]
        T[d + 1, s] = T[d, s]
        Wn[d + 1, s] = Wn[d, s]
    leader, size = S[d, 0], S[d, 1]
    seat = (leader + size) % 4
    out = play_card(
        H[d + 1], T[d + 1], Wn[d + 1], seat, c, leader, size, S[d, 2], S[d, 3] != 0, S[d, 4],
        trump,
    )  # fmt: skip
    S[d + 1, 0], S[d + 1, 1], S[d + 1, 2] = out[0], out[1], out[2]
    S[d + 1, 3], S[d + 1, 4] = 1 if out[3] else 0, out[4]


@jit
def _last_trick(d, H, T, Wn, S, trump):
    """Row d (the last trick about to be led, one card per seat): play it out in place."""
    leader = S[d, 0]
    lead, broken, played = -1, S[d, 3] != 0, S[d, 4]
    size = 0
    for j in range(4):
        seat = (leader + j) % 4
        out = play_card(
            H[d], T[d], Wn[d], seat, bit_index(H[d, seat]), leader, size, lead, broken, played,
            trump,
        )  # fmt: skip
        leader, size, lead, broken, played = out[0], out[1], out[2], out[3], out[4]
    S[d, 0], S[d, 1], S[d, 2], S[d, 3], S[d, 4] = leader, size, lead, 1 if broken else 0, played


@jit
def _nil_value(Wn, nil, team):
    """The nil objective's value to `team` once the hand is decided for it: 1 to the nil
    seat's team if the nil seat took no trick, 0 if it took one (the other team: 1 - that)."""
    kept = 1.0 if Wn[nil] == 0 else 0.0
    return kept if nil % 2 == team else 1.0 - kept


@jit
def _reach(Wn, tricks, V):
    """(lowest, highest) of the table V over every way the remaining `tricks` tricks can
    fall to the seats from the tricks `Wn` won so far: a window the value lies in."""
    lo, hi = _INF, -_INF
    for a in range(tricks + 1):
        for b in range(tricks + 1 - a):
            for c in range(tricks + 1 - a - b):
                v = V[Wn[0] + a, Wn[1] + b, Wn[2] + c]
                lo = min(lo, v)
                hi = max(hi, v)
    return lo, hi


@jit
def _value(
    H, T, Wn, S, V, team, hand_size, two_clubs, trump, suit_mask, TODO, MX, BEST, AL, BE,
    KILL, CUR, nil,
):  # fmt: skip
    """Exact minimax value of the position in row 0 (alpha-beta, explicit stack; at each
    depth the card that last cut off, `KILL`, is tried first). `nil` >= 0: the nil
    objective (`_nil_value`) instead of the table V, decided as soon as that seat takes
    a trick, searched in the window [0, 1] (values are 0 or 1, so fail-soft bounds are
    exact)."""
    if nil >= 0 and (S[0, 4] == hand_size or Wn[0, nil] > 0):
        return _nil_value(Wn[0], nil, team)
    if S[0, 4] == hand_size:
        return V[Wn[0, 0], Wn[0, 1], Wn[0, 2]]
    if nil >= 0:
        AL[0], BE[0] = 0.0, 1.0
    else:  # the table's reachable values bound it (fail-soft: exact within them)
        AL[0], BE[0] = _reach(Wn[0], hand_size - S[0, 4], V)
        if AL[0] == BE[0]:
            return AL[0]
    _node(0, H, T, S, TODO, MX, BEST, team, two_clubs, trump, suit_mask)
    d = 0
    while True:
        if TODO[d] == 0 or AL[d] >= BE[d]:  # node d is answered
            v = BEST[d]
            if d == 0:
                return v
            d -= 1
        else:
            c = KILL[d]
            if c < 0 or not (TODO[d] >> c) & 1:
                c = bit_index(TODO[d] & -TODO[d])
            TODO[d] &= ~(1 << c)
            CUR[d] = c
            _play(d, c, H, T, Wn, S, trump)
            if S[d + 1, 4] == hand_size - 1 and S[d + 1, 1] == 0:
                _last_trick(d + 1, H, T, Wn, S, trump)  # one card each: no choice left
            lo, hi = -_INF, _INF
            if nil < 0 and S[d + 1, 1] == 0 and S[d + 1, 4] < hand_size:
                lo, hi = _reach(Wn[d + 1], hand_size - S[d + 1, 4], V)
            if nil >= 0 and Wn[d + 1, nil] > 0:
                v = _nil_value(Wn[d + 1], nil, team)  # the nil is lost: decided
            elif lo == hi:
                v = lo  # every way the rest can fall has this value
            elif hi <= AL[d]:
                v = hi  # fails low whatever follows (an upper bound, fail-soft)
            elif lo >= BE[d]:
                v = lo  # fails high whatever follows (a lower bound)
            elif S[d + 1, 4] < hand_size:
                d += 1
                AL[d], BE[d] = AL[d - 1], BE[d - 1]
                _node(d, H, T, S, TODO, MX, BEST, team, two_clubs, trump, suit_mask)
                continue
            elif nil >= 0:
                v = _nil_value(Wn[d + 1], nil, team)
            else:
                v = V[Wn[d + 1, 0], Wn[d + 1, 1], Wn[d + 1, 2]]
        if MX[d]:  # fold the answer `v` of a child into node d
            if v > BEST[d]:
                BEST[d] = v
            if v > AL[d]:
                AL[d] = v
        else:
            if v < BEST[d]:
                BEST[d] = v
            if v < BE[d]:
                BE[d] = v
        if AL[d] >= BE[d]:
            KILL[d] = CUR[d]


@jit
def _solve_rows(
    hands, trick, won, info, cards, V, hand_size, two_clubs, trump, suit_mask, out,
    H, T, Wn, S, TODO, MX, BEST, AL, BE, KILL, CUR,
):  # fmt: skip
    """out[r, j]: value of card cards[r, j] (-1: none) in row r (module doc); H ... CUR:
    the search's stack (`_scratch`). Every array is the caller's, alive for the whole
    call, so the kernel works on borrowed views (spades_env/core/borrow.py): no
    reference counting in the search's helper calls."""
    hands, trick, won = borrow(hands), borrow(trick), borrow(won)
    info, cards = borrow(info), borrow(cards)
    V, suit_mask, out = borrow(V), borrow(suit_mask), borrow(out)
    H, T, Wn, S = borrow(H), borrow(T), borrow(Wn), borrow(S)
    TODO, MX, BEST, AL, BE = borrow(TODO), borrow(MX), borrow(BEST), borrow(AL), borrow(BE)
    KILL, CUR = borrow(KILL), borrow(CUR)
    for r in range(hands.shape[0]):
        leader, size = info[r, 0], info[r, 1]
        team = ((leader + size) % 4) % 2
        table = V[info[r, 5]]
        roots = 0
        for j in range(cards.shape[1]):
            if cards[r, j] >= 0:
                roots |= 1 << cards[r, j]
        # a root card with the next card up in play also its own (and a root card) has
        # that card's value in every world: solved once (`_distinct`)
        solve = _distinct(roots, hands[r], trick[r], suit_mask)
        for j in range(cards.shape[1]):
            c = cards[r, j]
            if c < 0:
                break
            if not (solve >> c) & 1:
                continue
            for s in range(4):
                H[0, s] = hands[r, s]
                T[0, s] = trick[r, s]
                Wn[0, s] = won[r, s]
            for i in range(5):
                S[0, i] = info[r, i]
            # the root card, then row 1 is the child: shift it down to row 0
            _play(0, c, H, T, Wn, S, trump)
            for s in range(4):
                H[0, s], T[0, s], Wn[0, s] = H[1, s], T[1, s], Wn[1, s]
            for i in range(5):
                S[0, i] = S[1, i]
            out[r, j] = _value(
                H, T, Wn, S, table, team, hand_size, two_clubs, trump, suit_mask,
                TODO, MX, BEST, AL, BE, KILL, CUR, info[r, 6],
            )  # fmt: skip
        if solve != roots:
            _copy_equal(r, cards, roots, solve, hands[r], trick[r], suit_mask, out)


@jit
def _copy_equal(r, cards, roots, solved, hands, trick, suit_mask, out):
    """out[r, j] of each root card not solved: the value of the solved card it equals
    (up its suit through cards in play, all roots, to the first solved one)."""
    present = hands[0] | hands[1] | hands[2] | hands[3]
    for s in range(4):
        if trick[s] >= 0:
            present |= 1 << trick[s]
    for j in range(cards.shape[1]):
        c = cards[r, j]
        if c < 0:
            break
        if (solved >> c) & 1:
            continue
        up = c
        while not (solved >> up) & 1:
            above = present & suit_mask[up // 13] & ~((1 << (up + 1)) - 1)
            up = bit_index(above & -above)
        for k in range(cards.shape[1]):
            if cards[r, k] == up:
                out[r, j] = out[r, k]


def solve_rows(
    hands: np.ndarray,
    trick: np.ndarray,
    won: np.ndarray,
    info: np.ndarray,
    cards: np.ndarray,
    tables: np.ndarray,
    hand_size: int,
    two_clubs: bool = False,
    trump: int = SPADES,
) -> np.ndarray:
    """(R, J) exact value of each root card of each row.

    hands: (R, 4) int64 cards each seat holds now; trick: (R, 4) card on the table per
    seat (-1 none); won: (R, 4) tricks so far; info: (R, 7) leader, trick size, suit led
    (-1 none), spades broken (0/1), tricks played, index into `tables`, the seat whose nil
    is the objective (-1: the table's value); cards: (R, J) the root cards to value, -1
    after the last; tables: (n, 14, 14, 14) value of the final
    tricks of seats 0, 1, 2, to the team of the seat to act; two_clubs: RULES.md §3
    first_lead=two_of_clubs (the 2C leads the first trick).
    """
    out = np.zeros(cards.shape, dtype=np.float64)
    _solve_rows(
        hands, trick, won, info, cards, tables, hand_size, two_clubs, trump, SUIT_CARDS, out,
        *_scratch(),
    )  # fmt: skip
    return out


def _scratch() -> tuple[np.ndarray, ...]:
    """The search's stack, one row per depth: hands, trick, tricks won, state (leader,
    trick size, suit led, broken, tricks played), then cards to try, maximising, best
    value, alpha, beta, killer card and the card being tried."""
    ints = [np.zeros((MAX_DEPTH, w), dtype=np.int64) for w in (4, 4, 4, 5)]
    todo, mx = np.zeros(MAX_DEPTH, dtype=np.int64), np.zeros(MAX_DEPTH, dtype=np.int64)
    best, alpha, beta = (np.zeros(MAX_DEPTH) for _ in range(3))
    kill = np.full(MAX_DEPTH, -1, dtype=np.int64)
    cur = np.zeros(MAX_DEPTH, dtype=np.int64)
    return (*ints, todo, mx, best, alpha, beta, kill, cur)


@jit
def _sample_rows(known, free, need, allowed, n, tries, stream, suit_of, out):
    """out[g * n + i]: world i of game g, drawn uniformly among the deals of game g's free
    cards (`free[g]`, an array of cards, -1 after the last) to the seats with the counts
    `need[g]` that give no seat a suit outside `allowed[g]` (rejection: a uniform shuffle
    of the free cards, cut into the counts, kept only if it agrees). Returns the number
    of games whose `tries` shuffles per world did not all find one (those rows are -1)."""
    g_count, p = known.shape
    failed = 0
    cards = np.empty(free.shape[1], dtype=np.int64)
    for g in range(g_count):
        m = 0
        while m < free.shape[1] and free[g, m] >= 0:
            m += 1
        for i in range(n):
            row = g * n + i
            ok = False
            for _ in range(tries):
                for j in range(m):
                    cards[j] = free[g, j]
                for j in range(m - 1, 0, -1):  # Fisher-Yates
                    k = below(stream, j + 1)
                    cards[j], cards[k] = cards[k], cards[j]
                ok = True
                at = 0
                for s in range(p):
                    hand = known[g, s]
                    for _j in range(need[g, s]):
                        c = cards[at]
                        at += 1
                        if not (allowed[g, s] >> suit_of[c]) & 1:
                            ok = False
                            break
                        hand |= 1 << c
                    if not ok:
                        break
                    out[row, s] = hand
                if ok:
                    break
            if not ok:
                failed += 1
                for s in range(p):
                    out[row, s] = -1
    return failed


def sample_rows(
    known: np.ndarray,
    free: np.ndarray,
    need: np.ndarray,
    allowed: np.ndarray,
    n: int,
    stream: np.ndarray,
    tries: int = 10_000,
) -> np.ndarray:
    """(G * n, P) int64 worlds, n per game (`_sample_rows`; -1 rows where the tries
    ran out). known / need / allowed: (G, P); free: (G, F) cards, -1 padded."""
    out = np.zeros((known.shape[0] * n, known.shape[1]), dtype=np.int64)
    _sample_rows(known, free, need, allowed, n, tries, stream, _SUIT_OF, out)
    return out
