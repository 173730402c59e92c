"""Bid accuracy from a tournament log: per seat-hand and per team-hand tables, and lines.

`seat_table(rows)` and `team_table(rows)` flatten log rows into one dict per seat-hand
and per team-hand; `bid_line` aggregates them into the summary's bid-accuracy line. A
bid analysis that wants other cuts (by seat, by score, by hand strength) starts from the
two tables and groups them its own way.

Definitions:
- bid error: |tricks - bid| over non-nil bids of the seat (signed error: tricks - bid).
- make / set: of the team-hands with a contract (sum of non-nil bids > 0), the share
  made / set, as the engine judged them (RULES.md §4, `nil_tricks`).
- nil: bids of 0 (blind nil counted also on its own); success = the bidder took no trick.
- bags per hand: bags the agent's team gained per team-hand.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any


def seat_table(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (hand, seat): agent, seat, team, bid, blind, tricks."""
    out = []
    for row in rows:
        t = len(row["teams"])
        for s, agent in enumerate(row["seats"]):
            out.append(
                {
                    "agent": agent,
                    "deal": row["deal"],
                    "side": row["side"],
                    "hand": row["hand"],
                    "seat": s,
                    "team": s % t,
                    "bid": row["bids"][s],
                    "blind": row["blind"][s],
                    "tricks": row["tricks"][s],
                }
            )
    return out


def team_table(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (hand, team): agent, contract, made, bags gained, hand score."""
    out = []
    for row in rows:
        for t, agent in enumerate(row["teams"]):
            out.append(
                {
                    "agent": agent,
                    "deal": row["deal"],
                    "side": row["side"],
                    "hand": row["hand"],
                    "team": t,
                    "contract": row["contract"][t],
                    "made": row["made"][t],
                    "bags_gained": row["bags_gained"][t],
                    "hand_score": row["hand_score"][t],
                }
            )
    return out


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _rate(hits: int, n: int) -> float | None:
    return hits / n if n else None


def bid_line(seats: Sequence[dict[str, Any]], teams: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate one agent's seat-hands and team-hands into its bid-accuracy line."""
    bids = [s for s in seats if s["bid"] > 0]
    nils = [s for s in seats if s["bid"] == 0]
    blind = [s for s in nils if s["blind"]]
    contracts = [t for t in teams if t["contract"] > 0]
    made = sum(1 for t in contracts if t["made"])
    return {
        "seat_hands": len(seats),
        "mean_bid": _mean([s["bid"] for s in bids]),
        "mean_tricks": _mean([s["tricks"] for s in seats]),
        "bid_error": _mean([abs(s["tricks"] - s["bid"]) for s in bids]),
        "signed_error": _mean([s["tricks"] - s["bid"] for s in bids]),
        "contracts": len(contracts),
        "make_rate": _rate(made, len(contracts)),
        "set_rate": _rate(len(contracts) - made, len(contracts)),
        "nil_attempts": len(nils),
        "nil_success": _rate(sum(1 for s in nils if s["tricks"] == 0), len(nils)),
        "blind_nil_attempts": len(blind),
        "blind_nil_success": _rate(sum(1 for s in blind if s["tricks"] == 0), len(blind)),
        "bags_per_hand": _mean([t["bags_gained"] for t in teams]),
    }


def bid_lines(rows: Sequence[dict[str, Any]], agents: Sequence[str]) -> list[dict[str, Any]]:
    """The bid-accuracy line of every agent, in the order given."""
    seats: dict[str, list] = defaultdict(list)
    teams: dict[str, list] = defaultdict(list)
    for s in seat_table(rows):
        seats[s["agent"]].append(s)
    for t in team_table(rows):
        teams[t["agent"]].append(t)
    return [{"agent": a, **bid_line(seats[a], teams[a])} for a in agents]
