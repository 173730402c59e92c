"""The tournament summary: pair margins with paired 95% CIs, win rates, ratings, bids.

Everything is computed from the log rows alone (`experiments.tournament.results_log`).

**Pair margin.** For a pair (A, B) the unit of pairing is the duplicate deal: both sides
of one deal give one value, so the luck of the cards cancels before the variance is
taken. In hand mode the value is A's partnership's hand score minus B's (bag penalty
included), averaged over the two sides: *points per deal*. In game mode it is the
points-per-hand difference over both games of the deal (sum of hand-score differences
over the hands of both games, divided by their number); the final-score margin and the
game win rate (a win counts 1, averaged over the two games) are paired the same way.
The 95% CI is mean ± t(0.975, n-1) · sd / sqrt(n) over the n per-deal values.

**Streaming.** `Summary` takes the rows one at a time and keeps running sums, not rows:
a deal's values are folded in when its unit ends (both sides of a deal are in one unit),
and the ratings see the matches in deal order as soon as every pair has passed a deal, so
the memory of a summary is bounded by one chunk of every pair, whatever the log's length
(`finish` reads the log with `results_log.iter_rows`).

**Teams of two agents.** Where an entry is a team of two agents (`team(A, B)`), the
pairs, `ratings` and `bids` are per entry (the team), and the summary
adds, per agent that holds a seat: `agent_ratings` (OpenSkill with teams of players: each
match rates the four seats' agents, a team's skill the sum of its two seats', so an agent
that plays alone holds both of its team's places; an agent in several places of one match
takes the mean of their updates), `agent_margins` (the duplicate margin of the team it
played in, per deal, pooled over its teams and opponents; a deal whose two teams both
hold it is left out) and `agent_bids` (its seats' bid lines: bids, bid error, nils, what
a seat decides; no contracts, which are a partnership's). `bids` stays per entry: a
team's line holds its two members' seats and its contracts.
A tournament without teams writes what it always has.
"""

from __future__ import annotations

import heapq
import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from experiments.tournament.bid_stats import BidLines
from experiments.tournament.ratings import Rater
from spades_env.duplicate import deal_margin
from spades_env.tooling.stats import mean_ci, t975

__all__ = [
    "Summary",
    "duplicate_matches",
    "mean_ci",
    "pair_of",
    "pair_results",
    "summarize",
    "t975",
]


def pair_of(row: dict[str, Any]) -> tuple[str, str]:
    """(A, B): A holds team 0 on side 0 (and team 1 on side 1)."""
    t0, t1 = row["teams"][0], row["teams"][1]
    return (t0, t1) if row["side"] == 0 else (t1, t0)


def entry_seats(row: dict[str, Any]) -> dict[str, Any]:
    """A row whose seats are named by their entry (a team's name for its members' seats):
    the per-entry bid lines count a team's bids as the team's."""
    t = len(row["teams"])
    return {**row, "seats": [row["teams"][s % t] for s in range(len(row["seats"]))]}


def agent_seats(row: dict[str, Any]) -> dict[str, Any]:
    """A row for the per-agent bid lines: each seat by its agent, the teams by names no
    agent has, so an agent's line holds what its seats decided (bids, nils), not a
    partnership's contracts."""
    return {**row, "teams": [f"team {k}: {name}" for k, name in enumerate(row["teams"])]}


class RunningMean:
    """`mean_ci` of values given one at a time: the same mean (summed in the same order),
    the sd by Welford's update (equal to the two-pass sd up to rounding)."""

    def __init__(self) -> None:
        self.n, self.total, self.mean, self.m2 = 0, 0.0, 0.0, 0.0

    def add(self, value: float) -> None:
        self.n += 1
        self.total += value
        delta = value - self.mean
        self.mean += delta / self.n
        self.m2 += delta * (value - self.mean)

    def result(self) -> dict[str, Any]:
        n = self.n
        if n == 0:
            return {"n": 0, "mean": None, "sd": None, "ci": None}
        mean = self.total / n
        if n == 1:
            return {"n": 1, "mean": mean, "sd": None, "ci": None}
        sd = math.sqrt(max(self.m2, 0.0) / (n - 1))
        half = t975(n - 1) * sd / math.sqrt(n)
        return {"n": n, "mean": mean, "sd": sd, "ci": [mean - half, mean + half]}


