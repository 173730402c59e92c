"""The uniformly random agent: every legal action equally likely."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from spades_env.engine import random_legal_actions
from spades_env.observation import SeatView

__all__ = ["RandomAgent", "random_legal_actions"]


class RandomAgent(BaseAgent):
    """`random`: picks uniformly among the legal actions."""

    name = "random"

    def act(self, view: SeatView, obs, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        del obs, mask
        return random_legal_actions(view.legal, view.phase, self.rng)
