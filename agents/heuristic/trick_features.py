"""The trick model's features (`agents.heuristic.trick_model.FEATURES`) of a whole batch of seats.

`hand_features` and `context_features` in `agents.heuristic.trick_model` describe one seat with
Python ints and lists: the definition, and what the model was fitted on. The heuristic
bids for hundreds of games a step in training, so here the same numbers come from
arrays: every hand feature is a sum over the four suits of something that depends on
that suit's cards alone, so it is read from tables indexed by a suit's 13 rank bits
(8,192 entries each), built once from the scalar functions of
`agents.heuristic.bidding` themselves, not a second copy of the counting. Floating-point
sums are added in the scalar code's own order (suit by suit, the suit's terms highest
rank first), so every feature is bit-identical to the scalar one
(`tests/agents/test_trick_model.py` checks it on random hands).

Standard 52-card deck, spades trump: what the trick model speaks of (`applies`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from agents.heuristic.bidding import (
    ACE,
    JACK,
    KING,
    QUEEN,
    ruff_cap,
    side_nil_dangers,
    side_suit_tricks,
    spade_nil_danger,
    spade_values,
    suit_ranks,
)
from spades_env.cards import NUM_RANKS, NUM_SUITS, SPADES

SETS = 1 << NUM_RANKS  # the rank sets of one suit
#: `estimate_tricks`' shortness bonus of a side suit by its length
_SHORTNESS = {0: 0.6, 1: 0.3, 2: 0.1}
#: at most this many ranks add to a side suit's nil danger (ten to king; an ace is hopeless)
_NIL_TERMS = 4
_SIDE = [s for s in range(NUM_SUITS) if s != SPADES]  # the side suits, in the scalar order


@dataclass(frozen=True)
class SuitTables:
    """Per rank set of one suit (index: bit r set when rank r is held)."""

    side_tricks: npt.NDArray[np.float64]  # side_suit_tricks
    shortness: npt.NDArray[np.float64]  # the shortness bonus of its length
    spade_sum: npt.NDArray[np.float64]  # sum(spade_values), as spades
    ruff_cap: npt.NDArray[np.float64]  # ruff_cap(spade_values), as spades
    spade_danger: npt.NDArray[np.float64]  # spade_nil_danger (0 where hopeless)
    spade_hopeless: npt.NDArray[np.bool_]  # spade_nil_danger is None
    side_danger: npt.NDArray[np.float64]  # (SETS, 4) side_nil_dangers, padded with 0.0
    side_hopeless: npt.NDArray[np.bool_]  # side_nil_dangers is None
    # (SETS, 7) int counts of a side suit: ace, king with a card beside it, lone king,
    # queen with two beside it, void, singleton, doubleton
    side_counts: npt.NDArray[np.int64]


@lru_cache(maxsize=1)
def suit_tables() -> SuitTables:
    """The tables, from the scalar functions (about 0.2 s, once per process)."""
    f64 = np.float64
    side_tricks, shortness = np.zeros(SETS, f64), np.zeros(SETS, f64)
    spade_sum, cap, spade_danger = np.zeros(SETS, f64), np.zeros(SETS, f64), np.zeros(SETS, f64)
    spade_hopeless, side_hopeless = np.zeros(SETS, bool), np.zeros(SETS, bool)
    side_danger = np.zeros((SETS, _NIL_TERMS), f64)
    counts = np.zeros((SETS, 7), np.int64)
    for m in range(SETS):
        ranks = suit_ranks(m, SPADES)  # the spade suit holds bits 0..12: ranks of the set
        n = len(ranks)
        side_tricks[m] = side_suit_tricks(ranks)
        shortness[m] = _SHORTNESS.get(n, 0.0)
        values = spade_values(ranks)
        spade_sum[m], cap[m] = sum(values), ruff_cap(values)
        danger = spade_nil_danger(ranks)
        spade_hopeless[m] = danger is None
        spade_danger[m] = 0.0 if danger is None else danger
        adds = side_nil_dangers(ranks)
        side_hopeless[m] = adds is None
        side_danger[m, : len(adds or [])] = adds or []
        counts[m] = (
            ACE in ranks,
            KING in ranks and n >= 2,
            ranks == [KING],
            QUEEN in ranks and n >= 3,
            n == 0,
            n == 1,
            n == 2,
        )
    return SuitTables(
        side_tricks, shortness, spade_sum, cap, spade_danger, spade_hopeless, side_danger,
        side_hopeless, counts,
    )  # fmt: skip


def hand_features_batch(hands: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """(G, 15) `agents.heuristic.trick_model.hand_features` of G 13-card hands (bitmasks, standard
    deck), bit for bit."""
    t = suit_tables()
    h = np.asarray(hands, dtype=np.uint64)
    sets = [((h >> np.uint64(NUM_RANKS * s)) & np.uint64(SETS - 1)).astype(np.intp) for s in
            range(NUM_SUITS)]  # fmt: skip
    sp = sets[SPADES]
    total, short = np.zeros(len(h)), np.zeros(len(h))
    for s in _SIDE:  # estimate_tricks: side suits in order, then the spades
        total += t.side_tricks[sets[s]]
        short += t.shortness[sets[s]]
    count = total + (t.spade_sum[sp] + np.minimum(short, t.ruff_cap[sp]))
    danger = t.spade_danger[sp].copy()  # nil_danger: the spades, then each side suit's terms
    hopeless = t.spade_hopeless[sp].copy()
    for s in _SIDE:
        hopeless |= t.side_hopeless[sets[s]]
        terms = t.side_danger[sets[s]]
        for j in range(_NIL_TERMS):
            danger += terms[:, j]
    danger[hopeless] = 9.0
    spades = np.bitwise_count(sp).astype(np.float64)
    side = sum(t.side_counts[sets[s]] for s in _SIDE)
    cols = [count, np.minimum(danger, 3.0), spades, np.maximum(0.0, spades - 4)]
    cols += [((sp >> r) & 1).astype(np.float64) for r in (ACE, KING, QUEEN, JACK)]
    return np.column_stack([*cols, side.astype(np.float64)])


def context_features_batch(
    seat: npt.ArrayLike,
    dealer: npt.ArrayLike,
    bids: npt.ArrayLike,
    scores: npt.ArrayLike,
    bags: npt.ArrayLike,
) -> npt.NDArray[np.float64]:
    """(G, 12) `agents.heuristic.trick_model.context_features` (offset 0) of G seats: `seat`,
    `dealer` (G,), `bids` (G, 4) (-1 not yet, 0 nil), `scores` and `bags` (G, 2)."""
    seat = np.asarray(seat, dtype=np.int64)
    g = np.arange(len(seat))
    bids = np.asarray(bids, dtype=np.int64)
    scores, bags = np.asarray(scores, dtype=np.int64), np.asarray(bags, dtype=np.int64)
    position = (seat - np.asarray(dealer, dtype=np.int64) - 1) % 4  # RULES.md §2
    pb = bids[g, (seat + 2) % 4]
    opp = bids[g[:, None], (seat[:, None] + np.array([1, 3])) % 4]
    team = seat % 2
    margin = np.clip((scores[g, team] - scores[g, 1 - team]) / 100, -5.0, 5.0)
    cols = [position == 1, position == 2, position == 3, np.maximum(pb, 0), pb == 0, pb < 0]
    cols += [np.where(opp > 0, opp, 0).sum(axis=1), (opp == 0).sum(axis=1), margin]
    cols += [bags[g, team] / 10, bags[g, 1 - team] / 10, np.zeros(len(seat))]
    return np.column_stack([np.asarray(c, dtype=np.float64) for c in cols])
