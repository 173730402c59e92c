"""Spades as a PettingZoo AEC environment: ``spades_v0``.

.. code-block:: python

    from spades_env import spades_v0

    env = spades_v0.env(render_mode="ansi")
    env.reset(seed=42)
    for agent in env.agent_iter():
        observation, reward, termination, truncation, info = env.last()
        mask = observation["action_mask"]
        action = None if termination or truncation else env.action_space(agent).sample(mask)
        env.step(action)
    env.close()

====================  =================================================================
Import                ``from spades_env import spades_v0``
Registry              ``pettingzoo.make("aec", "spades_env/spades_v0")`` (and ``"parallel"``)
Actions               Discrete
Parallel API          yes, turn-based: ``spades_v0.parallel_env()``
Manual control        no
Agents                ``player_0 .. player_{P-1}`` = seats North, East, South, West
Agents count          ``rules.num_players`` (4)
Action shape          ()
Action values         Discrete(80)
Observation shape     ``{"observation": (775,), "action_mask": (80,)}`` (standard rules)
Observation values    ``observation`` int16 (bounds per element), ``action_mask`` int8 0/1
====================  =================================================================

Description
-----------
Four players in two partnerships (``player_0`` and ``player_2`` against ``player_1`` and
``player_3``) bid, then play 13 tricks with spades as trump, by the rules of RULES.md
(``spades_env.rules.Rules``). Each hand: one blind-nil decision per seat where the rules
allow it, one bid per seat, in RULES.md §6 auction the highest bidder's choice of the
trump suit, an optional card exchange, then 52 card plays. The agent to
act is ``env.agent_selection``; it follows the rules, not a fixed cycle (the winner of a
trick leads the next).

Observation space
-----------------
``observation`` is the engine's information-state encoding (``observation.encode``,
version ``OBS_VERSION``) for that agent's seat: exactly what the player knows, with seats
and teams *relative* to the observer. Blocks, in order (C = 54 card slots, P = 4 seats,
T = 2 teams): hand (C), played_by (P*C), played_trick (C), table (P*C), bids (P*19),
blind (P), tricks_won (P), passed (C), received (C), scores (T), bags (T), dealer (P),
leader (P), to_act (P), lead_suit (4), broken (1), phase (5), voids (P*4), hand_no (1);
presets append blocks (two_player: looking, seen, stock; auction: a seventh phase slot
and the named trump suit, 4); ``spades_env.observation`` documents each. ``action_mask``
is 1 at the legal actions of the agent to act and all 0 for the other agents.

Action space
------------
One ``Discrete(80)`` for every decision: 0..53 play (or, in the exchange, pass) card
``suit * 13 + rank`` (spades, hearts, diamonds, clubs; 2 .. A); 54 + b bid b (54 = nil);
72 blind nil; 73 see the hand (decline blind nil); 74 keep / 75 discard the top card of
the stock (RULES.md §6 two_player's draw); 76 + s name suit s trump (RULES.md §6
auction: 76 spades, 77 hearts, 78 diamonds, 79 clubs). ``spades_env.cards.action_to_str``
names an action. An action is a whole number: ``54.0`` is taken as 54, ``54.7`` raises
``ActionValueError`` rather than being truncated to nil.

Rewards
-------
When a hand ends, every agent receives its team's points for that hand, the bag penalty
included (RULES.md §4); every other step gives 0. With ``zero_sum=True`` the reward is the
team's points minus the other team's. An episode's return is therefore the team's score
change (``episode="game"``) or the hand's score (``episode="hand"``).

Episodes, infos and dead steps
------------------------------
``episode="hand"`` (default) plays one hand per episode; ``episode="game"`` plays hands
until a team wins (RULES.md §5), truncated after ``hand_limit`` hands (random play never
reaches the target). At the end of every hand each agent's info holds: ``hand_no``,
``bids`` and ``blind`` per seat, ``tricks`` per seat, ``hand_score`` per team (the reward
before the zero-sum option), cumulative ``scores`` and ``bags`` per team, ``game_over``,
``winner`` (team or -1) and ``record`` (the JSON hand record of ``records.hand_records``,
which ``records.replay`` replays). An agent keeps that info until it next acts; other
infos are empty. At the end all agents are terminated (or truncated) at once, and each
takes PettingZoo's dead step (``env.step(None)``). In hand mode no next hand is dealt:
the final observations show the finished hand (every card played, tricks won, scores
updated) in the done phase, with an empty action mask.

Arguments
---------
``spades_v0.env(rules=None, episode="hand", zero_sum=False, hand_limit=100,
illegal_reward=-1000.0, render_mode=None)``

- ``rules``: any ``Rules`` value (default ``Rules()``, the standard preset); every option
  of RULES.md (blind nil, exchange, nil tricks, bags, target, ...) applies.
- ``episode``: ``"hand"`` or ``"game"``.
- ``zero_sum``: reward the team's points minus the other team's.
- ``hand_limit``: truncate game episodes after this many hands (None: never).
- ``illegal_reward``: ``env()`` wraps the raw env in PettingZoo's standard wrappers
  (``TerminateIllegalWrapper``, ``AssertOutOfBoundsWrapper``, ``OrderEnforcingWrapper``):
  an illegal action ends the episode and costs the agent this reward. ``raw_env`` instead
  raises ``IllegalActionError`` naming the rule broken.
- ``render_mode``: ``"ansi"`` (``render()`` returns the whole table as text, every hand
  face up, a spectator's view: the env serves every seat; one seat's own view is
  ``spades_env.text.seat_text``), ``"rgb_array"``
  (``render()`` returns it as an (720, 960, 3) uint8 picture: every hand face up, as a
  spectator sees them, bids, tricks won, the trick, scores, bags, trump and the score of
  the hand that just ended; ``spades_env.table_image``) or ``"human"`` (that picture in
  a pygame window, redrawn after every step, with no waiting; needs the ``render``
  extra).

``reset(seed=None, options=None)``: a seed makes the episode sequence reproducible (each
later ``reset()`` deals the next game of that sequence). ``options`` may hold ``deal``
((P, 13) card indices or (P,) uint64 masks), ``dealer`` (seat), ``scores`` and ``bags``
(per team): the episode starts from that position (``state.init``); other keys are
ignored.

Parallel API
------------
Spades is turn-based, so ``metadata["is_parallelizable"]`` is False, as in PettingZoo's
classic games: PettingZoo's ``aec_to_parallel``, which assumes every agent moves once
per cycle, refuses the env with its own message. ``spades_v0.parallel_env()`` (and
``pettingzoo.make("parallel", ...)``) wraps it with ``turn_based_aec_to_parallel``
instead: each parallel step takes the action of the one agent to act (the others' are
ignored), and only that agent's ``action_mask`` is non-zero.

Structured view
---------------
``env.unwrapped.seat_view(agent)`` returns the ``observation.SeatView`` (batch of one)
that rule-based agents read; ``env.unwrapped.game`` is the ``single.SingleGame`` being
played (``.state`` turns it into an engine ``State``).

Version history
---------------
"""

