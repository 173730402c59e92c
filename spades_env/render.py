"""Text rendering of a hand in progress and of a finished hand record (unicode suits).

Two views: the whole table (every hand face up, as a spectator sees it; the default of
`render_state` and `render_record`), and one seat's view (`visible=` the seats whose
cards the viewer may see: a seat's own hand, unless it has not looked at it yet for
blind nil, RULES.md §2; every hand under RULES.md §6 open_hands). A seat's full view in
English or JSON, with the play history and its legal actions, is `spades_env.text`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

import numpy as np

from spades_env.cards import (
    SUIT_NAMES,
    SUIT_SYMBOLS,
    card_to_str,
    cards_to_mask,
    hand_to_str,
    str_to_card,
)
from spades_env.engine import seat_name
from spades_env.observation import hand_hidden
from spades_env.state import PHASE_NAMES, State, one_index


def _bid_str(bid: int, blind: bool) -> str:
    if bid < 0:
        return "-"
    if bid == 0:
        return "blind nil" if blind else "nil"
    return str(bid)


def trump_text(state: State, g: int) -> str:
    """RULES.md §3 spades broken or not; §6 auction: the named trump (or not yet named).
    The text render and the table picture (table_image.py) both show it."""
    trump = int(state.trump[g])
    broken = "broken" if state.broken[g] else "not broken"
    if state.rules.trump == "spades":
        return f"spades {broken}"
    if trump < 0:
        return "trump not named yet"
    return f"trump {SUIT_SYMBOLS[trump]} {SUIT_NAMES[trump]} ({broken})"


def render_state(
    state: State,
    game: int = 0,
    show_all: bool = True,
    seat: int | None = None,
    *,
    visible: Collection[int] | None = None,
) -> str:
    """A hand in progress. By default the whole table; `visible` (seats) is a seat's view:
    only those seats' cards (all under open_hands), a hand not looked at yet for blind
    nil hidden too. `show_all=False` with `seat` is `visible=[seat]`."""
    g = one_index(game, state.batch_size, "game")
    rules = state.rules
    if not show_all and visible is None:
        visible = [] if seat is None else [seat]
    if visible is not None:
        shown = set(range(rules.num_players)) if rules.open_hands else set(visible)
        seats = np.arange(rules.num_players)
        unlooked = hand_hidden(state.take([g] * rules.num_players), seats)
        visible = {s for s in shown if not unlooked[s]}
    lines = [
        f"hand {int(state.hand_no[g]) + 1}, dealer {seat_name(int(state.dealer[g]))}, "
        f"phase {PHASE_NAMES[int(state.phase[g])]}, {trump_text(state, g)}"
    ]
    for s in range(rules.num_players):
        marker = ">" if s == state.to_act[g] and state.phase[g] != 4 else " "
        if visible is None or s in visible:
            cards = hand_to_str(int(state.hands[g, s]) & ~int(state.played[g]))
        else:
            cards = "(hidden)"
        bid = _bid_str(int(state.bids[g, s]), bool(state.blind[g, s]))
        lines.append(
            f"{marker}{seat_name(s):<6} bid {bid:<9} "
            f"tricks {int(state.tricks_won[g, s]):>2}  {cards}"
        )
    table = [
        f"{seat_name(s)} {card_to_str(int(state.trick[g, s]), unicode=True)}"
        for s in range(rules.num_players)
        if state.trick[g, s] >= 0
    ]
    lines.append("trick: " + (", ".join(table) if table else "(empty)"))
    teams = ", ".join(
        f"team {t}: {int(state.scores[g, t])} ({int(state.bags[g, t])} bags)"
        for t in range(rules.num_teams)
    )
    lines.append("score: " + teams)
    return "\n".join(lines)


def render_record(record: dict[str, Any], visible: Collection[int] | None = None) -> str:
    """A finished hand: deal, bids, the tricks in order, and the score. With `visible`
    (a seat's view) the deals of the other seats are hidden (RULES.md §6 open_hands:
    none; the exchange shows only the passes of those seats)."""
    if visible is not None and record.get("rules", {}).get("open_hands"):
        visible = None
    n = len(record["deal"])
    lines = [f"hand {record['hand_no'] + 1}, dealer {seat_name(record['dealer'])}"]
    if "trump" in record:  # RULES.md §6 auction: who named which suit
        namer = next(s for s, a in record["actions"] if a.startswith("trump"))
        suit = SUIT_NAMES.index(record["trump"])
        lines[0] += f", trump {SUIT_SYMBOLS[suit]} {record['trump']} (named by {seat_name(namer)})"
    for s, hand in enumerate(record["deal"]):
        mask = cards_to_mask([str_to_card(c) for c in hand])
        bid = _bid_str(record["bids"][s], record["blind"][s])
        cards = hand_to_str(mask) if visible is None or s in visible else "(hidden)"
        lines.append(f"  {seat_name(s):<6} bid {bid:<9} took {record['tricks'][s]:>2}  {cards}")
    plays = [(s, a) for s, a in record["actions"] if len(a) == 2 and a[1] in "SHDCJ"]
    passes = len(plays) - n * len(record["deal"][0])
    if passes > 0:
        shown = ", ".join(
            f"{seat_name(s)} {a}"
            for s, a in plays[:passes]
            if visible is None or s in visible or (s + n // 2) % n in visible
        )
        lines.append(f"  exchange: {shown or '(hidden)'}")
        plays = plays[passes:]
    for t in range(0, len(plays), n):
        trick = plays[t : t + n]
        shown = "  ".join(
            f"{seat_name(s)[0]}:{card_to_str(str_to_card(a), unicode=True)}" for s, a in trick
        )
        lines.append(f"  trick {t // n + 1:>2}: {shown}")
    for team, pts in enumerate(record["points"]):
        pen = record["penalty"][team]
        pen_s = f", bag penalty -{pen}" if pen else ""
        lines.append(
            f"  team {team}: {pts:+d} (bags +{record['bags_gained'][team]}{pen_s}) "
            f"-> {record['scores'][team]} ({record['bags'][team]} bags)"
        )
    return "\n".join(lines)
