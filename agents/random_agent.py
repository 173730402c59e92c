"""The uniformly random agent: every legal action equally likely."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from spades_env.cards import select_bit
from spades_env.engine import PHASE_BASE
from spades_env.observation import SeatView


def random_legal_actions(
    legal: npt.NDArray[np.uint64], phase: npt.NDArray[np.int8], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per game from the engine's legal bits.

    `legal` is `State.legal` (bit i = action PHASE_BASE[phase] + i); games with no legal
    action (DONE) get action 0, which the engine ignores.
    """
    count = np.bitwise_count(legal).astype(np.int64)
    k = (rng.random(legal.shape[0]) * count).astype(np.int64)
    has = count > 0
    k = np.minimum(k, np.maximum(count - 1, 0))
    bit = select_bit(np.where(has, legal, np.uint64(1)), k * has)
    return (bit + PHASE_BASE[phase]) * has


class RandomAgent(BaseAgent):
    """`random`: picks uniformly among the legal actions."""

    name = "random"

    def act(self, view: SeatView, obs, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        del obs
        return random_legal_actions(view.legal, view.phase, self.rng)
