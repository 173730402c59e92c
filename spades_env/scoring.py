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
from spades_env.core.spec import spec
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
    bids_a = np.atleast_2d(np.asarray(bids, dtype=np.int32))
    blind_a = np.atleast_2d(np.asarray(blind, dtype=bool))
    tricks_a = np.atleast_2d(np.asarray(tricks, dtype=np.int32))
    b, t = bids_a.shape[0], rules.num_teams
    points = np.zeros((b, t), dtype=np.int32)
    bags = np.zeros((b, t), dtype=np.int32)
    contract = np.zeros((b, t), dtype=np.int32)
    made = np.zeros((b, t), dtype=bool)
    _score_all(spec(rules), bids_a, blind_a, tricks_a, points, bags, contract, made)
    return HandScore(points=points, bags=bags, contract=contract, made=made)


def apply_bags(
    rules: Rules, scores: npt.ArrayLike, bags: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    """RULES.md §4: each time bags reach the limit, lose the penalty and the limit's bags.

    Returns (scores, bags, penalties) after the penalty; inputs are cumulative totals.
    """
    s, bg = np.broadcast_arrays(
        np.asarray(scores, dtype=np.int32), np.asarray(bags, dtype=np.int32)
    )
    s, bg = s.copy(), bg.copy()
    penalty = np.zeros_like(s)
    _bags_all(spec(rules), s.reshape(-1), bg.reshape(-1), penalty.reshape(-1))
    return s, bg, penalty


def game_result(
    rules: Rules, scores: npt.ArrayLike, hands_played: npt.ArrayLike
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
    """RULES.md §5: is each game over after this hand, and who won (-1 = not over).

    The game ends when a team reaches the target, when a team is at or below `lose_at`,
    or after `max_hands`; the highest score wins, and an exact tie for the top plays
    another hand.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.int32))
    n = np.broadcast_to(np.atleast_1d(np.asarray(hands_played, dtype=np.int64)), (s.shape[0],))
    winner = np.zeros(s.shape[0], dtype=np.int8)
    _winners(spec(rules), s, np.ascontiguousarray(n), winner)
    return winner >= 0, winner


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
