"""`sb3:PATH`: a Stable-Baselines3 / sb3-contrib model, trained on the Gym env, as an agent.

The model file is the zip that `model.save(PATH)` writes. Its algorithm is read from the
file (the policy's module: MaskablePPO's maskable policy, DQN's Q-network, PPO / A2C's
actor-critic) unless `algo=` names it (ppo, a2c, dqn, maskable_ppo). The model sees
what the Gym env gave it in training, the int16 RL encoding (`obs_format="int16"`, the
default), and plays the legal action of highest probability (PPO, A2C, MaskablePPO;
`sample=true`: drawn from them, renormalised over the legal actions) or of highest
Q-value (DQN): the legal-action mask applies to every algorithm, masked or not in
training. A model is loaded once per process and file (a tournament builds its agents
for every unit).

Needs `stable-baselines3` (and `sb3-contrib` for MaskablePPO): the `integrations` extra.
"""

from __future__ import annotations

import functools
import importlib.util
import json
import os
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.adapters.functions import masked_choice
from agents.base import BaseAgent
from spades_env.cards import NUM_ACTIONS
from spades_env.observation import SeatView

#: algo= name -> (module, class)
ALGOS = {
    "ppo": ("stable_baselines3", "PPO"),
    "a2c": ("stable_baselines3", "A2C"),
    "dqn": ("stable_baselines3", "DQN"),
    "maskable_ppo": ("sb3_contrib", "MaskablePPO"),
}
INSTALL = (
    "pip install stable-baselines3 sb3-contrib "
    "(or the integrations extra: pip install -e '.[integrations]')"
)


def _model_data(path: str) -> dict[str, Any]:
    """The `data` JSON of an SB3 zip, or a one-line error saying what the file is."""
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"model {path!r} does not exist; give the zip model.save() wrote")
    if not zipfile.is_zipfile(p):
        raise ValueError(f"{path!r} is not a Stable-Baselines3 model (not a zip file)")
    with zipfile.ZipFile(p) as z:
        names = set(z.namelist())
        if "data" not in names or "policy.pth" not in names:
            hint = (
                "; a torch file: checkpoint:PATH plays one that spades train wrote"
                if any(n.endswith("data.pkl") for n in names)
                else ""
            )
            raise ValueError(
                f"{path!r} is not a Stable-Baselines3 model (no data and policy.pth){hint}"
            )
        try:
            return json.loads(z.read("data"))
        except ValueError as exc:
            raise ValueError(f"{path!r}: its data file is not JSON ({exc})") from None


def detect_algo(data: dict[str, Any]) -> str:
    """The algo= name of a saved model, from its policy's module."""
    module = str(data.get("policy_class", {}).get("__module__", ""))
    if "maskable" in module:
        return "maskable_ppo"
    if module.startswith("stable_baselines3.dqn"):
        return "dqn"
    if "actor_critic" in module or module == "stable_baselines3.common.policies":
        return "ppo" if "clip_range" in data else "a2c"
    raise ValueError(
        f"cannot tell the algorithm of this model (policy module {module!r}); "
        f"give it: algo={'|'.join(ALGOS)}"
    )


def _algo_class(algo: str) -> Any:
    if algo not in ALGOS:
        raise ValueError(f"algo={algo!r}: choose one of {', '.join(ALGOS)}")
    module, name = ALGOS[algo]
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        raise ValueError(f"sb3: {name} needs the {module} package: {INSTALL}") from None


def check_params(params: dict[str, Any]) -> None:
    """Registry check: a path to an SB3 model whose algorithm's package is installed."""
    if "path" not in params:
        raise ValueError("write the model's path: sb3:PATH (the zip model.save() wrote)")
    algo = params.get("algo") or detect_algo(_model_data(os.fspath(params["path"])))
    if algo not in ALGOS:
        raise ValueError(f"algo={algo!r}: choose one of {', '.join(ALGOS)}")
    if importlib.util.find_spec(ALGOS[algo][0]) is None:
        raise ValueError(f"{ALGOS[algo][1]} models need the {ALGOS[algo][0]} package: {INSTALL}")


@functools.lru_cache(maxsize=8)
def _load(path: str, mtime_ns: int, algo: str, device: str) -> Any:
    del mtime_ns  # a cache key: a rewritten file is loaded again
    cls = _algo_class(algo)
    # the schedules are training state: replaced so that a model saved by another
    # Python or SB3 version still loads for play
    objects = {"lr_schedule": lambda _: 0.0, "learning_rate": 0.0, "clip_range": lambda _: 0.0}
    model = cls.load(path, device=device, custom_objects=objects)
    n = getattr(model.action_space, "n", None)
    if n != NUM_ACTIONS:
        raise ValueError(f"model {path!r} has {n} actions; the Spades env has {NUM_ACTIONS}")
    return model


class SB3Agent(BaseAgent):
    """A saved SB3 model playing one seat (see the module doc)."""

    needs_obs = True

    def __init__(
        self,
        path: str,
        algo: str | None = None,
        sample: bool = False,
        device: str = "cpu",
        seed: int | None = None,
    ) -> None:
        super().__init__(seed)
        full = str(Path(path).resolve())
        self.algo = algo or detect_algo(_model_data(full))
        self.model = _load(full, Path(full).stat().st_mtime_ns, self.algo, device)
        self.sample = sample
        shape = getattr(self.model.observation_space, "shape", None)
        self._obs_size = int(shape[0]) if shape and len(shape) == 1 else None
        self.path = full

    def act(
        self, view: SeatView, obs: npt.NDArray[np.int16] | None, mask: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.int64]:
        import torch

        if obs is None:
            raise ValueError("an sb3 agent reads the RL encoding: pass obs")
        if self._obs_size != obs.shape[1]:
            raise ValueError(
                f"model {self.path!r} takes observations of shape "
                f"{self.model.observation_space.shape}, the env encodes {obs.shape[1]} values "
                "(trained on other rules, or with obs_format='bits'?)"
            )
        policy = self.model.policy
        with torch.no_grad():
            x, _ = policy.obs_to_tensor(np.asarray(obs))
            if self.algo == "dqn":
                scores = policy.q_net(x)
                sample = False
            else:
                scores = policy.get_distribution(x).distribution.logits
                sample = self.sample
        return masked_choice(scores.float().cpu().numpy(), mask, sample, self.rng)
