"""Bid accuracy from a tournament log: per seat-hand and per team-hand tables, and lines.

`seat_table(rows)` and `team_table(rows)` flatten log rows into one dict per seat-hand
and per team-hand; `bid_samples` (`spades_env.duplicate`, where the definitions below live
for training's evaluation too) turns a group of them into the per-hand samples behind
every statistic, and `bid_line` aggregates those into the summary's bid-accuracy line.
A bid analysis that wants other cuts (`experiments.bid_analysis`: by bidding position,
by score situation) groups the two tables its own way and puts intervals on the same
samples.

Definitions:
- bid error: |tricks - bid| over non-nil bids of the seat (signed error: tricks - bid);
  exact: tricks == bid, over the same bids.
- make / set: of the team-hands with a contract (sum of non-nil bids > 0), the share
  made / set, as the engine judged them (RULES.md §4, `nil_tricks`).
- nil: bids of 0 (blind nil counted also on its own); success = the bidder took no trick.
- nils set: of the nils bid against the agent (by a seat of another team at its table),
  the share that failed (the nil seat took a trick): how well the agent sets nils.
- bags per hand: bags the agent's team gained per team-hand.
- position: the order of bidding, 1 = first to bid (RULES.md §2: left of the dealer).
- bid (a cut by the bid made, nil = 0): seat statistics of the seat-hands with that bid;
  a team-hand counts under both of its members' bids, as under both positions.
- situation: the team's score against the best other team before the hand: `ahead` or
  `behind` by at least `SITUATION_MARGIN` points (RULES.md §2's blind-nil threshold), else
  `level`. Hand-mode tournaments start every hand from 0-0, so all their hands are level.
- opponent: the agent of the other partnership at the table (in a round robin, each
  agent's figures against each other agent; the agents of the other teams joined by `/`
  where there are more than two).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from spades_env.duplicate import bid_samples, mean

SITUATION_MARGIN = 100
SITUATIONS = ("ahead", "level", "behind")
#: the cuts of a bid analysis (`spades analyze --by`) and the column each groups on,
#: besides the agent
GROUPINGS: dict[str, str | None] = {
    "agent": None,
    "seat": "position",
    "situation": "situation",
    "bid": "bid",
    "opponent": "opponent",
}


def situation(diff: int) -> str:
    """`ahead` / `level` / `behind` for a team leading by `diff` points before the hand."""
    if diff >= SITUATION_MARGIN:
        return "ahead"
    if diff <= -SITUATION_MARGIN:
        return "behind"
    return "level"


def score_diffs(row: dict[str, Any]) -> list[int]:
    """Each team's lead over the best other team before the hand (0 where unknown)."""
    t = len(row["teams"])
    after, gained = row.get("scores"), row.get("hand_score")
    if after is None or gained is None:
        return [0] * t
    before = [after[k] - gained[k] for k in range(t)]
    return [before[k] - max(before[j] for j in range(t) if j != k) for k in range(t)]


def bid_position(seat: int, dealer: int | None, players: int) -> int | None:
    """1..players: when `seat` bids (RULES.md §2: left of the dealer bids first)."""
    return None if dealer is None else (seat - dealer - 1) % players + 1


def opponent_of(row: dict[str, Any], team: int) -> str:
    """The agent(s) of the teams other than `team` at the table of `row`."""
    others = dict.fromkeys(a for k, a in enumerate(row["teams"]) if k != team)
    return "/".join(others)


def seat_table(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (hand, seat): agent, seat, team, bid, blind, tricks, position, the
    team's score situation and the opponent."""
    out = []
    for row in rows:
        t = len(row["teams"])
        p = len(row["seats"])
        diffs = score_diffs(row)
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
                    "position": bid_position(s, row.get("dealer"), p),
                    "score_diff": diffs[s % t],
                    "situation": situation(diffs[s % t]),
                    "opponent": opponent_of(row, s % t),
                }
            )
    return out


