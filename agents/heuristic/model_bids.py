"""The bid that maximises the team's expected hand score under the fitted trick model.

As in Cohensius et al., "Bidding in Spades" (ECAI 2020): predict the distribution of the
tricks the hand takes (`agents.heuristic.trick_model`), then bid the number, or nil, whose expected
score is highest. The score of every outcome is the engine's own (`spades_env.scoring.
score_hand`, RULES.md §4: contract made or set, overtricks, nil, `nil_tricks`, the
options), for the team: my bid and tricks, my partner's bid and tricks.

- A number bid: the model's distribution of the team's tricks beyond the partner's bid
  (the contract is made when they reach my bid), over the partner's bid when it has bid
  (a blind nil counts as a nil) or over the bids partners make when it has not (the
  model's partner table); a nil partner's own tricks as the table says.
- Nil: no trick with the nil model's probability, else one; the partner's tricks as the
  partner table says for its bid.
- Bags: by default every bag costs `bag_penalty / bag_limit` points, its share of the
  penalty it leads to (RULES.md §4). A hand scored on its own (a hand-mode tournament)
  never reaches the penalty, but a seat does not know that it will be the last;
  `heuristic:bag_cost=0` bids for the hand alone.
- Nil is never bid beside a partner's nil (rule text 000: "Klokt är det sällan").

The blind-nil decision, the exchange and the naming of trump are not the model's: the
heuristic's rules decide them.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import numpy.typing as npt

from agents.heuristic.seat_table import Table
from agents.heuristic.trick_model import (
    OFFSET,
    TRICKS,
    Y_LOW,
    TrickModel,
    bidding_order,
    context_features,
    hand_features,
)
from spades_env.rules import Rules
from spades_env.scoring import score_hand


def bag_cost(rules: Rules, cost: float | None = None) -> float:
    """What a bag costs: `cost`, or by default its share of the penalty (RULES.md §4)."""
    return rules.bag_penalty / rules.bag_limit if cost is None or cost < 0 else cost


@lru_cache(maxsize=8)
def team_values(rules: Rules, cost: float) -> npt.NDArray[np.float64]:
    """(14, 14, 14, 14) V[b, pb, k, tp]: my team's points less `cost` per bag when I bid
    `b`, my partner `pb` (0 = nil) and we take `k` and `tp` tricks (RULES.md §4)."""
    b, pb, k, tp = np.meshgrid(*[np.arange(TRICKS)] * 4, indexing="ij")
    n = b.size
    bids = np.stack([b.ravel(), np.ones(n, int), pb.ravel(), np.ones(n, int)], axis=1)
    rest = np.maximum(TRICKS - 1 - k - tp, 0).ravel()
    tricks = np.stack([k.ravel(), rest, tp.ravel(), np.zeros(n, int)], axis=1)
    hs = score_hand(rules, bids, np.zeros((n, 4), bool), tricks)
    value = hs.points[:, 0] - cost * hs.bags[:, 0]
    return value.reshape(b.shape).astype(np.float64)


def seat_features(t: Table, dealer: int) -> npt.NDArray[np.float64]:
    """The model's features for the seat of `t` (its hand seen) with this dealer."""
    ctx = context_features(t.seat, t.bids, t.scores, t.bags, bidding_order(dealer))
    return np.array(hand_features(t.hand) + ctx, dtype=np.float64)


def expected_scores(
    model: TrickModel,
    x: npt.NDArray[np.float64],
    partner_bid: int,
    rules: Rules,
    cost: float | None = None,
) -> npt.NDArray[np.float64]:
    """(14,) the team's expected score of each bid 0..13 (0 = nil); `partner_bid` -1 when
    the partner has not bid; `cost` per bag (`bag_cost`)."""
    x = np.asarray(x, dtype=np.float64)[None]
    return expected_scores_batch(model, x, np.array([partner_bid]), rules, cost)[0]


def expected_scores_batch(
    model: TrickModel,
    x: npt.NDArray[np.float64],
    partner_bid: npt.NDArray[np.int64],
    rules: Rules,
    cost: float | None = None,
) -> npt.NDArray[np.float64]:
    """(G, 14) `expected_scores` of G seats at once: features (G, F), partner bids (G,)."""
    v = team_values(rules, bag_cost(rules, cost))  # (b, pb, k, tp)
    prior, theirs = model.partner_pmf()  # (pb,), (pb, tp)
    number = _number_values(v, theirs)  # (b, pb, y)
    pb = np.asarray(partner_bid, dtype=np.int64)
    weight = np.where((pb < 0)[:, None], prior[None, :], np.eye(TRICKS)[np.maximum(pb, 0)])
    # the bid of highest expected score at offset 0, then every bid at its own offset
    # from it (the team plays for the tricks it bid: agents.heuristic.trick_model FEATURES)
    at_zero = np.einsum("gp,gy,bpy->gb", weight, model.team_pmf(x), number)
    xs = np.repeat(x[:, None, :], TRICKS, axis=1)  # (G, b, F)
    best = 1 + np.argmax(at_zero[:, 1:], axis=1)
    xs[:, :, OFFSET] = np.clip(np.arange(TRICKS)[None, :] - best[:, None], -1, 1)
    value = np.einsum("gp,gby,bpy->gb", weight, model.team_pmf(xs), number)
    made = model.nil_made(x)  # a failed nil takes one trick, most often
    odds = np.stack([made, 1 - made], axis=1)
    value[:, 0] = np.einsum("gp,gk,pt,pkt->g", weight, odds, theirs, v[0, :, :2, :])
    return value


