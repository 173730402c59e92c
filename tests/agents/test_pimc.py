"""PIMC: mid-hand states rebuilt from a world, legal decisions, the dd evaluator, the
registry and a tiny tournament."""

from __future__ import annotations

import numpy as np
import pytest
from agent_helpers import assert_acts_legally, random_position

import agents.montecarlo.pimc as pimc_mod
from agents.dd import DDSolver, Position, score_objective
from agents.montecarlo.common import greedy_actions, state_from_world
from agents.montecarlo.pimc import PIMCAgent
from agents.registry import make_agent, parse_agent
from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import run_tournament
from spades_env.engine import legal_action_mask, random_legal_actions, step
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.state import PLAY, init

FIELDS = (
    "hands", "played", "legal", "phase", "to_act", "bids", "blind", "num_bids", "trick",
    "leader", "trick_size", "lead_suit", "tricks_played", "tricks_won", "broken", "voids",
    "card_seat", "card_trick", "scores", "bags", "dealer", "hand_no",
)  # fmt: skip
RULES = [
    Rules(),
    Rules(first_lead="two_of_clubs"),
    Rules(blind_nil="always"),
    Rules.preset("jokers"),
]


def true_world(state, g):
    return (state.hands[g] & ~state.played[g])[None, :]


def assert_fields(a, b, ga=0, gb=0):
    for f in FIELDS:
        assert np.array_equal(getattr(a, f)[ga], getattr(b, f)[gb]), f


@pytest.mark.parametrize("rules", RULES, ids=lambda r: r.name + r.first_lead + r.blind_nil)
def test_state_from_world_is_the_real_state(rules):
    rng = np.random.default_rng(3)
    state = init(rules, 6, rng, scores=[120, -40], bags=[3, 7])
    for t in range(70):
        if t % 3 == 0:
            view = seat_view(state)
            for g in range(state.batch_size):
                rebuilt = state_from_world(view, true_world(state, g), g)
                assert_fields(rebuilt, state, 0, g)
                # stepping both with the same actions keeps them equal to the end of hand
                real = state.take([g])
                for _ in range(8):
                    a = random_legal_actions(real.legal, real.phase, rng)
                    i1, i2 = step(real, a), step(rebuilt, a)
                    assert np.array_equal(i1.hand_points, i2.hand_points)
                    if i1.hand_over[0]:
                        break
                    assert_fields(rebuilt, real)
        step(state, random_legal_actions(state.legal, state.phase, rng))


@pytest.mark.parametrize("rules", [Rules(), Rules.preset("auction")], ids=lambda r: r.name)
def test_greedy_policy_is_legal(rules):
    rng = np.random.default_rng(0)
    state = init(rules, 64, rng)
    for _ in range(80):
        acts = greedy_actions(state, rng)
        assert legal_action_mask(state)[np.arange(64), acts].all()
        step(state, acts)


@pytest.mark.parametrize("spec", ["evaluator=rollout,policy=greedy", "policy=random,rollouts=2"])
def test_pimc_plays_legal_actions(spec):
    agent = make_agent(parse_agent(f"pimc:worlds=4,{spec}"), seed=1)
    assert_acts_legally(agent, Rules(blind_nil="always"), games=3, seed=5, turns=60, every=4)


def test_pimc_heuristic_rollouts_bid_and_play():
    agent = PIMCAgent(seed=0, worlds=2)
    rng = np.random.default_rng(2)
    state = init(Rules(), 1, rng)
    for _ in range(6):
        acts = agent.act_state(state)
        assert legal_action_mask(state)[0, acts[0]]
        assert set(agent.last_values) == set(np.flatnonzero(legal_action_mask(state)[0]))
        step(state, acts)


def test_pimc_dd_with_the_true_world_plays_a_best_card(monkeypatch):
    """With the true deal as its only world, PIMC+dd is the double-dummy optimum."""
    rng = np.random.default_rng(11)
    state = init(Rules(blind_nil="never"), 8, rng)
    while not ((state.phase == PLAY) & (state.tricks_played >= 9)).all():
        step(state, random_legal_actions(state.legal, state.phase, rng))
    for _ in range(2):  # mid-trick
        step(state, random_legal_actions(state.legal, state.phase, rng))
    view = seat_view(state)
    agent = PIMCAgent(seed=0, worlds=1, evaluator="dd")
    solver = DDSolver()
    for g in range(8):
        world = true_world(state, g)
        monkeypatch.setattr(pimc_mod, "sample_worlds", lambda *a, w=world, **k: w)
        card = agent.decide(view, g)
        team = int(view.seat[g]) % 2
        obj = score_objective(Rules(), view.bids[g], view.blind[g], team, relative=True)
        values = solver.move_values(Position.from_view(view, world[0], g), obj)
        assert values[card] == max(values.values())


