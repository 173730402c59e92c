"""Scoring a hand and carrying bags: pure functions of bids and tricks (RULES.md §4, §5).

All functions take batched arrays whose first axis is the game; a single hand is a batch
of one. Nothing here depends on the cards. The rules are the compiled core's
(core/scoring.py: `score_hand`, `apply_bags`, `game_winner`), run over the batch.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from numba import njit

from spades_env.core import scoring as _core
from spades_env.core.rules_vector import rules_vector
from spades_env.rules import Rules

IntArray = npt.NDArray[np.int32]


@dataclass(frozen=True)
class HandScore:
    """What one hand is worth to each team, before the bag penalty."""

    points: IntArray  # (B, T) int32 hand points per team (bag penalty not included)
    bags: IntArray  # (B, T) int32 bags earned this hand
    contract: IntArray  # (B, T) int32 sum of the team's non-nil bids
    made: npt.NDArray[np.bool_]  # (B, T) bool contract made (True where contract is 0)


def score_hand(
    rules: Rules,
    bids: npt.ArrayLike,
    blind: npt.ArrayLike,
    tricks: npt.ArrayLike,
) -> HandScore:
    """Score finished hands (RULES.md §4; §6 family).

    bids: (B, P) bids per seat, 0 = nil. blind: (B, P) bool, the nil was blind.
    tricks: (B, P) tricks taken per seat.
    """
    p, k = rules.num_players, rules.hand_size
    bids_a = _table(bids, p, "bids", 0, k)
    blind_a = _table(blind, p, "blind", 0, 1).astype(bool)
    tricks_a = _table(tricks, p, "tricks", 0, k)
    if not bids_a.shape == blind_a.shape == tricks_a.shape:
        raise ValueError(
            f"bids, blind and tricks must have one shape; got {bids_a.shape}, "
            f"{blind_a.shape} and {tricks_a.shape}"
        )
    b, t = bids_a.shape[0], rules.num_teams
    points = np.zeros((b, t), dtype=np.int32)
    bags = np.zeros((b, t), dtype=np.int32)
    contract = np.zeros((b, t), dtype=np.int32)
    made = np.zeros((b, t), dtype=bool)
    _score_all(rules_vector(rules), bids_a, blind_a, tricks_a, points, bags, contract, made)
    return HandScore(points=points, bags=bags, contract=contract, made=made)


def apply_bags(
    rules: Rules, scores: npt.ArrayLike, bags: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    """RULES.md §4: each time bags reach the limit, lose the penalty and the limit's bags.

    Returns (scores, bags, penalties) after the penalty; inputs are cumulative totals.
    """
    i32 = np.iinfo(np.int32)
    s, bg = np.broadcast_arrays(
        _table(scores, None, "scores", i32.min, i32.max),
        _table(bags, None, "bags", 0, i32.max),
    )
    s, bg = s.copy(), bg.copy()
    penalty = np.zeros_like(s)
    _bags_all(rules_vector(rules), s.reshape(-1), bg.reshape(-1), penalty.reshape(-1))
    return s, bg, penalty


def game_result(
    rules: Rules, scores: npt.ArrayLike, hands_played: npt.ArrayLike
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
    """RULES.md §5: is each game over after this hand, and who won (-1 = not over).

    The game ends when a team reaches the target, when a team is at or below `lose_at`,
    or after `max_hands`; the highest score wins, and an exact tie for the top plays
    another hand.
    """
    i32 = np.iinfo(np.int32)
    s = _table(scores, rules.num_teams, "scores", i32.min, i32.max)
    played = _table(hands_played, None, "hands_played", 0, i32.max).reshape(-1)
    try:
        n = np.broadcast_to(played.astype(np.int64), (s.shape[0],))
    except ValueError:
        raise ValueError(f"give one hands_played or one per game; got {played.size}") from None
    winner = np.zeros(s.shape[0], dtype=np.int8)
    _winners(rules_vector(rules), s, np.ascontiguousarray(n), winner)
    return winner >= 0, winner


def _table(
    value: npt.ArrayLike, width: int | None, what: str, lo: int, hi: int
) -> npt.NDArray[np.int32]:
    """`value` as int32, checked: whole numbers in lo..hi and, with `width`, rows of
    `width` (one per seat or team; a 1-d value is one row). The compiled loops below
    read `width` values a row unchecked, so a short row would read past the array."""
    try:
        raw = np.asarray(value)
        if raw.dtype.kind == "O":
            raw = np.asarray(value, dtype=np.float64)
    except (ValueError, TypeError, OverflowError):
        raise ValueError(f"{what} must be whole numbers {lo}..{hi}; got {value!r}") from None
    if raw.dtype.kind not in "biuf":
        raise ValueError(f"{what} must be whole numbers {lo}..{hi}; got {value!r}")
    with np.errstate(invalid="ignore"):
        ok = np.isfinite(raw) & (raw == np.round(raw)) & (raw >= lo) & (raw <= hi)
    if not ok.all():
        bad = raw.reshape(-1)[np.flatnonzero(~ok.reshape(-1))[0]].item()
        raise ValueError(f"{what} must be whole numbers {lo}..{hi}; got {bad!r}")
    arr = raw.astype(np.int32)
    if width is None:
        return arr
    arr = np.atleast_2d(arr)
    if arr.ndim != 2 or arr.shape[1] != width:
        raise ValueError(f"{what} must have shape (B, {width}) or ({width},); got {raw.shape}")
    return np.ascontiguousarray(arr)


@njit(cache=True)
def _score_all(r, bids, blind, tricks, points, bags, contract, made):
    for g in range(bids.shape[0]):
        _core.score_hand(r, bids[g], blind[g], tricks[g], points[g], bags[g], contract[g], made[g])


@njit(cache=True)
def _bags_all(r, scores, bags, penalty):
    for i in range(scores.size):  # elementwise: any shape of teams and games
        penalty[i], bags[i] = _core.bag_penalty(r, bags[i])
        scores[i] -= penalty[i]


@njit(cache=True)
def _winners(r, scores, hands, out):
    for g in range(scores.shape[0]):
        out[g] = _core.game_winner(r, scores[g], hands[g])