from __future__ import annotations

import textwrap
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt
from gymnasium import spaces
from gymnasium.utils import EzPickle
from pettingzoo import AECEnv
from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import turn_based_aec_to_parallel
from pettingzoo.utils.env_logger import EnvLogger

from spades_env.cards import NUM_ACTIONS
from spades_env.engine import HandResult
from spades_env.env_common import (
    DEFAULT_HAND_LIMIT,
    DEFAULT_ILLEGAL_REWARD,
    check_episode,
    check_hand_limit,
    check_reward,
    env_rules,
    game_seeds,
    hand_info,
    new_single_game,
    observation_space,
    reset_position,
    seed_base,
    team_reward,
)
from spades_env.observation import SeatView, seat_view
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.table_image import TableRender, Window

__all__ = ["env", "parallel_env", "raw_env"]

#: What changed in spades_v0, oldest first: (version, change). The module docstring's
#: "Version history" and the docs page's (docs/environments/spades_v0.md, through
#: docs/_tables.py) are both made from it (`version_history`).
VERSION_HISTORY: tuple[tuple[str, str], ...] = (
    ("v0", "initial release (observation encoding version 1)."),
    (
        "v0, encoding version 2",
        "every RULES.md §6 preset but two_player and auction; as many agents as "
        "``rules.num_players``.",
    ),
    (
        "v0, encoding version 3",
        "two_player (2 agents, the draw phase); actions grow to ``Discrete(76)`` with keep / "
        "discard.",
    ),
    (
        "v0, encoding version 4",
        "auction (the highest bidder names trump); actions grow to ``Discrete(80)`` with the "
        "four trump suits; the standard observation is unchanged.",
    ),
    (
        "v0, encoding version 4",
        '``render_mode="rgb_array"`` and a picture in ``"human"``; '
        '``metadata["is_parallelizable"]`` is False (turn-based); observations unchanged.',
    ),
    (
        "v0, encoding version 4",
        "the final observations of a hand episode show the finished hand in the done phase "
        "(before, the next deal, dealt and never played).",
    ),
)


