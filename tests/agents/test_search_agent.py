"""`search` (agents/netsearch/agent.py): who makes each decision, and that it plays legally.

Each decision goes to one part: the network's bids before card play, the exact solver in
the last tricks (and while a nil of the team is alive), PIMC for the rest. The tests
check each routing against the part itself, called on a copy of the agent (the same
generators), and the agent on other presets."""

from __future__ import annotations

import copy

import numpy as np
import pytest

pytest.importorskip("torch")  # the train extra: the search agent's network

from agents.netsearch.agent import SearchAgent
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env.engine import legal_action_mask, random_legal_actions, step
from spades_env.observation import encode, seat_view
from spades_env.rules import Rules
from spades_env.state import BID, PLAY, init

pytestmark = pytest.mark.torch


def _positions(rules: Rules, games: int, seed: int):
    """Every decision point of `games` random hands: (view, obs, mask) per step."""
    rng = np.random.default_rng(seed)
    state = init(rules, games, rng)
    out, over = [], np.zeros(games, dtype=bool)
    while not over.all():
        out.append((seat_view(state), encode(state), legal_action_mask(state)))
        over |= step(state, random_legal_actions(state.legal, state.phase, rng)).hand_over
    return out


@pytest.fixture(scope="module")
def positions():
    return _positions(Rules(), 3, seed=11)


def test_each_decision_is_made_by_its_part(positions):
    agent = SearchAgent(seed=3, worlds=4, solve=3, solve_worlds=4, nil=4)
    seen = {"bid": 0, "solver": 0, "pimc": 0}
    for view, obs, mask in positions:
        twin = copy.deepcopy(agent)
        acts = agent.act(view, obs, mask)
        assert mask[np.arange(len(acts)), acts].all()
        twin._setup(view.rules)
        late = twin._endgame.games(view)
        for g in range(view.batch_size):
            if view.phase[g] == BID:
                net = twin.net.preferences(obs[[g]], mask[[g]]).argmax(axis=1)[0]
                assert acts[g] == net
                seen["bid"] += 1
        if late.any():
            idx = np.flatnonzero(late)
            prefs = np.zeros(mask.shape, dtype=np.float32)
            prefs[idx] = twin.net.preferences(obs[idx], mask[idx])
            assert (acts[idx] == twin._endgame.choose(view, prefs, idx)).all()
            seen["solver"] += len(idx)
        rest = np.flatnonzero((view.phase == PLAY) & ~late)
        if rest.size:
            assert (acts[rest] == twin.pimc.act(view.take(rest), None, mask[rest])).all()
            seen["pimc"] += len(rest)
    assert all(seen.values()), seen


def test_the_same_seed_plays_the_same_moves(positions):
    a, b = (SearchAgent(seed=5, worlds=4, solve_worlds=4) for _ in range(2))
    for view, obs, mask in positions[::7]:
        assert (a.act(view, obs, mask) == b.act(view, obs, mask)).all()


def test_on_rules_the_network_was_not_trained_for_the_search_bids():
    rules = Rules.preset("jokers")
    view_obs = _positions(rules, 2, seed=4)[0]
    view, obs, mask = view_obs
    agent = SearchAgent(seed=1, worlds=3, solve_worlds=4)
    twin = copy.deepcopy(agent)
    acts = agent.act(view, obs, mask)
    assert mask[np.arange(len(acts)), acts].all()
    assert not agent._net_ok
    assert (acts == twin.pimc.act(view, None, mask)).all()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("search:bid=guess", "bid 'guess'"),
        ("search:solve=14", "solve=14"),
        ("search:solve_worlds=0", "solve_worlds=0"),
        ("search:worlds=0", "worlds"),
    ],
)
def test_bad_options_are_one_line(spec, message):
    with pytest.raises((AgentSpecError, ValueError), match=message):
        make_agent(parse_agent(spec), seed=0)
