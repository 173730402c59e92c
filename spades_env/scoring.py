"""Scoring a hand and carrying bags: pure functions of bids and tricks (RULES.md §4, §5).

All functions take batched arrays whose first axis is the game; a single hand is a batch
of one. Nothing here depends on the cards.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spades_env.rules import Rules

IntArray = npt.NDArray[np.int32]


@dataclass(frozen=True)
class HandScore:
    """What one hand is worth to each team, before the bag penalty."""

    points: IntArray  # (B, T) int32 hand points per team (bag penalty not included)
    bags: IntArray  # (B, T) int32 bags earned this hand
    contract: IntArray  # (B, T) int32 sum of the team's non-nil bids
    made: npt.NDArray[np.bool_]  # (B, T) bool contract made (True where contract is 0)


def team_matrix(rules: Rules) -> npt.NDArray[np.int32]:
    """(P, T) int32: 1 where seat p belongs to team t (RULES.md §1)."""
    m = np.zeros((rules.num_players, rules.num_teams), dtype=np.int32)
    for p in range(rules.num_players):
        m[p, rules.team_of(p)] = 1
    return m


def score_hand(
    rules: Rules,
    bids: npt.ArrayLike,
    blind: npt.ArrayLike,
    tricks: npt.ArrayLike,
) -> HandScore:
    """Score finished hands (RULES.md §4).

    bids: (B, P) bids per seat, 0 = nil. blind: (B, P) bool, the nil was blind.
    tricks: (B, P) tricks taken per seat.
    """
    bids_a = np.atleast_2d(np.asarray(bids, dtype=np.int32))
    blind_a = np.atleast_2d(np.asarray(blind, dtype=bool))
    tricks_a = np.atleast_2d(np.asarray(tricks, dtype=np.int32))
    tm = team_matrix(rules)
    if rules.scoring == "family":
        return _family(bids_a, tricks_a, tm)
    nil = bids_a == 0
    contract = bids_a @ tm  # nil bids add 0
    if rules.nil_tricks == "bags":
        # RULES.md §4 `bags`: the contract is judged on the non-nil members' tricks; each
        # trick a nil bidder takes is +1 and one bag, made or set.
        judged = np.where(nil, 0, tricks_a) @ tm
        nil_taken = np.where(nil, tricks_a, 0) @ tm
    else:
        # RULES.md §4 `count`: every trick of the team judges the contract.
        judged = tricks_a @ tm
        nil_taken = np.zeros_like(judged)
    made = judged >= contract
    over = np.where(made, judged - contract, 0)  # RULES.md §4: no bags on a set hand
    per_trick = np.where(
        rules.ten_for_two_hundred & (contract >= 10), 0, 10
    )  # RULES.md §4 option ten_for_two_hundred
    base = np.where(rules.ten_for_two_hundred & (contract >= 10), 200, per_trick * contract)
    contract_points = np.where(made, base + over, -base)
    if rules.thirteen_bid_doubles:
        # RULES.md §4: a team that bids 13 and takes all 13 scores double (contract part).
        # Only a made contract doubles: under nil_tricks=bags a nil partner's trick can make
        # the team's 13 while the contract, judged without it, is set.
        all_tricks = tricks_a @ tm
        doubled = made & (contract == rules.hand_size) & (all_tricks == rules.hand_size)
        contract_points = np.where(doubled, 2 * contract_points, contract_points)
    # RULES.md §4: each nil is judged on its own, blind nil worth double.
    value = np.where(blind_a, rules.blind_nil_value, rules.nil_value)
    nil_points = np.where(nil, np.where(tricks_a == 0, value, -value), 0) @ tm
    points = contract_points + nil_points + nil_taken
    bags = over + nil_taken
    return HandScore(
        points=points.astype(np.int32),
        bags=bags.astype(np.int32),
        contract=contract.astype(np.int32),
        made=made,
    )


def _family(
    bids: npt.NDArray[np.int32], tricks: npt.NDArray[np.int32], tm: npt.NDArray[np.int32]
) -> HandScore:
    """RULES.md §6 family: 1 point a trick, +5 for taking exactly the bid; no nil, no bags,
    so no score ever goes down (seed 000: 3/3 = 8, 3/5 = 5, 4/2 = 2, 1/1 = 6)."""
    points = (tricks + 5 * (tricks == bids)) @ tm
    return HandScore(
        points=points.astype(np.int32),
        bags=np.zeros_like(points, dtype=np.int32),
        contract=(bids @ tm).astype(np.int32),
        made=((tricks >= bids) @ tm) > 0,
    )


def apply_bags(
    rules: Rules, scores: npt.ArrayLike, bags: npt.ArrayLike
) -> tuple[IntArray, IntArray, IntArray]:
    """RULES.md §4: each time bags reach the limit, lose the penalty and the limit's bags.

    Returns (scores, bags, penalties) after the penalty; inputs are cumulative totals.
    """
    s = np.asarray(scores, dtype=np.int32)
    b = np.asarray(bags, dtype=np.int32)
    times = b // rules.bag_limit
    penalty = (times * rules.bag_penalty).astype(np.int32)
    return (s - penalty).astype(np.int32), (b - times * rules.bag_limit).astype(np.int32), penalty


def game_result(
    rules: Rules, scores: npt.ArrayLike, hands_played: npt.ArrayLike
) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int8]]:
    """RULES.md §5: is each game over after this hand, and who won (-1 = not over).

    The game ends when a team reaches the target, when a team is at or below `lose_at`,
    or after `max_hands`; the highest score wins, and an exact tie for the top plays
    another hand.
    """
    s = np.atleast_2d(np.asarray(scores, dtype=np.int32))
    n = np.atleast_1d(np.asarray(hands_played))
    trigger = (s >= rules.target).any(axis=1)
    if rules.lose_at is not None:
        trigger |= (s <= rules.lose_at).any(axis=1)
    if rules.max_hands is not None:
        trigger |= n >= rules.max_hands
    top = s.max(axis=1)
    unique_top = (s == top[:, None]).sum(axis=1) == 1
    over = trigger & unique_top
    winner = np.where(over, s.argmax(axis=1), -1).astype(np.int8)
    return over, winner
