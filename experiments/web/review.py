"""The review after a hand: bids beside double-dummy tricks, and each card's cost.

For a finished hand record (`spades_env.records`): the tricks each team makes double
dummy from the start of the play (the hands after any exchange, the actual leader),
read from and written to the project's double-dummy cache (`agents.dd.cache.DDCache`);
and for every card played, the tricks its team could still take with the best card
against the tricks it could take after the card played (`agents.dd.DDSolver.move_values`):
the difference is the card's double-dummy cost, so the first card that gave away a
makeable trick is the first with a cost above 0. Only the game the solver plays (RULES.md
§1-§3: four seats in partnerships, 52 cards, spades trump) is reviewed; other presets
get a one-line note instead.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from agents.dd.cache import DDCache, DDCacheError, dd_key
from agents.dd.position import Position, PositionError, check_rules
from agents.dd.solver import DDSolver
from experiments.table.words import card_label
from experiments.web.replay import start_state
from spades_env.cards import str_to_action
from spades_env.engine import step
from spades_env.rules import Rules
from spades_env.state import PLAY

_SOLVER: DDSolver | None = None
_LOCK = threading.Lock()  # one solver (its tables are large), one review at a time


def _solver() -> DDSolver:
    global _SOLVER
    if _SOLVER is None:
        _SOLVER = DDSolver()
    return _SOLVER


def _dd_tricks(hands: tuple[int, ...], leader: int, rules: Rules, solver: DDSolver) -> int:
    """Team 0's double-dummy tricks from the start of the play, through the cache."""
    key = dd_key(hands, leader, rules)
    try:
        cache = DDCache()
    except (OSError, DDCacheError):
        cache = None
    try:
        if cache is not None:
            known = cache.get([key])
            if key in known:
                return int(known[key])
        t0 = solver.tricks(
            Position.from_deal(np.array(hands, dtype=np.uint64), leader, False, rules), team=0
        )
        if cache is not None:
            cache.put({key: int(t0)})
        return int(t0)
    finally:
        if cache is not None:
            cache.close()


def review_hand(record: dict[str, Any]) -> dict[str, Any]:
    """The review of one finished hand (JSON-ready); see the module docstring."""
    rules = Rules.from_dict(record["rules"])
    hand = record["hand_no"] + 1
    try:
        check_rules(rules)
    except PositionError as exc:
        return {"hand": hand, "error": f"no double-dummy review: {exc}"}
    state = start_state(record)
    cards: list[dict[str, Any]] = []
    dd: list[int] | None = None
    with _LOCK:
        solver = _solver()
        for seat, text in record["actions"]:
            action = str_to_action(text)
            if int(state.phase[0]) == PLAY:
                pos = Position.from_state(state)
                if dd is None:
                    t0 = _dd_tricks(pos.hands, pos.leader, rules, solver)
                    dd = [t0, rules.hand_size - t0]
                values = solver.move_values(pos)
                best = max(values.values())
                cost = best - values[action]
                cards.append(
                    {
                        "seat": seat,
                        "trick": int(state.tricks_played[0]) + 1,
                        "card": card_label(action),
                        "cost": round(cost, 3),
                        "best": [card_label(c) for c, v in sorted(values.items()) if v == best][:4],
                    }
                )
            step(state, [action])
    dd = dd or [0, 0]
    seats = []
    for s in range(rules.num_players):
        team = rules.team_of(s)
        seats.append(
            {
                "seat": s,
                "bid": record["bids"][s],
                "blind": record["blind"][s],
                "tricks": record["tricks"][s],
                "team_dd": dd[team],
                "team_tricks": sum(
                    record["tricks"][x]
                    for x in range(rules.num_players)
                    if rules.team_of(x) == team
                ),
            }
        )
    costly = next((k for k, c in enumerate(cards) if c["cost"] > 0), None)
    return {"hand": hand, "dd": dd, "seats": seats, "cards": cards, "first_costly": costly}
