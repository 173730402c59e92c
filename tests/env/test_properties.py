"""Properties of many random hands played in batches, checked against the small
plain-Python reference of `spades_reference.py` (written from RULES.md; it imports no
engine table).

Every finished hand is replayed action by action through the reference, which knows only
the deal, the dealer and the position before the hand. That checks: the bidding order
and blind-nil offers (§2), the exchange (§2), whose turn it is, follow suit, the spade
lead rule and the first lead (§3), every trick winner (§3: the winner leads next, and
the tricks per seat), 13 tricks and every card played exactly once (§1), and the hand's
points, bags, bag penalty, new scores and the end of the game (§4, §5).

The default run plays at least 100,000 hands in all (`DEFAULT_HANDS` per rules
configuration); the `slow` one (`pytest -m slow`) ten times as many.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from spades_reference import DONE, RefHand, game_end, team_points, trick_winner

from spades_env.engine import (
    HandResult,
    legal_action_mask,
    random_legal_actions,
    reset_done,
    step,
)
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, game_result, score_hand
from spades_env.state import init


@dataclass
class Hand:
    """One finished hand as plain Python values."""

    hand_no: int
    dealer: int
    deal: list[int]
    actions: list[tuple[int, int]]
    bids: list[int]
    blind: list[bool]
    tricks: list[int]
    scores_before: list[int]
    bags_before: list[int]
    points: list[int]
    bags_gained: list[int]
    penalty: list[int]
    scores: list[int]
    bags: list[int]
    game_over: bool
    winner: int


def hands_of(result: HandResult) -> Iterator[Hand]:
    hist = result.history.tolist()
    lens = result.history_len.tolist()
    cols = {f.name: getattr(result, f.name).tolist() for f in fields(Hand) if f.name != "actions"}
    for i in range(len(lens)):
        actions = [(h >> 7, h & 127) for h in hist[i][: lens[i]]]
        yield Hand(actions=actions, **{f: v[i] for f, v in cols.items()})


def check_hand(rules: Rules, h: Hand) -> None:
    """Replay one hand through the reference; assert every action was legal, in turn, and
    the engine's record agrees with the reference's outcome."""
    ref = RefHand(rules, h.deal, h.dealer, h.scores_before, h.bags_before)
    for seat, action in h.actions:
        assert seat == ref.turn, "out of turn (or a wrong trick winner led)"
        ref.apply(action)  # asserts the action is legal by the reference
    assert ref.phase == DONE, "the hand ended early"
    assert (ref.bids, ref.blind, ref.tricks) == (h.bids, h.blind, h.tricks)
    assert sum(h.tricks) == 13
    out = ref.outcome()
    assert out == {k: getattr(h, k) for k in out}
    winner = game_end(rules, out["scores"], h.hand_no + 1)
    assert (h.game_over, h.winner) == (winner is not None, -1 if winner is None else winner)


# ----------------------------------------------------------------------------- batches
def random_hands(rules: Rules, n_hands: int, batch: int, seed: int) -> Iterator[HandResult]:
    """Random legal play of whole games in one batch, restarting finished games, until
    `n_hands` hands have finished."""
    rng = np.random.default_rng(seed)
    state = init(rules, batch, rng)
    done = 0
    while done < n_hands:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            done += len(info.finished.games)
            yield info.finished
            reset_done(state, rng)


CONFIGS = [
    pytest.param(Rules(), id="standard"),
    pytest.param(
        Rules(nil_tricks="count", first_lead="two_of_clubs", max_total_bid=13, target=300),
        id="count-2c-max13",
    ),
    pytest.param(
        Rules(blind_nil="always", blind_nil_exchange=True, bag_limit=5, bag_penalty=50),
        id="blind-exchange-bags5",
    ),
    pytest.param(Rules(blind_nil="always", max_hands=3, lose_at=-200), id="max-hands-lose-at"),
]
DEFAULT_HANDS = 25_000  # per configuration: 100,000 hands in all
SLOW_HANDS = 250_000


def check_many(rules: Rules, n_hands: int, seed: int) -> int:
    count = 0
    for result in random_hands(rules, n_hands, batch=1024, seed=seed):
        for hand in hands_of(result):
            check_hand(rules, hand)
            count += 1
    return count


@pytest.mark.parametrize("rules", CONFIGS)
def test_random_hands_follow_the_rules_and_score_right(rules):
    assert check_many(rules, DEFAULT_HANDS, seed=1) >= DEFAULT_HANDS


@pytest.mark.slow
@pytest.mark.parametrize("rules", CONFIGS)
def test_a_million_random_hands_follow_the_rules_and_score_right(rules):
    assert check_many(rules, SLOW_HANDS, seed=2) >= SLOW_HANDS


def fresh_ref(state, g: int) -> RefHand:
    """The reference for the hand game `g` is about to bid (its deal is random input)."""
    return RefHand(
        state.rules,
        state.deal[g].tolist(),
        int(state.dealer[g]),
        state.scores[g].tolist(),
        state.bags[g].tolist(),
    )


@pytest.mark.parametrize("rules", CONFIGS)
def test_legal_actions_match_the_reference_at_every_step(rules):
    # The records above show every action taken was legal; this shows the engine offers
    # exactly the legal actions (none missing, none extra), whose turn it is and the
    # phase, at every step, and the position carried from hand to hand.
    rng = np.random.default_rng(4)
    batch, target_hands = 64, 400
    state = init(rules, batch, rng)
    refs = [fresh_ref(state, g) for g in range(batch)]
    finished = 0
    while finished < target_hands:
        mask = legal_action_mask(state)
        for g, ref in enumerate(refs):
            assert int(state.phase[g]) == ref.phase
            if ref.phase != DONE:
                assert int(state.to_act[g]) == ref.turn
            assert set(np.flatnonzero(mask[g]).tolist()) == ref.legal()
        actions = random_legal_actions(state.legal, state.phase, rng)
        dealers = state.dealer.copy()
        info = step(state, actions)
        for g, ref in enumerate(refs):
            if ref.phase != DONE:
                ref.apply(int(actions[g]))
        if info.finished is None:
            continue
        for g in info.finished.games.tolist():
            out = refs[g].outcome()
            assert state.scores[g].tolist() == out["scores"]
            assert state.bags[g].tolist() == out["bags"]
            winner = game_end(rules, out["scores"], int(state.hand_no[g]))
            if winner is None:
                assert int(state.dealer[g]) == (int(dealers[g]) + 1) % 4  # RULES.md §1
                refs[g] = fresh_ref(state, g)
            else:
                assert int(state.winner[g]) == winner
            finished += 1
        for g in reset_done(state, rng).tolist():
            refs[g] = fresh_ref(state, g)


def test_reference_trick_winner_examples():
    # The reference itself, on the tricks of RULES.md §3 (cards as suit * 13 + rank).
    ah, kh, two_h = 13 + 12, 13 + 11, 13 + 0
    two_s, three_s, ace_d = 0, 1, 26 + 12
    assert trick_winner([(0, two_h), (1, kh), (2, ace_d), (3, ah)]) == 3
    assert trick_winner([(0, ah), (1, two_s), (2, kh), (3, three_s)]) == 3
    assert trick_winner([(2, ace_d), (3, two_h), (0, kh), (1, ah)]) == 2


# ----------------------------------------------------------------------------- scoring
@st.composite
def hand_outcomes(draw):
    bids = [draw(st.integers(0, 13)) for _ in range(4)]
    blind = [draw(st.booleans()) and b == 0 for b in bids]
    cuts = sorted(draw(st.lists(st.integers(0, 13), min_size=3, max_size=3)))
    bounds = [0, *cuts, 13]
    tricks = [bounds[i + 1] - bounds[i] for i in range(4)]
    return bids, blind, tricks


@settings(max_examples=500, deadline=None)
@given(
    outcome=hand_outcomes(),
    mode=st.sampled_from(["bags", "count"]),
    before=st.tuples(st.integers(-500, 499), st.integers(-500, 499)),
    bags_before=st.tuples(st.integers(0, 9), st.integers(0, 9)),
)
def test_score_hand_and_apply_bags_agree_with_the_reference(outcome, mode, before, bags_before):
    bids, blind, tricks = outcome
    rules = Rules(nil_tricks=mode)
    hs = score_hand(rules, [bids], [blind], [tricks])
    scores, bags, penalty = apply_bags(
        rules, np.array(before) + hs.points[0], np.array(bags_before) + hs.bags[0]
    )
    for team in range(2):
        points, gained = team_points(rules, bids, blind, tricks, team)
        assert (int(hs.points[0, team]), int(hs.bags[0, team])) == (points, gained)
        total = bags_before[team] + gained
        assert int(penalty[team]) == 100 * (total // 10)
        assert int(bags[team]) == total % 10
        assert int(scores[team]) == before[team] + points - 100 * (total // 10)
    over, winner = game_result(rules, scores[None], np.array([1]))
    s0, s1 = scores.tolist()
    expected_over = max(s0, s1) >= 500 and s0 != s1
    assert bool(over[0]) == expected_over
    assert int(winner[0]) == ((0 if s0 > s1 else 1) if expected_over else -1)
