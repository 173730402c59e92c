"""What `spades play` shows: the table, the hand, the score sheet, as rich renderables.

Pure functions of the game and of what the human's seat knows (`seat_view`): no bot's
cards are ever drawn. The hand is sorted as seed 000 recommends, spades first and the
high cards first within each suit, and its order is the one the card numbers refer to.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from spades_env.cards import (
    BIG_JOKER,
    CARD_RANK,
    CARD_SUIT,
    LITTLE_JOKER,
    NUM_RANKS,
    SUIT_SYMBOLS,
    mask_to_cards,
)
from spades_env.engine import seat_name
from spades_env.observation import SeatView
from spades_env.state import DONE, EXCHANGE, PLAY

#: four-colour deck, readable on dark and light terminals
SUIT_STYLES = ("bold", "bold red", "bold blue", "bold green")
TEAM_NAMES = ("North–South", "East–West")
_RANKS = ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K", "A")


@dataclass
class Trick:
    """A finished (or, while `winner` is None, running) trick: (seat, card) in play order."""

    number: int  # 1-based within its hand
    plays: list[tuple[int, int]]
    winner: int | None = None


# ----------------------------------------------------------------------------- cards
def card_label(card: int) -> str:
    """`10♥`, `Q♠`: the rank as people write it and a unicode suit."""
    if card == LITTLE_JOKER:
        return "LJ"
    if card == BIG_JOKER:
        return "BJ"
    return _RANKS[card % NUM_RANKS] + SUIT_SYMBOLS[card // NUM_RANKS]


def card_text(card: int, dim: bool = False) -> Text:
    style = SUIT_STYLES[int(CARD_SUIT[card])]
    return Text(card_label(card), style=f"{style} dim" if dim else style)


def sort_hand(mask: int) -> list[int]:
    """Seed 000's order: spades first, then hearts, diamonds, clubs; high cards first."""
    return sorted(mask_to_cards(mask), key=lambda c: (int(CARD_SUIT[c]), -int(CARD_RANK[c])))


def visible_hand(v: SeatView) -> list[int]:
    """The seat's cards in screen order, less those already chosen to pass (RULES.md §2)."""
    mask = int(v.hand[0])
    if int(v.phase[0]) == EXCHANGE:
        mask &= ~int(v.passed[0])
    return sort_hand(mask)


def hand_text(cards: list[int], legal: set[int] | None) -> Text:
    """The hand with its card numbers; cards that may not be played now are dimmed."""
    out = Text()
    suit = None
    for i, card in enumerate(cards, 1):
        s = int(CARD_SUIT[card])
        if suit is not None:
            out.append("   " if s != suit else " ")
        suit = s
        dim = legal is not None and card not in legal
        out.append(f"{i}:", style="dim")
        out.append_text(card_text(card, dim))
    return out


def bid_label(bid: int, blind: bool) -> str:
    if bid < 0:
        return "–"
    if bid == 0:
        return "blind nil" if blind else "nil"
    return str(bid)


def contract_label(bids: list[int], blind: list[bool], seats: tuple[int, ...]) -> str:
    """A team's contract (the sum of its non-nil bids, RULES.md §2) and its parts."""
    if any(bids[s] < 0 for s in seats):
        return "–"
    total = sum(bids[s] for s in seats if bids[s] > 0)
    parts = [bid_label(bids[s], blind[s]) for s in seats]
    return f"{total} ({' + '.join(parts)})"


# ----------------------------------------------------------------------------- table
def _seat_cell(v: SeatView, seat: int, players: list[str], human: int) -> Text:
    g = 0
    name = "you" if seat == human else players[seat]
    out = Text()
    if int(v.to_act[g]) == seat and int(v.phase[g]) != DONE:
        out.append("▶ ", style="bold yellow")
    out.append(f"{seat_name(seat)}", style="bold")
    out.append(f" · {name}")
    if int(v.dealer[g]) == seat:
        out.append(" (dealer)", style="italic")
    bid = bid_label(int(v.bids[g, seat]), bool(v.blind[g, seat]))
    out.append(f"\nbid {bid} · won {int(v.tricks_won[g, seat])}\n")
    card = int(v.trick[g, seat])
    out.append_text(card_text(card) if card >= 0 else Text("·", style="dim"))
    return out


def table_grid(v: SeatView, players: list[str], human: int) -> Table:
    """The four seats as a compass, each with its bid, tricks won and card on the table."""
    grid = Table.grid(padding=(0, 2))
    for _ in range(3):
        grid.add_column(justify="center", min_width=24)
    cells = {s: _seat_cell(v, s, players, human) for s in range(4)}
    g = 0
    lead = int(v.leader[g]) if int(v.trick_size[g]) > 0 else int(v.to_act[g])
    mid = Text(f"trick {int(v.tricks_played[g]) + 1} of 13", style="dim")
    if int(v.phase[g]) == PLAY:
        mid.append(f"\n{seat_name(lead)} leads", style="dim")
    mid.append("\nspades broken" if bool(v.broken[g]) else "\nspades not broken", style="dim")
    grid.add_row("", cells[0], "")
    grid.add_row(cells[3], mid, cells[1])
    grid.add_row("", cells[2], "")
    return grid


