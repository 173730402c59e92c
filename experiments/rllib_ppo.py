"""Train the Spades PettingZoo env with RLlib's PPO: the route for users who live in RLlib.

RLlib comes with the project's `rllib` extra (`pip install -e '.[rllib]'`; `.ci/setup`
installs it, and `tests/experiments/test_rllib_example.py` runs this example). Every `ray[rllib]`
from 2.54 on pins `gymnasium==1.2.2`, so with the extra the project runs on that
gymnasium; without it, on any gymnasium from 1.1 on::

    python -m experiments.rllib_ppo --iterations 5

The AEC env goes through RLlib's PettingZoo wrapper (`PettingZooEnv`); one shared policy
plays all four seats (observations are seat-relative). Illegal actions are masked by
RLlib's example action-masking module, which wants each observation as a dict of float
`observations` and `action_mask`; `MaskedObservations` renames and casts them. RLlib's
env checker is off: it steps random, unmasked actions, which the env's illegal-move
wrapper would punish.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo.utils import BaseWrapper

from spades_env import spades_v0

ENV_NAME = "spades_v0_rllib"
POLICY = "shared"


class MaskedObservations(BaseWrapper):
    """Observations as RLlib's action-masking module reads them (float32)."""

    def observation_space(self, agent: str) -> spaces.Space:
        inner = self.env.observation_space(agent)
        obs, mask = inner["observation"], inner["action_mask"]
        return spaces.Dict(
            {
                "observations": spaces.Box(
                    obs.low.astype(np.float32), obs.high.astype(np.float32), dtype=np.float32
                ),
                "action_mask": spaces.Box(0.0, 1.0, mask.shape, dtype=np.float32),
            }
        )

    def observe(self, agent: str) -> dict[str, np.ndarray] | None:
        o = self.env.observe(agent)
        if o is None:
            return None
        return {
            "observations": o["observation"].astype(np.float32),
            "action_mask": o["action_mask"].astype(np.float32),
        }


def make_env(config: dict[str, Any] | None = None):
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    return PettingZooEnv(MaskedObservations(spades_v0.env(**(config or {}))))


def ppo_config(batch: int = 512, hidden: int = 64):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.rllib.examples.rl_modules.classes.action_masking_rlm import (
        ActionMaskingTorchRLModule,
    )
    from ray.tune.registry import register_env

    register_env(ENV_NAME, make_env)
    module = RLModuleSpec(
        module_class=ActionMaskingTorchRLModule,
        model_config={"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [hidden]},
    )
    return (
        PPOConfig()
        .environment(ENV_NAME, disable_env_checking=True)  # its check steps random actions
        .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, *a, **k: POLICY)
        .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: module}))
        .env_runners(num_env_runners=0)
        .training(train_batch_size_per_learner=batch, minibatch_size=batch // 4, num_epochs=2)
    )


def train(iterations: int = 2, batch: int = 512) -> list[dict[str, Any]]:
    """Build PPO and run `iterations` training iterations; return their results."""
    algo = ppo_config(batch).build_algo()
    try:
        return [algo.train() for _ in range(iterations)]
    finally:
        algo.stop()


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=5)
    parser.add_argument("--batch", type=int, default=2048, help="env steps per iteration")
    args = parser.parse_args(argv)
    for k, result in enumerate(train(args.iterations, args.batch)):
        runners = result.get("env_runners", {})
        print(
            f"iteration {k + 1}: {runners.get('num_env_steps_sampled_lifetime')} env steps, "
            f"mean episode return {runners.get('episode_return_mean')}"
        )


if __name__ == "__main__":
    main()
