"""Tianshou: collect episodes from the PettingZoo env with masked random policies, one
per seat, through Tianshou's own PettingZoo wrapper and multi-agent policy.

Swap `MARLRandomDiscreteMaskedOffPolicyAlgorithm` for a learning algorithm (DQN, PPO) per
seat to train; the env, the wrapper and the collector stay as they are. Needs the
`integrations` extra (tianshou); without it the script says so and exits.

    python examples/tianshou_collect.py             # 100 hands
    python examples/tianshou_collect.py --tiny      # 3 hands (the tests)
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from spades_env import spades_v0
from training.threads import add_threads_flag, one_thread


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="3 hands")
    parser.add_argument("--hands", type=int, default=100)
    add_threads_flag(parser)
    args = parser.parse_args()
    try:
        from tianshou.algorithm import MARLRandomDiscreteMaskedOffPolicyAlgorithm, algorithm_base
        from tianshou.algorithm.multiagent.marl import MultiAgentOffPolicyAlgorithm
        from tianshou.data import Collector, ReplayBuffer
        from tianshou.env import DummyVectorEnv, PettingZooEnv
    except ImportError:
        print("tianshou is not installed (pip install -e '.[integrations]'): skipped")
        return 0
    print(f"torch threads: {one_thread(args.threads)}")
    # Skip Tianshou's numba warm-up (about 10 s of JIT for return computations that
    # collecting never calls).
    algorithm_base.Policy._compile = staticmethod(lambda: None)

    def make() -> PettingZooEnv:
        return PettingZooEnv(spades_v0.env())

    env = make()
    seats = [MARLRandomDiscreteMaskedOffPolicyAlgorithm(env.action_space) for _ in env.agents]
    policy = MultiAgentOffPolicyAlgorithm(algorithms=seats, env=env)
    venv = DummyVectorEnv([make])
    venv.seed(0)
    collector = Collector(policy, venv, ReplayBuffer(100_000))
    hands = 3 if args.tiny else args.hands
    stats = collector.collect(n_episode=hands, reset_before_collect=True)
    returns = np.asarray(stats.returns)  # (hands, 4): each seat's hand score
    print(f"episodes {stats.n_collected_episodes}, steps {stats.n_collected_steps}")
    print(f"steps per hand {stats.n_collected_steps / stats.n_collected_episodes:.0f}")
    print(f"mean hand score per seat {np.round(returns.mean(axis=0), 1).tolist()}")
    shared = bool((returns[:, 0] == returns[:, 2]).all() and (returns[:, 1] == returns[:, 3]).all())
    print(f"partners share the reward: {shared}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
