"""ISMCTS before the card play in the numba kernel (agents/montecarlo/ismcts_bid_kernel.py): the
very tree, decision and generator states of the reference Python loop over `iterate`,
from bids, blind-nil choices and the RULES.md §2 exchange, over the §6 bid constraints;
its pieces (the rollouts' bid, the team score tables) against the Python originals."""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import tree_stats

from agents.kernels.play import quick_bid_hand
from agents.montecarlo.common import quick_bid
from agents.montecarlo.ismcts import FastGame, ISMCTSAgent
from agents.montecarlo.ismcts_bid_kernel import bid_search, team_tables
from agents.montecarlo.ismcts_kernel import Tree
from agents.montecarlo.reference import ReferenceISMCTSAgent
from spades_env.cards import BID_BASE, CARD_RANK, CARD_SUIT, NUM_CARDS, SPADES
from spades_env.engine import random_legal_actions, step
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, score_hand
from spades_env.state import BID, BLIND, EXCHANGE, PLAY, init


def _before_play(rules, seed, phase, skip=0, scores=None):
    """A position with a choice in `phase`, the `skip`+1-th met in random bidding."""
    rng = np.random.default_rng(seed)
    for _ in range(200):
        state = init(rules, 1, rng, scores=scores)
        met = 0
        while state.phase[0] < PLAY:
            if state.phase[0] == phase and int(state.legal[0]).bit_count() >= 2:
                if met == skip:
                    return state
                met += 1
            step(state, random_legal_actions(state.legal, state.phase, rng))
    raise AssertionError("no such position")


