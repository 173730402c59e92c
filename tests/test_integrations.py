"""Smoke tests with RL libraries (the `integrations` extra): each trains or collects for real.

RLlib is not covered: `ray[rllib]` pins an older gymnasium than the project's, which
would downgrade it for everything else.
"""

from __future__ import annotations

import numpy as np
import pytest

from spades_env import spades_v0
from spades_env.gym_env import SpadesEnv


def test_sb3_contrib_maskable_ppo_learns_on_the_single_seat_env():
    pytest.importorskip("sb3_contrib")
    import torch
    from sb3_contrib import MaskablePPO

    env = SpadesEnv()
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=2, seed=0, device="cpu"
    )
    before = [p.detach().clone() for p in model.policy.parameters()]
    model.learn(total_timesteps=256)
    assert model.num_timesteps >= 256
    changed = [
        not torch.equal(a, b) for a, b in zip(before, model.policy.parameters(), strict=True)
    ]
    assert any(changed), "PPO updates changed no weight"
    # The masked policy only ever chooses legal actions.
    obs, info = env.reset(seed=1)
    for _ in range(3):
        while True:
            action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
            obs, _, terminated, truncated, info = env.step(action)
            assert "illegal" not in info
            if terminated or truncated:
                obs, info = env.reset()
                break


def test_tianshou_collects_episodes_from_the_pettingzoo_env(monkeypatch):
    pytest.importorskip("tianshou")
    from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, algorithm_base
    from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
    from tianshou.data import Collector, ReplayBuffer
    from tianshou.env import DummyVectorEnv, PettingZooEnv

    # Skip Tianshou's numba warm-up (about 10 s of JIT for return computations that
    # collecting never calls); nothing else changes.
    monkeypatch.setattr(algorithm_base.Policy, "_compile", staticmethod(lambda: None))

    def make() -> PettingZooEnv:
        return PettingZooEnv(spades_v0.env())

    env = make()
    algorithms = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents]
    policy = MultiAgentOffPolicyAlgorithm(algorithms=algorithms, env=env)
    venv = DummyVectorEnv([make])
    venv.seed(0)
    collector = Collector(policy, venv, ReplayBuffer(1000))
    stats = collector.collect(n_episode=3, reset_before_collect=True)
    assert stats.n_collected_episodes == 3
    assert stats.n_collected_steps == 3 * 56  # 4 bids + 52 cards a hand
    returns = np.asarray(stats.returns)
    assert returns.shape == (3, 4)
    np.testing.assert_array_equal(returns[:, 0], returns[:, 2])  # partners share the reward


def test_torchrl_pettingzoo_wrapper_with_mask_passes_check_env_specs():
    pytest.importorskip("torchrl")
    from torchrl.envs.libs.pettingzoo import PettingZooWrapper
    from torchrl.envs.utils import check_env_specs

    env = PettingZooWrapper(spades_v0.env(), use_mask=True, seed=0)
    check_env_specs(env)
    rollout = env.rollout(60, break_when_any_done=False)
    assert rollout.batch_size[0] == 60
    acted = rollout["player_0", "mask"].sum() + rollout["player_1", "mask"].sum()
    assert acted > 0  # the wrapper's per-agent masks say who acted
