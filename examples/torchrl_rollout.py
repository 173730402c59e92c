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


def one_thread(threads: int) -> None:
    """Torch's threads: one per process unless asked otherwise, as `spades train` runs.

    Torch starts a thread per core. On an idle machine that is harmless, but where the
    cores are busy with other work (another run, a tournament's workers, a shared CI
    machine) the threads contend and a small network's training slows down tenfold or
    more. Set before torch's first computation; `OMP_NUM_THREADS` covers the processes
    this one starts (docs/environments/index.md, "Torch's threads").
    """
    import os

    os.environ.setdefault("OMP_NUM_THREADS", str(threads))
    import torch

    torch.set_num_threads(threads)
    print(f"torch threads: {torch.get_num_threads()}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="60 steps")
    parser.add_argument("--steps", type=int, default=560)
    parser.add_argument(
        "--threads", type=int, default=1, help="torch's threads (default 1; see one_thread)"
    )
    args = parser.parse_args()
    try:
        from torchrl.envs.libs.pettingzoo import PettingZooWrapper
        from torchrl.envs.utils import check_env_specs
    except ImportError:
        print("torchrl is not installed (pip install -e '.[integrations]'): skipped")
        return 0
    one_thread(args.threads)
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