def team_table(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per (hand, team): agent, contract, made, bags gained, hand score, the
    team's tricks, whether a member bid nil, its members' bids and bidding positions and
    the score situation and the opponent."""
    out = []
    for row in rows:
        t = len(row["teams"])
        p = len(row["seats"])
        diffs = score_diffs(row)
        for k, agent in enumerate(row["teams"]):
            members = range(k, p, t)
            out.append(
                {
                    "agent": agent,
                    "deal": row["deal"],
                    "side": row["side"],
                    "hand": row["hand"],
                    "team": k,
                    "contract": row["contract"][k],
                    "made": row["made"][k],
                    "bags_gained": row["bags_gained"][k],
                    "hand_score": row["hand_score"][k],
                    "tricks": sum(row["tricks"][s] for s in members),
                    "nil": any(row["bids"][s] == 0 for s in members),
                    "bids": [row["bids"][s] for s in members],
                    "positions": [bid_position(s, row.get("dealer"), p) for s in members],
                    "score_diff": diffs[k],
                    "situation": situation(diffs[k]),
                    "opponent": opponent_of(row, k),
                }
            )
    return out


__all__ = [
    "GROUPINGS", "SITUATIONS", "SITUATION_MARGIN", "bid_line", "bid_lines", "bid_position",
    "bid_samples", "nils_against", "opponent_of", "score_diffs", "seat_table", "situation",
    "team_table",
]  # fmt: skip


def bid_line(seats: Sequence[dict[str, Any]], teams: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Aggregate one agent's seat-hands and team-hands into its bid-accuracy line."""
    x = bid_samples(seats, teams)
    return {
        "seat_hands": len(seats),
        "mean_bid": mean(x["bid"]),
        "mean_tricks": mean(x["tricks"]),
        "bid_error": mean(x["abs_error"]),
        "signed_error": mean(x["signed_error"]),
        "contracts": len(x["made"]),
        "make_rate": mean(x["made"]),
        "set_rate": mean(x["set"]),
        "nil_attempts": len(x["nil"]),
        "nil_success": mean(x["nil"]),
        "blind_nil_attempts": len(x["blind_nil"]),
        "blind_nil_success": mean(x["blind_nil"]),
        "bags_per_hand": mean(x["bags"]),
    }


def nils_against(rows: Iterable[dict[str, Any]]) -> dict[str, list[float]]:
    """{agent: one sample per nil bid against it, 1.0 where the nil was set}: the nils of
    seats of the other teams at its tables (an agent holding several of those teams
    counts each nil once)."""
    out: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        t = len(row["teams"])
        for s, bid in enumerate(row["bids"]):
            if bid != 0:
                continue
            against = dict.fromkeys(a for k, a in enumerate(row["teams"]) if k != s % t)
            for agent in against:
                out[agent].append(1.0 if row["tricks"][s] > 0 else 0.0)
    return out


class _Sum:
    """A running mean: the sum of the values in the order given (as `mean` sums a
    list), and their count."""

    __slots__ = ("n", "total")

    def __init__(self) -> None:
        self.n, self.total = 0, 0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value

    def mean(self) -> float | None:
        return self.total / self.n if self.n else None


_LINE_STATS = (
    "seat_hands", "bid", "tricks", "abs_error", "signed_error", "made", "set", "nil",
    "blind_nil", "bags", "against",
)  # fmt: skip


_SAMPLED = ("bid", "tricks", "abs_error", "signed_error", "made", "set", "nil", "blind_nil", "bags")


class BidLines:
    """`bid_lines` of rows given one at a time (`add`): running sums per agent, so the
    memory does not grow with the rows."""

    def __init__(self, agents: Sequence[str]) -> None:
        self.agents = list(agents)
        self.stats: dict[str, dict[str, _Sum]] = defaultdict(
            lambda: {k: _Sum() for k in _LINE_STATS}
        )

    def add(self, row: dict[str, Any]) -> None:
        """Fold one row in: each agent's samples of it (`bid_samples`, the one definition
        of bid accuracy), summed in row order as `bid_line` sums them over all rows."""
        seats: dict[str, list] = defaultdict(list)
        teams: dict[str, list] = defaultdict(list)
        for entry in seat_table([row]):
            seats[entry["agent"]].append(entry)
        for entry in team_table([row]):
            teams[entry["agent"]].append(entry)
        for agent in {**seats, **teams}:
            x, sums = bid_samples(seats[agent], teams[agent]), self.stats[agent]
            for _ in seats[agent]:
                sums["seat_hands"].add(1)
            for key in _SAMPLED:
                for value in x[key]:
                    sums[key].add(value)
        for agent, samples in nils_against([row]).items():
            for v in samples:
                self.stats[agent]["against"].add(v)

    def result(self) -> list[dict[str, Any]]:
        out = []
        for a in self.agents:
            x = self.stats[a]
            out.append({
                "agent": a,
                "seat_hands": x["seat_hands"].n,
                "mean_bid": x["bid"].mean(),
                "mean_tricks": x["tricks"].mean(),
                "bid_error": x["abs_error"].mean(),
                "signed_error": x["signed_error"].mean(),
                "contracts": x["made"].n,
                "make_rate": x["made"].mean(),
                "set_rate": x["set"].mean(),
                "nil_attempts": x["nil"].n,
                "nil_success": x["nil"].mean(),
                "blind_nil_attempts": x["blind_nil"].n,
                "blind_nil_success": x["blind_nil"].mean(),
                "bags_per_hand": x["bags"].mean(),
                "opponent_nils": x["against"].n,
                "nils_set": x["against"].mean(),
            })  # fmt: skip
        return out


def bid_lines(rows: Iterable[dict[str, Any]], agents: Sequence[str]) -> list[dict[str, Any]]:
    """The bid-accuracy line of every agent, in the order given (rows read once:
    `BidLines`)."""
    lines = BidLines(agents)
    for row in rows:
        lines.add(row)
    return lines.result()
