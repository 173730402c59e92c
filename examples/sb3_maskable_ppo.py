"""Stable-Baselines3: sb3-contrib's MaskablePPO trained on the Gym env, then played in a
duplicate tournament.

The Gym env (`spades_env.gym_env.SpadesEnv`) gives `action_masks()`, the method
MaskablePPO calls, so training takes no wrapper, and the saved model enters any command
by the spec `sb3:PATH` (it plays the legal action of highest probability). Needs the `integrations`
extra (`pip install -e '.[integrations]'`); without sb3-contrib the script says so and
exits.

    python examples/sb3_maskable_ppo.py                 # 50k steps, 200 deals: 3 minutes
    python examples/sb3_maskable_ppo.py --threads 2     # torch on two threads (default one)
    python examples/sb3_maskable_ppo.py --tiny          # 256 steps, 4 deals (the tests)

Measured on a 2-core machine: 2 min 36 s with both cores busy with other work (two
busy loops), less on idle ones. A first run also compiles the engine's and the
heuristic's kernels (when `bash .ci/setup` has not): 2 min 44 s idle, 4 min 33 s busy.
Torch runs on one thread (`one_thread`): on a machine whose cores are busy with other
work its default, a thread per core, contends with that work and trained about ten times
fewer steps in the same time when measured.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from experiments.tournament import TournamentConfig, run_tournament
from spades_env.gym_env import SpadesEnv
from training.threads import add_threads_flag, one_thread


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="256 steps, 4 deals, one process")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--out", default=None, help="folder for model.zip (default: a temp dir)")
    add_threads_flag(parser)
    args = parser.parse_args()
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        print("sb3-contrib is not installed (pip install -e '.[integrations]'): skipped")
        return 0
    print(f"torch threads: {one_thread(args.threads)}")
    steps, deals, workers = (256, 4, 1) if args.tiny else (args.steps, args.deals, 2)
    folder = Path(args.out or tempfile.mkdtemp(prefix="sb3-"))
    folder.mkdir(parents=True, exist_ok=True)

    env = SpadesEnv()  # one seat against random opponents
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0, device="cpu")
    model.learn(total_timesteps=steps)
    path = folder / "model.zip"
    model.save(path)
    print(f"trained {model.num_timesteps} steps: {path}")

    spec = f"mine=sb3:{path}"  # the name `mine` is what the tables show
    config = TournamentConfig(agents=(spec, "random", "heuristic"), deals=deals)
    result = run_tournament(folder / "tournament", config, workers=workers)
    print(result)
    print(f"the protocol on this model: spades evaluate sb3:{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
