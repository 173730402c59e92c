"""The double-dummy solver against plain minimax, against DDS (bridge with spades trump),
and against the engine's rules."""

from __future__ import annotations

from functools import cache

import numpy as np
import pytest

from agents.dd import (
    DDSolver,
    Position,
    PositionError,
    equivalent_groups,
    hand_values,
    kernel,
    score_objective,
    tricks_table,
)
from agents.dd.solver import _root
from spades_env.cards import TWO_OF_CLUBS, str_to_card
from spades_env.engine import random_legal_actions, step
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import PLAY, deal_hands, init


# ----------------------------------------------------------------------------- helpers
def positions(seed: int, n: int, cards_left: tuple[int, int], rules: Rules | None = None):
    """Positions of random games with `cards_left` (lo, hi) cards still to be played."""
    rng = np.random.default_rng(seed)
    rules = rules or Rules(blind_nil="never")
    state = init(rules, n, rng)
    target = rng.integers(52 - cards_left[1], 52 - cards_left[0] + 1, size=n)  # cards played
    out: list[Position | None] = [None] * n
    for _ in range(4 + 52):
        for g in range(n):
            done = int(state.tricks_played[g]) * 4 + int(state.trick_size[g])
            if out[g] is None and state.phase[g] == PLAY and done == target[g]:
                out[g] = Position.from_state(state, g)
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return [p for p in out if p is not None]


def brute_value(pos: Position, leaf) -> float:
    """Plain minimax over every legal card; `leaf(tricks_won)` values finished hands for
    team `leaf.team`, which maximises it."""

    @cache
    def go(p: Position) -> float:
        if p.tricks_left == 0:
            return leaf(p.tricks_won)
        vals = [go(p.play(c)) for c in p.legal_cards()]
        return max(vals) if p.to_act % 2 == leaf.team else min(vals)

    return go(pos)


class TeamTricks:
    def __init__(self, team: int, start: tuple[int, ...]) -> None:
        self.team, self.start = team, start

    def __call__(self, won: tuple[int, ...]) -> float:
        return sum(won[s] - self.start[s] for s in (self.team, self.team + 2))


class TeamScore:
    def __init__(self, rules: Rules, bids, team: int, relative: bool = False) -> None:
        self.rules, self.bids, self.team, self.relative = rules, bids, team, relative

    def __call__(self, won: tuple[int, ...]) -> float:
        v = hand_values(self.rules, self.bids, [False] * 4, [won], self.team, None, self.relative)
        return float(v[0])


# ----------------------------------------------------------------------------- tricks
@pytest.mark.parametrize("seed", range(4))
def test_tricks_equal_plain_minimax_on_small_endings(seed: int) -> None:
    solver = DDSolver(tt_bits=14)
    for pos in positions(seed, 40, (4, 16)):
        team = pos.to_act % 2
        assert solver.tricks(pos) == brute_value(pos, TeamTricks(team, pos.tricks_won)), pos


@pytest.mark.parametrize("seed", range(2))
def test_tricks_for_either_team_sum_to_tricks_left(seed: int) -> None:
    solver = DDSolver(tt_bits=14)
    for pos in positions(100 + seed, 30, (8, 24)):
        mine = solver.tricks(pos, team=pos.to_act % 2)
        theirs = solver.tricks(pos, team=1 - pos.to_act % 2)
        assert mine + theirs == pos.tricks_left


@pytest.mark.parametrize("seed", range(3))
def test_move_values_match_minimax_per_card(seed: int) -> None:
    solver = DDSolver(tt_bits=14, reuse_tricks=True)
    for pos in positions(200 + seed, 25, (4, 12)):
        team = pos.to_act % 2
        values = solver.move_values(pos)
        assert sorted(values) == pos.legal_cards()
        for card, value in values.items():
            child = pos.play(card)
            assert value == brute_value(child, TeamTricks(team, pos.tricks_won))
        assert max(values.values()) == solver.tricks(pos)


def test_any_first_guess_gives_the_minimax_value() -> None:
    # The driver's first question comes from a playout (every seat plays its first
    # ordered card); a guess only orders the questions, never changes the answer.
    solver = DDSolver(tt_bits=14)
    for pos in positions(300, 12, (6, 14)):
        team = pos.to_act % 2
        want = brute_value(pos, TeamTricks(team, pos.tricks_won))
        root = _root(pos.play(pos.first_lead) if pos.first_lead >= 0 and not pos.trick else pos)
        hands = root.H.copy()
        guess = solver._playout(root, team)
        assert 0 <= guess <= root.r and (hands == root.H).all()  # H is left as it was
        for g in range(-1, pos.tricks_left + 2):
            solver._start(kernel.TRICKS, fresh=True)
            assert solver._tricks(pos, team, g) == want, (pos, g)


