"""What a rollout backend shares with the session that drives it, below both of them.

`training.session` picks the backend (`--backend local` plays here, `--backend ray` on
the actors of `training.ray_rollout`); the backends depend on this module, never on the
session, so the imports run one way: session -> ray_rollout -> backend.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import torch

from agents.base import BaseAgent
from agents.heuristic.agent import HeuristicAgent
from agents.learned.agent import NetworkAgent
from agents.learned.networks import resolve_precision
from agents.registry import AgentSpec, make_agent
from spades_env.rules import Rules
from training.rollout import Hands, LearnerFn, pool_rollout

RAY_HINT = "install the ray extra: pip install -e '.[ray]'"

#: (args, network, device, numpy generator, torch generator) -> the rollout learner.
Behaviour = Callable[
    [Any, torch.nn.Module, torch.device, np.random.Generator, torch.Generator], LearnerFn
]
#: (args, rules, hands) -> (the learner's batch, its charts/ scalars).
ToBatch = Callable[[Any, Rules, Hands], tuple[dict[str, np.ndarray], dict[str, Any]]]


class LearnerState(Protocol):
    """The parts of a `training.session.Session` a rollout backend reads and advances."""

    args: Any
    network: dict[str, Any]
    rules: Rules
    opponent_spec: AgentSpec | None  # `--opponent`, parsed (None: the heuristic)
    net: torch.nn.Module
    pool: list[NetworkAgent]
    update: int
    pool_version: int
    global_step: int
    learner_steps: int


def pool_agent(net: torch.nn.Module, rules: Rules, args: Any) -> NetworkAgent:
    """A past self as an opponent: it samples as in training (DMC: epsilon-greedy), in the
    run's precision (`--precision`; fp32 for DMC)."""
    precision = resolve_precision(getattr(args, "precision", "fp32"), torch.device("cpu"))
    epsilon = getattr(args, "epsilon", 0.0)
    return NetworkAgent(net, rules, sample=True, epsilon=epsilon, precision=precision)


def fixed_opponent(spec: AgentSpec | None, seed: int) -> BaseAgent:
    """The agent of the `--heuristic-frac` games: `--opponent`, as `spec` (parsed and
    checked against the rules by `training.session_args.prepare_args`; None: the
    heuristic), built as it is."""
    if spec is None:
        return HeuristicAgent(seed=seed)
    return make_agent(spec, seed=seed)


def mix_rollout(
    args: Any,
    rules: Rules,
    learner: LearnerFn,
    heuristic: BaseAgent,
    pool: list[NetworkAgent],
    rng: np.random.Generator,
) -> Hands:
    """One rollout as every backend plays it: `--num-games` fresh hands, the learner
    against one draw of the opponent mix the args set (`--selfplay-frac`,
    `--heuristic-frac`, the rest from `pool`), all of it from `rng`."""
    return pool_rollout(
        rules,
        args.num_games,
        args.selfplay_frac,
        args.heuristic_frac,
        learner,
        heuristic,
        pool,
        rng,
    )
