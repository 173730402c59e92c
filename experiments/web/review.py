"""The review after a hand: each card judged by the Spades score, double dummy.

For a finished hand record (`spades_env.records`), every card played is judged with
every hand visible and best play after it (`agents.dd.DDSolver.move_values`) by two
measures:

- **points** (the objective, `OBJECTIVE`): the Spades score of the hand with its real
  bids (`agents.dd.objective.score_objective`, relative): the card's team's RULES.md §4
  hand points minus the other team's, each bag charged `bag_penalty / bag_limit` points
  (10 in `standard`), so a nil kept or broken, a set and the bags all count. A card's
  cost is the best card's value less its own: the points its team gave away.
- **tricks**: the tricks the card's team can still take, best card against the card
  played; shown beside the points, as a nil bidder's trick is a loss in points and a gain
  in tricks.

An exact solve of the score from early in the hand takes far longer than one of tricks
(seconds to minutes from the first lead), so the points are always judged over the last
`SCORE_TRICKS` tricks (the ninth trick from the end on), and the earlier cards from the
last one back while their solves fit `SCORE_BUDGET` CPU seconds; a card left over (always
a run of the hand's first cards) has null points and is judged in tricks alone. The review
says how many (`objective.text`; `objective.score_tricks`: the last tricks wholly judged in
points). The first card of each seat that cost points is marked (`first_costly`: seat -> index),
and so is the hand's first (`first_costly_card`). The tricks each team makes double dummy
from the start of the play come from the project's double-dummy cache
(`agents.dd.cache.DDCache`). A card that was the only legal one, or equal to every other
legal card (adjacent in rank among the cards left), costs nothing and is not searched.
Only the game the solver plays (RULES.md §1-§3: four seats in partnerships, 52 cards,
spades trump) is reviewed; other presets get a one-line note instead.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from agents.dd.cache import DDCache, DDCacheError, dd_key
from agents.dd.objective import ScoreObjective, score_objective
from agents.dd.position import Position, PositionError, check_rules
from agents.dd.solver import DDSolver, equivalent_groups
from experiments.table.words import card_label
from experiments.web.replay import start_state
from spades_env.cards import str_to_action
from spades_env.engine import step
from spades_env.rules import Rules
from spades_env.state import PLAY

#: What the review judges by, as the page says it.
OBJECTIVE = {
    "name": "spades-score",
    "text": (
        "the Spades score of the hand, double dummy (every hand visible, best play after): "
        "the team's hand points minus the other team's, nil and blind nil included, "
        "each bag charged {bag_cost:g} points (the bag penalty spread over the bag limit)"
    ),
}
#: The last tricks whose cards are always judged in points (the score solve of more takes
#: seconds to minutes a card; the tricks of every card are judged).
SCORE_TRICKS = 9
#: CPU seconds (of the reviewing thread) a review may spend judging the earlier cards in
#: points, from the last one back; a card whose solve would not fit keeps its tricks only.
SCORE_BUDGET = 1.0
#: How many times the last early solve the next one (a card earlier, a larger tree) is
#: expected to take: a solve is started only if that much is left of the budget.
GROWTH = 3.0
#: A cost below this is a tie between cards (the values are whole points or tenths).
EPS = 1e-6

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


def objective_of(
    rules: Rules, score_tricks: int = SCORE_TRICKS, unscored: int = 0
) -> dict[str, Any]:
    """The objective the review uses under these rules, for the page. `score_tricks`:
    the last tricks whose every card is judged in points; `unscored`: the cards before
    them judged in tricks only."""
    bag_cost = rules.bag_penalty / rules.bag_limit
    text = OBJECTIVE["text"].format(bag_cost=bag_cost)
    if unscored:
        text += (
            f"; in points for every card but the first {unscored} (their score solve did"
            " not fit the review's time budget), in tricks over the whole hand"
        )
    return {
        "name": OBJECTIVE["name"],
        "bag_cost": bag_cost,
        "score_tricks": min(score_tricks, rules.hand_size),
        "text": text,
    }


def _judge(
    pos: Position, solver: DDSolver, objectives: list[ScoreObjective], score_tricks: int
) -> tuple[dict[int, float] | None, dict[int, float]]:
    """(points, tricks) of every legal card of the seat to act (points None over
    `score_tricks` tricks left); a choice between equal cards alone is not searched
    (every card is worth 0)."""
    groups = equivalent_groups(pos)
    if len(groups) == 1:
        zero = {c: 0.0 for c in groups[0]}
        return zero, dict(zero)
    points = None
    if pos.tricks_left <= score_tricks:
        points = solver.move_values(pos, objectives[pos.to_act % 2])
    return points, solver.move_values(pos)


def _score_early(
    early: list[tuple[int, Position, int]],
    cards: list[dict[str, Any]],
    solver: DDSolver,
    objectives: list[ScoreObjective],
    budget: float,
) -> int:
    """Judge the early cards (index, position, card played) in points from the last one
    back while the solves fit `budget` CPU seconds; returns how many cards from the
    hand's first are left in tricks only (the solved ones are always a run to the end,
    so the page can say where the points start)."""
    start = time.thread_time()
    last = 0.0
    for n, (k, pos, action) in enumerate(reversed(early)):
        if time.thread_time() - start + GROWTH * last >= budget:
            return early[len(early) - 1 - n][0] + 1
        t = time.thread_time()
        points = solver.move_values(pos, objectives[pos.to_act % 2])
        last = time.thread_time() - t
        top = max(points.values())
        cards[k]["cost"] = round(top - points[action], 3)
        cards[k]["best"] = [
            card_label(c) for c in sorted(c for c, v in points.items() if v >= top - EPS)
        ][:4]
    return 0


def _whole_tricks(cards: list[dict[str, Any]], unscored: int, rules: Rules) -> int:
    """The last tricks whose every card is judged in points."""
    if not unscored:
        return rules.hand_size
    return rules.hand_size - cards[unscored - 1]["trick"]


def review_hand(
    record: dict[str, Any], score_tricks: int = SCORE_TRICKS, budget: float = SCORE_BUDGET
) -> dict[str, Any]:
    """The review of one finished hand (JSON-ready); see the module docstring.
    `score_tricks`: the last tricks always judged in points; `budget`: the CPU seconds
    for judging earlier cards in points too."""
    rules = Rules.from_dict(record["rules"])
    hand = record["hand_no"] + 1
    try:
        check_rules(rules)
    except PositionError as exc:
        return {"hand": hand, "error": f"no double-dummy review: {exc}"}
    started = time.perf_counter()
    state = start_state(record)
    bids, blind = record["bids"], record["blind"]
    objectives = [score_objective(rules, bids, blind, team, relative=True) for team in (0, 1)]
    cards: list[dict[str, Any]] = []
    early: list[tuple[int, Position, int]] = []  # cards judged in tricks so far
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
                points, tricks = _judge(pos, solver, objectives, score_tricks)
                if points is None:
                    early.append((len(cards), pos, action))
                judged = points if points is not None else tricks
                top, best_t = max(judged.values()), max(tricks.values())
                best = sorted(c for c, v in judged.items() if v >= top - EPS)
                cards.append(
                    {
                        "seat": seat,
                        "trick": int(state.tricks_played[0]) + 1,
                        "card": card_label(action),
                        # points given away (None: before the last score_tricks tricks)
                        "cost": None if points is None else round(top - points[action], 3),
                        "cost_tricks": round(best_t - tricks[action], 3),
                        "best": [card_label(c) for c in best][:4],
                    }
                )
            step(state, [action])
        unscored = _score_early(early, cards, solver, objectives, budget) if early else 0
    seconds = time.perf_counter() - started
    dd = dd or [0, 0]
    seats = []
    for s in range(rules.num_players):
        team = rules.team_of(s)
        seats.append(
            {
                "seat": s,
                "bid": bids[s],
                "blind": blind[s],
                "tricks": record["tricks"][s],
                "team_dd": dd[team],
                "team_tricks": sum(
                    record["tricks"][x]
                    for x in range(rules.num_players)
                    if rules.team_of(x) == team
                ),
            }
        )
    first: dict[str, int] = {}
    for k, c in enumerate(cards):
        if c["cost"] is not None and c["cost"] > EPS:
            first.setdefault(str(c["seat"]), k)
    return {
        "hand": hand,
        "objective": objective_of(rules, _whole_tricks(cards, unscored, rules), unscored),
        "dd": dd,
        "seats": seats,
        "cards": cards,
        "first_costly": first,
        "first_costly_card": min(first.values()) if first else None,
        "seconds": round(seconds, 3),
    }
