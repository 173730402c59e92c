"""What a file given to `checkpoint:` is when it is not a checkpoint of this project.

`check_checkpoint` is the registry's check of `checkpoint:PATH`: a Stable-Baselines3 zip,
a plain torch state_dict, a pickled torch module or bytes torch cannot read are each
named, with the prefix or wrapper that plays them, instead of torch's own message.
"""

from __future__ import annotations

import os
import zipfile
from pathlib import Path
from typing import Any


def sniff(path: str) -> str | None:
    """A one-line account of a file that is surely no checkpoint of this project, read
    without torch (None: it may be one; torch decides)."""
    p = Path(path)
    if p.is_dir():
        return (
            f"{path!r} is a folder, not a checkpoint file (an RLlib or other library's "
            "checkpoint? wrap its policy with agents.from_module or from_function in a file "
            "and give --agents NAME=file.py:agent)"
        )
    if not p.is_file():
        return None
    if zipfile.is_zipfile(p):
        with zipfile.ZipFile(p) as z:
            names = z.namelist()
        if "data" in names and "policy.pth" in names:
            return f"{path!r} is a Stable-Baselines3 model (an SB3 zip): play it with sb3:{path}"
        if not any(n.endswith("data.pkl") for n in names):
            return f"{path!r} is a zip archive but not a torch checkpoint (it holds {names[:3]})"
        return None
    with p.open("rb") as f:
        head = f.read(2)
    if not head.startswith(b"\x80"):  # neither a zip (torch >= 1.6) nor a pickle (older)
        return (
            f"{path!r} is not a torch checkpoint (neither a zip nor a pickle: damaged, or "
            "another kind of file); give a .pt that spades train wrote"
        )
    return None


def explain_torch_file(path: str) -> str | None:
    """A torch file that is not a checkpoint of this project: what it holds."""
    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=True)
    except Exception:
        return (
            f"{path!r} is a pickled torch object (e.g. torch.save(model)), not a spades "
            "checkpoint; load it in a file of yours and wrap it: agent = "
            "agents.from_module(model), then --agents NAME=file.py:agent"
        )
    if isinstance(obj, dict) and obj and all(isinstance(v, torch.Tensor) for v in obj.values()):
        keys = ", ".join(list(obj)[:3])
        return (
            f"{path!r} is a plain torch state_dict ({len(obj)} tensors: {keys}, ...) without "
            "a spades checkpoint's metadata; load it into your network in a file and wrap "
            "it: agent = agents.from_module(net), then --agents NAME=file.py:agent"
        )
    return None


def check_checkpoint(params: dict[str, Any]) -> None:
    """Registry check of `checkpoint:PATH`: a foreign file is named (see the module doc),
    then `agents.learned.agent.check_params` checks a checkpoint of this project."""
    path = params.get("path")
    hint = None if path is None else sniff(os.fspath(path))
    if hint is not None:
        raise ValueError(hint)
    from agents.learned.agent import check_params  # torch: only for what may be a checkpoint

    try:
        check_params(params)
    except ValueError as exc:
        if path is None or "is not a spades checkpoint" not in str(exc):
            raise
        hint = explain_torch_file(os.fspath(path))
        if hint is None:
            raise
        raise ValueError(hint) from None
