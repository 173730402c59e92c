"""The one interface every agent shares.

An agent is built with its parameters and a seed, and acts on a *batch* of seats:
`act(view, obs, mask)` gets the structured `SeatView` of each acting seat, the RL
encoding (B, obs_size) int16 and the legal-action mask (B, NUM_ACTIONS) bool, and
returns (B,) int64 actions, one legal action per game. Agents see only what the seat
knows: the view and the encoding are built for that seat and hold no hidden cards.

`act_one` is the single-game convenience on top of `act`.

**Run hooks.** An agent kind that keeps files of its own in a tournament's run folder
(and reports on them) overrides the class-level hooks of `BaseAgent`: `in_run_folder`,
`run_section` with `run_summary`, and `report_tables`. The tournament's driver, its
report and the evaluation ladder call them for every agent class of a run
(`agents.registry.summary_sections`) and know no agent kind by name.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol, runtime_checkable

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


@dataclass(frozen=True)
class ReportTable:
    """A table an agent kind adds to a run's report, as plain text cells (the report draws
    it): a title, the column heads (those in `left` aligned left, the others right), the
    rows, and a caption under it ("" for none)."""

    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    caption: str = ""
    left: tuple[str, ...] = ()


class BaseAgent:
    """The class to subclass for an agent of your own: a seeded generator and the
    single-game convenience around the one method to write, `act`.

    **Contract.**

    - `__init__(self, seed=None, **options)`: call `super().__init__(seed)`; all of the
      agent's randomness comes from `self.rng` (a numpy Generator of that seed), so the
      same seed plays the same moves. Options are what a spec sets
      (`bot.py:MyBot:depth=2` calls `MyBot(seed=..., depth=2)`; typed by the signature's
      annotations or defaults). A tournament builds the agents of every unit afresh with
      seeds of the unit alone, in worker processes; keep no state between games that a
      rebuilt agent would lack.
    - `act(view, obs, mask) -> actions`: called for a *batch* of B games at once, each
      with its seat to act (seats may differ between rows; bids and card plays may be
      mixed). Return a (B,) int64 array: for each row a legal action, `mask[b, a]` True
      (`spades_env.cards` numbers the actions: bids, then cards). Anything else (an
      illegal action, a fraction, None, the wrong shape), an exception, an exit or a
      call past the decision time limit stops the game with one error naming the
      agent, the game and the seat (`spades_env.agent_calls`).
    - `view` (`spades_env.observation.SeatView`): what each acting seat knows, as
      arrays with a leading batch axis: its seat, hand (a card bitmask), phase, bids,
      tricks won, the cards on the table and played so far (and by whom), the lead
      suit, voids shown, scores, bags, the rules. It never holds another seat's hidden
      cards.
    - `obs`: the RL encoding of the same seats, (B, obs_size) int16, as the Gym env's
      observation; given only when the class sets `needs_obs = True` (building it costs
      time), else None. `mask`: (B, NUM_ACTIONS) bool, the legal actions.
    - `name`: set by the registry to the spec's `NAME=` (or the spec).

    To name it on the command line, point at its file or module
    (`--agents mine=path/to/bot.py:MyBot`) or ship it as a plugin
    (`agents.registry`, `register`); `agents.from_function` and `agents.from_module`
    wrap a function or a torch module in one call.

    **Run hooks** (class methods; the defaults do nothing): `in_run_folder(run_dir)`, a
    context the driver holds while the units are played (the worker processes start
    inside it), for a kind that writes into the run folder; `run_section` and
    `run_summary(run_dir)`, the kind's section of `summary.json` (a dict keyed by agent
    name: an evaluation copies the candidate's entry into its rung), read from the run
    folder at the end; `report_tables(section)`, the tables the report prints for it.
    """

    name: str = "agent"
    #: does `act` read the RL encoding? If not, callers pass obs=None (building it costs
    #: time); set True to receive it.
    needs_obs: ClassVar[bool] = False
    #: the key of this kind's section in a run's summary.json (None: it adds none)
    run_section: ClassVar[str | None] = None

    @classmethod
    def in_run_folder(cls, run_dir: Path) -> contextlib.AbstractContextManager[None]:
        """Held by the tournament driver while the units of a run in `run_dir` are played
        (worker processes start inside it): tell this kind's agents the run folder."""
        return contextlib.nullcontext()

    @classmethod
    def run_summary(cls, run_dir: Path) -> dict[str, Any] | None:
        """This kind's section of the summary (`run_section`), read from the run folder
        once the log is complete: {agent name: figures}; None or empty: no section."""
        return None

    @classmethod
    def report_tables(cls, section: dict[str, Any]) -> list[ReportTable]:
        """The tables the run's report prints for this kind's section of the summary."""
        return []

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
