"""`bid=heuristic` on the search agents: the heuristic decides everything before card
play, the search decides card play exactly as with `bid=search`."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from agents.heuristic.agent import HeuristicAgent
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env.engine import step
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.state import BID, PLAY, State, init

SPECS = ("pimc:worlds=8,policy=greedy", "ismcts:iterations=60")


def _bidding(n: int, seed: int):
    return init(Rules(), n, np.random.default_rng(seed))


def _playing(n: int, seed: int):
    st = _bidding(n, seed)
    h = HeuristicAgent(0)
    while (st.phase != PLAY).any():
        step(st, h.act(seat_view(st), None, None))
    return st


@pytest.mark.parametrize("bidder, heuristic_bid", [("heuristic", "rules"), ("model", "model")])
@pytest.mark.parametrize("spec", SPECS)
def test_bids_are_the_heuristics(spec: str, bidder: str, heuristic_bid: str) -> None:
    """`bid=heuristic` bids as `heuristic:bid=rules`; `bid=model` as `heuristic` (trick model)."""
    st = _bidding(12, 3)
    agent = make_agent(parse_agent(f"{spec},bid={bidder}"), seed=1)
    heuristic = HeuristicAgent(1, bid=heuristic_bid)
    for _ in range(4):  # each seat's bid in turn
        view = seat_view(st)
        assert (st.phase == BID).all()
        acts = agent.act(view, None, None)
        np.testing.assert_array_equal(acts, heuristic.act(view, None, None))
        step(st, acts)


@pytest.mark.parametrize("spec", SPECS)
def test_card_play_is_the_search(spec: str) -> None:
    st = _playing(4, 7)
    view = seat_view(st)
    split = make_agent(parse_agent(spec + ",bid=heuristic"), seed=5).act(view, None, None)
    plain = make_agent(parse_agent(spec), seed=5).act(view, None, None)
    np.testing.assert_array_equal(split, plain)


def _concat(a: State, b: State) -> State:
    fields = [f.name for f in dataclasses.fields(a) if f.name != "rules"]
    return State(
        rules=a.rules, **{f: np.concatenate([getattr(a, f), getattr(b, f)]) for f in fields}
    )


def test_a_mixed_batch_splits_by_phase() -> None:
    bidding, playing = _bidding(2, 1), _playing(2, 2)
    view = seat_view(_concat(bidding, playing))
    acts = make_agent(parse_agent("pimc:worlds=8,policy=greedy,bid=heuristic"), seed=5).act(
        view, None, None
    )
    rules = HeuristicAgent(5, bid="rules")
    np.testing.assert_array_equal(acts[:2], rules.act(seat_view(bidding), None, None))
    plain = make_agent(parse_agent("pimc:worlds=8,policy=greedy"), seed=5)
    np.testing.assert_array_equal(acts[2:], plain.act(seat_view(playing), None, None))


@pytest.mark.parametrize("name", ["pimc", "ismcts"])
def test_unknown_bidder_is_refused(name: str) -> None:
    with pytest.raises(AgentSpecError, match="bid 'dd'; use search, heuristic or model"):
        make_agent(parse_agent(f"{name}:bid=dd"))
