"""The seating of a duplicate match: which of two agents holds which seat on each side.

A duplicate match plays every deal twice, with the same cards in the same seats (a
game's deals depend only on its seed, RULES.md §1), and the two agents change places
between the two plays, so the luck of the cards cancels in the margin. Game 2k is side 0
of deal k, game 2k + 1 side 1. Agent A (0) holds the even seats on side 0 and the odd
seats on side 1; agent B (1) the others:

- with partnerships (four players, RULES.md §1) the even seats are team 0 (North and
  South) and the odd seats team 1 (East and West): A holds team 0 on side 0 and team 1 on
  side 1, B the other team;
- with one-player teams (RULES.md §6: `cutthroat`, `three_player`, `two_player`, ...)
  each agent holds every second seat, so over the two sides each agent has played every
  seat once; with an odd number of players A holds one seat more on side 0, B on side 1.

The tournament (`experiments.tournament.units`) and training's duplicate evaluation
(`training.evaluation`) both seat their games with `seat_agents`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.rules import Rules

#: Agent slots of a duplicate match.
AGENT_A, AGENT_B = 0, 1


def seat_agents(rules: Rules, deals: int) -> npt.NDArray[np.int64]:
    """(2 * deals, P) agent slot (`AGENT_A` or `AGENT_B`) of every game and seat:
    game 2k is side 0 of deal k (A in the even seats), game 2k + 1 side 1 (A in the odd)."""
    side = np.tile([0, 1], deals)
    return ((np.arange(rules.num_players)[None, :] + side[:, None]) % 2).astype(np.int64)
