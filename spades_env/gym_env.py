"""Single-seat Spades for Gymnasium: ``gymnasium.make("spades_env/Spades-v0")``.

The learner plays one seat (``seats=0``, North, by default) or both seats of one
partnership (``seats=(0, 2)``); the other seats are played by the agents given as
``opponents`` (anything with ``act(view, obs, mask)``, see ``agents/base.py``, or an
agent spec string such as ``"heuristic"``: ``env_common.opponent_table``), uniformly random
by default. Each ``step`` applies the learner's action, then plays the opponents
until a learner seat must act again or the episode ends.

- Observation: ``Box(int16, (775,))``, the engine's encoding for the learner seat to act
  (``spades_env.observation``; seats relative to that seat). ``info["seat"]`` names it.
  ``obs_format="bits"`` gives the same information packed into bit-planes,
  ``Box(uint8, (160,))`` under the standard rules (``spades_env.obs_bits``:
  ``unpack_bits`` / ``unpack_bits_torch`` turn it back into the encoding).
- Action: ``Discrete(80)`` (``spades_env.cards``). ``info["action_mask"]`` gives the
  legal actions as int8 0/1, as the PettingZoo env's ``action_mask`` and as Gymnasium's
  ``action_space.sample(mask)`` takes them; ``action_masks()`` gives them as bool, the
  method sb3-contrib's ``MaskablePPO`` calls. An action is a whole number: ``54.0`` is
  taken as 54, ``54.7`` raises ``ActionValueError`` (never truncated; ``spades_env.cards``).
- Reward: the learner team's points of each hand finished during the step (bag penalty
  included); ``zero_sum=True`` subtracts the other team's.
- Episodes: ``episode="hand"`` (default) or ``"game"`` (truncated after ``hand_limit``
  hands). When a hand ends, ``info`` holds bids, tricks, hand score, scores, bags and the
  hand record, as in ``spades_v0`` except that the record's ``seed`` is a numpy
  ``uint64`` (a game seed may exceed 2**63 - 1, which Gymnasium's vector envs could not
  stack as a Python int; ``int(seed)`` gives the JSON value). The last observation of a
  hand episode shows the finished hand (every card played, tricks won, scores updated)
  in the done phase: no next hand is dealt. In game episodes the engine deals on at
  once, so the last observation of a truncated episode shows the next deal's position.
- **Illegal actions.** Gymnasium's ``check_env`` sends unmasked actions, so the env does
  not raise on an illegal action: it leaves the game unchanged, gives ``illegal_reward``
  (default -1000) and ends the episode (``terminated=True``, ``info["illegal"]=True``).
  Mask your policy to avoid it.
- Rendering: ``render_mode="ansi"`` returns the table as text as the learner sees it:
  its own seats' cards (a hand not looked at yet for blind nil hidden too), bids, tricks
  won, the trick, scores and bags, and the other seats' cards hidden (every hand only
  under RULES.md §6 ``open_hands``); ``env.render_table()`` is the whole table, every
  hand face up, a spectator's view to be asked for by name (``spades_env.text`` gives
  the learner's full view, play history and legal actions included, in English and
  JSON). ``"rgb_array"`` returns the table as an (720, 960, 3) uint8 picture seen from
  the learner's seats (their hands face up, the others face down;
  ``spades_env.table_image``), which Gymnasium's
  ``RecordVideo`` records (with the ``render`` extra's moviepy); ``"human"`` shows that
  picture in a pygame window after every reset and step, with no waiting.
- Seeding: ``reset(seed=s)`` makes the whole episode sequence reproducible, opponents
  included when they are the default random ones; ``reset(options=...)`` takes ``deal``,
  ``dealer``, ``scores`` and ``bags`` as the PettingZoo env does.

The native vector version is ``spades_env.vector_env.SpadesVectorEnv``
(``gymnasium.make_vec(..., vectorization_mode="vector_entry_point")``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
import numpy.typing as npt

from spades_env.agent_calls import AgentError, call_agent
from spades_env.cards import NUM_ACTIONS, action_index
from spades_env.env_common import (
    DEFAULT_HAND_LIMIT,
    DEFAULT_ILLEGAL_REWARD,
    action_space,
    check_episode,
    check_hand_limit,
    check_reward,
    env_rules,
    game_seeds,
    hand_info,
    learner_seats,
    new_single_game,
    obs_format_space,
    opponent_table,
    random_opponent_action_one,
    reset_position,
    seed_base,
    team_reward,
)
from spades_env.obs_bits import encode_bits
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.table_image import TableRender, Window


class SpadesEnv(TableRender, gym.Env[npt.NDArray, np.int64]):
    """One learner seat (or partnership) against opponent agents; see the module doc."""

    metadata: ClassVar[dict[str, Any]] = {
        "render_modes": ["ansi", "human", "rgb_array"],
        "render_fps": 2,
    }
    window_title = "Spades (spades_env/Spades-v0)"

    def __init__(
        self,
        rules: Rules | None = None,
        seats: int | Sequence[int] = 0,
        opponents: Any = None,
        episode: str = "hand",
        zero_sum: bool = False,
        hand_limit: int | None = DEFAULT_HAND_LIMIT,
        illegal_reward: float = DEFAULT_ILLEGAL_REWARD,
        render_mode: str | None = None,
        obs_format: str = "int16",
    ) -> None:
        self.render_mode = self._checked_render_mode(render_mode)
        self.rules = env_rules(rules)  # a Rules value or a preset name
        self.seats = learner_seats(seats, self.rules)
        self.team = self.seats[0] % self.rules.num_teams
        self.opponents = opponent_table(opponents, self.seats, self.rules)
        self.episode = check_episode(episode)
        self.zero_sum = bool(zero_sum)
        self.hand_limit = check_hand_limit(hand_limit)
        self.illegal_reward = check_reward(illegal_reward)
        self.observation_space = obs_format_space(self.rules, obs_format)
        self.obs_format = obs_format
        self.action_space = action_space()
        self.game: SingleGame | None = None
        self._base: int | None = None
        self._episode = 0
        self._over = True
        self._seat = self.seats[0]  # the learner seat the last observation is for
        self._last_record: dict[str, Any] | None = None
        self._window: Window | None = None

    # ------------------------------------------------------------------ reset / step
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[npt.NDArray, dict[str, Any]]:
        super().reset(seed=seed)
        if seed is not None:
            self._base, self._episode = int(seed_base(seed)[0]), 0
        elif self._base is None:
            self._base, self._episode = int(self.np_random.integers(2**63)), 0
        else:
            self._episode += 1
        game_seed = int(game_seeds(np.array([self._base], np.uint64), [self._episode])[0])
        self.game = new_single_game(self.rules, game_seed, reset_position(options))
        self._over = False
        self._last_record = None
        info: dict[str, Any] = {}
        self._play_opponents(info)  # no hand can end before every seat has bid
        if self.render_mode == "human":
            self.render()
        return self._observe(), self._info(info)

    def step(
        self, action: int | np.integer
    ) -> tuple[npt.NDArray, float, bool, bool, dict[str, Any]]:
        game = self._require_game()
        if self._over:
            raise RuntimeError("the episode is over; call reset()")
        info: dict[str, Any] = {}
        a = action_index(action)  # whole numbers only (cards.py)
        if not 0 <= a < NUM_ACTIONS or not game.legal_mask()[a]:
            self._over = True
            info["illegal"] = True
            return self._observe(), self.illegal_reward, True, False, self._info(info)
        self._last_record = None
        reward, terminated, truncated = self._apply(a, info)
        if not (terminated or truncated):
            r, terminated, truncated = self._play_opponents(info)
            reward += r
        if self.render_mode == "human":
            self.render()
        return self._observe(), reward, terminated, truncated, self._info(info)

    def _apply(self, action: int, info: dict[str, Any]) -> tuple[float, bool, bool]:
        """One engine step; the reward and the end of the episode it brings."""
        game = self._require_game()
        # a hand episode's hand is its game's last: no next deal (engine.step's last_hand)
        result = game.step(action, last_hand=self.episode == "hand").finished
        if result is None:
            return 0.0, False, False
        points = result.points - result.penalty
        reward = float(team_reward(points, self.team, self.zero_sum)[0])
        info.update(hand_info(self.rules, result, 0))
        # A game seed is any uint64: kept a numpy uint64, Gymnasium's vector envs stack it
        # (a Python int above 2**63 - 1 overflows the int64 array they would make).
        info["record"]["seed"] = np.uint64(info["record"]["seed"])
        self._last_record = info["record"]
        terminated = self.episode == "hand" or bool(result.game_over[0])
        truncated = (
            not terminated
            and self.hand_limit is not None
            and int(result.hand_no[0]) + 1 >= self.hand_limit
        )
        self._over = terminated or truncated
        return reward, terminated, truncated

    def _play_opponents(self, info: dict[str, Any]) -> tuple[float, bool, bool]:
        """Play the other seats until a learner seat must act or the episode ends."""
        game = self._require_game()
        reward = 0.0
        while not game.done and game.to_act not in self.seats:
            r, terminated, truncated = self._apply(self._opponent_action(game), info)
            reward += r
            if terminated or truncated:
                return reward, terminated, truncated
        if not game.done:
            self._seat = game.to_act
        return reward, False, False

    def _opponent_action(self, game: SingleGame) -> int:
        agent = self.opponents[game.to_act]
        if agent is None:
            return random_opponent_action_one(game)
        seat = game.to_act
        view = seat_view(game.state, np.array([seat]))
        obs = game.observe(seat)[None] if getattr(agent, "needs_obs", True) else None
        mask = game.legal_mask().astype(bool)[None]
        # one guarded, checked call: a fault is an AgentError naming the opponent and seat
        try:
            return int(call_agent(agent, view, obs, mask, seats=[seat], state=game.state)[0])
        except AgentError as exc:  # one game: the seat names the place
            raise exc.relocated("") from None

    # ------------------------------------------------------------------ observing
    def action_masks(self) -> npt.NDArray[np.bool_]:
        """(80,) bool legal actions of the learner (all False once the episode is over)."""
        game = self._require_game()
        if self._over:
            return np.zeros(NUM_ACTIONS, dtype=bool)
        return game.legal_mask().astype(bool)

    def _observe(self) -> npt.NDArray:
        if self.obs_format == "bits":
            return encode_bits(self._require_game().state, self._seat)[0]
        return self._require_game().observe(self._seat)

    def _info(self, info: dict[str, Any]) -> dict[str, Any]:
        info["seat"] = self._seat
        info["action_mask"] = self.action_masks().astype(np.int8)
        return info

    def _face_up(self) -> tuple[int, ...]:
        """The learner's view: its own seats' hands face up, the opponents' face down."""
        return self.seats
