"""Bids and results against the double-dummy solver: a bad bid or bad play?

For every team-hand, `dd` is the tricks the team takes with every hand visible and
best play on both sides (`agents.dd`), from the hands as they were played and the
seat that led the first trick, both read from the hand record in the log. Then:

- `bid_vs_dd` = contract - dd: above 0, the team bid more than it could make even
  double dummy (an overbid); below 0, it left makeable tricks unbid.
- `play_vs_dd` = tricks - dd: the tricks the play of both teams moved away from the
  double-dummy result (the opponents' play counts too).
- a set contract is an *unmakeable bid* when contract > dd, else it was *set in play*.

Team-hands with a nil bid are left out: the team's double-dummy tricks include the nil
bidder's, which the contract does not count (RULES.md §4).

Solving takes seconds to minutes per deal, so answers are kept in a JSON cache beside the log
(`DD_FILE`), keyed by the hands, the leader and the first-lead rule. Both sides of a
duplicate deal share one solve; a rerun solves only what is missing.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.bid_analysis.intervals import mean_interval, rate_interval
from spades_env.cards import BID_BASE, str_to_action
from spades_env.rules import Rules

DD_FILE = "dd_tricks.json"
CACHE_VERSION = 1

#: solve(hands, leader, rules) -> tricks of team 0 (seats 0, 2), or None if unsupported
Solver = Callable[[Sequence[int], int, Rules], int | None]


def played_hands(record: dict[str, Any]) -> tuple[list[int], int]:
    """(4 hand masks as played, the first trick's leader) from a hand record.

    The play is the record's last `4 * hand_size` card actions, so cards passed in a
    blind-nil exchange (RULES.md §2) are already where they were played from.
    """
    size = record["rules"]["hand_size"]
    plays = [(s, a) for s, a in record["actions"] if str_to_action(str(a)) < BID_BASE]
    plays = plays[-4 * size :]
    hands = [0, 0, 0, 0]
    for seat, text in plays:
        hands[seat] |= 1 << str_to_action(text)
    return hands, plays[0][0]


def dd_key(hands: Sequence[int], leader: int, rules: Rules) -> str:
    return f"{rules.first_lead}|{leader}|" + ",".join(f"{h:x}" for h in hands)


def solver_tricks(hands: Sequence[int], leader: int, rules: Rules) -> int | None:
    """The double-dummy tricks of team 0 (`agents.dd`); None where it cannot solve."""
    from agents.dd import Position, PositionError, solve_tricks  # numba: load on demand

    if rules.num_players != 4 or rules.hand_size != 13 or not rules.partnerships:
        return None  # the solver plays the partnership game of four seats and 52 cards
    if rules.trump != "spades":
        return None  # RULES.md §6 auction: the solver assumes spades are trump
    try:
        pos = Position.from_deal(hands, leader, False, rules)
    except PositionError:
        return None
    return solve_tricks(pos, team=0)


class DDCache:
    """Double-dummy answers on disk: `{key: tricks of team 0}` (None: unsolvable)."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = None if path is None else Path(path)
        self.tricks: dict[str, int | None] = {}
        if self.path is not None and self.path.exists():
            data = json.loads(self.path.read_text())
            if data.get("version") == CACHE_VERSION:
                self.tricks = data["tricks"]

    def save(self) -> None:
        if self.path is None:
            return
        tmp = self.path.with_name(self.path.name + ".tmp")
        tmp.write_text(json.dumps({"version": CACHE_VERSION, "tricks": self.tricks}))
        os.replace(tmp, self.path)


def dd_tricks(
    rows: Sequence[dict[str, Any]],
    cache: DDCache | None = None,
    solve: Solver = solver_tricks,
    max_solves: int | None = None,
    on_solve: Callable[[int, int], None] | None = None,
) -> list[list[int] | None]:
    """Per row: the double-dummy tricks of each team, or None (not solved / unsolvable).

    At most `max_solves` new positions are solved (cached ones are free); the cache is
    saved after every solve, so an interrupted run keeps its work. `on_solve(done,
    todo)` reports progress.
    """
    cache = cache or DDCache(None)
    keys = []
    for row in rows:
        rules = Rules.from_dict(row["rules"])
        hands, leader = played_hands(row["record"])
        keys.append((dd_key(hands, leader, rules), hands, leader, rules))
    todo = list({k: (h, ld, r) for k, h, ld, r in keys if k not in cache.tricks}.items())
    if max_solves is not None:
        todo = todo[:max_solves]
    for i, (key, (hands, leader, rules)) in enumerate(todo):
        cache.tricks[key] = solve(hands, leader, rules)
        cache.save()
        if on_solve is not None:
            on_solve(i + 1, len(todo))
    out: list[list[int] | None] = []
    for key, *_, rules in keys:
        t0 = cache.tricks.get(key)
        out.append(None if t0 is None else [t0, rules.hand_size - t0])
    return out


def verdict_of(contract: int, tricks: int, dd: int) -> str:
    """`made`, or why the contract was set: `unmakeable bid` (contract > dd) or
    `set in play` (double dummy the team would have made it)."""
    if tricks >= contract:
        return "made"
    return "unmakeable bid" if contract > dd else "set in play"


def dd_table(rows: Sequence[dict[str, Any]], dd: Sequence[list[int] | None]) -> pd.DataFrame:
    """One row per team-hand with a double-dummy answer and no nil bid."""
    out = []
    for row, tricks in zip(rows, dd, strict=True):
        if tricks is None or len(row["teams"]) != 2:
            continue
        for k, agent in enumerate(row["teams"]):
            members = (k, k + 2)
            if any(row["bids"][s] == 0 for s in members):
                continue
            contract, took, d = (
                row["contract"][k],
                sum(row["tricks"][s] for s in members),
                tricks[k],
            )
            verdict = (
                "made" if took >= contract else "unmakeable bid" if contract > d else "set in play"
            )
            out.append(
                {
                    "agent": agent,
                    "deal": row["deal"],
                    "side": row["side"],
                    "hand": row["hand"],
                    "team": k,
                    "contract": contract,
                    "tricks": took,
                    "dd": d,
                    "bid_vs_dd": contract - d,
                    "play_vs_dd": took - d,
                    "verdict": verdict,
                }
            )
    return pd.DataFrame(out, columns=DD_COLUMNS)


DD_COLUMNS = ["agent", "deal", "side", "hand", "team", "contract", "tricks", "dd"]
DD_COLUMNS += ["bid_vs_dd", "play_vs_dd", "verdict"]


def dd_summary(table: pd.DataFrame) -> pd.DataFrame:
    """Per agent: mean bid and play against double dummy, and what set its contracts."""
    out = []
    for agent, g in table.groupby("agent", sort=False):
        row: dict[str, Any] = {"agent": agent, "team_hands": len(g)}
        for name, values in (("bid_vs_dd", g["bid_vs_dd"]), ("play_vs_dd", g["play_vs_dd"])):
            _, m, lo, hi = mean_interval(values.astype(float).tolist())
            row.update({name: m, f"{name}_lo": lo, f"{name}_hi": hi})
        sets = g[g["verdict"] != "made"]
        row["sets"] = len(sets)
        for name, hit, base in (
            ("makeable_rate", g["contract"] <= g["dd"], g),
            ("overbid_rate", g["contract"] > g["dd"], g),
            ("underbid_rate", g["contract"] < g["dd"], g),
            ("sets_unmakeable", sets["verdict"] == "unmakeable bid", sets),
        ):
            _, r, lo, hi = rate_interval(hit[base.index].astype(float).tolist())
            row.update({name: r, f"{name}_lo": lo, f"{name}_hi": hi})
        out.append(row)
    return pd.DataFrame(out)
