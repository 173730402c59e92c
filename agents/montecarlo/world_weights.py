"""A stated model of how a bid depends on the hand, to weight sampled worlds by the bids.

A bidder of 5 is unlikely to hold nothing: worlds in which a seat's hand fits its bid
should count more. The model, deliberately simple and fixed (no fitting):

- **Trick count.** A 13-card hand `h` is worth `t(h)` tricks: in each suit the ace is 1,
  the king 1 if the suit has 2+ cards, the queen 0.5 if it has 3+ cards; in spades each
  spade beyond the third adds 1. `t` is capped at 13, and is a multiple of 0.5.
- **Bid.** A seat bids `b` in 0..hand size (0 = nil) with probability
  `P(b | h) = exp(-(b - t(h))² / (2 σ²)) / Z(t(h))`, `σ = BID_SIGMA = 1.5`, where
  `Z(t)` sums the numerator over the bids allowed, 0..hand size.
- **World weight.** The product, over the seats other than the observer that have bid
  and not blind (a blind nil is bid unseen: it says nothing), of `P(bid | hand)`, where
  the hand is the one the seat bid with: its cards now in that world plus the cards it
  has played. For the observer's partner after an exchange (RULES.md §2), minus the
  cards the observer passed and plus those the partner passed; the opponents' exchange
  is unknown to the observer, so their cards now stand for their deal.

Sampling (`sample_weighted`) is exact rejection sampling: a uniform world is kept with
probability `weight / bound`, `bound` being the product over the weighted seats of the
largest `P(bid | t)` over every value `t` can take, so kept worlds follow
`uniform × weight` exactly. If the bids are so unlikely that fewer than `n` worlds are
kept within `max_draws` candidates, the rest are drawn by importance resampling among
the candidates (weight-proportional), which is only approximately the target.
"""

from __future__ import annotations

from typing import Any, Protocol

import numpy as np
import numpy.typing as npt

from spades_env.cards import NUM_SUITS, SUIT_MASK
from spades_env.observation import SeatView


class Sampler(Protocol):
    """What the weighting needs of a world sampler (`agents.montecarlo.sampling.WorldSampler`):
    its knowledge of the hidden cards (`know.known`, `know.allowed`, `know.free`) and
    uniform draws. A protocol, so that the weights do not import the sampler that uses them."""

    know: Any

    def sample(self, n: int, rng: np.random.Generator) -> npt.NDArray[np.uint64]: ...


BID_SIGMA = 1.5
MAX_T = 13.0
_T_GRID = np.arange(0, 2 * MAX_T + 1) / 2  # every value t(h) can take


def hand_tricks(hands: npt.ArrayLike) -> npt.NDArray[np.float64]:
    """(...) float: the model's trick count t(h) of (...) uint64 13-card hands."""
    h = np.asarray(hands, dtype=np.uint64)
    t = np.zeros(h.shape, dtype=np.float64)
    one = np.uint64(1)
    for s in range(NUM_SUITS):
        length = np.bitwise_count(h & SUIT_MASK[s]).astype(np.float64)
        ace = ((h >> np.uint64(13 * s + 12)) & one).astype(np.float64)
        king = ((h >> np.uint64(13 * s + 11)) & one).astype(np.float64)
        queen = ((h >> np.uint64(13 * s + 10)) & one).astype(np.float64)
        t += ace + king * (length >= 2) + 0.5 * queen * (length >= 3)
        if s == 0:
            t += np.maximum(length - 3, 0)
    return np.minimum(t, MAX_T)


def bid_probability(
    bid: npt.ArrayLike, t: npt.ArrayLike, max_bid: int = 13
) -> npt.NDArray[np.float64]:
    """P(bid | t) of the model, broadcasting bid and t."""
    b = np.asarray(bid, dtype=np.float64)
    tt = np.asarray(t, dtype=np.float64)
    bids = np.arange(max_bid + 1, dtype=np.float64)
    z = np.exp(-((bids - tt[..., None]) ** 2) / (2 * BID_SIGMA**2)).sum(axis=-1)
    return np.exp(-((b - tt) ** 2) / (2 * BID_SIGMA**2)) / z


