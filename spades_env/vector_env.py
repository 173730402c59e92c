"""A native Gymnasium vector env: N single-seat Spades games stepped as one engine batch.

``gymnasium.make_vec("spades_env/Spades-v0", num_envs=N,
vectorization_mode="vector_entry_point")`` builds it. Sub-env ``i`` behaves exactly as a
``SpadesEnv`` (gym_env.py) with the same arguments reset with seed ``seed + i``: same
observations, rewards, ends and masks step for step (tests/env/test_vector_env.py). Nothing
loops over games in Python. With the default opponents a step is one compiled call
(core/vector.py: the learner's action, the opponents' moves, the end-of-hand infos, the
observation and the mask, game by game, and the next episodes' starts: no other numpy
work); with opponent agents (objects or spec strings such as ``"heuristic"``, as
``SpadesEnv`` takes them), their actions are batched per agent and the engine steps the
whole `State` at a time.

- Autoreset: ``AutoresetMode.NEXT_STEP`` (Gymnasium's default). The step after a sub-env
  ends starts its next episode and ignores its action; on that step its reward is 0.
  A hand episode's final observation shows its finished hand in the done phase (no next
  hand is dealt, as in ``SpadesEnv``).
  ``info["action_mask"]`` of a sub-env that just ended is all 0, as a ``SpadesEnv``'s
  mask once its episode is over (and Gymnasium's sync and async vector envs of it):
  the next action is ignored whatever it is (``action_space.sample(mask)`` of an all-0
  mask gives 0).
- Infos are dicts of arrays with Gymnasium's ``_key`` masks: ``action_mask`` (N, 80) int8
  0/1 (``action_masks()`` gives it as bool) and
  ``seat`` (N,) every step; ``hand_no``, ``bids``, ``blind``, ``tricks``, ``hand_score``,
  ``scores``, ``bags``, ``game_over``, ``winner`` where a hand ended in the step;
  ``illegal`` where the learner's action was illegal. The end-of-hand keys of one step
  share one ``_key`` mask array. Hand records are not built here (they cost more than
  the step); use the single env or ``records.hand_records``.
- Opponents: as in ``SpadesEnv``; an agent object is called once per engine step with
  the batch of games where one of its seats is to act.
- Observations: ``obs_format="int16"`` (default) the (N, obs_size) int16 encoding;
  ``"bits"`` the same packed into bit-planes, (N, bits_size) uint8 (obs_bits.py, with
  ``unpack_bits`` / ``unpack_bits_torch`` for the learner). The arrays a step hands out
  are written again only once nothing refers to them (`_Recycled`).
- Threads: ``num_threads=k`` (default 1) splits the compiled step's games into k
  ranges stepped at once on k threads (the games share nothing, so the results are the
  same for every k). Only the default opponents step in compiled code, so k > 1 needs
  them.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from spades_env.agent_calls import AgentError, call_agent
from spades_env.cards import NUM_ACTIONS, action_array
from spades_env.core.observe import obs_offsets
from spades_env.core.observe_bits import MEMO_PLANES
from spades_env.core.rules_vector import layout, rules_vector
from spades_env.core.vector import (
    F_COUNT,
    F_GAME_OVER,
    F_HAND,
    F_ILLEGAL,
    F_TERMINATED,
    F_TRUNCATED,
    clear_infos,
    env_step,
)
from spades_env.engine import (
    PHASE_BASE,
    HandResult,
    StepInfo,
    legal_action_mask,
    step,
    thread_ranges,
)
from spades_env.env_common import (
    DEFAULT_HAND_LIMIT,
    DEFAULT_ILLEGAL_REWARD,
    action_space,
    check_episode,
    check_hand_limit,
    check_reward,
    env_rules,
    game_seeds,
    learner_seats,
    obs_format_space,
    opponent_table,
    random_opponent_actions,
    reset_position,
    seed_base,
    team_reward,
)
from spades_env.obs_bits import bits_layout, encode_bits
from spades_env.observation import encode, obs_size, seat_view
from spades_env.rules import Rules
from spades_env.state import DONE, MAX_BATCH, State, init

#: Action for a game that must not move in an engine step: never legal, so the engine
#: (with on_illegal="report") leaves that game exactly as it was.
_HOLD = -1


class SpadesVectorEnv(VectorEnv):
    """`num_envs` single-seat games in one batched engine state (see the module doc)."""

    metadata: ClassVar[dict[str, Any]] = {
        "autoreset_mode": AutoresetMode.NEXT_STEP,
        "render_modes": [],
    }

    def __init__(
        self,
        num_envs: int = 1,
        rules: Rules | None = None,
        seats: int | Sequence[int] = 0,
        opponents: Any = None,
        episode: str = "hand",
        zero_sum: bool = False,
        hand_limit: int | None = DEFAULT_HAND_LIMIT,
        illegal_reward: float = DEFAULT_ILLEGAL_REWARD,
        render_mode: str | None = None,
        obs_format: str = "int16",
        num_threads: int = 1,
    ) -> None:
        if render_mode is not None:
            raise ValueError(
                f"render_mode={render_mode!r:.60}: the vector env does not render; render a "
                "single SpadesEnv"
            )
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer):
            raise ValueError(f"num_envs must be a whole number >= 1; got {num_envs!r}")
        if not 1 <= num_envs <= MAX_BATCH:
            raise ValueError(
                f"num_envs must be 1..{MAX_BATCH:,} (one engine batch), got {num_envs}"
            )
        self.num_envs = int(num_envs)
        self.rules = env_rules(rules)  # a Rules value or a preset name
        self.seats = learner_seats(seats, self.rules)
        self.team = self.seats[0] % self.rules.num_teams
        self.episode = check_episode(episode)
        self.zero_sum = bool(zero_sum)
        self.hand_limit = check_hand_limit(hand_limit)
        self.illegal_reward = check_reward(illegal_reward)
        self.render_mode = None
        self.obs_format = obs_format
        self.single_observation_space = obs_format_space(self.rules, obs_format)
        self.single_action_space = action_space()
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._learner = np.zeros(self.rules.num_players, dtype=bool)  # (P,) learner's seats
        self._learner[list(self.seats)] = True
        # Opponent agents grouped: agent -> its seats (None = the default random opponent).
        self._groups: list[tuple[Any, npt.NDArray[np.bool_]]] = []
        for seat, agent in opponent_table(opponents, self.seats, self.rules).items():
            for a, seats_mask in self._groups:
                if a is agent:
                    seats_mask[seat] = True
                    break
            else:
                mask = np.zeros(self.rules.num_players, dtype=bool)
                mask[seat] = True
                self._groups.append((agent, mask))
        n = self.num_envs
        self.state: State | None = None
        self._base = np.zeros(n, dtype=np.uint64)  # (N,) episode-counter keys
        self._episode = np.zeros(n, dtype=np.int64)  # (N,) episodes started per sub-env
        self._seeded = False
        self._ended = np.zeros(n, dtype=bool)  # (N,) episode over, to restart next step
        self._seat = np.full(n, self.seats[0], dtype=np.int64)  # (N,) seat observed
        # With only default opponents, a step is one compiled call (core/vector.py).
        self._compiled = all(agent is None for agent, _ in self._groups)
        # the games each thread steps (engine.thread_ranges, which checks the count)
        self._ranges = thread_ranges(n, num_threads)
        if num_threads > 1 and not self._compiled:
            raise ValueError(
                "num_threads > 1 needs the default opponents (opponent agents are called "
                "from Python, one batch at a time); leave num_threads at 1"
            )
        self.num_threads = int(num_threads)
        self._pool: ThreadPoolExecutor | None = None
        self._scratch: _Scratch | None = None
        self._last_infos: dict[str, Any] = {}

    # ------------------------------------------------------------------ reset
    def reset(
        self,
        *,
        seed: int | Sequence[int] | None = None,
        options: dict[str, Any] | None = None,
    ) -> tuple[npt.NDArray, dict[str, Any]]:
        super().reset(seed=seed if isinstance(seed, int | None) else None)
        n = self.num_envs
        if seed is not None:
            seeds = np.arange(n) + seed if isinstance(seed, int) else np.asarray(seed)
            if seeds.shape != (n,):
                raise ValueError(f"give one seed or {n} seeds; got {len(seeds)}")
            self._base, self._episode[:] = seed_base(seeds), 0
            self._seeded = True
        elif not self._seeded:
            self._base = self.np_random.integers(2**63, size=n).astype(np.uint64)
            self._episode[:], self._seeded = 0, True
        else:
            self._episode += 1
        position = reset_position(options)
        self.state = init(self.rules, n, seeds=game_seeds(self._base, self._episode), **position)
        self._ended[:] = False
        self._seat[:] = self.seats[0]
        if self._compiled:
            return self._run(np.zeros(n, dtype=np.int64), learner_acts=False)[0], self._last_infos
        out = self._outcome()
        self._play_opponents(out)
        return self._observe(), self._infos(out)

    # ------------------------------------------------------------------ step
    def step(
        self, actions: npt.ArrayLike
    ) -> tuple[npt.NDArray, npt.NDArray, npt.NDArray, npt.NDArray, dict[str, Any]]:
        state = self._require_state()
        n = self.num_envs
        acts = action_array(actions).reshape(n)  # whole numbers only (cards.py)
        if self._compiled:
            acts = np.ascontiguousarray(acts)  # the compiled step's one array layout
            obs, reward, flags = self._run(acts, learner_acts=True)
            return obs, reward, flags[F_TERMINATED], flags[F_TRUNCATED], self._last_infos
        out = self._outcome()
        restart = np.flatnonzero(self._ended)
        moving = ~self._ended
        # The learner is to act in every game that goes on: check its action against the
        # engine's legal bits (bit i = action PHASE_BASE[phase] + i).
        rel = acts - PHASE_BASE[state.phase]
        inside = (acts < NUM_ACTIONS) & (rel >= 0) & (rel < 64)
        bit = np.where(inside, rel, 0).astype(np.uint64)
        legal = inside & ((state.legal >> bit) & np.uint64(1)).astype(bool)
        illegal = moving & ~legal
        if illegal.any():
            out.illegal |= illegal
            out.reward[illegal] = self.illegal_reward
            out.terminated |= illegal
        go = moving & legal
        if go.any():
            self._engine_step(np.where(go, acts, _HOLD), out)
        if restart.size:
            self._restart(restart)
        self._play_opponents(out)
        self._ended = out.terminated | out.truncated
        return self._observe(), out.reward, out.terminated, out.truncated, self._infos(out)

    def _run(
        self, acts: npt.NDArray[np.int64], learner_acts: bool
    ) -> tuple[npt.NDArray, npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
        """`step` (or, without learner actions, the end of `reset`) in one compiled call
        (core/vector.py `env_step`, which also starts the next episodes); returns the
        observations, rewards and flags (F_* rows) and leaves the infos in `_last_infos`.
        Every array handed out is one the caller no longer holds (`_Recycled`), written
        whole by the call."""
        state = self._require_state()
        n, p, t = self.num_envs, self.rules.num_players, self.rules.num_teams
        sc = self._scratch
        if sc is None or sc.fin.shape != state.buffer.shape:
            sc = self._scratch = _Scratch(
                self.rules, n, packed=self.obs_format == "bits", last_hand=self.episode == "hand"
            )
        obs, mask, flags, reward = sc.obs.take(), sc.mask.take(), sc.flags.take(), sc.reward.take()
        seat, nums8, nums32 = sc.seat.take(), sc.nums8.take(), sc.nums32.take()
        args = (
            sc.rules_vector, state.buffer, acts, learner_acts, self._ended, self._base,
            self._episode, self.seats[0], self._learner, self.team, self.zero_sum,
            self.episode == "hand", -1 if self.hand_limit is None else self.hand_limit,
            self.illegal_reward,
            sc.fin, sc.res, sc.points, reward, flags, nums8, nums32, self._seat, seat, mask,
            sc.offsets, sc.bits.kernel, sc.packed, sc.memo, obs.view(np.uint8),
        )  # fmt: skip
        if len(self._ranges) == 1:
            hands, illegal = env_step(*args, 0, n)
        else:  # the first range on this thread, the others on the pool's
            if self._pool is None:
                self._pool = ThreadPoolExecutor(len(self._ranges) - 1, "spades-vector")
            done = [self._pool.submit(env_step, *args, lo, hi) for lo, hi in self._ranges[1:]]
            counts = [env_step(*args, *self._ranges[0])] + [f.result() for f in done]
            hands, illegal = sum(c[0] for c in counts), sum(c[1] for c in counts)
            if hands:  # a range where no hand ended left its end-of-hand infos as they were
                for (lo, hi), (ended, _) in zip(self._ranges, counts, strict=True):
                    if not ended:
                        clear_infos(flags, nums8, nums32, lo, hi)
        every = np.ones(n, dtype=bool)
        infos: dict[str, Any] = {
            "action_mask": mask,
            "_action_mask": every,
            "seat": seat,
            "_seat": every,
        }
        if hands:
            hand = flags[F_HAND]
            fields = {
                "hand_no": nums32[:, 0],
                "bids": nums8[:, :p],
                "blind": nums8[:, p : 2 * p].view(bool),
                "tricks": nums8[:, 2 * p : 3 * p],
                "hand_score": nums32[:, 1 : 1 + t],
                "scores": nums32[:, 1 + t : 1 + 2 * t],
                "bags": nums32[:, 1 + 2 * t :],
                "game_over": flags[F_GAME_OVER],
                "winner": nums8[:, 3 * p],
            }
            for key, value in fields.items():
                infos[key] = value
                infos[f"_{key}"] = hand
        if illegal:
            infos["illegal"] = infos["_illegal"] = flags[F_ILLEGAL]
        self._last_infos = infos
        return obs, reward, flags

    def _restart(self, rows: npt.NDArray[np.int64]) -> None:
        """Start the next episode of the sub-envs in `rows` (NEXT_STEP autoreset)."""
        state = self._require_state()
        self._episode[rows] += 1
        fresh = init(self.rules, rows.size, seeds=game_seeds(self._base[rows], self._episode[rows]))
        for name in State.__dataclass_fields__:
            if name != "rules":
                getattr(state, name)[rows] = getattr(fresh, name)
        self._seat[rows] = self.seats[0]

    def _engine_step(self, actions: npt.NDArray[np.int64], out: _Outcome) -> StepInfo:
        """Step the games whose action is not _HOLD; book their finished hands in `out`."""
        state = self._require_state()
        info = step(state, actions, on_illegal="report", last_hand=self.episode == "hand")
        if (info.illegal & (actions != _HOLD)).any():
            g = int(np.flatnonzero(info.illegal & (actions != _HOLD))[0])
            raise RuntimeError(f"game {g}: an opponent agent chose illegal action {actions[g]}")
        if info.finished is not None:
            self._book_hands(info.finished, out)
        return info

    def _book_hands(self, res: HandResult, out: _Outcome) -> None:
        g = res.games
        points = res.points - res.penalty
        out.reward[g] += team_reward(points, self.team, self.zero_sum)
        out.hand[g] = True
        out.fields["hand_no"][g] = res.hand_no
        out.fields["bids"][g] = res.bids
        out.fields["blind"][g] = res.blind
        out.fields["tricks"][g] = res.tricks
        out.fields["hand_score"][g] = points
        out.fields["scores"][g] = res.scores
        out.fields["bags"][g] = res.bags
        out.fields["game_over"][g] = res.game_over
        out.fields["winner"][g] = res.winner
        if self.episode == "hand":
            out.terminated[g] = True
        else:
            out.terminated[g] |= res.game_over
            if self.hand_limit is not None:
                out.truncated[g] |= ~res.game_over & (res.hand_no + 1 >= self.hand_limit)

    def _play_opponents(self, out: _Outcome) -> None:
        """Play the other seats in every running game until a learner seat is to act."""
        state = self._require_state()
        while True:
            running = ~(out.terminated | out.truncated) & (state.phase != DONE)
            waiting = running & ~self._learner[state.to_act]
            if not waiting.any():
                break
            actions = np.full(self.num_envs, _HOLD, dtype=np.int64)
            for agent, seats in self._groups:
                rows = waiting & seats[state.to_act]
                if rows.any():
                    actions[rows] = self._opponent_actions(agent, rows)
            self._engine_step(actions, out)
        ready = ~(out.terminated | out.truncated) & (state.phase != DONE)
        self._seat[ready] = state.to_act[ready]

    def _opponent_actions(self, agent: Any, rows: npt.NDArray[np.bool_]) -> npt.NDArray:
        state = self._require_state()
        if agent is None:
            return random_opponent_actions(state, np.flatnonzero(rows))
        games = np.flatnonzero(rows)
        sub = state.take(games)
        obs = encode(sub) if getattr(agent, "needs_obs", True) else None
        # one guarded, checked call: a fault is an AgentError naming the opponent, the
        # sub-environment (as `game`) and the seat
        try:
            return call_agent(
                agent, seat_view(sub), obs, legal_action_mask(sub), seats=sub.to_act, state=sub
            )
        except AgentError as exc:
            if exc.game is None:
                raise
            raise exc.relocated(f"sub-environment {int(games[exc.game])}") from None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_pool": None}  # threads are not copied: started anew

    def close_extras(self, **kwargs: Any) -> None:
        """Stop the step's threads (`num_threads` > 1)."""
        pool = getattr(self, "_pool", None)  # None too if __init__ refused its arguments
        if pool is not None:
            pool.shutdown()
            self._pool = None

    # ------------------------------------------------------------------ observing
    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(N, 80) bool legal actions of the learner; all False where an episode just
        ended (as `SpadesEnv.action_masks` once its episode is over)."""
        state = self._require_state()
        mask = legal_action_mask(state)
        mask[self._ended] = False
        return mask

    def _observe(self) -> npt.NDArray:
        if self.obs_format == "bits":
            return encode_bits(self._require_state(), self._seat)
        return encode(self._require_state(), self._seat)

    def _infos(self, out: _Outcome) -> dict[str, Any]:
        n = self.num_envs
        every = np.ones(n, dtype=bool)
        infos: dict[str, Any] = {
            "action_mask": self.action_masks().astype(np.int8),  # int8, as in SpadesEnv
            "_action_mask": every,
            "seat": self._seat.copy(),
            "_seat": every.copy(),
        }
        if out.hand.any():
            for key, value in out.fields.items():
                infos[key] = value
                infos[f"_{key}"] = out.hand.copy()
        if out.illegal.any():
            infos["illegal"] = out.illegal
            infos["_illegal"] = out.illegal.copy()
        return infos

    def _outcome(self) -> _Outcome:
        return _Outcome(self.num_envs, self.rules.num_players, self.rules.num_teams)

    def _require_state(self) -> State:
        if self.state is None:
            raise RuntimeError("call reset() before using the environment")
        return self.state


class _Scratch:
    """What the compiled step reuses (core/vector.py `env_step`): the arrays it hands out,
    each game's trick planes, and room for the hands that end."""

    def __init__(self, rules: Rules, n: int, packed: bool, last_hand: bool) -> None:
        # hand episodes: no next deal (core/rules_vector.py)
        self.rules_vector = rules_vector(rules, last_hand)
        self.bits = bits_layout(rules)
        self.offsets = obs_offsets(rules)
        self.packed = packed
        # each sub-env's trick planes, brought up to date by each step (packed rows only)
        self.memo = np.zeros((n if packed else 1, MEMO_PLANES + self.bits.planes), np.uint64)
        # what a step hands out: observations, masks, flags, rewards, seats, hand infos
        width = (self.bits.nbytes, np.uint8) if packed else (obs_size(rules), np.int16)
        self.obs = _Recycled((n, width[0]), width[1])
        self.mask = _Recycled((n, NUM_ACTIONS), np.int8)
        self.flags = _Recycled((F_COUNT, n), np.bool_)
        self.reward = _Recycled((n,), np.float64)
        self.seat = _Recycled((n,), np.int64)
        p, t = rules.num_players, rules.num_teams
        self.nums8 = _Recycled((n, 3 * p + 1), np.int8)
        self.nums32 = _Recycled((n, 1 + 3 * t), np.int32)
        self.fin = np.zeros((n, layout(rules)[0]), dtype=np.uint8)
        self.res = np.zeros((n, 3 * t + 1), dtype=np.int32)
        self.points = np.zeros((n, t), dtype=np.int32)


