"""Saving and resuming training runs.

A checkpoint (format in `agents.rl_agent`, which reads it) holds the network config and
weights, the run's args, the rules, the observation encoding version and the step
counters; a training checkpoint also holds the optimizer state and the states of the
run's random generators (numpy and torch), so `--resume` continues a killed run exactly
where its last checkpoint left it. `slim` drops those two for shipping an agent.

Files are written to a temporary name and renamed, so a kill never leaves half a file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.networks import PolicyValueNet, QNet
from agents.rl_agent import FORMAT, FORMAT_VERSION, CheckpointError, read_checkpoint
from spades_env.cards import NUM_ACTIONS
from spades_env.observation import OBS_VERSION, obs_blocks
from spades_env.rules import Rules

CHECKPOINT_DIR = "checkpoints"
_NAME = re.compile(r"update_(\d+)\.pt$")


def save_checkpoint(
    path: str | Path,
    net: PolicyValueNet | QNet,
    network: dict[str, Any],
    args: dict[str, Any],
    rules: Rules,
    counters: dict[str, int],
    optimizer: torch.optim.Optimizer | None = None,
    rng: np.random.Generator | None = None,
    torch_rng: torch.Generator | None = None,
) -> Path:
    """Write a checkpoint atomically; without optimizer and generators it is slim.
    Weights that are not all finite are refused (`CheckpointError`): a run never saves a
    checkpoint it could not resume from."""
    path = Path(path)
    model = {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}
    for name, tensor in model.items():
        if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()):
            raise CheckpointError(
                f"not saving {str(path)!r}: the network's {name} holds NaN or inf (the "
                "training diverged; try a lower --learning-rate or --reward-scale)"
            )
    path.parent.mkdir(parents=True, exist_ok=True)
    ckpt: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "network": network,
        "model": model,
        "args": args,
        "rules": rules.to_dict(),
        "obs_version": OBS_VERSION,
        "obs_blocks": [list(b) for b in obs_blocks(rules)],  # the layout, for the record
        "num_actions": NUM_ACTIONS,
        "counters": {k: int(v) for k, v in counters.items()},
    }
    if optimizer is not None:
        ckpt["optimizer"] = optimizer.state_dict()
    if rng is not None and torch_rng is not None:
        ckpt["rng"] = {"numpy": rng.bit_generator.state, "torch": torch_rng.get_state()}
    tmp = path.with_name(path.name + ".tmp")
    torch.save(ckpt, tmp)
    os.replace(tmp, path)
    return path


def slim(src: str | Path, dst: str | Path) -> Path:
    """Copy a checkpoint without its optimizer and generator states (an agent to ship)."""
    ckpt = dict(read_checkpoint(src))
    ckpt.pop("optimizer", None)
    ckpt.pop("rng", None)
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    tmp = dst.with_name(dst.name + ".tmp")
    torch.save(ckpt, tmp)
    os.replace(tmp, dst)
    return dst


def restore_rngs(ckpt: dict[str, Any], rng: np.random.Generator, torch_rng: torch.Generator):
    """Put the run's generators back where the checkpoint saved them."""
    if "rng" not in ckpt:
        raise CheckpointError("the checkpoint holds no generator states (a slim checkpoint?)")
    rng.bit_generator.state = ckpt["rng"]["numpy"]
    torch_rng.set_state(ckpt["rng"]["torch"])


def update_path(run_dir: str | Path, update: int) -> Path:
    return Path(run_dir) / CHECKPOINT_DIR / f"update_{update:06d}.pt"


def saved_updates(run_dir: str | Path) -> list[int]:
    """Updates with a periodic checkpoint in the run folder, in order."""
    folder = Path(run_dir) / CHECKPOINT_DIR
    found = (_NAME.search(p.name) for p in folder.glob("update_*.pt"))
    return sorted(int(m.group(1)) for m in found if m)


def latest_checkpoint(run_dir: str | Path) -> Path:
    """The last periodic checkpoint of a run, to resume from."""
    updates = saved_updates(run_dir)
    if not updates:
        raise CheckpointError(
            f"--resume {str(run_dir)!r}: no checkpoint under {CHECKPOINT_DIR}/; "
            "give the folder of a run that saved at least one"
        )
    return update_path(run_dir, updates[-1])


def resume_checkpoint(
    run_dir: str | Path, on_note: Callable[[str], None] | None = None
) -> tuple[Path, dict[str, Any]]:
    """The newest readable periodic checkpoint of a run, read: a damaged last one (a disk
    error, a copy cut short) falls back to the one before, and `on_note` hears a line
    saying so. Raises the newest one's `CheckpointError` when none can be read."""
    latest = latest_checkpoint(run_dir)
    first_error: CheckpointError | None = None
    for update in reversed(saved_updates(run_dir)):
        path = update_path(run_dir, update)
        try:
            ckpt = read_checkpoint(path)
        except CheckpointError as exc:
            first_error = first_error or exc
            continue
        if path != latest and on_note is not None:
            on_note(
                f"--resume: {str(latest)!r} is damaged ({first_error}); resuming from "
                f"{str(path)!r}, the checkpoint before it"
            )
        return path, ckpt
    assert first_error is not None
    raise first_error
