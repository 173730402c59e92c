"""`learned:bid=model|rules`: the heuristic decides before card play, the network plays
the cards exactly as `learned` (`bid=net`) does."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from cli_helpers import one_line_error, run_module

from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.trick_model import FEATURES, load
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env.engine import legal_action_mask, step
from spades_env.observation import encode, seat_view
from spades_env.rules import Rules
from spades_env.state import BID, PLAY, State, init

pytestmark = pytest.mark.torch


def _turn(st):
    return seat_view(st), encode(st), legal_action_mask(st)


@pytest.mark.parametrize("bid", ["model", "rules"])
def test_bids_are_the_heuristics(bid: str) -> None:
    st = init(Rules(), 12, np.random.default_rng(3))
    agent = make_agent(parse_agent(f"learned:bid={bid}"), seed=1)
    heuristic = HeuristicAgent(1, bid=bid)
    for _ in range(4):
        assert (st.phase == BID).all()
        view, obs, mask = _turn(st)
        acts = agent.act(view, obs, mask)
        np.testing.assert_array_equal(acts, heuristic.act(view, None, mask))
        step(st, acts)


def _playing(n: int, seed: int) -> State:
    st = init(Rules(), n, np.random.default_rng(seed))
    h = HeuristicAgent(0)
    while (st.phase != PLAY).any():
        step(st, h.act(seat_view(st), None, None))
    return st


def _concat(a: State, b: State) -> State:
    fields = [f.name for f in dataclasses.fields(a) if f.name != "rules"]
    return State(
        rules=a.rules, **{f: np.concatenate([getattr(a, f), getattr(b, f)]) for f in fields}
    )


def test_a_mixed_batch_splits_by_phase() -> None:
    """Games still bidding go to the bidder, games in card play to the network."""
    bidding = init(Rules(), 3, np.random.default_rng(1))
    playing = _playing(3, 2)
    view, obs, mask = _turn(_concat(bidding, playing))
    acts = make_agent(parse_agent("learned:bid=model"), seed=2).act(view, obs, mask)
    heuristic = HeuristicAgent(2, bid="model")
    np.testing.assert_array_equal(acts[:3], heuristic.act(seat_view(bidding), None, mask[:3]))
    plain = make_agent(parse_agent("learned"), seed=2)
    np.testing.assert_array_equal(acts[3:], plain.act(seat_view(playing), obs[3:], mask[3:]))
    assert mask[np.arange(6), acts].all()


@pytest.mark.parametrize("spec", ["learned:bid=search", "ppo:bid=nets"])
def test_an_unknown_bidder_is_refused_in_one_line(spec: str) -> None:
    with pytest.raises(AgentSpecError, match=r"bid .*use net, model, rules"):
        make_agent(parse_agent(spec))


def test_a_model_file_needs_bid_model() -> None:
    with pytest.raises(AgentSpecError, match="add bid=model"):
        make_agent(parse_agent("learned:model=agents/heuristic/data/trick_model.json"))


@pytest.mark.cli
def test_a_trick_model_fitted_to_the_networks_card_play_bids_for_it(tmp_path) -> None:
    """`training.bid_fit --player learned` fits the model to the network's card play; the
    file then drives `learned:bid=model,model=PATH`."""
    out = tmp_path / "m.json"
    done = run_module(
        "training.bid_fit", "--hands", "150", "--rounds", "1", "--player", "learned",
        "--out", str(out), timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    model = load(out)
    assert "--player learned" in model.meta["recipe"]
    assert model.weights[FEATURES.index("count")] > 0  # rule text 000's count: more tricks
    st = init(Rules(), 6, np.random.default_rng(4))
    agent = make_agent(parse_agent(f"learned:bid=model,model={out}"), seed=0)
    own = HeuristicAgent(0, bid="model", model=str(out))
    view, obs, mask = _turn(st)
    np.testing.assert_array_equal(agent.act(view, obs, mask), own.act(view, None, mask))


@pytest.mark.cli
def test_bid_fit_refuses_an_unknown_player_in_one_line(tmp_path) -> None:
    done = run_module(
        "training.bid_fit", "--hands", "10", "--player", "nosuch", "--out", str(tmp_path / "m.json")
    )
    assert "unknown agent 'nosuch'" in one_line_error(done)
    assert not (tmp_path / "m.json").exists()
