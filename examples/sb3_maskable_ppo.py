"""Stable-Baselines3: sb3-contrib's MaskablePPO trained on the Gym env, then played in a
duplicate tournament.

The Gym env (`spades_env.gym_env.SpadesEnv`) gives `action_masks()`, the method
MaskablePPO calls, so training takes no wrapper. To enter a tournament the saved model
is wrapped as an agent (`SB3Agent` below) and registered. Needs the `integrations`
extra (`pip install -e '.[integrations]'`); without sb3-contrib the script says so and
exits.

    python examples/sb3_maskable_ppo.py                 # 50k steps (about 2 minutes), 200 deals
    python examples/sb3_maskable_ppo.py --tiny          # 256 steps, 4 deals (the tests)
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

import numpy as np

from agents.base import BaseAgent
from agents.registry import register
from experiments.tournament import TournamentConfig, run_tournament
from spades_env.gym_env import SpadesEnv


class SB3Agent(BaseAgent):
    """A saved MaskablePPO model as an agent: the masked policy's greedy action."""

    needs_obs = True  # act reads the RL encoding, the model's input

    def __init__(self, path: str, seed: int | None = None) -> None:
        from sb3_contrib import MaskablePPO

        super().__init__(seed)
        self.model = MaskablePPO.load(path, device="cpu")

    def act(self, view, obs, mask):  # a batch: obs (B, 775), mask (B, 80)
        actions, _ = self.model.predict(obs, action_masks=mask, deterministic=True)
        return np.asarray(actions, dtype=np.int64)


# At the top level, so the tournament's worker processes (spawned) know the name too.
register("sb3zip", SB3Agent, {"path": str}, "a MaskablePPO .zip (examples/sb3_maskable_ppo.py)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="256 steps, 4 deals, one process")
    parser.add_argument("--steps", type=int, default=50_000)
    parser.add_argument("--deals", type=int, default=200)
    parser.add_argument("--out", default=None, help="folder for model.zip (default: a temp dir)")
    args = parser.parse_args()
    try:
        from sb3_contrib import MaskablePPO
    except ImportError:
        print("sb3-contrib is not installed (pip install -e '.[integrations]'): skipped")
        return 0
    steps, deals, workers = (256, 4, 1) if args.tiny else (args.steps, args.deals, 2)
    folder = Path(args.out or tempfile.mkdtemp(prefix="sb3-"))
    folder.mkdir(parents=True, exist_ok=True)

    env = SpadesEnv()  # one seat against random opponents
    model = MaskablePPO("MlpPolicy", env, n_steps=128, batch_size=64, seed=0, device="cpu")
    model.learn(total_timesteps=steps)
    path = folder / "model.zip"
    model.save(path)
    print(f"trained {model.num_timesteps} steps: {path}")

    spec = f"sb3zip:path={path}"  # with the sb3: adapter: spec = f"sb3:{path}"
    config = TournamentConfig(agents=(spec, "random", "heuristic"), deals=deals)
    result = run_tournament(folder / "tournament", config, workers=workers)
    print(result)
    print(f"the protocol on this model: spades evaluate sb3:{path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
