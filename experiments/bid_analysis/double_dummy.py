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

Answers come from the double-dummy cache of `agents.dd.cache` (one SQLite file shared
by every log and by `tricks_tables`, keyed by the hands, the leader and the rules the
answer depends on). Both sides of a duplicate deal share one solve; new positions are
solved on every core and saved as they come, so a rerun solves only what is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

import pandas as pd

from experiments.bid_analysis.intervals import mean_interval, rate_interval
from spades_env.cards import BID_BASE, str_to_action
from spades_env.rules import Rules

#: new positions solved by default in one analysis (`dd="auto"`): at the bench's median
#: solve time, about half a minute on two cores; cached answers are always used.
AUTO_SOLVES = 200

#: The shipped sample: the double-dummy answers of the first `SAMPLE_DEALS` deals of the
#: deal set of seed 0 under the standard rules, the deals of the notebooks' default seeded
#: tournaments (made by `python -m experiments.bid_analysis.make_sample`).
SAMPLE = Path(__file__).resolve().parent / "data" / "dd_sample.sqlite"
SAMPLE_DEALS = 200


def add_sample(cache: Any = None, sample: str | Path = SAMPLE) -> int:
    """Copy the answers of `sample` that `cache` lacks into it (a `DDCache`, a path, or
    None for the default cache); return how many were added. Answers are facts of the
    deal, so adding them never changes a result; it saves solving them."""
    import sqlite3

    from agents.dd.cache import DDCache

    store = cache if isinstance(cache, DDCache) else DDCache(cache)
    with closing(sqlite3.connect(f"file:{sample}?mode=ro", uri=True)) as db:
        answers = dict(db.execute("SELECT key, team0 FROM tricks").fetchall())
    missing = {k: v for k, v in answers.items() if k not in store.get(answers)}
    if missing:
        store.put(missing)
    if store is not cache:
        store.close()
    return len(missing)


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


def supported(rules: Rules) -> bool:
    """Whether the solver plays this game (RULES.md §1: four seats in partnerships, 52
    cards, 13 a hand; spades trump)."""
    from agents.dd.position import PositionError, check_rules  # numba: load on demand

    try:
        check_rules(rules)
    except PositionError:
        return False
    return rules.hand_size == 13


def solver_tricks(hands: Sequence[int], leader: int, rules: Rules) -> int | None:
    """The double-dummy tricks of team 0 (`agents.dd`); None where it cannot solve."""
    from agents.dd import Position, PositionError, solve_tricks  # numba: load on demand

    if not supported(rules):
        return None
    try:
        pos = Position.from_deal(hands, leader, False, rules)
    except PositionError:
        return None
    return solve_tricks(pos, team=0)


def _parallel(todo, workers, on_solve):
    """(key, tricks of team 0) of each (key, (hands, leader, rules)), on `workers` cores."""
    from agents.dd.cache import solve_many

    by_rules: dict[Rules, list] = {}
    for key, (hands, leader, rules) in todo:
        by_rules.setdefault(rules, []).append((key, hands, leader))
    done = 0
    for rules, group in by_rules.items():
        items = [(tuple(h), (ld,), False) for _, h, ld in group]
        for i, (t0,) in solve_many(items, rules, workers):
            done += 1
            if on_solve is not None:
                on_solve(done, len(todo))
            yield group[i][0], t0


def dd_tricks(
    rows: Sequence[dict[str, Any]],
    cache=None,
    solve: Solver | None = None,
    max_solves: int | None = None,
    on_solve: Callable[[int, int], None] | None = None,
    workers: int | None = None,
) -> list[list[int] | None]:
    """Per row: the double-dummy tricks of each team, or None (not solved / unsolvable).

    `cache`: an `agents.dd.cache.DDCache` (None: the default one). At most
    `max_solves` new positions are solved (cached ones are free), by `solve` one at a
    time or, by default, by the solver on `workers` processes; each answer is saved as
    it comes, so an interrupted run keeps its work. `on_solve(done, todo)` reports
    progress: first `(0, todo)` before anything is solved (the solver's first run on a
    machine compiles it, a minute of no answers), then after each answer.
    """
    from agents.dd.cache import DDCache, dd_key

    cache = cache if cache is not None else DDCache()
    keys = []
    for row in rows:
        rules = Rules.from_dict(row["rules"])
        hands, leader = played_hands(row["record"])
        ok = supported(rules)
        keys.append((dd_key(hands, leader, rules) if ok else None, hands, leader, rules))
    known = cache.get(k for k, *_ in keys if k is not None)
    todo = list({k: (h, ld, r) for k, h, ld, r in keys if k and k not in known}.items())
    if max_solves is not None:
        todo = todo[:max_solves]
    if todo and on_solve is not None:
        on_solve(0, len(todo))
    if solve is not None:
        answers = ((key, solve(*args)) for key, args in todo)
    else:
        answers = _parallel(todo, workers, on_solve)
    for i, (key, t0) in enumerate(answers):
        if t0 is not None:
            cache.put({key: t0})
            known[key] = t0
        if solve is not None and on_solve is not None:
            on_solve(i + 1, len(todo))
    out: list[list[int] | None] = []
    for key, *_, rules in keys:
        t0 = known.get(key) if key is not None else None
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
