"""Score-aware objectives for the double-dummy solver: hand score with nil and bags.

The value of a finished hand to a team is its RULES.md §4 hand score (`score_hand`, so
every option of `Rules` counts, `nil_tricks` included) minus a cost per bag:

    value = points[team] - bag_cost * bags[team]

with `bag_cost = bag_penalty / bag_limit` by default (10 points a bag in `standard`:
the penalty spread evenly over the bags that trigger it). With `relative=True` the
value is that of the team minus that of the other team (a zero-sum objective).

The solver plays it as a two-sided game: the team maximises the value, the other team
minimises it (double dummy, worst case). The value depends only on a few sums of the
tricks per seat; `coef` maps the tricks taken so far to one small index `acc` (seats
whose tricks do not matter get 0; non-nil partners share one count), so the solver's
table can key on it.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spades_env.rules import Rules
from spades_env.scoring import score_hand

BASE = 14  # counts 0..13 per group


@dataclass(frozen=True)
class ScoreObjective:
    """A value table over the final tricks of each seat, from one team's side."""

    team: int  # the maximising team (RULES.md §1: team = seat % 2)
    coef: npt.NDArray[np.int64]  # (4,) acc += coef[seat] when seat takes a trick
    values: npt.NDArray[np.float64]  # (A,) value of each final acc (nan if never final)
    fmin: npt.NDArray[np.float64]  # (A, hand_size + 1) least value reachable, r tricks left
    fmax: npt.NDArray[np.float64]  # (A, hand_size + 1) greatest value reachable
    # (A, hand_size + 1, hand_size + 1) the same when `team` takes exactly t of the r
    # tricks left ([acc, r, t]); (1, 1, 1) where that table would be too large
    tmin: npt.NDArray[np.float64]
    tmax: npt.NDArray[np.float64]

    def acc_of(self, tricks: npt.ArrayLike) -> int:
        return int(np.dot(self.coef, np.asarray(tricks, dtype=np.int64)))

    def value_of(self, tricks: npt.ArrayLike) -> float:
        """The value of a finished hand with these tricks per seat."""
        return float(self.values[self.acc_of(tricks)])


def hand_values(
    rules: Rules,
    bids: npt.ArrayLike,
    blind: npt.ArrayLike,
    tricks: npt.ArrayLike,
    team: int,
    bag_cost: float | None = None,
    relative: bool = False,
) -> npt.NDArray[np.float64]:
    """(N,) value to `team` of finished hands with (N, 4) tricks per seat (see above)."""
    t = np.atleast_2d(np.asarray(tricks, dtype=np.int32))
    n = t.shape[0]
    b = np.broadcast_to(np.asarray(bids, dtype=np.int32), (n, 4))
    bl = np.broadcast_to(np.asarray(blind, dtype=bool), (n, 4))
    hs = score_hand(rules, b, bl, t)
    cost = rules.bag_penalty / rules.bag_limit if bag_cost is None else float(bag_cost)
    net = hs.points - cost * hs.bags
    out = net[:, team].astype(np.float64)
    if relative:
        out = out - net[:, 1 - team]
    return out


def score_objective(
    rules: Rules,
    bids: npt.ArrayLike,
    blind: npt.ArrayLike | None = None,
    team: int = 0,
    *,
    bag_cost: float | None = None,
    relative: bool = False,
) -> ScoreObjective:
    """The objective of `team` for a hand with these bids ((4,), 0 = nil)."""
    bids_a = np.asarray(bids, dtype=np.int64)
    if bids_a.shape != (4,) or (bids_a < 0).any():
        raise ValueError("a score objective needs the four bids of the hand (0 = nil)")
    blind_a = np.zeros(4, dtype=bool) if blind is None else np.asarray(blind, dtype=bool)
    # Groups: seats whose tricks matter; non-nil partners share one count, since the
    # score only sees their sum (RULES.md §4), and each nil bidder has its own.
    coef = np.zeros(4, dtype=np.int64)
    groups = 0
    for t in range(2):
        if not relative and t != team:
            continue
        shared = -1
        for s in (t, t + 2):
            if bids_a[s] == 0:
                coef[s] = BASE**groups
                groups += 1
            else:
                if shared < 0:
                    shared = groups
                    groups += 1
                coef[s] = BASE**shared
    size = BASE**groups
    h = rules.hand_size
    finals = np.array(
        [(*x, h - sum(x)) for x in itertools.product(range(h + 1), repeat=3) if sum(x) <= h],
        dtype=np.int64,
    )
    vals = hand_values(rules, bids_a, blind_a, finals, team, bag_cost, relative)
    acc = finals @ coef
    values = np.full(size, np.nan)
    values[acc] = vals
    if not np.array_equal(values[acc], vals):
        raise AssertionError("the hand value depends on more than the grouped tricks")
    fmin = np.full((size, h + 1), np.inf)
    fmax = np.full((size, h + 1), -np.inf)
    known = ~np.isnan(values)
    fmin[known, 0] = values[known]
    fmax[known, 0] = values[known]
    for r in range(1, h + 1):
        for c in coef:
            c = int(c)
            lo = fmin[c:, r - 1] if c else fmin[:, r - 1]
            hi = fmax[c:, r - 1] if c else fmax[:, r - 1]
            fmin[: size - c, r] = np.minimum(fmin[: size - c, r], lo)
            fmax[: size - c, r] = np.maximum(fmax[: size - c, r], hi)
    tmin, tmax = _by_team_tricks(coef, values, team, h)
    return ScoreObjective(team, coef, values, fmin, fmax, tmin, tmax)


MAX_TEAM_TABLE = 1 << 21  # entries of `tmin`: the 4-group relative objective goes without


def _by_team_tricks(coef, values, team: int, h: int):
    """tmin / tmax [acc, r, t]: least / greatest value reachable from `acc` with r tricks
    left of which `team` takes exactly t (inf / -inf where impossible). With a bound on
    the team's tricks (`agents.dd.moves.trick_bounds`) the solver reads the value range
    of the tricks the bound allows."""
    size = len(values)
    if size * (h + 1) ** 2 > MAX_TEAM_TABLE:
        return np.full((1, 1, 1), np.inf), np.full((1, 1, 1), -np.inf)
    tmin = np.full((size, h + 1, h + 1), np.inf)
    tmax = np.full((size, h + 1, h + 1), -np.inf)
    known = ~np.isnan(values)
    tmin[known, 0, 0] = values[known]
    tmax[known, 0, 0] = values[known]
    for r in range(1, h + 1):
        for seat, c in enumerate(coef):
            c = int(c)
            dt = 1 if seat % 2 == team else 0
            for t in range(dt, r + 1):
                lo = tmin[c:, r - 1, t - dt]
                hi = tmax[c:, r - 1, t - dt]
                tmin[: size - c, r, t] = np.minimum(tmin[: size - c, r, t], lo)
                tmax[: size - c, r, t] = np.maximum(tmax[: size - c, r, t], hi)
    return tmin, tmax
