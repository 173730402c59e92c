"""Play a batch of games with agents assigned by seat, and collect the hand records.

Every game of the batch has its own seating: `seat_agent[g, s]` is the index (into
`agents`) of the agent that plays seat `s` in game `g`. At each step the games are
grouped by the agent whose seat is to act, and each agent is called once on its subset
(`SeatView.take`), with the RL encoding only when the agent reads it (`needs_obs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from spades_env.engine import legal_action_mask, step, stop_games
from spades_env.observation import encode, seat_view
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.state import DONE, init


def play_batch(
    rules: Rules,
    agents: Sequence[BaseAgent],
    seat_agent: npt.NDArray[np.int64],
    seeds: npt.NDArray[np.uint64],
    dealers: npt.NDArray[np.int8],
    first_hands: npt.NDArray[np.uint64],
    one_hand: bool,
) -> list[tuple[int, dict[str, Any]]]:
    """Play the games to their end (or one hand each); return (game, hand record) pairs.

    seat_agent: (G, P) agent index per game and seat. seeds: (G,) game seeds, which deal
    every hand after the first. dealers: (G,) first dealers. first_hands: (G, P) the
    first hand's cards. one_hand: stop each game when its first hand is scored.
    """
    g = seeds.shape[0]
    state = init(rules, g, seeds=seeds, deals=first_hands, dealer=dealers)
    rows = np.arange(g)
    out: list[tuple[int, dict[str, Any]]] = []
    while True:
        live = state.phase != DONE
        if not live.any():
            return out
        who = np.where(live, seat_agent[rows, state.to_act], -1)
        view = seat_view(state)
        mask = legal_action_mask(state)
        actions = np.zeros(g, dtype=np.int64)
        for k in np.unique(who[live]):
            idx = np.flatnonzero(who == k)
            agent = agents[int(k)]
            obs = encode(state.take(idx)) if agent.needs_obs else None
            actions[idx] = agent.act(view.take(idx), obs, mask[idx])
        info = step(state, actions)
        if info.finished is None:
            continue
        games = info.finished.games
        out.extend(zip(games.tolist(), hand_records(rules, info.finished), strict=True))
        if one_hand:
            # Deal-level duplicate: the game is over for us once its first hand is
            # scored; the engine stops it, so its next deal is never played.
            stop_games(state, games)
