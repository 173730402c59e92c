"""Build agents from text: `random`, `heuristic:aggression=0.2`, `pimc:worlds=64`, ...

A spec is `name` or `name:key=value,key=value`. Each registered name maps to a factory
`(seed, **params) -> Agent` and the parameters it accepts with their types. An unknown
name or parameter is an `AgentSpecError` that lists the known ones. `check_agent_rules`
(and `make_agent(..., rules=...)`) refuses, before any game starts, rules an agent cannot
play (an entry's `rules_check`).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from agents.base import BaseAgent
from agents.heuristic.agent import HeuristicAgent
from agents.random_agent import RandomAgent
from spades_env.rules import Rules


class AgentSpecError(ValueError):
    """An agent spec naming an unknown agent or parameter, or a bad value."""


@dataclass(frozen=True)
class AgentEntry:
    factory: Callable[..., BaseAgent]
    params: dict[str, type] = field(default_factory=dict)
    help: str = ""
    #: the parameter a bare first item gives: `checkpoint:PATH` is `checkpoint:path=PATH`
    positional: str | None = None
    #: checks the parsed parameters before any game starts (e.g. that a checkpoint loads);
    #: loaded lazily as "module:function" so that listing agents imports nothing heavy
    check: str | None = None
    #: "module:function" called as f(rules, name): raises ValueError or
    #: NotImplementedError for rules the agent cannot play (RULES.md §6 presets)
    rules_check: str | None = None


def _lazy(target: str) -> Callable[..., Any]:
    """`"module:function"` -> the function, imported on first use (torch stays unloaded)."""
    module, _, name = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


#: the options of a network agent (`checkpoint:` and `learned`; agents.learned.agent)
_NETWORK_OPTIONS: dict[str, type] = {
    "sample": bool,
    "bid": str,
    "model": str,
    "endgame": int,
    "worlds": int,
    "nil": int,
    "nilplay": str,
}


REGISTRY: dict[str, AgentEntry] = {
    "random": AgentEntry(RandomAgent, {}, "uniformly random legal actions"),
    "heuristic": AgentEntry(
        HeuristicAgent,
        {
            "aggression": float,
            "nil_risk": float,
            "blind_deficit": int,
            "bid": str,
            "model": str,
            "bag_cost": float,
            "set_tricks": int,
        },
        "seed 000's rule-based strategy; bids of highest expected score under the fitted "
        "trick model (bid=model, model=PATH a model file, bag_cost the cost of a bag) or by "
        "seed 000's count (bid=rules; "
        "aggression shades those bids, nil_risk their nils); blind_deficit the deficit for "
        "blind nil; set_tricks: once the contract is made, take tricks while that many set "
        "the opponents (3; 2 the play before)",
        check="agents.heuristic.agent:check_params",
    ),
    "checkpoint": AgentEntry(
        _lazy("agents.learned.agent:checkpoint_agent"),
        {"path": str, "device": str, **_NETWORK_OPTIONS},
        "a trained network: checkpoint:PATH (greedy) or checkpoint:PATH,sample=true; "
        "endgame=K,worlds=W: an exact solve of the last K tricks (agents.learned.endgame), "
        "nil=N of the last N for a live nil of the team, nilplay=heuristic; "
        "bid=model|rules: the heuristic decides before card play (the fitted trick "
        "model | seed 000's count), the network plays the cards",
        positional="path",
        check="agents.learned.agent:check_params",
    ),
    "pimc": AgentEntry(
        _lazy("agents.search.pimc:PIMCAgent"),
        {
            "worlds": int,
            "rollouts": int,
            "evaluator": str,
            "policy": str,
            "time_ms": float,
            "weight": str,
            "objective": str,
            "bid": str,
        },
        "PIMC search: sampled worlds x legal actions, rollouts (policy heuristic|greedy|"
        "random) or evaluator=dd; best mean team hand-score margin; bid=heuristic|model: "
        "the heuristic bids (seed 000's count | the fitted trick model), search plays",
        check="agents.search.pimc:check_params",
    ),
    "ismcts": AgentEntry(
        _lazy("agents.search.ismcts:ISMCTSAgent"),
        {"iterations": int, "time_ms": float, "c": float, "policy": str, "bid": str},
        "Information Set MCTS (one determinization per iteration, availability UCB); "
        "policy random|greedy; bid=heuristic|model: the heuristic bids (seed 000's count | "
        "the fitted trick model), search plays",
        check="agents.search.ismcts:check_params",
    ),
    "learned": AgentEntry(
        _lazy("agents.learned.agent:learned_agent"),
        dict(_NETWORK_OPTIONS),
        "the strongest learned agent: agents/learned/checkpoints/learned.pt (distilled from the "
        "heuristic, then fine-tuned; recipe in learned.json) for the bids and the first "
        "tricks, and an exact solve of the last endgame=K tricks over worlds=W sampled "
        "worlds (agents.learned.endgame; endgame=0: the network alone), and of the last nil=N "
        "tricks for a live nil of its team (nilplay=heuristic: the heuristic plays the "
        "team's cards while its nil is alive); bid=model|rules: the "
        "heuristic bids (trick model, model=PATH another model file | seed 000's count), "
        "the network plays the cards",
        check="agents.learned.agent:check_learned",
    ),
    "ppo": AgentEntry(
        _lazy("agents.learned.agent:shipped_agent"),
        {"sample": bool, "bid": str, "model": str},
        "the PPO checkpoint shipped in agents/learned/checkpoints/ppo_small.pt (bid as learned)",
        check="agents.learned.agent:check_shipped",
    ),
}


def register(
    name: str, factory: Callable[..., BaseAgent], params: dict[str, type], help: str
) -> None:
    REGISTRY[name] = AgentEntry(factory, dict(params), help)


def _convert(name: str, key: str, raw: str, kind: type) -> Any:
    try:
        if kind is bool:
            low = raw.lower()
            if low not in ("1", "0", "true", "false", "yes", "no"):
                raise ValueError(raw)
            return low in ("1", "true", "yes")
        return kind(raw)
    except ValueError:
        raise AgentSpecError(
            f"agent {name!r}: parameter {key}={raw!r} is not a valid {kind.__name__}"
        ) from None


def split_specs(text: str) -> tuple[str, ...]:
    """A list of agent specs -> the specs: `"pimc:worlds=16,policy=greedy,heuristic"` ->
    `("pimc:worlds=16,policy=greedy", "heuristic")`.

    Specs are separated by `;` or by `,`; after a `,`, an item of the form `key=value`
    (an `=` and no `:` before it; agent names hold neither) continues the previous spec's
    parameters rather than starting a new agent."""
    specs: list[str] = []
    for group in text.split(";"):
        current: list[str] = []
        for item in (p.strip() for p in group.split(",")):
            if not item:
                continue
            name, eq, _ = item.partition("=")
            if current and eq and ":" not in name:
                current[-1] += "," + item
            else:
                current.append(item)
        specs += current
    return tuple(specs)


def parse_spec(spec: str) -> tuple[str, dict[str, Any]]:
    """`"heuristic:aggression=0.2"` -> ("heuristic", {"aggression": 0.2})."""
    name, _, rest = spec.strip().partition(":")
    if name not in REGISTRY:
        raise AgentSpecError(f"unknown agent {name!r}; known agents: {', '.join(sorted(REGISTRY))}")
    entry = REGISTRY[name]
    params: dict[str, Any] = {}
    for i, item in enumerate(filter(None, (p.strip() for p in rest.split(",")))):
        key, eq, raw = item.partition("=")
        if i == 0 and not eq and entry.positional:
            key, eq, raw = entry.positional, "=", item
        if key not in entry.params:
            known = ", ".join(sorted(entry.params)) or "none"
            raise AgentSpecError(f"agent {name!r} has no parameter {key!r}; known: {known}")
        if not eq:
            raise AgentSpecError(f"agent {name!r}: write parameters as {key}=VALUE")
        params[key] = _convert(name, key, raw, entry.params[key])
    if entry.check is not None:
        try:
            _lazy(entry.check)(params)
        except ValueError as exc:
            raise AgentSpecError(f"agent {spec.strip()!r}: {exc}") from None
    return name, params


def check_agent_rules(spec: str, rules: Rules) -> None:
    """Refuse rules the agent of `spec` cannot play (AgentSpecError, one line)."""
    name, _ = parse_spec(spec)
    entry = REGISTRY[name]
    if entry.rules_check is None:
        return
    try:
        _lazy(entry.rules_check)(rules, name)
    except (ValueError, NotImplementedError) as exc:  # e.g. RulesError
        raise AgentSpecError(f"agent {spec.strip()!r}: {exc}") from None


def make_agent(spec: str, seed: int | None = None, rules: Rules | None = None) -> BaseAgent:
    """Build the agent a spec names, seeded; with `rules`, refuse rules it cannot play."""
    if rules is not None:
        check_agent_rules(spec, rules)
    name, params = parse_spec(spec)
    agent = REGISTRY[name].factory(seed=seed, **params)
    agent.name = spec.strip()
    return agent