def _number_values(
    v: npt.NDArray[np.float64], theirs: npt.NDArray[np.float64]
) -> npt.NDArray[np.float64]:
    """(b, pb, y) the team's value of a number bid b beside a partner's bid pb when the
    team takes y tricks beyond pb (beside a nil: when I take y)."""
    ys = np.arange(Y_LOW, TRICKS)
    mine = np.maximum(ys, 0)
    # the team takes pb + y, split as I take max(y, 0), my partner the rest
    pbs = np.arange(TRICKS)[:, None]
    tp = np.clip(pbs + np.minimum(ys, 0), 0, TRICKS - 1)
    number = v[:, pbs, mine[None, :], tp]
    # beside a nil my tricks alone judge the contract; the nil's tricks as partners take
    number[:, 0] = np.einsum("t,byt->by", theirs[0], v[:, 0][:, mine, :])
    return number


def choose_model_bid(
    t: Table, dealer: int, model: TrickModel, cost: float | None = None
) -> tuple[int, str]:
    """BID phase: the legal bid of highest expected team score (ties: the lower bid),
    `cost` per bag (default: its share of the penalty)."""
    return choose_model_bids([t], [dealer], model, cost)[0]


def choose_model_bids(
    tables: list[Table], dealers: list[int], model: TrickModel, cost: float | None = None
) -> list[tuple[int, str]]:
    """`choose_model_bid` of many seats (same rules), their expected scores in one pass."""
    if not tables:
        return []
    x = np.stack([seat_features(t, d) for t, d in zip(tables, dealers, strict=True)])
    partner = np.array([t.bids[t.partner] for t in tables], dtype=np.int64)
    legal = np.array([t.legal for t in tables], dtype=np.uint64)
    picks = model_bids(model, x, partner, legal, tables[0].rules, cost)
    return [(int(b), picks.reason(i)) for i, b in enumerate(picks.bids.tolist())]


@dataclass
class ModelBids:
    """The trick model's bids of G seats, with what their reasons quote."""

    bids: npt.NDArray[np.int64]  # (G,) the bid (0 = nil)
    value: npt.NDArray[np.float64]  # (G, 14) expected team score of every bid
    pmf: npt.NDArray[np.float64]  # (G, 17) the team's tricks beyond the partner's bid
    nil_made: npt.NDArray[np.float64]  # (G,) P(a nil takes no trick)

    def reason(self, i: int) -> str:
        """The sentence of seat i's bid."""
        bid, pmf = int(self.bids[i]), self.pmf[i]
        mean = float(pmf @ np.arange(Y_LOW, TRICKS))
        why = (
            f"nil made {float(self.nil_made[i]):.0%}"
            if bid == 0
            else f"contract made {pmf[bid - Y_LOW :].sum():.0%}"
        )
        return (
            f"trick model: the team takes {mean:.1f} tricks beyond my partner's bid; bid "
            f"{'nil' if bid == 0 else bid} scores {self.value[i, bid]:+.1f} expected ({why})"
        )


def model_bids(
    model: TrickModel,
    x: npt.NDArray[np.float64],
    partner_bid: npt.NDArray[np.int64],
    legal: npt.NDArray[np.uint64],
    rules: Rules,
    cost: float | None = None,
) -> ModelBids:
    """The legal bid of highest expected team score (ties: the lower bid) of G seats:
    features `x` (G, F), partner bids (G,) (-1 not yet), legal bid bits (G,). Never nil
    beside a partner's nil, nor where a nil scores nothing (`nil_value`), unless it is the
    only legal bid."""
    values = expected_scores_batch(model, x, partner_bid, rules, cost)
    allowed = (legal[:, None] >> np.arange(TRICKS, dtype=np.uint64)) & np.uint64(1) != 0
    no_nil = ((partner_bid == 0) | (rules.nil_value <= 0)) & (allowed.sum(axis=1) > 1)
    allowed[no_nil, 0] = False
    bids = np.where(allowed, values, -np.inf).argmax(axis=1)  # the first of equals: lowest
    return ModelBids(bids, values, model.team_pmf(x), model.nil_made(x))
