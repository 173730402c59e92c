"""Exactness of the double-dummy solver's partition search (agents/dd): one table shared
by many different positions, against plain minimax and against DDS (bridge with spades
trump, where spades are already broken, RULES.md §3)."""

from __future__ import annotations

import numpy as np
import pytest
from test_double_dummy import TeamScore, TeamTricks, brute_value, dds_tricks, positions

from agents.dd import DDSolver, Position, score_objective
from spades_env.cards import str_to_card
from spades_env.rules import Rules
from spades_env.state import deal_hands


def hand(*cards: str) -> int:
    return sum(1 << str_to_card(c) for c in cards)


def random_deals(seed: int, n: int) -> list[tuple[np.ndarray, int]]:
    """`n` random 52-card deals, each with a random seat on lead."""
    rng = np.random.default_rng(seed)
    deals = deal_hands(Rules(), rng.integers(0, 2**63, size=n, dtype=np.uint64), np.zeros(n))
    return [(d, int(rng.integers(4))) for d in deals]


@pytest.mark.parametrize("seed", range(3))
def test_a_table_shared_across_positions_gives_minimax_per_card(seed: int) -> None:
    # One solver keeps its table across 60 positions (about 3 tricks to go, mid-trick
    # ones included) and both teams: an entry found for one position and reused for
    # another must be right for both.
    solver = DDSolver(tt_bits=16, reuse_tricks=True)
    found = 0
    for pos in positions(500 + seed, 60, (9, 13)):
        for team in (0, 1):
            want = brute_value(pos, TeamTricks(team, pos.tricks_won))
            assert solver.tricks(pos, team) == want, (pos, team)
        team = pos.to_act % 2
        for card, value in solver.move_values(pos).items():
            assert value == brute_value(pos.play(card), TeamTricks(team, pos.tricks_won))
        found += 1
    assert found >= 50


def test_a_run_of_equal_cards_split_elsewhere_is_not_shared() -> None:
    # Seat 0 bid nil with 5S 7S 8S, seat 3 holds 6S: with 7S-8S touching, seat 0's
    # ruff keeps a spade above 6S whichever it plays; with 5S and 8S it need not. An
    # entry learnt where 7S-8S merge must not answer for 5S-8S (RULES.md §3, §4).
    pos = Position(
        (hand("5S", "7S", "8S"), hand("KS", "6C", "QC"), hand("AD", "3C", "8C"),
         hand("6S", "9S", "QS", "AC")),
        leader=0,
        trick=tuple(str_to_card(c) for c in ("TS", "2S", "JS")),
        broken=True,
        tricks_won=(1, 3, 1, 4),
    )  # fmt: skip
    rules = Rules(blind_nil="never")
    obj = score_objective(rules, (0, 4, 0, 5), team=1)
    values = DDSolver(tt_bits=12).move_values(pos, obj)
    # QS wins this trick and team 1 then cannot dodge a 10th trick: 90 + 1 - 10 bag
    # cost; ducking with 9S or 6S keeps it to 9 tricks, exactly the bid: 90.
    want = {"QS": 81.0, "9S": 90.0, "6S": 90.0}
    assert values == {str_to_card(c): v for c, v in want.items()}
    for card, value in values.items():
        assert value == brute_value(pos.play(card), TeamScore(rules, (0, 4, 0, 5), 1))


@pytest.mark.parametrize("bids", [(2, 0, 3, 4), (0, 4, 0, 5)])
def test_score_with_nil_equals_minimax_from_random_positions(bids) -> None:
    rules = Rules(blind_nil="never")
    solver = DDSolver(tt_bits=16)
    for i, pos in enumerate(positions(600 + bids[0], 40, (9, 13), rules)):
        team = i % 2
        obj = score_objective(rules, bids, team=team)
        want = brute_value(pos, TeamScore(rules, bids, team))
        assert solver.score(pos, obj) == pytest.approx(want), (pos, bids, team)
        values = solver.move_values(pos, obj)
        for card, value in values.items():
            assert value == pytest.approx(brute_value(pos.play(card), TeamScore(rules, bids, team)))


def test_full_deals_with_spades_broken_equal_dds() -> None:
    # 3 deals here (a full deal takes our solver about a second, DDS a quarter);
    # 40 more solves under -m slow
    pytest.importorskip("endplay")
    solver = DDSolver()
    for deal, leader in random_deals(1000, 3):
        pos = Position.from_deal(deal, leader, broken=True)
        assert solver.tricks(pos) == dds_tricks(pos), pos


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(4))
def test_more_full_deals_with_spades_broken_equal_dds(seed: int) -> None:
    pytest.importorskip("endplay")
    solver = DDSolver(reuse_tricks=True)  # one table across deals and leaders, too
    for deal, leader in random_deals(2000 + seed, 5):
        for lead in (leader, (leader + 1) % 4):
            pos = Position.from_deal(deal, lead, broken=True)
            assert solver.tricks(pos) == dds_tricks(pos), pos
