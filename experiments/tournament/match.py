"""Play a batch of games with agents assigned by seat, and collect the hand records.

Every game of the batch has its own seating: `seat_agent[g, s]` is the index (into
`agents`) of the agent that plays seat `s` in game `g`. The games are played by the one
play loop, `agents.play_loop.play`: at each step every agent is called once on all the
games where its seat is to act (one batched call, e.g. one forward pass of a network
for the whole chunk), with the RL encoding only when the agent reads it (`needs_obs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.play_loop import play
from spades_env.engine import HandResult
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.state import init


def play_batch(
    rules: Rules,
    agents: Sequence[BaseAgent],
    seat_agent: npt.NDArray[np.int64],
    seeds: npt.NDArray[np.uint64],
    dealers: npt.NDArray[np.int8],
    first_hands: npt.NDArray[np.uint64],
    one_hand: bool,
    names: Sequence[str] | None = None,
) -> list[tuple[int, dict[str, Any]]]:
    """Play the games to their end (or one hand each); return (game, hand record) pairs.

    seat_agent: (G, P) agent index per game and seat. seeds: (G,) game seeds, which deal
    every hand after the first. dealers: (G,) first dealers. first_hands: (G, P) the
    first hand's cards. one_hand: stop each game when its first hand is scored. names:
    what an `AgentError` calls each agent (default their `name`).
    """
    state = init(rules, seeds.shape[0], seeds=seeds, deals=first_hands, dealer=dealers)
    out: list[tuple[int, dict[str, Any]]] = []

    def record(finished: HandResult) -> None:
        games = finished.games.tolist()
        out.extend(zip(games, hand_records(rules, finished), strict=True))

    play(state, seat_agent, agents, one_hand=one_hand, on_hand=record, names=names)
    return out