def test_any_killer_leads_give_the_minimax_value() -> None:
    # Killer leads (the last lead that cut, per tricks left and leader) only order the
    # moves: stale ones from another deal, or cards the leader does not hold, change
    # nothing but the order.
    solver = DDSolver(tt_bits=14)
    rng = np.random.default_rng(5)
    for pos in positions(310, 12, (6, 14)):
        team = pos.to_act % 2
        want = brute_value(pos, TeamTricks(team, pos.tricks_won))
        for _ in range(3):
            solver._start(kernel.TRICKS, fresh=True)
            solver._P[kernel.P_KILL :] = rng.integers(-1, 52, size=len(solver._P) - kernel.P_KILL)
            assert solver._tricks(pos, team) == want, pos


def test_first_lead_two_of_clubs_is_forced() -> None:
    rules = Rules(first_lead="two_of_clubs")
    deal = deal_hands(rules, np.array([7], dtype=np.uint64), np.zeros(1, dtype=np.int64))[0]
    pos = Position.from_deal(deal, 0, rules=rules)
    assert pos.legal_cards() == [TWO_OF_CLUBS]
    assert pos.hands[pos.leader] >> TWO_OF_CLUBS & 1
    # Seat 3 holds all the clubs, so it leads 2C, whoever "leads": every row the same.
    suits = np.array([(1 << 13) - 1 << (13 * s) for s in range(4)], dtype=np.uint64)
    table = tricks_table(suits, rules)
    assert table.tolist() == [[13, 0]] * 4  # seat 0's spades ruff every club


# ----------------------------------------------------------------------------- score
SCORE_CASES = [
    # bids, nil_tricks option, relative
    ((3, 3, 3, 3), "bags", False),
    ((2, 0, 4, 1), "bags", False),
    ((0, 2, 1, 0), "bags", True),
    ((0, 3, 2, 2), "count", False),
    ((1, 1, 0, 0), "count", True),
]


@pytest.mark.parametrize(("bids", "nil_tricks", "relative"), SCORE_CASES)
def test_score_equals_plain_minimax_with_nil_and_bags(bids, nil_tricks, relative) -> None:
    rules = Rules(blind_nil="never", nil_tricks=nil_tricks)
    solver = DDSolver(tt_bits=14)
    for i, pos in enumerate(positions(300 + sum(bids), 16, (4, 14), rules)):
        team = (pos.to_act + i) % 2  # either side, to move or not
        obj = score_objective(rules, bids, team=team, relative=relative)
        want = brute_value(pos, TeamScore(rules, bids, team, relative))
        assert solver.score(pos, obj) == pytest.approx(want), (pos, bids)


def test_objective_values_are_the_hand_score_less_bag_cost() -> None:
    rules = Rules()
    obj = score_objective(rules, (4, 3, 2, 3), team=0)
    # team 0 bid 6, took 8 (two bags): 60 + 2 - 2 * (100 / 10)
    assert obj.value_of((5, 2, 3, 3)) == 62 - 20
    # set: 5 taken of 6
    assert obj.value_of((3, 4, 2, 4)) == -60


def test_score_objective_needs_all_bids() -> None:
    with pytest.raises(ValueError, match="four bids"):
        score_objective(Rules(), (3, -1, 2, 2))


