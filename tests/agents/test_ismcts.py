"""ISMCTS: the numba play-out against the engine, availability-count UCB, one
determinization per iteration, legal and seeded decisions, the kernels' random stream,
the registry."""

from __future__ import annotations

import math

import numpy as np
import pytest
from agent_helpers import assert_acts_legally, random_position, tree_stats

from agents.kernels.play import GREEDY, RANDOM, play_out, play_out_state
from agents.kernels.streams import below, new_stream, next_u64
from agents.montecarlo import ismcts as ismcts_mod
from agents.montecarlo.common import state_from_world
from agents.montecarlo.ismcts import FastGame, ISMCTSAgent, Node
from agents.montecarlo.reference import ReferenceISMCTSAgent, select_child
from agents.registry import make_agent, parse_agent
from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import run_tournament
from spades_env.engine import legal_action_mask, random_legal_actions, step
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.state import PLAY, init


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(first_lead="two_of_clubs"),
        Rules.preset("jokers"),
        Rules.preset("auction"),
        Rules.preset("two_player"),
    ],
    ids=lambda r: f"{r.name}-{r.first_lead}",
)
@pytest.mark.parametrize("policy", [RANDOM, GREEDY])
def test_play_out_matches_the_engine(rules, policy):
    """Replaying the kernel's cards through the batched engine: each card is legal and
    the tricks per seat agree."""
    rng = np.random.default_rng(1)
    stream = new_stream(np.random.default_rng(5))
    state = init(rules, 30, rng)
    for stop in range(0, rules.num_players * rules.hand_size, 3):  # cards played so far
        played = state.tricks_played * rules.num_players + state.trick_size
        while not ((state.phase == PLAY).all() and (played >= stop).all()):
            step(state, random_legal_actions(state.legal, state.phase, rng))
            played = state.tricks_played * rules.num_players + state.trick_size
        for g in range(0, state.batch_size, 3):
            s = state.take([g])
            won, seq = play_out(
                s.hands[0] & ~s.played[0], s.trick[0], s.leader[0], s.trick_size[0],
                s.lead_suit[0], s.broken[0], s.tricks_won[0], s.tricks_played[0], rules, policy,
                stream, s.trump[0],
            )  # fmt: skip
            for c in seq:
                assert legal_action_mask(s)[0, c]
                info = step(s, [c])
            assert info.hand_over[0]
            assert np.array_equal(won, state.tricks_won[g] * 0 + info.finished.tricks[0])
        state = init(rules, 30, rng)


def test_play_out_state_is_play_out_per_game():
    rng = np.random.default_rng(2)
    state = init(Rules(), 40, rng)
    while not ((state.phase == PLAY).all() and (state.history_len >= 17).all()):
        step(state, random_legal_actions(state.legal, state.phase, rng))
    won = play_out_state(state, GREEDY, new_stream(rng))
    for g in range(40):
        s = state.take([g])
        one, _ = play_out(
            s.hands[0] & ~s.played[0], s.trick[0], s.leader[0], s.trick_size[0],
            s.lead_suit[0], s.broken[0], s.tricks_won[0], s.tricks_played[0], s.rules, GREEDY,
            new_stream(rng),
        )  # fmt: skip
        assert np.array_equal(won[g], one)
    assert (won.sum(axis=1) == 13).all()


def test_select_child_uses_availability_counts():
    root = Node()
    stats = {10: (4, 3.0, 9), 11: (2, 1.0, 3), 12: (5, 4.5, 20)}
    for a, (visits, reward, avail) in stats.items():
        ch = Node(a, 0)
        ch.visits, ch.reward, ch.avail = visits, reward, avail
        root.children[a] = ch
    c = 0.7
    chosen = select_child(root, [10, 11], c)  # 12 is not legal in this world
    ucb = {
        a: r / v + c * math.sqrt(math.log(av + 1) / v) for a, (v, r, av) in stats.items() if a != 12
    }
    assert chosen.action == max(ucb, key=ucb.get)
    assert [root.children[a].avail for a in (10, 11, 12)] == [10, 4, 20]


def _opening(seed=0, batch=1, rules=None):
    rng = np.random.default_rng(seed)
    state = init(rules or Rules(), batch, rng)
    while not (state.phase == PLAY).all():
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return state


def test_one_determinization_per_iteration(monkeypatch):
    drawn = []
    real_sample = ismcts_mod.WorldSampler.sample

    def counting(self, n, rng):
        drawn.append(n)
        return real_sample(self, n, rng)

    monkeypatch.setattr(ismcts_mod.WorldSampler, "sample", counting)
    worlds = []
    real_iterate = ReferenceISMCTSAgent.iterate

    def spy(self, root, game):
        worlds.append(tuple(game.hands))
        return real_iterate(self, root, game)

    monkeypatch.setattr(ReferenceISMCTSAgent, "iterate", spy)
    state = _opening()
    agent = ReferenceISMCTSAgent(seed=0, iterations=300)
    agent.act_state(state)
    assert sum(drawn) == 1 + 300  # one world to build the root game, then one each
    assert len(worlds) == 300 and len(set(worlds)) > 250  # a fresh world each iteration
    root = agent.last_root
    assert sum(ch.visits for ch in root.children.values()) == 300
    # every root action is legal in every world: available from its creation on
    assert max(ch.avail for ch in root.children.values()) == 300
    assert all(ch.visits <= ch.avail <= 300 for ch in root.children.values())
    # below the root, an opponent's card is only available in the worlds that hold it
    grand = [g for ch in root.children.values() for g in ch.children.values()]
    assert any(g.avail < ch.visits for ch in root.children.values() for g in ch.children.values())
    assert all(g.visits <= g.avail for g in grand)