def _weighted_seats(view: SeatView, game: int) -> list[int]:
    seat = int(view.seat[game])
    return [
        s
        for s in range(view.rules.num_players)
        if s != seat and view.bids[game, s] >= 0 and not view.blind[game, s]
    ]


def _partner(view: SeatView, game: int) -> int:
    p = view.rules.num_players
    return (int(view.seat[game]) + p // 2) % p


def bid_hands(view: SeatView, worlds: npt.ArrayLike, game: int = 0) -> npt.NDArray[np.uint64]:
    """(n, P) uint64: the hand each seat bid with, in each world (see the module doc)."""
    w = np.asarray(worlds, dtype=np.uint64)
    hands = w | view.played_by[game][None, :]
    partner = _partner(view, game)
    if view.passed[game] and view.received[game]:  # RULES.md §2: the exchange was made
        hands[:, partner] = (hands[:, partner] & ~view.passed[game]) | view.received[game]
    return hands


def world_bid_weights(
    view: SeatView, worlds: npt.ArrayLike, game: int = 0
) -> npt.NDArray[np.float64]:
    """(n,) the model's weight of each world: product of P(bid | hand) over the seats."""
    hands = bid_hands(view, worlds, game)
    weight = np.ones(hands.shape[0])
    for s in _weighted_seats(view, game):
        bid = int(view.bids[game, s])
        weight *= bid_probability(bid, hand_tricks(hands[:, s]), view.rules.max_bid)
    return weight


def weight_bound(view: SeatView, game: int = 0, sampler: Sampler | None = None) -> float:
    """An upper bound of `world_bid_weights`: per seat, the largest P(bid | t) over the
    values t can take. `t` never falls when a card is added, so with a sampler's
    knowledge t lies between t(cards known to be the seat's) and t(those plus every
    unseen card it may hold)."""
    bound = 1.0
    for s in _weighted_seats(view, game):
        grid = _T_GRID
        if sampler is not None:
            know = sampler.know
            base = int(view.played_by[game, s]) | know.known[s]
            if s == _partner(view, game) and view.passed[game] and view.received[game]:
                base = (base & ~int(view.passed[game])) | int(view.received[game])
            may = 0
            for k in range(NUM_SUITS):
                if know.allowed[s] >> k & 1:
                    may |= know.free & int(SUIT_MASK[k])
            lo, hi = hand_tricks(np.uint64(base)), hand_tricks(np.uint64(base | may))
            values = _T_GRID
            grid = values[(values >= lo) & (values <= hi)]
        bound *= float(bid_probability(int(view.bids[game, s]), grid, view.rules.max_bid).max())
    return bound


def sample_weighted(
    sampler: Sampler,
    view: SeatView,
    game: int,
    n: int,
    rng: np.random.Generator,
    max_draws: int | None = None,
) -> npt.NDArray[np.uint64]:
    """(n, P) worlds drawn ∝ uniform × bid weight, by rejection (see the module doc)."""
    bound = weight_bound(view, game, sampler)
    max_draws = max_draws if max_draws is not None else 200 * n + 2000
    kept: list[npt.NDArray[np.uint64]] = []
    seen: list[tuple[npt.NDArray[np.uint64], npt.NDArray[np.float64]]] = []
    have = drawn = 0
    while have < n and drawn < max_draws:
        batch = min(max(4 * (n - have), 64), max_draws - drawn)
        cand = sampler.sample(batch, rng)
        w = world_bid_weights(view, cand, game)
        keep = rng.random(batch) * bound < w
        kept.append(cand[keep])
        seen.append((cand, w))
        have += int(keep.sum())
        drawn += batch
    out = np.concatenate(kept)[:n] if kept else np.zeros((0, view.rules.num_players), np.uint64)
    if len(out) < n:  # bids too unlikely under the model: importance resampling
        cand = np.concatenate([c for c, _ in seen])
        w = np.concatenate([x for _, x in seen])
        p = w / w.sum() if w.sum() > 0 else None
        pick = rng.choice(len(cand), size=n - len(out), p=p)
        out = np.concatenate([out, cand[pick]])
    return out
