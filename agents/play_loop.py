"""The one play loop: a batch of games, agents assigned per game and seat, hooks for callers.

Tournaments (`experiments.tournament.match`), the training rollouts and evaluations
(`training.rollout`) and the distillation datasets (`training.bc_data`) all drive the
batched engine through `play`. At every engine step the live games are grouped by the
player that owns the seat to act (`owner[g, seat]`, an index into `players`), and each
player is called once on its games (one batched forward pass for a network, whatever
the seats), with the RL encoding only when it reads it (`needs_obs`). Callers see each
step through `on_turn` (what was decided, before the engine applies it: the learner's
observations, the teacher's labels) and each scored hand through `on_hand` (the hand
records, the outcome); they do not step the engine themselves.

- `labeller` (distillation): an agent called on every live decision before the players,
  whose actions are the step's `labels`. Where it also owns the seat (it is in
  `players`), its label is played without a second call.
- `names`: what an error calls each player (default its `name`). Every call goes through
  `spades_env.agent_calls.call_agent`: a player that raises, returns anything but one legal
  action per game, or runs past the decision time limit stops the play with one
  `AgentError` naming it, the game (its index in the batch) and the seat.
- `one_hand`: a game ends once its first hand is scored (the engine stops it with
  `stop_games`), as in the tournaments' hand mode and the training episodes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from agents.base import Actor
from spades_env.agent_calls import call_agent
from spades_env.engine import HandResult, legal_action_mask, step, stop_games
from spades_env.observation import SeatView, encode, seat_view
from spades_env.state import DONE, State


class Player(Actor, Protocol):
    """What the loop calls: an agent (`agents.base.BaseAgent`) or a learner adapter.

    A player whose `needs_view` attribute is False (a network reading only the
    encoding) gets `view=None`, which spares the loop building its seat views; a player
    with a `check_rules(rules)` method is checked once, before the first step.
    """

    needs_obs: bool


@dataclass
class Turn:
    """One engine step as the hooks see it: every game of the batch, before the step.
    Its arrays are made anew at every step, so a hook may keep them (the training
    rollouts keep `obs` and `mask` and copy out the learner's rows at the end)."""

    who: npt.NDArray[np.int64]  # (G,) owner of the seat to act; -1 in finished games
    seat: npt.NDArray[np.int8]  # (G,) absolute seat to act
    phase: npt.NDArray[np.int8]  # (G,) phase of each game (DONE in finished ones)
    obs: npt.NDArray[np.int16] | None  # (G, D) encoding of the seat to act, when computed
    mask: npt.NDArray[np.bool_]  # (G, A) legal actions
    actions: npt.NDArray[np.int64]  # (G,) the actions played (0 in finished games)
    labels: npt.NDArray[np.int64] | None  # (G,) the labeller's actions, when given


TurnHook = Callable[[Turn], None]
HandHook = Callable[[HandResult], None]


def play(
    state: State,
    owner: npt.NDArray[np.int64],
    players: Sequence[Player],
    *,
    one_hand: bool = True,
    on_turn: TurnHook | None = None,
    on_hand: HandHook | None = None,
    labeller: Player | None = None,
    obs_always: bool = False,
    names: Sequence[str] | None = None,
) -> int:
    """Play every game of `state` (modified in place) to its end; return the decisions.

    owner: (G, P) index into `players` of the player of each game's seat. `obs_always`
    computes the encoding at every step for `on_turn` even when no player reads it.
    """
    g = state.batch_size
    rows = np.arange(g)
    decisions = 0
    for p in (*players, labeller):
        check = getattr(p, "check_rules", None)
        if check is not None:
            check(state.rules)  # e.g. a network trained on other rules: one line, up front
    need_obs = obs_always or any(getattr(p, "needs_obs", False) for p in [*players, labeller])
    while True:
        live = state.phase != DONE
        live_idx = np.flatnonzero(live)
        if not live_idx.size:
            return decisions
        seat = state.to_act.copy()
        who = np.where(live, owner[rows, seat], -1)
        mask = legal_action_mask(state)
        obs = encode(state) if need_obs else None
        view = _LazyView(state)
        actions = np.zeros(g, dtype=np.int64)
        labels = None
        if labeller is not None:
            labels = np.zeros(g, dtype=np.int64)
            sub_obs = _rows(obs, live_idx) if labeller.needs_obs else None
            labels[live_idx] = call_agent(
                labeller, view.take(live_idx), sub_obs, mask[live_idx],
                games=live_idx, seats=seat[live_idx], state=state,
            )  # fmt: skip
        for k in np.unique(who[live_idx]):
            idx = np.flatnonzero(who == k)
            player = players[int(k)]
            if player is labeller:
                actions[idx] = labels[idx]
                continue
            sub_obs = _rows(obs, idx) if player.needs_obs else None
            sub_view = view.take(idx) if getattr(player, "needs_view", True) else None
            actions[idx] = call_agent(
                player, sub_view, sub_obs, mask[idx], name=None if names is None else names[k],
                games=idx, seats=seat[idx], state=state,
            )  # fmt: skip
        decisions += live_idx.size
        if on_turn is not None:
            on_turn(Turn(who, seat, state.phase.copy(), obs, mask, actions, labels))
        info = step(state, actions)
        if info.finished is None:
            continue
        if on_hand is not None:
            on_hand(info.finished)
        if one_hand:
            # the game is over for the caller once its first hand is scored: the engine
            # stops it, so its next deal is never played
            stop_games(state, info.finished.games)


class _LazyView:
    """The step's `seat_view`, built only for the games a player reads it for (a network
    does not read it): from the state's rows of those games (`State.take`, one gather),
    so an opponent in a quarter of the games costs a quarter of the view."""

    def __init__(self, state: State) -> None:
        self.state = state

    def take(self, idx: npt.NDArray[np.int64]) -> SeatView:
        return seat_view(self.state.take(idx))


def _rows(obs: npt.NDArray[np.int16] | None, idx: npt.NDArray[np.int64]):
    return None if obs is None else obs[idx]
