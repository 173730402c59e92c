"""Opponents for the envs from spec strings: the layer above `spades_env` that turns
`"heuristic"` or `"pimc:worlds=16"` into an agent (`agents.registry`).

The envs take agent objects; where a user gives them a spec string (the `opponents=`
argument of the Gym and vector envs, `gymnasium.make("spades_env/Spades-v0",
opponents="heuristic")`), they hand it to `build` through `spades_env.spec_resolver`
(which this package registers on import and declares as an entry point). `opponents`
does the same for a whole `opponents=` value, for callers that want the agents built
before the env is made.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agents.base import BaseAgent
from agents.registry import make_agent, parse_agent
from spades_env.rules import Rules

#: the seed of an opponent built from a spec string
OPPONENT_SEED = 0


def build(spec: str, rules: Rules) -> BaseAgent:
    """The agent `spec` names, seeded with `OPPONENT_SEED`, checked against `rules` (the
    text read here, where it enters from an env's `opponents=`)."""
    return make_agent(parse_agent(spec), seed=OPPONENT_SEED, rules=rules)


def opponents(value: Any, rules: Rules) -> Any:
    """An env's `opponents=` value with every spec string replaced by its agent (one agent
    per distinct string): None, one agent or string, a mapping {seat: ...} or a sequence
    (one per non-learner seat)."""
    built: dict[str, BaseAgent] = {}

    def one(v: Any) -> Any:
        if isinstance(v, str):
            if v not in built:
                built[v] = build(v, rules)
            return built[v]
        return v

    if isinstance(value, Mapping):
        return {seat: one(v) for seat, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str):
        return [one(v) for v in value]
    return one(value)