def test_fast_game_matches_the_engine_to_the_end_of_the_hand():
    state, rng = random_position(Rules(), games=4, seed=8, steps=6)
    view = seat_view(state)
    for g in range(4):
        world = (state.hands[g] & ~state.played[g])[None]
        game = FastGame.from_state(state_from_world(view, world, g))
        real = state.take([g])
        while game.points is None:
            a = random_legal_actions(real.legal, real.phase, rng)
            assert game.legal_list() == list(np.flatnonzero(legal_action_mask(real)[0]))
            info = step(real, a)
            game.step(int(a[0]))
        assert info.hand_over[0]
        assert game.points == info.hand_points[0].tolist()


@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_ismcts_plays_legal_actions(policy):
    agent = make_agent(parse_agent(f"ismcts:iterations=60,policy={policy}"), seed=2)
    assert_acts_legally(agent, Rules(blind_nil="always"), games=2, seed=9, turns=64, every=3)


def test_ismcts_is_seeded():
    state = _opening(3)
    a, b = ISMCTSAgent(seed=4, iterations=200), ISMCTSAgent(seed=4, iterations=200)
    assert a.act_state(state)[0] == b.act_state(state)[0]
    va = {k: (n.visits, n.reward) for k, n in a.last_root.children.items()}
    vb = {k: (n.visits, n.reward) for k, n in b.last_root.children.items()}
    assert va == vb


def test_ismcts_time_budget():
    agent = ISMCTSAgent(seed=0, iterations=0, time_ms=30)
    agent.act_state(_opening(1))
    assert agent.last_iterations >= 1


def test_ismcts_in_a_tournament(tmp_path):
    config = TournamentConfig(agents=("ismcts:iterations=100", "heuristic"), deals=1, chunk=1)
    summary = run_tournament(tmp_path / "t", config, workers=1)
    assert summary["pairs"][0]["deals"] == 1


def _mid_trick(rules, seed, cards):
    rng = np.random.default_rng(seed)
    state = init(rules, 1, rng)
    while not (state.phase == PLAY).all():
        step(state, random_legal_actions(state.legal, state.phase, rng))
    for _ in range(cards):
        step(state, random_legal_actions(state.legal, state.phase, rng))
    while int(state.legal[0]).bit_count() < 2:  # a decision to search
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return state


@pytest.mark.parametrize(
    ("rules", "cards"),
    [
        (Rules(), 0),
        (Rules(), 22),
        (Rules(first_lead="two_of_clubs"), 0),
        (Rules.preset("jokers"), 9),
        (Rules.preset("three_player"), 13),
        (Rules.preset("cutthroat_5"), 31),
    ],
    ids=["opening", "mid-trick", "two-of-clubs", "jokers", "three-player", "five-seats"],
)
@pytest.mark.parametrize("policy", ["random", "greedy"])
def test_kernel_search_is_the_reference_search(rules, cards, policy):
    """The numba card-play search builds the very tree of the Python loop over `iterate`
    (which steps FastGame, itself tested against the engine): the same worlds, draws,
    UCB choices, rewards, and the random generators left in the same state."""
    state = _mid_trick(rules, 7 + cards, cards)
    view = seat_view(state)
    fast = ISMCTSAgent(seed=3, iterations=150, policy=policy)
    ref = ReferenceISMCTSAgent(seed=3, iterations=150, policy=policy)
    for _ in range(2):  # twice: the second decision starts from the generators' states
        assert fast.decide(view) == ref.decide(view)
        assert tree_stats(fast.last_root) == tree_stats(ref.last_root)
        assert np.array_equal(fast._stream, ref._stream)  # the same draws, as many
        assert fast.rng.bit_generator.state == ref.rng.bit_generator.state


def test_kernel_search_grows_its_tree():
    state = _mid_trick(Rules(), 1, 4)
    agent = ISMCTSAgent(seed=0, iterations=5000)
    agent.decide(seat_view(state))
    assert agent._tree.capacity >= 5001 > 4097  # started at 4097 nodes, doubled
    root = agent.last_root
    assert sum(ch.visits for ch in root.children.values()) == 5000 == root.visits


def test_random_stream_is_reproducible_and_counts_its_draws():
    """A stream's draws depend on its key and counter alone, compiled or not."""
    one, two = new_stream(np.random.default_rng(12)), new_stream(np.random.default_rng(12))
    ns = [1, 2, 3, 5, 13, 52, 1000, 2**31 - 1, 2**32 - 1, 7] * 20
    got = [below(one, n) for n in ns]
    assert got == [below.py_func(two, n) for n in ns]
    assert all(0 <= g < n for g, n in zip(got, ns, strict=True))
    assert one[1] == two[1] == len(ns)
    assert next_u64(one) != next_u64(new_stream(np.random.default_rng(13)))


@pytest.mark.parametrize("n", [2, 13, 52])
def test_random_stream_is_uniform_chi_square(n):
    stream = new_stream(np.random.default_rng(n))
    draws = np.array([below(stream, n) for _ in range(200 * n)])
    counts = np.bincount(draws, minlength=n)
    chi2 = ((counts - 200) ** 2 / 200).sum()
    assert chi2 < n - 1 + 5 * math.sqrt(2 * (n - 1))  # five standard deviations
