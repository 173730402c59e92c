"""The single-game path: one game stepped by the compiled core, for env loops and search.

At batch size 1 a numpy call costs more than the work it does (PERF_NOTES.md), so the
PettingZoo env and tree search step single games here. A `SingleGame` holds a
batch-of-one `State` and steps it with the engine's own kernel (core/kernel.py
`step_one`), so it is the engine, not a second rule book; tests/env/test_single.py still
checks it against `engine.step`, state for state.

Every `State` field reads as a Python int (or bool) or list (`game.phase`, `game.hands`),
and assigning one writes it (`game.hands = [...]`, for search that deals worlds);
`SingleGame.state` is a copy of the game as a `State`, `SingleGame.from_state` goes the
other way, and `copy.copy` / `clone` give an independent game.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import NUM_ACTIONS, action_index
from spades_env.core import kernel as _kernel
from spades_env.core.observe import encode_masked, encode_rows, encode_seats, obs_offsets
from spades_env.core.rules_vector import FIELDS, rules_vector
from spades_env.engine import (
    PHASE_BASE,
    HandResult,
    IllegalActionError,
    StepInfo,
    StepScratch,
    blind_allowed,
    explain_illegal,
    finished_rows,
    legal_actions,
)
from spades_env.observation import obs_size
from spades_env.rules import Rules
from spades_env.state import DONE, State, init, one_index, seed_array

_PHASE_BASE = [int(b) for b in PHASE_BASE]


class _ByteActions(dict):
    """phase -> 8 tables (byte k of the legal bits) of 256 tuples: the actions whose bits
    a byte value holds (the legal bits start at PHASE_BASE[phase]); built on first use."""

    def __missing__(self, phase: int) -> list[list[tuple[int, ...]]]:
        base = _PHASE_BASE[phase]
        tables = [
            [tuple(base + 8 * k + i for i in range(8) if v >> i & 1) for v in range(256)]
            for k in range(8)
        ]
        self[phase] = tables
        return tables


_BYTE_ACTIONS = _ByteActions()


class SingleGame:
    """One game of Spades. Same contract as `engine.step` on a batch of one:
    `step(action)` returns a `StepInfo`, and `state` equals the `State` the batched engine
    would hold."""

    def __init__(
        self,
        rules: Rules,
        rng: np.random.Generator | None = None,
        *,
        seed: int | None = None,
        deal: npt.ArrayLike | None = None,
        dealer: int | None = None,
        scores: npt.ArrayLike | None = None,
        bags: npt.ArrayLike | None = None,
    ) -> None:
        seeds = None if seed is None else seed_array([seed], 1)  # 0..2**64-1, checked
        if seeds is None and rng is None:
            rng = np.random.default_rng()
        state = init(
            rules,
            1,
            rng,
            seeds=seeds,
            deals=None if deal is None else np.asarray(deal)[None],
            dealer=dealer,
            scores=None if scores is None else np.asarray(scores)[None],
            bags=None if bags is None else np.asarray(bags)[None],
        )
        self._setup(rules)
        self._load(state)

    @classmethod
    def from_state(cls, state: State, game: int = 0) -> SingleGame:
        """A single game continuing game `game` of a batched state."""
        self = cls.__new__(cls)
        self._setup(state.rules)
        self._load(state.take([game]))  # a game of the batch (checked)
        return self

    def _setup(self, rules: Rules) -> None:
        self.rules, self._p = rules, rules.num_players
        self._r = rules_vector(rules)
        self._r_last = rules_vector(rules, last_hand=True)  # step(..., last_hand=True)
        self._ob, self._obs_size = obs_offsets(rules), obs_size(rules)
        self._seat = np.zeros(1, dtype=np.int64)
        quiet = StepInfo(
            hand_over=np.zeros(1, dtype=bool),
            hand_points=np.zeros((1, rules.num_teams), dtype=np.int32),
            illegal=np.zeros(1, dtype=bool),
            finished=None,
        )
        for arr in (quiet.hand_over, quiet.hand_points, quiet.illegal):
            arr.setflags(write=False)
        self._quiet = quiet  # shared by every step with nothing to report

    def _load(self, state: State) -> None:
        """Hold `state` (a batch of one, not copied)."""
        self._st = state
        self._buf = state.buffer
        self._scratch = StepScratch(self.rules, 1, state.buffer.shape[1])

    def restart(self, seed: int) -> None:
        """Start a new game in place with deal key `seed`, as `SingleGame(rules, seed=seed)`
        would."""
        rows = np.zeros(1, dtype=np.int64)
        seeds = (
            np.array([seed], dtype=np.uint64)
            if type(seed) is int and 0 <= seed < 1 << 64
            else seed_array([seed], 1)  # refused in one line unless 0..2**64-1
        )
        _kernel.new_games(self._r, self._buf, rows, seeds)

    def __copy__(self) -> SingleGame:
        new = self.__class__.__new__(self.__class__)
        new.__dict__.update(self.__dict__)
        new._load(self._st.copy())
        return new

    def clone(self) -> SingleGame:
        """An independent copy (for search)."""
        return self.__copy__()

    @property
    def state(self) -> State:
        """The game as a batch-of-one `State` (a copy)."""
        return self._st.copy()

    # ------------------------------------------------------------------ queries
    @property
    def done(self) -> bool:
        return self._st.phase.item(0) == DONE

    def legal_list(self) -> list[int]:
        """The legal actions of the seat to act."""
        legal = self._st.legal.item(0)
        tables = _BYTE_ACTIONS[self._st.phase.item(0)]
        out: list[int] = []
        for table in tables:  # a byte of legal bits at a time: its actions, looked up
            if not legal:
                break
            out += table[legal & 0xFF]
            legal >>= 8
        return out

    def legal_mask(self) -> npt.NDArray[np.int8]:
        """(NUM_ACTIONS,) int8 legal actions of the seat to act."""
        mask = np.zeros((1, NUM_ACTIONS), dtype=np.bool_)
        _kernel.action_mask(self._st.legal, self._st.phase, mask)
        return mask[0].view(np.int8)

    def observe(self, seat: int) -> npt.NDArray[np.int16]:
        """The RL encoding of `seat`, equal to `observation.encode`."""
        out = np.empty((1, self._obs_size), dtype=np.int16)
        self._seat[0] = self._check_seat(seat)
        encode_rows(self._r, self._ob, self._buf, self._seat, out)
        return out[0]

    def observe_masked(
        self, seat: int, masked: bool
    ) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int8]]:
        """`observe(seat)` and, if `masked`, `legal_mask()` (else all 0), in one call."""
        out = np.empty((1, self._obs_size), dtype=np.int16)
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        encode_masked(self._r, self._ob, self._buf, self._check_seat(seat), masked, out, mask)
        return out[0], mask

    @property
    def obs(self) -> npt.NDArray[np.int16]:
        """(P, obs_size) int16: every seat's encoding."""
        out = np.empty((self._p, self._obs_size), dtype=np.int16)
        encode_seats(self._r, self._ob, self._buf, 0, out)
        return out

    def _check_seat(self, seat: int) -> int:
        """`seat` if it is a seat of the table (the compiled encoders do not check it)."""
        return one_index(seat, self._p, "seat")

    def _blind_allowed(self, seat: int) -> bool:
        """RULES.md §2: may `seat` declare blind nil now (core.rule_functions.blind_allowed)."""
        return bool(blind_allowed(self._st, [0], [seat])[0])

    # ------------------------------------------------------------------ step
    def step(self, action: int, on_illegal: str = "raise", last_hand: bool = False) -> StepInfo:
        """Apply the action of the seat to act; same contract as `engine.step`."""
        # whole numbers only: never truncate 54.7 to a bid (cards.py)
        given = a = action if type(action) is int else action_index(action)
        if not 0 <= a < NUM_ACTIONS:  # never legal; a huge int must not reach the kernel
            a = -1
        if on_illegal != "raise" and on_illegal != "report":
            raise ValueError(f"on_illegal must be 'raise' or 'report'; got {on_illegal!r}")
        sc = self._scratch
        rules = self._r_last if last_hand else self._r
        code = _kernel.step_one(rules, self._buf, a, sc.fin, sc.res)
        if code == 0:
            return self._quiet
        if code < 0:
            if on_illegal == "raise":
                st = self._st
                raise IllegalActionError(
                    0, int(st.to_act[0]), given, explain_illegal(st, 0, a), legal_actions(st, 0)
                )
            return self._info(None, True)
        return self._info(finished_rows(self._st, sc, 1), False)

    def _info(self, finished: HandResult | None, illegal: bool) -> StepInfo:
        pts = np.zeros((1, self.rules.num_teams), dtype=np.int32)
        if finished is not None:
            pts[0] = finished.points[0] - finished.penalty[0]
        return StepInfo(np.array([finished is not None]), pts, np.array([illegal]), finished)


def _field(name: str, scalar: bool) -> property:
    def get(self: SingleGame):
        if scalar:  # .item: a Python int (bool) without a numpy scalar in between
            return getattr(self._st, name).item(0)
        return getattr(self._st, name)[0].tolist()

    def put(self: SingleGame, value) -> None:
        getattr(self._st, name)[0] = value

    return property(get, put, doc=f"`State.{name}` of this game")


for _f in FIELDS:
    setattr(SingleGame, _f.name, _field(_f.name, _f.width == "1"))