class _Pair:
    """One pair's running margins (and game-mode figures)."""

    def __init__(self) -> None:
        self.margin, self.final, self.wins = RunningMean(), RunningMean(), RunningMean()
        self.hands_total, self.hands_n = 0.0, 0


def _new_side() -> dict[str, Any]:
    return {"diff": 0, "hands": 0, "final": 0, "win": 0.0, "over": False}


class Summary:
    """The summary of a tournament's rows, given one at a time (`add`), in log order."""

    def __init__(
        self,
        agents: Sequence[str],
        mode: str | None = None,
        pairs_only: bool = False,
        seat_agents: Sequence[str] | None = None,
    ) -> None:
        """`pairs_only`: the pair margins alone (no ratings, no bid lines), from rows that
        may hold nothing else. `seat_agents`: with teams of two agents, the agents that
        hold seats (`TournamentConfig.agent_names`): the per-agent figures are added."""
        self.agents = list(agents)
        self.seat_agents = None if seat_agents is None else list(seat_agents)
        self._members: dict[str, tuple[str, str]] = {}  # an entry: the agents of its seats
        self._agent_rater = None if seat_agents is None else Rater(self.seat_agents)
        self._agent_margins: dict[str, RunningMean] = {a: RunningMean() for a in seat_agents or ()}
        self.pairs_only = pairs_only
        self.mode = mode
        self.rows = 0
        self.pairs: dict[tuple[str, str], _Pair] = {}
        self._open: dict[tuple[tuple[str, str], int], dict[int, dict]] = {}
        self._unit: Any = None
        self._matches: list[tuple[int, tuple[str, str], float]] = []  # a heap
        self._passed: dict[tuple[str, str], int] = {}  # per pair: its last finished deal
        self._expected_pairs = len(self.agents) * (len(self.agents) - 1) // 2
        self._rater = Rater(self.agents)
        self._bids = BidLines(self.agents)
        self._agent_bids = None if seat_agents is None else BidLines(self.seat_agents)

    def add(self, row: dict[str, Any]) -> None:
        if self.mode is None:
            self.mode = row["mode"]
        self.rows += 1
        unit = row.get("unit")
        if unit != self._unit:
            self._close_deals()  # every deal of the unit before is complete
            self._unit = unit
        pair = pair_of(row)
        if pair not in self.pairs:  # the pairs in the order of their first row
            self.pairs[pair] = _Pair()
        ta = row["side"]  # A's team: 0 on side 0, 1 on side 1
        if self.seat_agents is not None:
            t = len(row["teams"])
            for k in (0, 1):
                self._members.setdefault(row["teams"][k], (row["seats"][k], row["seats"][k + t]))
        g = self._open.setdefault((pair, row["deal"]), {}).setdefault(row["side"], _new_side())
        g["diff"] += row["hand_score"][ta] - row["hand_score"][1 - ta]
        g["hands"] += 1
        g["final"] = row["scores"][ta] - row["scores"][1 - ta]
        g["over"] = row["game_over"]
        g["win"] = 1.0 if row["winner_agent"] == pair[0] else 0.0
        if not self.pairs_only:
            if self._agent_bids is None:
                self._bids.add(row)
            else:  # per entry (a team's seats are its own), and per seat agent
                self._bids.add(entry_seats(row))
                self._agent_bids.add(agent_seats(row))

    def _close_deals(self, last: bool = False) -> None:
        """Fold the open deals into the pairs' sums and queue their matches (deal order
        within a pair is the log's: ascending)."""
        for (pair, deal), sides in sorted(self._open.items(), key=lambda kv: kv[0][1]):
            if len(sides) != 2:
                continue
            entry = self.pairs[pair]
            s0, s1 = sides[0], sides[1]
            if self.mode == "hand":
                entry.margin.add(deal_margin(s0["diff"], s1["diff"]))
            else:
                entry.margin.add((s0["diff"] + s1["diff"]) / (s0["hands"] + s1["hands"]))
                entry.final.add((s0["final"] + s1["final"]) / 2)
                entry.wins.add((s0["win"] + s1["win"]) / 2)
                entry.hands_total += (s0["hands"] + s1["hands"]) / 2
                entry.hands_n += 1
            if not self.pairs_only:
                heapq.heappush(self._matches, (deal, pair, s0["diff"] + s1["diff"]))
                if self.seat_agents is not None:
                    self._agent_margin(pair, s0["diff"], s1["diff"])
                self._passed[pair] = max(self._passed.get(pair, -1), deal)
        self._open.clear()
        self._rate(last)

    def _rate(self, last: bool) -> None:
        """Rate the matches of every deal that all pairs have passed (all, at the end)."""
        if last:
            frontier = math.inf
        elif len(self._passed) < max(self._expected_pairs, 1):
            return
        else:
            frontier = min(self._passed.values())
        while self._matches and self._matches[0][0] <= frontier:
            _, (a, b), margin = heapq.heappop(self._matches)
            self._rater.add(a, b, margin)
            if self._agent_rater is not None:
                self._agent_rater.add_teams(self._members[a], self._members[b], margin)

    def _agent_margin(self, pair: tuple[str, str], side0: float, side1: float) -> None:
        """Each seat agent's share of a deal: its team's duplicate margin (the pair's
        metric: points per deal in hand mode, per hand in game mode)."""
        a, b = pair
        margin = deal_margin(side0, side1)
        ours, theirs = set(self._members[a]), set(self._members[b])
        for agent in ours - theirs:
            self._agent_margins[agent].add(margin)
        for agent in theirs - ours:
            self._agent_margins[agent].add(-margin)

    def held(self) -> int:
        """What the summary holds beyond its sums: the open deals and the matches waiting
        for their turn to be rated (bounded by one chunk of every pair)."""
        return len(self._open) + len(self._matches)

    def pair_results(self) -> list[dict[str, Any]]:
        self._close_deals(last=True)
        out = []
        for (a, b), p in self.pairs.items():
            margin = p.margin.result()
            entry: dict[str, Any] = {"a": a, "b": b, "deals": margin["n"], "margin": margin}
            entry["metric"] = "points per deal" if self.mode == "hand" else "points per hand"
            if self.mode == "game":
                entry["final_margin"] = p.final.result()
                entry["win_rate"] = p.wins.result()
                entry["hands_per_game"] = p.hands_total / p.hands_n if p.hands_n else None
            out.append(entry)
        return out

    def result(self) -> dict[str, Any]:
        """The whole summary (JSON-ready)."""
        pairs = self.pair_results()
        out = {
            "mode": self.mode or "hand",
            "rows": self.rows,
            "pairs": pairs,
            "ratings": self._rater.result(),
            "bids": self._bids.result(),
        }
        if self._agent_rater is not None:
            out["teams"] = {team: list(seats) for team, seats in self._members.items()}
            out["agent_ratings"] = self._agent_rater.result()
            out["agent_margins"] = [
                {"agent": a, "margin": m.result()} for a, m in self._agent_margins.items()
            ]
            out["agent_bids"] = self._agent_bids.result()
        return out


