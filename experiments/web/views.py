"""What one seat's browser is sent: the only function that turns a table into wire data.

`seat_state(table, seat)` starts from the engine's `seat_view` (what a perfect-recall
player in that seat knows, RULES.md §2's hidden blind-nil hand included) and adds only
public facts: names, the running log, the last trick, the finished hands' scores. It
never reads another seat's hand (except under RULES.md §6 `open_hands`, where every hand
is shown by the rules), the stock of a two-player game, the game's seed, or a seat token
other than the viewer's own (which the viewer already holds). Tests check the wire data
against every hidden card (tests/web/test_web_views.py).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from experiments.table.words import (
    action_label,
    card_label,
    contract_label,
    hint_label,
    seat_title,
    sort_hand,
    team_name,
    team_seats,
    visible_hand,
)
from experiments.web.game import Table
from experiments.web.sheet import sheet_rows
from spades_env.cards import NUM_CARDS, SUIT_NAMES
from spades_env.observation import seat_view
from spades_env.state import PHASE_NAMES, PLAY
from spades_env.stock_draw import stock_left


def card(c: int) -> dict[str, Any]:
    """A card as the page draws it: its number, label, suit (0 spades .. 3 clubs, 4 joker)."""
    return {"id": int(c), "label": card_label(int(c)), "suit": int(c) // 13 if c < 52 else 4}


def _trick(trick) -> dict[str, Any] | None:
    if trick is None:
        return None
    return {
        "number": trick.number,
        "plays": [{"seat": s, "card": card(c)} for s, c in trick.plays],
        "winner": trick.winner,
    }


def sheet(table: Table) -> list[dict[str, Any]]:
    """The score sheet of the finished hands (`experiments.web.sheet`): public numbers
    only (never a record's deal or seed)."""
    return sheet_rows(table.rules, table.session.records)


def seat_state(table: Table, seat: int) -> dict[str, Any]:
    """Everything `seat`'s browser may know now, as JSON-ready data."""
    g, rules = table.game, table.rules
    v = seat_view(g.state, np.array([seat]))
    phase = int(v.phase[0])
    mine = not g.done and g.to_act == seat
    legal = g.legal_list() if mine else []
    hand = visible_hand(v)
    if phase == PLAY or not mine:
        hand_order = {c: i for i, c in enumerate(hand)}
        legal.sort(key=lambda a: hand_order.get(a, NUM_CARDS + a))
    players = []
    for s, info in enumerate(table.seats):
        players.append(
            {
                "seat": s,
                "title": seat_title(s),
                "kind": info.kind,
                "name": info.name if info.kind == "human" else info.label,
                "team": rules.team_of(s),
                "you": s == seat,
            }
        )
    table_cards = [int(x) for x in v.trick[0].tolist()[: rules.num_players]]
    state: dict[str, Any] = {
        "type": "state",
        "table": table.id,
        "seat": seat,
        "moves": table.moves,
        "rules": {
            "name": rules.name,
            "target": rules.target,
            "players": rules.num_players,
            "partnerships": rules.partnerships,
            "open_hands": rules.open_hands,
            "hand_size": rules.hand_size,
        },
        "players": players,
        "phase": PHASE_NAMES[phase],
        "to_act": -1 if g.done else int(g.to_act),
        "your_turn": mine,
        "dealer": int(v.dealer[0]),
        "leader": int(v.leader[0]),
        "hand": [card(c) for c in hand],
        "hand_hidden": bool(v.hand_hidden[0]),
        "legal": [
            {"action": int(a), "label": action_label(a), "text": hint_label(a)} for a in legal
        ],
        "bids": [int(b) for b in v.bids[0].tolist()],
        "blind": [bool(b) for b in v.blind[0].tolist()],
        "tricks_won": [int(t) for t in v.tricks_won[0].tolist()],
        "trick": [card(c) if c >= 0 else None for c in table_cards],
        "tricks_played": int(v.tricks_played[0]),
        "trump": SUIT_NAMES[int(v.trump[0])] if int(v.trump[0]) >= 0 else None,
        "broken": bool(v.broken[0]),
        "passed": [card(c) for c in card_list(int(v.passed[0]))],
        "received": [card(c) for c in card_list(int(v.received[0]))],
        "looking": card(int(v.looking[0])) if int(v.looking[0]) >= 0 else None,
        "stock_left": int(stock_left(g.state)[0]) if rules.draw else 0,
        # how many cards each seat holds now: public (the opponents' card backs)
        "cards_left": [
            (int(h) & ~int(g.state.played[0])).bit_count() for h in g.state.hands[0].tolist()
        ][: rules.num_players],
        "scores": [int(x) for x in v.scores[0].tolist()],
        "bags": [int(x) for x in v.bags[0].tolist()],
        "teams": [
            {
                "name": team_name(rules, k, seat),
                "seats": list(team_seats(rules, k)),
                "contract": contract_label(
                    [int(b) for b in v.bids[0].tolist()],
                    [bool(b) for b in v.blind[0].tolist()],
                    team_seats(rules, k),
                ),
            }
            for k in range(rules.num_teams)
        ],
        "hand_no": int(v.hand_no[0]),
        "last_trick": _trick(table.session.last_trick),
        "events": [e.text for e in table.events[-30:]],
        "sheet": sheet(table),
        "reviews": sorted(table.reviews),
        # reviews whose early cards are still being judged in points in the background
        "reviews_pending": sorted(h for h, r in table.reviews.items() if "pending" in r),
        "game_over": g.done,
        "winner": int(g.winner) if g.done else -1,
        "hint_agent": table.hint_name,
        # a seat whose agent failed: who, and what it did (the person chooses what to do)
        "failure": dict(table.failure) if table.failure is not None else None,
    }
    if rules.open_hands:  # RULES.md §6 open_hands: every hand is shown
        played = int(g.state.played[0])
        state["open_hands"] = [
            [card(c) for c in card_list(int(h) & ~played)] if s != seat else []
            for s, h in enumerate(g.state.hands[0].tolist())
        ]
    return state


def card_list(mask: int) -> list[int]:
    return [c for c in sort_hand(int(mask)) if c < NUM_CARDS]
