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

The points are judged from the hand's last card back (`DDSolver.judge`): one objective
(team 0's; team 1's relative score is its negation) and one solver table serve the whole
hand, the value after a card is the value judged at the next card, and each other card is
asked only whether it reaches the best value, so each position is solved mostly from what
the later ones proved. An exact solve of the score from early in the hand still takes
far longer than one of tricks, so the review is made in two steps:

- `review_hand`, as the hand ends: the cards of the last `SCORE_TRICKS` tricks are
  always judged in points, and the earlier ones from the last one back while their
  solves fit `SCORE_NODES` search nodes in all (a few seconds of one core; counted in
  nodes, so the same hand gets the same first review on any machine). A card left over
  (always a run of the hand's first cards) has null points for now; the review's
  `pending` holds how many, and the value after the last of them.
- `complete_card`, in the background (`experiments.web.manager`): the last card left is
  judged in points with no budget but a safety cap (`CARD_NODES`), and so on to the
  first, one card a call. A hand's first review goes first: it interrupts the card under
  way (`DDSolver.interrupt`), which is judged again afterwards. When none is left,
  `pending` goes and the first costly cards are marked again; a card past the cap (never
  seen) keeps null points, and so do the cards before it.

The review says how many cards are not (yet) judged in points (`objective.text`;
`objective.score_tricks`: the last tricks wholly judged in points). The first card of
each seat that cost points is marked (`first_costly`: seat -> index), and so is the
hand's first (`first_costly_card`). The tricks each team makes double dummy from the
start of the play come from the project's double-dummy cache
(`agents.dd.cache.DDCache`). A card that was the only legal one, or equal to every other
legal card (adjacent in rank among the cards left), costs nothing and is not searched.
Only the game the solver plays (RULES.md §1-§3: four seats in partnerships, 52 cards,
spades trump) is reviewed; other presets get a one-line note instead.
"""

from __future__ import annotations

import copy
import threading
import time
from typing import Any

import numpy as np

from agents.dd.cache import DDCache, DDCacheError, dd_key
from agents.dd.objective import ScoreObjective, score_objective
from agents.dd.position import Position, PositionError, check_rules
from agents.dd.solver import DDSolver, SearchLimitError, equivalent_groups
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
#: The last tricks whose cards are always judged in points (milliseconds a card; from
#: the first tricks one exact score solve can take seconds to minutes). The tricks of
#: every card are judged.
SCORE_TRICKS = 9
#: Search nodes (`DDSolver.node_limit`) a review may spend judging the earlier cards in
#: points, from the last one back: two to three seconds of one core. A card whose solve
#: would pass it is given up, and it and the cards before it keep their tricks only.
#: Counted in nodes, not seconds, so which cards are judged does not depend on the
#: machine's speed or load.
SCORE_NODES = 12_000_000
#: Search nodes one card's score solve may take when the cards a review left over are
#: judged in the background (`complete_card`): a safety cap, so that no solve runs for
#: ever, well past the hardest card measured (1.8 billion nodes, ten minutes of one core,
#: in trick 1 of a nil hand). A card past it keeps its tricks only, and so do the cards
#: before it.
CARD_NODES = 10_000_000_000
#: A cost below this is a tie between cards (the values are whole points or tenths).
EPS = 1e-6

_SOLVER: DDSolver | None = None
_LOCK = threading.Lock()  # one solver (its tables are large), one review at a time
_URGENT = 0  # first reviews of hands waiting for the solver or using it
_BACKGROUND = False  # the solver judges a card left over (`complete_card`)
_URGENT_LOCK = threading.Lock()  # guards both
# the objective of the hand last judged, kept so that judging its left-over cards reuses
# the score bounds its review left in the solver's table (`DDSolver.reuse_score`)
_LAST: tuple[Any, ScoreObjective] | None = None


def _solver() -> DDSolver:
    global _SOLVER
    if _SOLVER is None:
        _SOLVER = DDSolver(reuse_tricks=True, reuse_score=True)
    return _SOLVER


def _objective(record: dict[str, Any], rules: Rules) -> ScoreObjective:
    """Team 0's relative score for the hand (team 1's is its negation, so one objective
    and one table of score bounds serve every card); the same object for the same hand."""
    global _LAST
    key = (repr(record["rules"]), tuple(record["bids"]), tuple(record["blind"]))
    if _LAST is None or _LAST[0] != key:
        _LAST = (key, score_objective(rules, record["bids"], record["blind"], 0, relative=True))
    return _LAST[1]


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
    rules: Rules, score_tricks: int = SCORE_TRICKS, unscored: int = 0, pending: bool = False
) -> dict[str, Any]:
    """The objective the review uses under these rules, for the page. `score_tricks`:
    the last tricks whose every card is judged in points; `unscored`: the cards before
    them judged in tricks only; `pending`: those are still being judged in points."""
    bag_cost = rules.bag_penalty / rules.bag_limit
    text = OBJECTIVE["text"].format(bag_cost=bag_cost)
    if unscored and pending:
        text += (
            f"; in points for every card but the first {unscored}, which are still being"
            " judged in points (shown in tricks meanwhile)"
        )
    elif unscored:
        text += (
            f"; in points for every card but the first {unscored} (their score solve passed"
            " the review's search cap), in tricks over the whole hand"
        )
    return {
        "name": OBJECTIVE["name"],
        "bag_cost": bag_cost,
        "score_tricks": min(score_tricks, rules.hand_size),
        "text": text,
    }


def _tricks_of(pos: Position, solver: DDSolver) -> dict[int, float]:
    """The tricks the mover's team takes with each legal card (0 each where every legal
    card is the same: not searched)."""
    groups = equivalent_groups(pos)
    if len(groups) == 1:
        return {c: 0.0 for c in groups[0]}
    return solver.move_values(pos)


def _score_cards(
    plays: list[tuple[Position, int]],
    cards: list[dict[str, Any]],
    solver: DDSolver,
    objective: ScoreObjective,
    score_tricks: int,
    nodes: int,
) -> tuple[int, float | None]:
    """Judge the cards (position, card played) in points from the hand's last card back
    (`DDSolver.judge`, one table for the hand: each position mostly solved from what the
    later ones proved, and the value after a card is the value judged at the next one).
    The cards of the last `score_tricks` tricks are always judged; the earlier ones
    while their solves fit `nodes` search nodes in all. Returns how many cards from the
    hand's first are left in tricks only (the judged ones are a run to the end), and the
    value (the objective's) of the position after the last of them."""
    played: float | None = None  # the value after the card: the next position's value
    left = nodes
    try:
        for k in range(len(plays) - 1, -1, -1):
            pos, action = plays[k]
            early = pos.tricks_left > score_tricks
            if early and left <= 0:
                return k + 1, played
            solver.node_limit = left if early else None
            try:
                value, played, best = solver.judge(pos, objective, action, played, most=4)
            except SearchLimitError:
                return k + 1, played
            if early:
                left -= solver.nodes
            # the objective is team 0's; team 1's (relative) is its negation
            cost = value - played if pos.to_act % 2 == objective.team else played - value
            cards[k]["cost"] = round(cost, 3)
            cards[k]["best"] = [card_label(c) for c in best]
            played = value
    finally:
        solver.node_limit = None
    return 0, played


def _whole_tricks(cards: list[dict[str, Any]], unscored: int, rules: Rules) -> int:
    """The last tricks whose every card is judged in points."""
    if not unscored:
        return rules.hand_size
    return rules.hand_size - cards[unscored - 1]["trick"]


def review_hand(
    record: dict[str, Any], score_tricks: int = SCORE_TRICKS, nodes: int = SCORE_NODES
) -> dict[str, Any]:
    """The review of one finished hand (JSON-ready); see the module docstring.
    `score_tricks`: the last tricks always judged in points; `nodes`: the search nodes
    for judging earlier cards in points too."""
    rules = Rules.from_dict(record["rules"])
    hand = record["hand_no"] + 1
    try:
        check_rules(rules)
    except PositionError as exc:
        return {"hand": hand, "error": f"no double-dummy review: {exc}"}
    global _URGENT
    started = time.perf_counter()
    state = start_state(record)
    bids, blind = record["bids"], record["blind"]
    cards: list[dict[str, Any]] = []
    plays: list[tuple[Position, int]] = []
    dd: list[int] | None = None
    with _URGENT_LOCK:
        _URGENT += 1  # the background judging (`complete_card`) gives way
    try:
        while not _LOCK.acquire(timeout=0.05):
            with _URGENT_LOCK:
                if _BACKGROUND and _SOLVER is not None:
                    _SOLVER.interrupt()  # its card is judged again later
    finally:
        with _URGENT_LOCK:
            _URGENT -= 1
    try:
        solver = _solver()
        objective = _objective(record, rules)
        for seat, text in record["actions"]:
            action = str_to_action(text)
            if int(state.phase[0]) == PLAY:
                pos = Position.from_state(state)
                if dd is None:
                    t0 = _dd_tricks(pos.hands, pos.leader, rules, solver)
                    dd = [t0, rules.hand_size - t0]
                tricks = _tricks_of(pos, solver)
                best_t = max(tricks.values())
                plays.append((pos, action))
                cards.append(
                    {
                        "seat": seat,
                        "trick": int(state.tricks_played[0]) + 1,
                        "card": card_label(action),
                        # points given away (None: left in tricks only) and the cards
                        # best in points (in tricks where the points are not judged)
                        "cost": None,
                        "cost_tricks": round(best_t - tricks[action], 3),
                        "best": [
                            card_label(c)
                            for c in sorted(c for c, v in tricks.items() if v >= best_t - EPS)
                        ][:4],
                    }
                )
            step(state, [action])
        unscored, value = _score_cards(plays, cards, solver, objective, score_tricks, nodes)
    finally:
        _LOCK.release()
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
    review = {"hand": hand, "dd": dd, "seats": seats, "cards": cards, "seconds": round(seconds, 3)}
    if unscored:
        # judged in points later (`complete_card`), from the value after the last of them
        review["pending"] = {"cards": unscored, "value": value}
    _summarise(review, rules, unscored)
    return review


def _summarise(review: dict[str, Any], rules: Rules, unscored: int) -> None:
    """Set the review's objective text and its first costly cards from its cards."""
    cards = review["cards"]
    first: dict[str, int] = {}
    for k, c in enumerate(cards):
        if c["cost"] is not None and c["cost"] > EPS:
            first.setdefault(str(c["seat"]), k)
    review["objective"] = objective_of(
        rules, _whole_tricks(cards, unscored, rules), unscored, "pending" in review
    )
    review["first_costly"] = first
    review["first_costly_card"] = min(first.values()) if first else None


def _plays(record: dict[str, Any]) -> list[tuple[Position, int]]:
    """Each card of the hand's play: the position it was played from, and the card."""
    state = start_state(record)
    plays = []
    for _, text in record["actions"]:
        action = str_to_action(text)
        if int(state.phase[0]) == PLAY:
            plays.append((Position.from_state(state), action))
        step(state, [action])
    return plays


def complete_card(
    record: dict[str, Any], review: dict[str, Any], nodes: int = CARD_NODES
) -> dict[str, Any] | None:
    """The review with the last of the cards it left in tricks only (`pending`) judged
    in points too, with no budget but the safety cap `nodes`; None (nothing done) when
    a first review of a hand wants the solver, which goes first: it waits for no card,
    as it interrupts the solve under way (`DDSolver.interrupt`), which is made again
    later. Once no card is left the review loses its `pending` and its first costly
    cards are marked again from every card's points; a card past the cap stays in
    tricks only, and so do the cards before it (the review says so)."""
    global _BACKGROUND
    rules = Rules.from_dict(record["rules"])
    with _LOCK:
        if _URGENT:
            return None
        started = time.perf_counter()
        out = copy.deepcopy(review)
        k = out["pending"]["cards"] - 1
        pos, action = _plays(record)[k]
        solver = _solver()
        objective = _objective(record, rules)
        with _URGENT_LOCK:
            if _URGENT:
                return None
            _BACKGROUND = True
        solver.node_limit = nodes
        try:
            value, played, best = solver.judge(
                pos, objective, action, out["pending"]["value"], most=4
            )
        except SearchLimitError:
            if solver.nodes < nodes:  # interrupted for a first review: again later
                return None
            del out["pending"]
            _summarise(out, rules, k + 1)
            return out
        finally:
            solver.node_limit = None
            with _URGENT_LOCK:  # before the solver is let go: no interrupt reaches another
                _BACKGROUND = False
        cost = value - played if pos.to_act % 2 == objective.team else played - value
        out["cards"][k]["cost"] = round(cost, 3)
        out["cards"][k]["best"] = [card_label(c) for c in best]
        out["seconds"] = round(out["seconds"] + time.perf_counter() - started, 3)
        if k:
            out["pending"] = {"cards": k, "value": value}
        else:
            del out["pending"]
        _summarise(out, rules, k)
        return out
