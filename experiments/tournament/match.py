"""Play a batch of games with agents assigned by seat, and collect the hand records.

`unit_players` says who plays a unit's seats: an agent holds both seats of its
partnership; a team of two agents (`agents.spec.TeamSpec`) seats its first member at
the partnership's first seat (North on side 0, East on side 1) and its partner opposite,
so on the other side of each deal the first member of the other partnership holds the
same cards: the duplicate still compares the two partnerships on the same cards.

Every game of the batch has its own seating: `seat_agent[g, s]` is the index (into
`agents`) of the agent that plays seat `s` in game `g`. The games are played by the one
play loop, `agents.play_loop.play`: at each step every agent is called once on all the
games where its seat is to act (one batched call, e.g. one forward pass of a network
for the whole chunk), with the RL encoding only when the agent reads it (`needs_obs`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.play_loop import play
from agents.spec import AgentSpec, TeamSpec
from spades_env.engine import HandResult
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.state import init

if TYPE_CHECKING:
    from experiments.tournament.config import TournamentConfig


def unit_players(
    config: TournamentConfig, i: int, j: int, chunk: int
) -> tuple[list[tuple[AgentSpec, int]], list[str], npt.NDArray[np.int64]]:
    """Who plays a unit of entries `i` (slot 0) and `j` (slot 1): the players as (spec,
    seed), their names, and `member_player` (2, 2), the player of each slot's first and
    second member. An agent is one player holding both seats of its slot, seeded as
    `agent_seed` says (so a tournament without teams plays as it always has); a team is
    two, each member with a seed of its own."""
    from experiments.tournament.config import agent_seed

    players: list[tuple[AgentSpec, int]] = []
    names: list[str] = []
    member_player = np.zeros((2, 2), dtype=np.int64)
    for slot, (k, other) in enumerate(((i, j), (j, i))):
        entry = config.agents[k]
        if isinstance(entry, TeamSpec):
            for m, spec in enumerate(entry.members):
                member_player[slot, m] = len(players)
                players.append((spec, agent_seed(config.seed, k, other, chunk, m)))
                names.append(spec.display)
        else:
            member_player[slot, :] = len(players)
            players.append((entry, agent_seed(config.seed, k, other, chunk)))
            names.append(config.labels[k])
    return players, names, member_player


def seat_players(
    rules: Rules, slots: npt.NDArray[np.int64], member_player: npt.NDArray[np.int64]
) -> npt.NDArray[np.int64]:
    """(G, P) player of each game's seat, from its agent slot (`seat_agents`): seat `p`
    is its partnership's first member's below the number of teams, its partner's above."""
    member = np.minimum(np.arange(rules.num_players) // rules.num_teams, 1)
    return member_player[slots, member[None, :]]


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