class _Recycled:
    """Arrays a step hands out, written again once the caller has let go of them.

    A fresh (N, 775) int16 observation every step costs the page faults of 6 MB at
    N=4096. An array that nothing but this pool refers to any more (CPython's reference
    count) cannot be seen changing, so `take` returns it to be overwritten; an array the
    caller still holds (a variable, a replay buffer, a view, a tensor from
    `torch.from_numpy`) is never reused, and a new one is made.
    """

    SIZE = 4  # the caller's last step or two, and one free

    def __init__(self, shape: tuple[int, ...], dtype: npt.DTypeLike) -> None:
        self.shape, self.dtype = shape, dtype
        self.pool: list[npt.NDArray] = []
        self.turn = 0

    def take(self) -> npt.NDArray:
        pool = self.pool
        for i in range(len(pool)):
            if sys.getrefcount(pool[i]) == _UNHELD:
                return pool[i]
        arr = np.empty(self.shape, dtype=self.dtype)
        if len(pool) < self.SIZE:
            pool.append(arr)
        else:  # all held (a replay buffer, say): the caller keeps the oldest, not the pool
            pool[self.turn] = arr
            self.turn = (self.turn + 1) % self.SIZE
        return arr


def _unheld_count() -> int:
    """`sys.getrefcount` of a pooled array that only its pool refers to (as `take` asks)."""
    pool = [np.empty(1)]
    return sys.getrefcount(pool[0])


# Where reference counts do not tell (not CPython), nothing is ever reused.
_UNHELD = _unheld_count() if sys.implementation.name == "cpython" else -1


class _Outcome:
    """What one `step` or `reset` brings, per sub-env."""

    def __init__(self, n: int, p: int, t: int) -> None:
        self.reward = np.zeros(n, dtype=np.float64)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.illegal = np.zeros(n, dtype=bool)
        self.hand = np.zeros(n, dtype=bool)  # a hand ended in this step
        self.fields: dict[str, npt.NDArray] = {
            "hand_no": np.zeros(n, dtype=np.int32),
            "bids": np.zeros((n, p), dtype=np.int8),
            "blind": np.zeros((n, p), dtype=bool),
            "tricks": np.zeros((n, p), dtype=np.int8),
            "hand_score": np.zeros((n, t), dtype=np.int32),
            "scores": np.zeros((n, t), dtype=np.int32),
            "bags": np.zeros((n, t), dtype=np.int32),
            "game_over": np.zeros(n, dtype=bool),
            "winner": np.full(n, -1, dtype=np.int8),
        }
