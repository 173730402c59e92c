"""`spades bench --only training`: PPO's throughput, learner included, against the engine alone.

The default `spades train ppo` configuration (its `Args` defaults: the opponent mix, the
batch of `num_games` hands, the network, the PPO epochs) runs here for a few updates with
no evaluation and no periodic checkpoint. A first short run warms up (numba kernels,
torch); the measured run then plays and learns for about `seconds`. Two rates: the
learner's own decisions (forced moves included; its batches keep the others) and every
decision played (opponents' too), per second of wall time, rollouts and updates
together. The reference is the engine alone in the same process: random legal play of
the same batch of hands (`experiments.bench.engine.engine_rate`).
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

Row = dict[str, Any]


def ppo_rates(seconds: float) -> tuple[float, float, int]:
    """(learner decisions/s, all decisions/s, batch) of the default PPO config."""
    import torch

    from agents.rl_agent import read_checkpoint
    from training import ppo_selfplay

    with tempfile.TemporaryDirectory() as tmp:
        base = {"runs_dir": tmp, "eval_every": 0, "save_every": 10**9}
        start = time.perf_counter()
        ppo_selfplay.train(ppo_selfplay.Args(**base, exp_name="warmup", stop_after=1))
        per_update = time.perf_counter() - start
        updates = max(1, round(seconds / max(per_update, 1e-3)))
        threads = torch.get_num_threads()
        start = time.perf_counter()
        last = ppo_selfplay.train(ppo_selfplay.Args(**base, stop_after=updates))
        elapsed = time.perf_counter() - start
        torch.set_num_threads(threads)
        counters = read_checkpoint(last)["counters"]
    batch = ppo_selfplay.Args().num_games
    return counters["learner_steps"] / elapsed, counters["global_step"] / elapsed, batch


def training_section(seconds: float) -> list[Row]:
    from experiments.bench.engine import engine_rate
    from spades_env.rules import Rules

    learner, played, batch = ppo_rates(seconds)
    reference = engine_rate(Rules(), batch, seconds)
    ref = f"engine alone, random play, batch {batch}"
    return [
        {
            "name": f"train ppo: {name} (default config)",
            "batch": batch,
            "rate": rate,
            "unit": "decisions/s",
            "reference": ref,
            "reference_rate": reference,
            "ratio": rate / reference,
        }
        for name, rate in (("learner decisions", learner), ("all decisions", played))
    ]


SECTIONS = {"training": training_section}
