"""Helpers shared by the agent tests: positions reached by random play, an agent's
decisions checked inside random play, and a search tree read node by node."""

from __future__ import annotations

import numpy as np

from agents.base import Actor
from spades_env.engine import legal_action_mask, random_legal_actions, step
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.state import State, init


def random_position(
    rules: Rules, games: int, seed: int, steps: int
) -> tuple[State, np.random.Generator]:
    """`games` seeded games after `steps` random legal actions, and the generator that chose
    them (to go on with)."""
    rng = np.random.default_rng(seed)
    state = init(rules, games, rng)
    for _ in range(steps):
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return state, rng


def assert_acts_legally(
    agent: Actor, rules: Rules, games: int, seed: int, turns: int, every: int
) -> None:
    """`turns` steps of `games` seeded games in which `agent` decides every `every`-th step
    (random legal actions the others); each of its decisions must be legal in every game."""
    rng = np.random.default_rng(seed)
    state = init(rules, games, rng)
    for t in range(turns):
        mask = legal_action_mask(state)
        if t % every == 0:
            acts = agent.act(seat_view(state), None, mask)
            assert mask[np.arange(games), acts].all()
        else:
            acts = random_legal_actions(state.legal, state.phase, rng)
        step(state, acts)


def tree_stats(node, depth: int = 0) -> list[tuple]:
    """Every node's statistics, children in creation order."""
    out = [(depth, node.action, node.mover, node.visits, node.reward, node.avail)]
    for ch in node.children.values():
        out += tree_stats(ch, depth + 1)
    return out