# ----------------------------------------------------------------------------- rules
@pytest.mark.parametrize("seed", range(3))
def test_position_legality_matches_the_engine(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for rules in (Rules(blind_nil="never"), Rules(blind_nil="never", first_lead="two_of_clubs")):
        game = SingleGame(rules, rng)
        while not game.done and game.hand_no == 0:
            if game.phase == PLAY:
                pos = Position.from_state(game.state)
                assert pos.legal_cards() == game.legal_list()
                card = int(rng.choice(game.legal_list()))
                after = pos.play(card)
                game.step(card)
                if game.hand_no == 0:
                    assert after == Position.from_state(game.state)
            else:
                game.step(int(rng.choice(game.legal_list())))


def test_equivalent_groups_merge_touching_cards_only() -> None:
    h = [
        ["AS", "QS", "JS", "9S"],  # 10S is with seat 1 and KS gone: A-Q-J touch, 9 apart
        ["TS", "2H", "3H", "4H"],
        ["5H", "6H", "7H", "8H"],
        ["9H", "TH", "JH", "QH"],
    ]
    hands = tuple(sum(1 << str_to_card(c) for c in row) for row in h)
    pos = Position(hands, leader=0, broken=True)
    groups = {tuple(sorted(g)) for g in equivalent_groups(pos)}
    as_, qs, js, ns = (str_to_card(c) for c in ("AS", "QS", "JS", "9S"))
    assert groups == {tuple(sorted((as_, qs, js))), (ns,)}


@pytest.mark.parametrize("preset", ["jokers", "cutthroat", "three_player"])
def test_presets_outside_the_partnership_game_are_refused(preset: str) -> None:
    rules = Rules.preset(preset)
    state = init(rules, 1, np.random.default_rng(0))
    while state.phase[0] != PLAY:
        step(state, random_legal_actions(state.legal, state.phase, np.random.default_rng(1)))
    with pytest.raises(PositionError, match="partnerships"):
        Position.from_state(state)


def test_bad_positions_are_refused() -> None:
    with pytest.raises(PositionError):
        Position((1, 1, 2, 4), leader=0)
    with pytest.raises(PositionError):
        Position((1, 2, 4, 8 | 16), leader=0)


def test_all_trumps_take_every_trick() -> None:
    spades = (1 << 13) - 1
    deal = np.array([spades << (13 * s) for s in range(4)], dtype=np.uint64)
    table = tricks_table(deal, Rules())
    assert table.tolist() == [[13, 0]] * 4  # seat 0 holds every spade (RULES.md §3)


# ----------------------------------------------------------------------------- DDS
def _pbn(pos: Position) -> str:
    hands = list(pos.hands)
    for j, c in enumerate(pos.trick):  # back to the trick's start
        hands[(pos.leader + j) % 4] |= 1 << c
    suits = []
    for h in hands:
        parts = []
        for s in range(4):
            parts.append(
                "".join("23456789TJQKA"[r] for r in range(12, -1, -1) if h >> (13 * s + r) & 1)
            )
        suits.append(".".join(parts))
    return "N:" + " ".join(suits)


def dds_tricks(pos: Position) -> int:
    """Bridge double dummy with spades trump (DDS through endplay), side to play."""
    endplay = pytest.importorskip("endplay")
    from endplay.dds import solve_board
    from endplay.types import Deal, Denom, Player

    del endplay
    deal = Deal(_pbn(pos), first=Player(pos.leader), trump=Denom.spades)
    for c in pos.trick:
        deal.play("SHDC"[c // 13] + "23456789TJQKA"[c % 13])
    return max(t for _, t in solve_board(deal))


@pytest.mark.parametrize("seed", range(3))
def test_broken_spades_tricks_equal_bridge_double_dummy(seed: int) -> None:
    pytest.importorskip("endplay")
    solver = DDSolver(tt_bits=18)
    found = 0
    for pos in positions(400 + seed, 40, (12, 28)):
        if pos.broken:
            assert solver.tricks(pos) == dds_tricks(pos), pos
            found += 1
    assert found >= 10


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_full_deals_with_spades_broken_equal_bridge_double_dummy(seed: int) -> None:
    pytest.importorskip("endplay")
    rng = np.random.default_rng(seed)
    deals = deal_hands(Rules(), rng.integers(0, 2**63, size=4, dtype=np.uint64), np.zeros(4))
    for deal in deals:
        pos = Position.from_deal(deal, int(rng.integers(4)), broken=True)
        assert DDSolver().tricks(pos) == dds_tricks(pos)


def test_positions_from_a_seat_view_and_sampled_worlds() -> None:
    from agents.montecarlo.sampling import sample_worlds
    from spades_env.observation import seat_view

    rng = np.random.default_rng(9)
    state = init(Rules(blind_nil="never"), 8, rng)
    for _ in range(4 + 38):  # bids, then 9 tricks and 2 cards
        step(state, random_legal_actions(state.legal, state.phase, rng))
    view = seat_view(state)
    solver = DDSolver(tt_bits=16)
    for g in range(8):
        truth = state.hands[g] & ~state.played[g]
        assert Position.from_view(view, truth, g) == Position.from_state(state, g)
        for world in sample_worlds(view, 3, rng, game=g):
            pos = Position.from_view(view, world, g)
            assert pos.hands[pos.to_act] == int(view.hand[g])
            values = solver.move_values(pos)
            assert set(values) == set(pos.legal_cards())
