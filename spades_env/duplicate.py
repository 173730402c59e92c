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

The scoring of such a match is defined here too, once, for both users: the tournament
(`experiments.tournament.units`, `summary`, `bid_stats`) and training's duplicate
evaluation (`training.evaluation`) seat their games with `seat_agents`, fold one-player
teams into the two agent slots with `fold_teams` / `fold_made`, take a deal's margin with
`deal_margin` and count bid accuracy with `bid_samples`, so a training curve's margin and
bid figures are the numbers a tournament reports for the same games.

- **Agent slots.** With one-player teams a game's teams are folded into two slots by
  seat parity: slot 0 holds the even seats' teams, slot 1 the odd ones'. A slot's hand
  points, bags and contract are its teams' summed; its contract is made when every one
  of its teams made its own. With partnerships the slots are the two teams.
- **Margin.** A side's lead is agent A's slot points minus B's; a deal's margin is the
  mean of its two sides' leads (points per deal; `deal_margin`).
- **Bid accuracy** (`bid_samples`): bid error |tricks - bid| over non-nil bids; exact:
  tricks == bid over the same bids; make / set: of the slot-hands with a contract (> 0),
  the share made / set; nil: bids of 0, made when the bidder took no trick (blind nils
  also on their own); bags per slot-hand.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

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


# ----------------------------------------------------------------------------- scoring
def slot_teams(rules: Rules) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The teams each agent slot holds in a game: slot 0 the even seats', slot 1 the odd
    seats' (with partnerships: team 0, team 1)."""
    t = rules.num_teams
    if rules.partnerships:
        return (0,), (1,)
    return tuple(range(0, t, 2)), tuple(range(1, t, 2))


def fold_teams(rules: Rules, per_team: Sequence[Any]) -> list[Any]:
    """Per-team values of one game -> per agent slot (summed); unchanged with
    partnerships."""
    if rules.partnerships:
        return list(per_team)
    return [sum(per_team[k] for k in ks) for ks in slot_teams(rules)]


def fold_made(rules: Rules, made: Sequence[bool]) -> list[bool]:
    """Per-team `made` of one game -> per agent slot: every one of its teams made."""
    if rules.partnerships:
        return list(made)
    return [all(made[k] for k in ks) for ks in slot_teams(rules)]


def slot_lead(rules: Rules, points: npt.ArrayLike, slot: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """(N,) the hand points of agent slot `slot` (per game, 0 or 1) minus the other
    slot's, from (N, T) per-team points."""
    points = np.asarray(points, dtype=np.int64)
    mine = np.zeros(points.shape, dtype=bool)
    for m, ks in enumerate(slot_teams(rules)):
        mine[:, list(ks)] = (np.asarray(slot) == m)[:, None]
    return np.where(mine, points, -points).sum(axis=1)


def deal_margin(side0: float, side1: float) -> float:
    """The duplicate margin of one deal: the mean of agent A's leads on its two sides."""
    return (side0 + side1) / 2


def bid_samples(
    seats: Sequence[dict[str, Any]], teams: Sequence[dict[str, Any]]
) -> dict[str, list[float]]:
    """The per-hand samples behind each bid-accuracy statistic of a group of seat-hands
    (`bid`, `blind`, `tricks`) and slot-hands (`contract`, `made`, `bags_gained`).

    Means are taken of the value samples (`bid`, `tricks`, `abs_error`, `signed_error`,
    `bags`) and rates of the 0/1 ones (`exact`, `made`, `set`, `nil_bid`, `nil`,
    `blind_nil`), so a point estimate and its interval always see the same hands.
    """
    bids = [s for s in seats if s["bid"] > 0]
    nils = [s for s in seats if s["bid"] == 0]
    blind = [s for s in nils if s["blind"]]
    made = [1.0 if t["made"] else 0.0 for t in teams if t["contract"] > 0]
    return {
        "bid": [s["bid"] for s in bids],
        "tricks": [s["tricks"] for s in seats],
        "abs_error": [abs(s["tricks"] - s["bid"]) for s in bids],
        "signed_error": [s["tricks"] - s["bid"] for s in bids],
        "exact": [1.0 if s["tricks"] == s["bid"] else 0.0 for s in bids],
        "made": made,
        "set": [1.0 - m for m in made],
        "nil_bid": [1.0 if s["bid"] == 0 else 0.0 for s in seats],
        "nil": [1.0 if s["tricks"] == 0 else 0.0 for s in nils],
        "blind_nil": [1.0 if s["tricks"] == 0 else 0.0 for s in blind],
        "bags": [t["bags_gained"] for t in teams],
    }


def mean(values: Sequence[float]) -> float | None:
    """The mean of a sample, None for an empty one."""
    return sum(values) / len(values) if values else None