def team_table(v: SeatView) -> Table:
    """Per team: score, bags, contract, tricks so far."""
    g = 0
    bids, blind = v.bids[g].tolist(), v.blind[g].tolist()
    t = Table(box=box.SIMPLE_HEAD)
    for col in ("Team", "Score", "Bags", "Contract", "Tricks"):
        t.add_column(col, justify="left" if col in ("Team", "Contract") else "right")
    for team, name in enumerate(TEAM_NAMES):
        seats = (team, team + 2)
        t.add_row(
            name,
            str(int(v.scores[g, team])),
            str(int(v.bags[g, team])),
            contract_label(bids, blind, seats),
            str(sum(int(v.tricks_won[g, s]) for s in seats)),
        )
    return t


def trick_text(trick: Trick | None) -> Text:
    if trick is None:
        return Text("no trick played yet", style="dim")
    out = Text(f"trick {trick.number}: ")
    for i, (seat, card) in enumerate(trick.plays):
        out.append(", " if i else "")
        out.append(f"{seat_name(seat)} ")
        out.append_text(card_text(card))
    if trick.winner is not None:
        out.append(f" → won by {seat_name(trick.winner)}", style="bold")
    return out


def screen(
    v: SeatView,
    players: list[str],
    human: int,
    header: str,
    last: Trick | None,
    events: list[str],
) -> RenderableType:
    """The whole screen at the human's turn."""
    g = 0
    parts: list[RenderableType] = [Text(header, style="bold cyan")]
    if events:
        parts.append(Text("\n".join(events), style="dim"))
    parts += [team_table(v), table_grid(v, players, human)]
    parts.append(Text.assemble("last ", trick_text(last)))
    hand = Text("Your hand: ", style="bold")
    if bool(v.hand_hidden[g]):
        hand.append("face down: decide on blind nil before you look", style="italic")
    else:
        legal = set(mask_to_cards(int(v.legal[g]))) if int(v.phase[g]) == PLAY else None
        hand.append_text(hand_text(visible_hand(v), legal))
    parts.append(hand)
    for label, mask in (("Passed to partner: ", v.passed[g]), ("From partner: ", v.received[g])):
        if int(mask) and int(v.tricks_played[g]) == 0:
            cards = Text(label, style="bold")
            for card in sort_hand(int(mask)):
                cards.append_text(card_text(card)).append(" ")
            parts.append(cards)
    return Group(*parts)


# ----------------------------------------------------------------------------- sheets
def _team_bid(rec: dict[str, Any], team: int) -> str:
    seats = (team, team + 2)
    return contract_label(rec["bids"], rec["blind"], seats)


def score_sheet(records: list[dict[str, Any]]) -> Table:
    """Seed 000's score sheet ("Ett räkneexempel med tre givar"), one row per hand and team.

    Bid is the team's contract with its two bids; Points is the hand's score with any
    bag penalty included; Bags and Total are running counts after the hand.
    """
    t = Table(title="Score sheet", box=box.SIMPLE_HEAVY)
    for col in ("Hand", "Team", "Bid", "Tricks", "Points", "Bags", "Total"):
        t.add_column(col, justify="left" if col in ("Team", "Bid") else "right")
    for rec in records:
        for team, name in enumerate(TEAM_NAMES):
            pts = rec["points"][team] - rec["penalty"][team]
            bags = str(rec["bags"][team])
            if rec["penalty"][team]:
                bags += f" (-{rec['penalty'][team]})"
            t.add_row(
                str(rec["hand_no"] + 1),
                name,
                _team_bid(rec, team),
                str(rec["tricks"][team] + rec["tricks"][team + 2]),
                str(pts),
                bags,
                str(rec["scores"][team]),
                end_section=team == 1,
            )
    if not records:
        t.caption = "no hand finished yet"
    return t


def hand_summary(rec: dict[str, Any], players: list[str], human: int) -> Table:
    """After a hand: each seat's bid and tricks, each team's points."""
    t = Table(title=f"Hand {rec['hand_no'] + 1} is over", box=box.SIMPLE_HEAVY)
    for col in ("Seat", "Bid", "Tricks", "Team points", "Total"):
        t.add_column(col, justify="left" if col == "Seat" else "right")
    for team in range(2):
        for k, seat in enumerate((team, team + 2)):
            who = "you" if seat == human else players[seat]
            pts = rec["points"][team] - rec["penalty"][team]
            note = f" (bags -{rec['penalty'][team]})" if rec["penalty"][team] else ""
            t.add_row(
                f"{seat_name(seat)} · {who}",
                bid_label(rec["bids"][seat], rec["blind"][seat]),
                str(rec["tricks"][seat]),
                f"{pts}{note}" if k == 0 else "",
                str(rec["scores"][team]) if k == 0 else "",
                end_section=k == 1,
            )
    return t