def test_pimc_dd_refuses_what_the_solver_cannot_solve_in_one_line():
    rng = np.random.default_rng(0)
    state = init(Rules.preset("three_player"), 1, rng)
    while state.phase[0] != PLAY or int(state.legal[0]).bit_count() < 2:
        step(state, random_legal_actions(state.legal, state.phase, rng))
    with pytest.raises(ValueError, match="double-dummy solver needs 4 seats"):
        PIMCAgent(worlds=2, evaluator="dd").act_state(state)


def test_pimc_is_seeded():
    state, _ = random_position(Rules(), games=2, seed=4, steps=20)
    view = seat_view(state)
    a = PIMCAgent(seed=7, worlds=6, policy="random").act(view, None, None)
    b = PIMCAgent(seed=7, worlds=6, policy="random").act(view, None, None)
    assert np.array_equal(a, b)


def test_pimc_in_a_tournament(tmp_path):
    config = TournamentConfig(agents=("pimc:worlds=8", "heuristic"), deals=1, chunk=1)
    summary = run_tournament(tmp_path / "t", config, workers=1)
    assert summary["pairs"][0]["deals"] == 1


def test_registry_checks_search_parameters():
    from agents.registry import AgentSpecError, parse_spec

    assert parse_spec("pimc:worlds=64") == ("pimc", {"worlds": 64})
    assert parse_spec("ismcts:iterations=1000") == ("ismcts", {"iterations": 1000})
    for bad in ("pimc:evaluator=exact", "pimc:worlds=0", "ismcts:policy=heuristic"):
        with pytest.raises(AgentSpecError):
            parse_spec(bad)


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(first_lead="two_of_clubs"),
        Rules.preset("jokers"),
        Rules.preset("cutthroat_5"),
    ],
    ids=lambda r: r.name + r.first_lead,
)
@pytest.mark.parametrize(
    "params",
    [
        {"policy": "greedy"},
        {"policy": "random", "rollouts": 2},
        {"policy": "random", "objective": "team"},
    ],
    ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()),
)
def test_kernel_rollouts_are_the_engine_rollouts(rules, params):
    """Card play by the numba loop: the same values of every action, the same choice and
    the generator left in the same state as the engine path (positions all through the
    hand)."""
    rng = np.random.default_rng(6)
    state = init(rules, 1, rng)
    fast = PIMCAgent(seed=2, worlds=5, **params)
    ref = PIMCAgent(seed=2, worlds=5, **params)
    ref.use_kernel = False
    seen = 0
    while seen < 8 and state.phase[0] <= PLAY:
        if state.phase[0] == PLAY and int(state.legal[0]).bit_count() > 1:
            view = seat_view(state)
            assert fast.decide(view) == ref.decide(view)
            assert fast.last_values == ref.last_values
            assert fast.rng.bit_generator.state == ref.rng.bit_generator.state
            seen += 1
        for _ in range(5):
            step(state, random_legal_actions(state.legal, state.phase, rng))
    assert seen == 8


@pytest.mark.parametrize("rules", [Rules(blind_nil="always"), Rules.preset("three_player")])
def test_heuristic_play_rollouts_are_the_agents_rollouts(rules):
    """Heuristic rollouts with the compiled card play: the same values, choice and
    generator state as stepping the engine with HeuristicAgent, from bids and cards."""
    rng = np.random.default_rng(8)
    state = init(rules, 1, rng)
    fast, ref = PIMCAgent(seed=4, worlds=3), PIMCAgent(seed=4, worlds=3)
    ref.use_kernel = False
    phases = set()
    for _ in range(30):
        if int(state.legal[0]).bit_count() > 1:
            view = seat_view(state)
            assert fast.decide(view) == ref.decide(view)
            assert fast.last_values == ref.last_values
            assert fast.rng.bit_generator.state == ref.rng.bit_generator.state
            phases.add(int(state.phase[0]))
        for _ in range(3):
            step(state, random_legal_actions(state.legal, state.phase, rng))
    assert PLAY in phases and len(phases) >= 2
