"""Agents in one call: a plain function, or a torch module, as an agent.

`from_function(fn)` plays `fn(obs, mask) -> action` (one game at a time; `batched=True`:
`fn(obs, mask) -> actions` on the whole batch); `from_module(net)` plays the legal action
of highest logit of a torch module mapping the float encoding (B, obs_size) to logits
(B, NUM_ACTIONS) (or a tuple whose first item they are). Both read the RL encoding
(`needs_obs = True`) and refuse an illegal action with a one-line error naming it.

To use one in a tournament or any command, make it in a file at module level and name
it there: `bot = from_function(my_policy)` in `bots.py`, then `--agents mine=bots.py:bot`
(each worker imports the file and copies the agent, reseeded).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from spades_env.observation import SeatView


def _check_legal(name: str, actions: npt.NDArray[np.int64], mask: npt.NDArray[np.bool_]) -> None:
    rows = np.arange(len(actions))
    inside = (actions >= 0) & (actions < mask.shape[1])
    bad = np.flatnonzero(~inside | ~mask[rows, np.clip(actions, 0, mask.shape[1] - 1)])
    if bad.size:
        b = int(bad[0])
        raise ValueError(
            f"agent {name!r} chose illegal action {int(actions[b])} (legal: "
            f"{np.flatnonzero(mask[b]).tolist()}); mask your policy with the legal-action mask"
        )


class FunctionAgent(BaseAgent):
    """An agent whose moves a function `(obs, mask) -> action` chooses (`from_function`).

    If the function takes a keyword `rng`, it gets the agent's seeded generator."""

    needs_obs = True

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        batched: bool = False,
        name: str | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.fn, self.batched = fn, batched
        self.name = name or getattr(fn, "__name__", "function")
        try:
            self._takes_rng = "rng" in inspect.signature(fn).parameters
        except (TypeError, ValueError):
            self._takes_rng = False

    def act(
        self, view: SeatView, obs: npt.NDArray[np.int16] | None, mask: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        if obs is None:
            raise ValueError(f"agent {self.name!r} reads the RL encoding: pass obs")
        kw = {"rng": self.rng} if self._takes_rng else {}
        if self.batched:
            out = np.asarray(self.fn(obs, mask, **kw), dtype=np.int64).reshape(-1)
        else:
            out = np.array([int(self.fn(o, m, **kw)) for o, m in zip(obs, mask, strict=True)])
        _check_legal(self.name, out, mask)
        return out


class ModuleAgent(BaseAgent):
    """An agent playing a torch module's logits over the legal actions (`from_module`).

    Greedy (the legal action of highest logit), or `sample=True`: drawn from the softmax
    over the legal actions with the agent's seeded generator."""

    needs_obs = True

    def __init__(
        self,
        module: Any,
        *,
        device: str = "cpu",
        sample: bool = False,
        name: str | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        self.module, self.device, self.sample = module.eval(), device, sample
        self.name = name or type(module).__name__

    def act(
        self, view: SeatView, obs: npt.NDArray[np.int16] | None, mask: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        import torch

        if obs is None:
            raise ValueError(f"agent {self.name!r} reads the RL encoding: pass obs")
        with torch.no_grad():
            out = self.module(torch.as_tensor(obs, dtype=torch.float32, device=self.device))
            logits = (out[0] if isinstance(out, tuple | list) else out).float().cpu().numpy()
        return masked_choice(logits, mask, self.sample, self.rng)


def masked_choice(
    scores: npt.NDArray[np.floating],
    mask: npt.NDArray[np.bool_],
    sample: bool,
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """(B,) the legal action of highest score per row, or (`sample`) one drawn from the
    softmax of the scores over the legal actions."""
    masked = np.where(mask, scores.astype(np.float64), -np.inf)
    if not sample:
        return masked.argmax(axis=1).astype(np.int64)
    z = np.exp(masked - masked.max(axis=1, keepdims=True))
    cum = np.cumsum(z / z.sum(axis=1, keepdims=True), axis=1)
    u = rng.random((len(cum), 1))
    picked = (cum < u).sum(axis=1)
    return np.minimum(picked, mask.shape[1] - 1).astype(np.int64)


def from_function(
    fn: Callable[..., Any],
    *,
    batched: bool = False,
    name: str | None = None,
    seed: int | None = None,
) -> FunctionAgent:
    """An agent from a function `fn(obs, mask) -> action` (`batched=True`: on the batch,
    (B, obs_size), (B, NUM_ACTIONS) -> (B,)); `obs` is the int16 RL encoding and `mask` the
    bool legal-action mask, as the Gym env gives them."""
    return FunctionAgent(fn, batched=batched, name=name, seed=seed)


def from_module(
    module: Any,
    *,
    device: str = "cpu",
    sample: bool = False,
    name: str | None = None,
    seed: int | None = None,
) -> ModuleAgent:
    """An agent from a torch module mapping the float encoding (B, obs_size) to action
    logits (B, NUM_ACTIONS): the legal action of highest logit (`sample=True`: drawn)."""
    return ModuleAgent(module, device=device, sample=sample, name=name, seed=seed)
