"""Saving and resuming training runs.

A training checkpoint (written and read by `agents.learned.checkpoint`) also holds the
optimizer state and the states of the run's random generators (numpy and torch), so
`--resume` continues a killed run exactly where its last checkpoint left it. This module
finds a run's checkpoints and puts its generators back.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned.checkpoint import CheckpointError, read_checkpoint

CHECKPOINT_DIR = "checkpoints"
_NAME = re.compile(r"update_(\d+)\.pt$")


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
