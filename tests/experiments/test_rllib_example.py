"""experiments/rllib_ppo.py: RLlib's PPO on the PettingZoo env, through RLlib's wrapper.

RLlib is the `rllib` extra, which `.ci/setup` installs: there these tests run, never skip
(a core-only install skips them)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")  # the rllib extra
import ray

from experiments import rllib_ppo

pytestmark = [pytest.mark.ray, pytest.mark.torch]


def test_the_wrapped_env_plays_a_hand_with_masked_observations():
    env = rllib_ppo.make_env()
    obs, _ = env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(200):
        ((agent, o),) = obs.items()
        assert o["observations"].dtype == np.float32 and o["action_mask"].dtype == np.float32
        action = int(rng.choice(np.flatnonzero(o["action_mask"])))
        obs, rewards, terminated, truncated, _ = env.step({agent: action})
        if terminated["__all__"] or truncated["__all__"]:
            break
    assert terminated["__all__"] and len(rewards) == 4


@pytest.mark.slow  # an RLlib training iteration: 10 s
def test_ppo_trains_with_legal_moves_only(monkeypatch):
    illegal = []
    step = rllib_ppo.MaskedObservations.step

    def checked_step(self, action):
        if action is not None and not self.env.observe(self.agent_selection)["action_mask"][action]:
            illegal.append(action)
        return step(self, action)

    monkeypatch.setattr(rllib_ppo.MaskedObservations, "step", checked_step)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = rllib_ppo.train(iterations=2, batch=256)
    finally:
        ray.shutdown()
    assert len(results) == 2
    assert results[-1]["env_runners"]["num_env_steps_sampled_lifetime"] >= 512
    assert "shared" in results[-1]["learners"]
    assert illegal == []  # the action-masking module only ever picks legal actions
