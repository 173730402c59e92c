"""Scoring one hand, bags and the end of the game, compiled (RULES.md §4, §5, §6 family).

`score_hand` reads the options from the rules vector (core/rules_vector.py); `spades_env.scoring`
runs these over batches for Python callers.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.core.compile import ensure_fresh
from spades_env.core.rules_vector import (
    R_BAG_LIMIT,
    R_BAG_PENALTY,
    R_BLIND_VALUE,
    R_FAMILY,
    R_HAS_LOSE,
    R_K,
    R_LOSE_AT,
    R_MAX_HANDS,
    R_NIL_COUNT,
    R_NIL_VALUE,
    R_P,
    R_T,
    R_TARGET,
    R_TEN_200,
    R_THIRTEEN,
)

ensure_fresh()


@njit(cache=True, inline="always")
def score_hand(
    r: np.ndarray,
    bids: np.ndarray,
    blind: np.ndarray,
    tricks: np.ndarray,
    points: np.ndarray,
    bags: np.ndarray,
    contract: np.ndarray,
    made: np.ndarray,
) -> None:
    """RULES.md §4: write each team's hand points (before the bag penalty), bags earned,
    contract (sum of non-nil bids) and whether it was made. Seat s is on team s % T."""
    p, t, k = r[R_P], r[R_T], r[R_K]
    for team in range(t):
        points[team] = 0
        bags[team] = 0
        contract[team] = 0
        made[team] = False
    if r[R_FAMILY]:
        # RULES.md §6 family: 1 point a trick, +5 for exactly the bid; no nil, no bags.
        for s in range(p):
            team = s % t
            points[team] += tricks[s] + (5 if tricks[s] == bids[s] else 0)
            contract[team] += bids[s]
            if tricks[s] >= bids[s]:
                made[team] = True
        return
    count_all = r[R_NIL_COUNT] == 1
    for team in range(t):
        judged, nil_taken, all_tricks, nil_points = 0, 0, 0, 0
        for s in range(team, p, t):
            all_tricks += tricks[s]
            if bids[s] == 0:
                # RULES.md §4: each nil is judged on its own, blind nil worth double.
                value = r[R_BLIND_VALUE] if blind[s] else r[R_NIL_VALUE]
                nil_points += value if tricks[s] == 0 else -value
                if count_all:
                    judged += tricks[s]
                else:  # nil_tricks=bags: +1 and a bag each, made or set
                    nil_taken += tricks[s]
            else:
                contract[team] += bids[s]
                judged += tricks[s]
        c = contract[team]
        ok = judged >= c
        over = judged - c if ok else 0  # RULES.md §4: no bags on a set hand
        base = 200 if (r[R_TEN_200] and c >= 10) else 10 * c
        value = base + over if ok else -base
        if r[R_THIRTEEN] and ok and c == k and all_tricks == k:
            value *= 2  # RULES.md §4: 13 bid and all 13 taken scores double
        made[team] = ok
        points[team] = value + nil_points + nil_taken
        bags[team] = over + nil_taken


@njit(cache=True, inline="always")
def bag_penalty(r: np.ndarray, bags: int) -> tuple[int, int]:
    """RULES.md §4: (points lost, bags left) of a team holding `bags` bags: each time the
    bags reach the limit it loses the penalty and the limit's bags."""
    times = bags // r[R_BAG_LIMIT]
    return times * r[R_BAG_PENALTY], bags - times * r[R_BAG_LIMIT]


@njit(cache=True, inline="always")
def apply_bags(r: np.ndarray, scores: np.ndarray, bags: np.ndarray, penalty: np.ndarray) -> None:
    """`bag_penalty` for every team: `scores`, `bags` (cumulative) updated in place."""
    for team in range(r[R_T]):
        penalty[team], bags[team] = bag_penalty(r, bags[team])
        scores[team] -= penalty[team]


@njit(cache=True, inline="always")
def game_winner(r: np.ndarray, scores: np.ndarray, hands_played: int) -> int:
    """RULES.md §5: the winning team if the game is over after this hand, else -1.

    It ends when a team reaches the target, a team is at or below lose_at, or after
    max_hands; the highest score wins, and an exact tie at the top plays another hand."""
    t = r[R_T]
    trigger = r[R_MAX_HANDS] >= 0 and hands_played >= r[R_MAX_HANDS]
    top, who, ties = scores[0], 0, 1
    for team in range(t):
        s = scores[team]
        if s >= r[R_TARGET] or (r[R_HAS_LOSE] and s <= r[R_LOSE_AT]):
            trigger = True
        if team > 0:
            if s > top:
                top, who, ties = s, team, 1
            elif s == top:
                ties += 1
    if trigger and ties == 1:
        return who
    return -1