def pair_results(rows: Iterable[dict[str, Any]], mode: str) -> list[dict[str, Any]]:
    """One entry per pair, with the paired margin (and win rate in game mode)."""
    summary = Summary([], mode, pairs_only=True)
    for row in rows:
        summary.add(row)
    return summary.pair_results()


def duplicate_matches(rows: Iterable[dict[str, Any]]) -> list[tuple[str, str, float]]:
    """(A, B, A's duplicate margin) per complete deal, ordered by deal then pair."""
    per: dict[tuple[tuple[str, str], int], dict[int, int]] = defaultdict(dict)
    for row in rows:
        pair, ta = pair_of(row), row["side"]
        side = per[pair, row["deal"]]
        side[row["side"]] = side.get(row["side"], 0) + (
            row["hand_score"][ta] - row["hand_score"][1 - ta]
        )
    out = sorted(
        (deal, pair, sides[0] + sides[1]) for (pair, deal), sides in per.items() if len(sides) == 2
    )
    return [(a, b, margin) for _, (a, b), margin in out]


def summarize(
    rows: Iterable[dict[str, Any]],
    agents: Sequence[str],
    seat_agents: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The whole summary (JSON-ready) of a tournament's rows, read once, in log order
    (an iterator of a log's rows keeps the memory bounded: `Summary`); `seat_agents`:
    with teams of two agents, the agents that hold seats (per-agent figures added)."""
    summary = Summary(agents, seat_agents=seat_agents)
    for row in rows:
        summary.add(row)
    return summary.result()
