"""The checkpoint format of the learned agents, written and read here only.

A checkpoint is a `torch.save`d dict (read with `weights_only=True`, so loading one runs
no code): the network config and weights, the training args, the rules, the observation
encoding version, step counters, and, in training checkpoints, the optimizer and the
random generators' states (`training.checkpoint` writes them). The agent refuses, with
a `CheckpointError` naming the problem and the way out:

- a missing file, or one that is not a readable checkpoint (corrupt, truncated);
- non-finite weights (NaN or inf, a diverged run), which would play garbage;
- another observation encoding version (`OBS_VERSION`): the inputs would mean other things;
- other rules: any option of bidding, play or scoring that differs from the training
  rules. Game-length options (`GAME_LENGTH_OPTIONS`) may differ: a hand is played the
  same way whatever the target.

Files are written to a temporary name and renamed, so a kill never leaves half a file.
`slim` drops the optimizer and generator states, for shipping an agent.
"""

from __future__ import annotations

import functools
import io
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.learned.networks import Network, build_network
from spades_env.cards import NUM_ACTIONS
from spades_env.observation import OBS_VERSION, obs_blocks
from spades_env.rules import Rules, RulesError
from spades_env.tooling.files import atomic_write

FORMAT = "spades-checkpoint"
FORMAT_VERSION = 1


class CheckpointError(ValueError):
    """A checkpoint that cannot be used here; the message says why and what to do."""


def read_checkpoint(path: str | Path) -> dict[str, Any]:
    """Load and check a checkpoint file (format, encoding version, network weights)."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist; give the path of a .pt")
    stat = path.stat()
    return _read_cached(str(path.resolve()), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=16)
def _read_cached(path: str, mtime_ns: int, size: int) -> dict[str, Any]:
    del mtime_ns, size  # cache keys: a rewritten file is read again
    try:
        ckpt = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # torch raises many types for a damaged file
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise CheckpointError(
            f"checkpoint {path!r} is not a readable checkpoint (corrupt or truncated?): "
            f"{reason[:200]}"
        ) from None
    if not isinstance(ckpt, dict) or ckpt.get("format") != FORMAT:
        raise CheckpointError(f"{path!r} is not a spades checkpoint (no format {FORMAT!r})")
    if ckpt.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"checkpoint {path!r} has format version {ckpt.get('format_version')}; this "
            f"release reads version {FORMAT_VERSION}"
        )
    if ckpt.get("obs_version") != OBS_VERSION:
        raise CheckpointError(
            f"checkpoint {path!r} was trained on observation encoding version "
            f"{ckpt.get('obs_version')}, this release encodes version {OBS_VERSION}; retrain "
            "it, or play it with the release it was trained with"
        )
    actions = ckpt.get("num_actions", NUM_ACTIONS)
    if actions != NUM_ACTIONS:
        raise CheckpointError(
            f"checkpoint {path!r} was trained with {actions} actions, this release has "
            f"{NUM_ACTIONS}; retrain it, or play it with the release it was trained with"
        )
    try:
        rules = Rules.from_dict(ckpt["rules"])
        net = build_network(ckpt["network"], rules)
        net.load_state_dict(ckpt["model"])
    except (KeyError, TypeError, ValueError, RuntimeError, RulesError) as exc:
        reason = str(exc).strip().splitlines()[0]
        raise CheckpointError(f"checkpoint {path!r} is corrupt: {reason[:200]}") from None
    bad = [k for k, v in ckpt["model"].items() if v.is_floating_point() and not v.isfinite().all()]
    if bad:
        raise CheckpointError(
            f"checkpoint {path!r} has non-finite (NaN or inf) weights in {bad[0]}"
            f"{f' and {len(bad) - 1} more tensors' if len(bad) > 1 else ''}; the run that "
            "wrote it diverged: use an earlier checkpoint of it"
        )
    return ckpt


def save_checkpoint(
    path: str | Path,
    net: Network,
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
    return _save(ckpt, path)


def _save(ckpt: dict[str, Any], path: Path) -> Path:
    """`torch.save` into memory, then `atomic_write`: a full disk is an `OSError` (torch's
    own writer reports it as a RuntimeError of its zip code), and no part file is left."""
    buffer = io.BytesIO()
    torch.save(ckpt, buffer)
    return atomic_write(path, buffer.getbuffer())


def slim(src: str | Path, dst: str | Path) -> Path:
    """Copy a checkpoint without its optimizer and generator states (an agent to ship)."""
    ckpt = dict(read_checkpoint(src))
    ckpt.pop("optimizer", None)
    ckpt.pop("rng", None)
    dst = Path(dst)
    dst.parent.mkdir(parents=True, exist_ok=True)
    return _save(ckpt, dst)
