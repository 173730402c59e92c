"""`DDSolver.judge`, the review's fast path for the Spades score, equals the plain solver:
along random lines of play, judged from the last card back with one table and one
objective for the line (team 0's relative score, team 1's being its negation), each
card's best value, its own value and the best cards are those of `move_values` solved
afresh with the mover's own objective; and a search that gives up at its node limit
answers nothing and leaves the table sound."""

from __future__ import annotations

import numpy as np
import pytest
from test_double_dummy import positions

from agents.dd import DDSolver, Position, score_objective
from agents.dd.solver import SearchLimitError
from spades_env.rules import Rules

RULES = Rules(blind_nil="always")


def _line(pos: Position, rng: np.random.Generator) -> list[tuple[Position, int]]:
    """A random line of play from `pos` to the end of the hand: (position, card) pairs."""
    out = []
    while pos.tricks_left:
        card = int(rng.choice(pos.legal_cards()))
        out.append((pos, card))
        pos = pos.play(card)
    return out


def _bids(rng: np.random.Generator) -> tuple[tuple[int, ...], tuple[bool, ...]]:
    """Four bids, each a nil (a third of them blind) about one time in three."""
    bids = tuple(0 if rng.random() < 0.35 else int(rng.integers(1, 6)) for _ in range(4))
    blind = tuple(b == 0 and rng.random() < 0.33 for b in bids)
    return bids, blind


def _check_lines(seed: int, n: int, cards_left: tuple[int, int]) -> int:
    rng = np.random.default_rng(seed)
    fast = DDSolver(tt_bits=16, reuse_score=True)
    checked = 0
    for start in positions(seed, n, cards_left, RULES):
        bids, blind = _bids(rng)
        line_obj = score_objective(RULES, bids, blind, 0, relative=True)
        mine = [score_objective(RULES, bids, blind, t, relative=True) for t in (0, 1)]
        played = None
        for pos, card in reversed(_line(start, rng)):
            if rng.random() < 0.2:
                played = None  # judge also solves the card's own value
            value, played, best = fast.judge(pos, line_obj, card, played, most=4)
            sign = 1.0 if pos.to_act % 2 == 0 else -1.0
            want = DDSolver(tt_bits=16).move_values(pos, mine[pos.to_act % 2])
            top = max(want.values())
            assert sign * value == top, (pos, card, bids, blind)
            assert sign * played == want[card], (pos, card, bids, blind)
            assert best == sorted(c for c, v in want.items() if v == top)[:4]
            played = value
            checked += 1
    return checked


@pytest.mark.parametrize("seed", range(3))
def test_judging_a_line_back_equals_the_plain_solver(seed: int) -> None:
    assert _check_lines(700 + seed, 6, (12, 20)) >= 60


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_judging_long_lines_back_equals_the_plain_solver(seed: int) -> None:
    assert _check_lines(800 + seed, 8, (20, 32)) >= 150


def test_every_best_card_is_listed_without_a_limit() -> None:
    rng = np.random.default_rng(5)
    solver = DDSolver(tt_bits=16)
    for pos in positions(5, 20, (8, 16), RULES):
        bids, blind = _bids(rng)
        obj = score_objective(RULES, bids, blind, pos.to_act % 2, relative=True)
        want = solver.move_values(pos, obj)
        top = max(want.values())
        card = int(rng.choice(pos.legal_cards()))
        value, played, best = solver.judge(pos, obj, card)
        assert (value, played) == (top, want[card])
        assert best == sorted(c for c, v in want.items() if v == top)


def test_a_search_past_its_node_limit_gives_up_and_leaves_the_table_sound() -> None:
    rng = np.random.default_rng(11)
    solver = DDSolver(tt_bits=16, reuse_score=True)
    start = positions(11, 1, (44, 44), RULES)[0]  # 11 tricks to go: far past 500 nodes
    bids, blind = (3, 0, 4, 5), (False, False, False, False)
    obj = score_objective(RULES, bids, blind, 0, relative=True)
    line = _line(start, rng)
    solver.node_limit = 500
    with pytest.raises(SearchLimitError):
        solver.judge(line[0][0], obj, line[0][1])
    assert solver.nodes >= 500
    solver.node_limit = None
    plain = DDSolver(tt_bits=16)
    for pos, card in line[-12:]:  # the same table, limit lifted: still exact
        assert solver.judge(pos, obj, card) == plain.judge(pos, obj, card)