def version_history() -> str:
    """`VERSION_HISTORY` as a bulleted list, one item a version (valid reStructuredText
    and Markdown alike: code is in double backticks)."""
    items = (f"- {version}: {change}" for version, change in VERSION_HISTORY)
    return "".join(textwrap.fill(item, 88, subsequent_indent="  ") + "\n" for item in items)


if __doc__ is not None:  # None under python -OO
    __doc__ += version_history()


def env(**kwargs: Any) -> AECEnv:
    """The AEC env in PettingZoo's standard wrappers (see the module docstring)."""
    illegal_reward = check_reward(kwargs.pop("illegal_reward", DEFAULT_ILLEGAL_REWARD))
    wrapped: AECEnv = raw_env(**kwargs)
    wrapped = wrappers.TerminateIllegalWrapper(wrapped, illegal_reward=illegal_reward)
    wrapped = wrappers.AssertOutOfBoundsWrapper(wrapped)
    wrapped = _OrderEnforcing(wrapped)
    wrapped.unwrapped._share_with(wrapped)
    return wrapped


class _OrderEnforcing(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order-enforcing wrapper, whose `last()` after the episode's end (every
    agent has taken its dead step) says so instead of a bare KeyError."""

    def last(self, observe: bool = True):
        if self._has_reset and not self.agents:
            raise RuntimeError(_OVER)
        return super().last(observe)


#: what `last()` says once every agent has taken its dead step
_OVER = "the episode is over (every agent has taken its dead step); call reset()"


def parallel_env(**kwargs: Any):
    """The turn-based parallel version: only the agent to act has a non-zero mask."""
    return turn_based_aec_to_parallel(env(**kwargs))


#: The AEC attributes PettingZoo's wrappers forward to the raw env (their `__getattr__`).
_SHARED = frozenset(
    ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
     "truncations", "infos")
)  # fmt: skip


class raw_env(TableRender, AECEnv, EzPickle):  # noqa: N801 (PettingZoo's naming)
    """Spades, one decision per `step`, over the single-game engine."""

    # The wrappers of `env()`, which see the `_SHARED` attributes in their own __dict__.
    _sharing: tuple[AECEnv, ...] = ()

    metadata: ClassVar[dict[str, Any]] = {
        "name": "spades_v0",
        "render_modes": ["ansi", "human", "rgb_array"],
        # Turn-based: PettingZoo's aec_to_parallel (simultaneous moves) must refuse it;
        # parallel_env() uses turn_based_aec_to_parallel instead.
        "is_parallelizable": False,
        "render_fps": 2,
    }
    window_title = "Spades (spades_v0)"

    def __init__(
        self,
        rules: Rules | None = None,
        episode: str = "hand",
        zero_sum: bool = False,
        hand_limit: int | None = DEFAULT_HAND_LIMIT,
        render_mode: str | None = None,
    ) -> None:
        EzPickle.__init__(self, rules, episode, zero_sum, hand_limit, render_mode)
        super().__init__()
        self.render_mode = self._checked_render_mode(render_mode)
        self.rules = env_rules(rules)  # a Rules value or a preset name
        self.episode = check_episode(episode)
        self.zero_sum = bool(zero_sum)
        self.hand_limit = check_hand_limit(hand_limit)
        p = self.rules.num_players
        self.possible_agents = [f"player_{s}" for s in range(p)]
        self.agents = self.possible_agents[:]
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        # One space object per agent, returned on every call (PettingZoo's seeding relies on it).
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": observation_space(self.rules),
                    "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.action_spaces = {a: spaces.Discrete(NUM_ACTIONS) for a in self.possible_agents}
        self._base: int | None = None  # episode-counter key (env_common.game_seeds)
        self._episode = 0
        self._over = True
        self._rewards_set = False  # self.rewards may hold a hand's rewards
        self._last_record: dict[str, Any] | None = None
        self.game: SingleGame | None = None
        self._window: Window | None = None

    def _share_with(self, outer: AECEnv) -> None:
        """Let the wrappers around this env (down from `outer`) hold the `_SHARED`
        attributes themselves from the next write on.

        A read of `env.terminations` (or `agent_selection`, `infos`, ...) on a wrapped env
        otherwise falls to each wrapper's `__getattr__` in turn, three deep, a dozen times
        a turn: most of what PettingZoo's standard wrappers cost. Every write of these
        attributes goes through the raw env (`__setattr__`), which copies the reference
        into each wrapper's own `__dict__`, so a wrapper reads the very object it would
        have fetched; in-place changes (`del env.terminations[agent]`) are shared. Nothing
        is copied before the first `reset`: the order-enforcing wrapper still refuses
        these attributes until then.
        """
        chain = []
        while outer is not self:
            chain.append(outer)
            outer = outer.env  # type: ignore[attr-defined]
        self._sharing = tuple(chain)

    def __setattr__(self, name: str, value: Any) -> None:
        object.__setattr__(self, name, value)
        if name in _SHARED:
            for wrapper in self._sharing:
                wrapper.__dict__[name] = value

    def __getstate__(self) -> dict[str, Any]:
        # A pickled (or deep-copied) env() keeps sharing with its own wrappers' copies.
        return {**EzPickle.__getstate__(self), "_sharing": self._sharing}

    def __setstate__(self, state: dict[str, Any]) -> None:
        sharing = state.pop("_sharing", ())
        EzPickle.__setstate__(self, state)
        object.__setattr__(self, "_sharing", sharing)

    def observation_space(self, agent: str) -> spaces.Space:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ reset
    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> None:
        if seed is not None:
            self._base, self._episode = int(seed_base(seed)[0]), 0
        elif self._base is None:
            self._base, self._episode = int(np.random.default_rng().integers(2**63)), 0
        else:
            self._episode += 1
        game_seed = int(game_seeds(np.array([self._base], np.uint64), [self._episode])[0])
        self.game = new_single_game(self.rules, game_seed, reset_position(options))
        self.agents = self.possible_agents[:]
        self.rewards = dict.fromkeys(self.agents, 0.0)
        self._cumulative_rewards = dict.fromkeys(self.agents, 0.0)
        self.terminations = dict.fromkeys(self.agents, False)
        self.truncations = dict.fromkeys(self.agents, False)
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[self.game.to_act]
        self._over = False
        self._rewards_set = False
        self._last_record = None

    # ------------------------------------------------------------------ observe
    def observe(self, agent: str) -> dict[str, npt.NDArray]:
        game = self._require_game()
        seat = self._agent_seat(agent)
        obs, mask = game.observe_masked(seat, not self._over and seat == game.to_act)
        return {"observation": obs, "action_mask": mask}

    def seat_view(self, agent: str) -> SeatView:
        """The structured view of `agent`'s seat (batch of one) for rule-based agents."""
        game = self._require_game()
        return seat_view(game.state, np.array([self._agent_seat(agent)]))

    def _agent_seat(self, agent: str) -> int:
        seat = self._seat.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}; agents: {', '.join(self.possible_agents)}")
        return seat

    def last(self, observe: bool = True):
        """PettingZoo's `last()`; before `reset()` or after the episode's end a clear error
        (RuntimeError) rather than a missing attribute or key."""
        self._require_game()
        if not self.agents:
            raise RuntimeError(_OVER)
        return super().last(observe)

    # ------------------------------------------------------------------ step
    def step(self, action: int | None) -> None:
        self._require_game()  # before reset(): a clear error, as observe() gives
        if not self.agents:  # PettingZoo's convention (OrderEnforcingWrapper): warn, no-op
            EnvLogger.warn_step_after_terminated_truncated()
            return
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        game = self._require_game()
        if action is None:
            raise ValueError(f"{agent} is to act; None is only for terminated agents")
        # an illegal action raises IllegalActionError; a hand episode's last hand deals
        # no next one
        info = game.step(action, last_hand=self.episode == "hand")
        self._cumulative_rewards[agent] = 0.0
        if self.infos[agent]:
            self.infos[agent] = {}  # the agent has seen the last hand's info
        self._last_record = None
        # Rewards are 0 but at the end of a hand: clear and add them only then.
        if self._rewards_set:
            self._clear_rewards()
            self._rewards_set = False
        if info.finished is not None:
            self._end_of_hand(info.finished)
            self._rewards_set = True
        if not self._over:
            self.agent_selection = self.possible_agents[game.to_act]
        if self._rewards_set:
            self._accumulate_rewards()
        if self._over:
            self._deads_step_first()
        if self.render_mode == "human":
            self.render()

    def _end_of_hand(self, result: HandResult) -> None:
        points = result.points - result.penalty  # (1, T)
        t = self.rules.num_teams
        per_team = [float(team_reward(points, team, self.zero_sum)[0]) for team in range(t)]
        common = hand_info(self.rules, result, 0)
        self._last_record = common["record"]
        for a in self.agents:
            self.rewards[a] = per_team[self._seat[a] % t]
            self.infos[a] = dict(common)
        if self.episode == "hand" or bool(result.game_over[0]):
            self.terminations = dict.fromkeys(self.agents, True)
            self._over = True
        elif self.hand_limit is not None and int(result.hand_no[0]) + 1 >= self.hand_limit:
            self.truncations = dict.fromkeys(self.agents, True)
            self._over = True

    # ------------------------------------------------------------------ render
    def _text(self) -> str:
        if self.game is None:
            return "(call reset() first)"
        return super()._text()
