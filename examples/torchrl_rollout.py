"""TorchRL: the PettingZoo env through TorchRL's `PettingZooWrapper` with action masks,
checked with `check_env_specs`, then a rollout of random legal actions.

The wrapper groups the four seats (`player_0` ... `player_3`) and gives each its `mask`
(who acted) and `action_mask` (the legal actions); a TorchRL policy reads those. Needs
the `integrations` extra (torchrl); without it the script says so and exits.

    python examples/torchrl_rollout.py              # 560 steps (10 hands)
    python examples/torchrl_rollout.py --tiny       # 60 steps (the tests)
"""

from __future__ import annotations

import argparse
import sys

from spades_env import spades_v0
from training.threads import add_threads_flag, one_thread


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="60 steps")
    parser.add_argument("--steps", type=int, default=560)
    add_threads_flag(parser)
    args = parser.parse_args()
    try:
        from torchrl.envs.libs.pettingzoo import PettingZooWrapper
        from torchrl.envs.utils import check_env_specs
    except ImportError:
        print("torchrl is not installed (pip install -e '.[integrations]'): skipped")
        return 0
    print(f"torch threads: {one_thread(args.threads)}")
    env = PettingZooWrapper(spades_v0.env(), use_mask=True, seed=0)
    check_env_specs(env)
    print("check_env_specs: passed")
    steps = 60 if args.tiny else args.steps
    rollout = env.rollout(steps, break_when_any_done=False)  # random legal actions
    acted = sum(int(rollout[f"player_{s}", "mask"].sum()) for s in range(4))
    print(f"rollout steps {rollout.batch_size[0]}, seat moves {acted}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
