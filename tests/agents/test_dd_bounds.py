"""The double-dummy kernel's bounds without search (agents/dd/moves.py) against plain
minimax: every bound must bracket the exact value, for either team, whoever leads,
spades broken or not (RULES.md §3)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from slow_cases import first_by_default
from test_double_dummy import TeamTricks, brute_value, positions

from agents.dd import Position, score_objective
from agents.dd.moves import spade_tricks, trick_bounds
from agents.dd.solver import _root
from spades_env.cards import str_to_card
from spades_env.rules import Rules


def spades(*ranks: str) -> int:
    return sum(1 << str_to_card(r + "S") for r in ranks)


@pytest.mark.parametrize(
    ("mine", "theirs", "sure"),
    [
        (("K", "Q", "J"), ("A",), 2),  # the ace beats one of them only
        (("K", "Q"), ("A", "J"), 1),
        (("Q", "3"), ("K", "9"), 0),  # each beaten by its own higher spade
        (("A", "2"), (), 2),  # the other team has no spade at all
        (("9", "8"), ("T",), 1),
        ((), ("A",), 0),
    ],
)
def test_spade_tricks_count_spades_no_spade_of_the_other_team_can_beat(mine, theirs, sure):
    assert spade_tricks(spades(*mine), spades(*theirs), 13)[0] == sure


def test_spade_tricks_stop_at_what_the_question_needs() -> None:
    sure, low = spade_tricks(spades("A", "K", "Q", "2"), spades("3"), 2)
    assert (sure, low) == (2, spades("K"))  # the count rests on AS and KS only


def unbroken_endings(seed: int, n: int, tricks: int) -> list[Position]:
    """Random endings of `tricks` cards a seat with spades unbroken: voids in spades and
    seats holding only spades come up often."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        cards = rng.choice(52, size=4 * tricks, replace=False)
        hands = tuple(sum(1 << int(c) for c in cards[s::4]) for s in range(4))
        out.append(Position(hands, int(rng.integers(4)), (), False))
    return out


def trick_starts(seed: int, n: int) -> list[Position]:
    found = [p for p in positions(seed, n, (8, 16)) if not p.trick]
    return found + unbroken_endings(seed, n, 3) + unbroken_endings(seed + 1, n // 2, 4)


@pytest.mark.parametrize("seed", first_by_default(range(3)))
def test_bounds_without_search_bracket_minimax(seed: int) -> None:
    checked = 0
    for pos in trick_starts(700 + seed, 40):
        root = _root(pos)
        for team in (0, 1):
            exact = brute_value(pos, TeamTricks(team, pos.tricks_won))
            for need in range(1, root.r + 1):
                want = (need, root.r - need + 1)
                lo, hi, _, _ = trick_bounds(root.H, root.leader, root.broken, team, root.r, *want)
                assert lo <= exact <= hi, (pos, team, need)
        checked += 1
    assert checked >= 50


@pytest.mark.parametrize(("bids", "team", "relative"), [((2, 0, 3, 4), 0, False),
                                                        ((0, 4, 0, 5), 1, True)])  # fmt: skip
def test_value_range_by_team_tricks_matches_enumeration(bids, team, relative) -> None:
    rules = Rules(blind_nil="never")
    obj = score_objective(rules, bids, team=team, relative=relative)
    start = (3, 2, 1, 3)  # tricks taken so far, 4 left
    for r in range(5):
        for t in range(r + 1):
            vals = []
            for winners in itertools.product(range(4), repeat=r):
                if sum(1 for w in winners if w % 2 == team) != t:
                    continue
                won = list(start)
                for w in winners:
                    won[w] += 1
                won[0] += 4 - r  # the other tricks left went to seat 0 before
                vals.append(obj.value_of(won))
            base = list(start)
            base[0] += 4 - r
            a = obj.acc_of(base)
            assert obj.tmin[a, r, t] == min(vals) and obj.tmax[a, r, t] == max(vals)
