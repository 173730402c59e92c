"""The one interface every agent shares.

An agent is built with its parameters and a seed, and acts on a *batch* of seats:
`act(view, obs, mask)` gets the structured `SeatView` of each acting seat, the RL
encoding (B, obs_size) int16 and the legal-action mask (B, NUM_ACTIONS) bool, and
returns (B,) int64 actions, one legal action per game. Agents see only what the seat
knows: the view and the encoding are built for that seat and hold no hidden cards.

`act_one` is the single-game convenience on top of `act`.
"""

from __future__ import annotations

from typing import ClassVar, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from spades_env.engine import legal_action_mask
from spades_env.observation import SeatView, encode, seat_view
from spades_env.state import State


class Actor(Protocol):
    """Anything that acts: `act` maps a batch of seat views to one action per game."""

    def act(
        self,
        view: SeatView,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]: ...


@runtime_checkable
class Agent(Actor, Protocol):
    """A player: a named `Actor`."""

    name: str


class BaseAgent:
    """Shared plumbing: a seeded generator and the single-game convenience."""

    name: str = "agent"
    #: does `act` read the RL encoding? If not, callers may pass obs=None (it is costly).
    needs_obs: ClassVar[bool] = False

    def __init__(self, seed: int | None = None) -> None:
        self.seed = seed
        self.rng = np.random.default_rng(seed)

    def act(
        self,
        view: SeatView,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]:
        raise NotImplementedError

    def act_one(self, view: SeatView, obs, mask) -> int:
        """One game: `view` of batch size 1 (or unbatched obs/mask)."""
        obs_b = None if obs is None else np.asarray(obs).reshape(1, -1)
        return int(self.act(view, obs_b, np.asarray(mask).reshape(1, -1))[0])

    def act_state(self, state: State) -> npt.NDArray[np.int64]:
        """Act for the seat to move in every game of an engine state."""
        view = seat_view(state)
        obs = encode(state) if self.needs_obs else None
        return self.act(view, obs, legal_action_mask(state))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r}, seed={self.seed})"