EXCHANGE_RULES = Rules(blind_nil="always", blind_nil_exchange=True, first_lead="two_of_clubs")
PLAIN_EXCHANGE = Rules(blind_nil="always", blind_nil_exchange=True)
CASES = {
    "standard-first-bid": (Rules(), BID, 0, "random"),
    "standard-third-bid": (Rules(), BID, 2, "greedy"),
    "behind-blind-nil": (Rules(), BLIND, 0, "random"),  # scores below: RULES.md §2 option
    "exchange-blind-choice": (EXCHANGE_RULES, BLIND, 1, "random"),
    "exchange-bid": (EXCHANGE_RULES, BID, 1, "greedy"),
    "exchange-pass": (EXCHANGE_RULES, EXCHANGE, 0, "random"),
    "exchange-second-pass": (PLAIN_EXCHANGE, EXCHANGE, 2, "random"),
    "jokers": (Rules.preset("jokers"), BID, 1, "random"),
    "whiz": (Rules.preset("whiz"), BID, 1, "random"),
    "suicide": (Rules.preset("suicide"), BID, 1, "random"),
    "family": (Rules.preset("family"), BID, 0, "greedy"),
    "three-player": (Rules.preset("three_player"), BID, 1, "random"),
    "five-seats": (Rules.preset("cutthroat_5"), BID, 3, "random"),
    "max-total-bid": (Rules(max_total_bid=11, blind_nil="always"), BID, 2, "random"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_kernel_bid_search_is_the_reference_search(case):
    """The same worlds, draws, UCB choices and rewards as the Python loop (which steps
    FastGame, tested against the engine in tests/agents/test_ismcts.py), from the position and
    from the generator states the first decision leaves."""
    rules, phase, skip, policy = CASES[case]
    scores = [0, 130] if case == "behind-blind-nil" else None
    state = _before_play(rules, 11 + skip, phase, skip, scores)
    view = seat_view(state)
    fast = ISMCTSAgent(seed=3, iterations=150, policy=policy)
    ref = ReferenceISMCTSAgent(seed=3, iterations=150, policy=policy)
    for _ in range(2):
        assert fast.decide(view) == ref.decide(view)
        assert tree_stats(fast.last_root) == tree_stats(ref.last_root)
        assert np.array_equal(fast._stream, ref._stream)  # the same draws, as many
        assert fast.rng.bit_generator.state == ref.rng.bit_generator.state
    assert fast.last_root.visits == 150


def test_kernel_bid_search_time_budget():
    state = _before_play(EXCHANGE_RULES, 4, BLIND)
    agent = ISMCTSAgent(seed=0, iterations=0, time_ms=20)
    assert agent.decide(seat_view(state)) in (72, 73)  # BLIND_NIL, SEE_HAND
    assert agent.last_iterations >= 1 and agent.last_root.visits == agent.last_iterations


def _quick_bid_oracle(hand: int, legal: int) -> int:
    """The rollouts' bid in numpy: aces + kings / 2 + spades from the queen up (jokers
    too) + spades past the third, `np.rint` (half to even); the nearest legal bid, ties to
    the lowest."""
    held = np.array([hand >> c & 1 for c in range(NUM_CARDS)], dtype=bool)
    rank, spade = CARD_RANK[:NUM_CARDS], CARD_SUIT[:NUM_CARDS] == SPADES
    est = (held & ~spade & (rank == 12)).sum() + 0.5 * (held & ~spade & (rank == 11)).sum()
    est += (held & spade & (rank >= 10)).sum() + max((held & spade).sum() - 3, 0)
    ok = np.array([legal >> b & 1 for b in range(NUM_CARDS)], dtype=bool)
    dist = np.abs(np.arange(NUM_CARDS) - int(np.rint(est))) + np.where(ok, 0, 1000)
    return BID_BASE + int(dist.argmin())


def test_quick_bid_is_the_count_rounded_half_to_even():
    """Random hands (jokers included) and random legal-bid masks, the batch function and
    the kernel's scalar one against the numpy oracle."""
    rng = np.random.default_rng(0)
    hands, masks = [], []
    for _ in range(400):
        cards = rng.choice(54, size=rng.integers(0, 18), replace=False)
        hands.append(int(sum(1 << int(c) for c in cards)))
        masks.append(int(rng.integers(1, 1 << 18)))
    want = [_quick_bid_oracle(h, m) for h, m in zip(hands, masks, strict=True)]
    got = quick_bid(np.array(hands, dtype=np.uint64), np.array(masks, dtype=np.uint64))
    assert got.tolist() == want
    assert [quick_bid_hand(h, m) for h, m in zip(hands, masks, strict=True)] == want


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(nil_tricks="bags", ten_for_two_hundred=True, thirteen_bid_doubles=True),
     Rules.preset("family"), Rules.preset("three_player")],
    ids=["standard", "options", "family", "three-player"],
)  # fmt: skip
def test_team_tables_are_the_hand_score(rules):
    """Each team's table entry is `FastGame._end_hand`'s points (RULES.md §4, the bag
    penalty of the bags so far included) of random bids, blind nils and tricks."""
    rng = np.random.default_rng(1)
    p, t, h = rules.num_players, rules.num_teams, rules.hand_size
    bags_before = rng.integers(0, rules.bag_limit, size=t)
    table, members, digit = team_tables(rules, bags_before)
    for _ in range(300):
        bids = rng.integers(rules.min_bid, h + 1, size=p)
        blind = (bids == 0) & (rng.random(p) < 0.5)
        tricks = rng.multinomial(h, np.ones(p) / p)
        hs = score_hand(rules, [bids], [blind], [tricks])
        _, _, penalty = apply_bags(rules, hs.points, np.asarray(bags_before)[None] + hs.bags)
        want = (hs.points - penalty)[0]
        for team in range(t):
            code, mult = 0, 1
            for s in members[team]:
                if s >= 0:
                    b = h + 1 if blind[s] else bids[s]
                    code += (b * (h + 1) + tricks[s]) * mult
                    mult *= digit
            assert table[team, code] == want[team]


def test_bid_search_refuses_the_card_play():
    rng = np.random.default_rng(2)
    state = init(Rules(), 1, rng)
    while state.phase[0] != PLAY:
        step(state, random_legal_actions(state.legal, state.phase, rng))
    game = FastGame.from_state(state)
    with pytest.raises(ValueError, match="bidding or the exchange"):
        bid_search(Tree(4), np.zeros((1, 4), dtype=np.int64), 0, 1, game, 0.7, 0,
                   team_tables(game.rules, game.bags), None)  # fmt: skip
