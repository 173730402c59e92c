"""RLlib: PPO on the PettingZoo env through RLlib's own wrapper, one shared policy for the
four seats, illegal actions masked by RLlib's action-masking module.

The code lives in `experiments/rllib_ppo.py` (`make_env`, `ppo_config`, `train`; read it
for the wrapper that hands RLlib the mask); this script runs it. Needs the `rllib` extra
(`pip install -e '.[rllib]'`, which pins gymnasium 1.2.2); without ray[rllib] the script
says so and exits.

    python examples/rllib_ppo.py              # 5 iterations of 2048 env steps
    python examples/rllib_ppo.py --tiny       # 1 iteration of 256 (the tests)
"""

from __future__ import annotations

import argparse
import sys

from training.threads import add_threads_flag, one_thread


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="1 iteration of 256 env steps")
    parser.add_argument("--iterations", type=int, default=5)
    add_threads_flag(parser)
    args = parser.parse_args()
    try:
        import ray
        import ray.rllib  # the rllib extra, not only ray core
    except ImportError:
        print("ray[rllib] is not installed (pip install -e '.[rllib]'): skipped")
        return 0
    print(f"torch threads: {one_thread(args.threads)}")
    from experiments.rllib_ppo import train

    iterations, batch = (1, 256) if args.tiny else (args.iterations, 2048)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        results = train(iterations, batch)
    finally:
        ray.shutdown()
    for k, result in enumerate(results):
        runners = result.get("env_runners", {})
        print(
            f"iteration {k + 1}: {runners.get('num_env_steps_sampled_lifetime')} env steps, "
            f"mean episode return {runners.get('episode_return_mean')}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
