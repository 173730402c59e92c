"""What `spades play` shows: the table, the hand, the score sheet, as rich renderables.

Pure functions of the game and of what the human's seat knows (`seat_view`): no bot's
cards are ever drawn. The hand is sorted as rule text 000 recommends, spades first and the
high cards first within each suit, and its order is the one the card numbers refer to.
Any table of RULES.md §6: four seats as a compass, two, three or five as a row per seat
in clockwise (play) order; scores by partnership, or by player where every player is a
one-player team.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from experiments.table.words import (
    Trick,
    bid_label,
    card_label,
    contract_label,
    seat_title,
    sort_hand,
    team_name,
    team_seats,
    visible_hand,
)
from spades_env.cards import (
    CARD_SUIT,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    mask_to_cards,
)
from spades_env.observation import SeatView
from spades_env.state import DONE, DRAW, PLAY

#: four-colour deck, readable on dark and light terminals
SUIT_STYLES = ("bold", "bold red", "bold blue", "bold green")


# ----------------------------------------------------------------------------- cards
def card_text(card: int, dim: bool = False) -> Text:
    style = SUIT_STYLES[int(CARD_SUIT[card])]
    return Text(card_label(card), style=f"{style} dim" if dim else style)


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


# ----------------------------------------------------------------------------- seats
# ----------------------------------------------------------------------------- table
def _seat_head(v: SeatView, seat: int, players: list[str], human: int) -> Text:
    """`▶ South · you (dealer)`: the seat to act, the seat, who sits there, the dealer."""
    g = 0
    out = Text()
    if int(v.to_act[g]) == seat and int(v.phase[g]) != DONE:
        out.append("▶ ", style="bold yellow")
    out.append(seat_title(seat), style="bold")
    out.append(f" · {'you' if seat == human else players[seat]}")
    if int(v.dealer[g]) == seat:
        out.append(" (dealer)", style="italic")
    return out


def _table_card(v: SeatView, seat: int) -> Text:
    card = int(v.trick[0, seat])
    return card_text(card) if card >= 0 else Text("·", style="dim")


def _seat_cell(v: SeatView, seat: int, players: list[str], human: int) -> Text:
    g = 0
    out = _seat_head(v, seat, players, human)
    bid = bid_label(int(v.bids[g, seat]), bool(v.blind[g, seat]))
    out.append(f"\nbid {bid} · won {int(v.tricks_won[g, seat])}\n")
    out.append_text(_table_card(v, seat))
    return out


def trump_label(v: SeatView) -> str:
    """Spades broken or not; RULES.md §6 auction: the named trump suit (or not yet)."""
    g = 0
    broken = "broken" if bool(v.broken[g]) else "not broken"
    if v.rules.trump == "spades":
        return f"spades {broken}"
    trump = int(v.trump[g])
    if trump < 0:
        return "trump not named yet"
    return f"trump {SUIT_SYMBOLS[trump]} {SUIT_NAMES[trump]}, {broken}"


def _status(v: SeatView, stock_left: int) -> Text:
    """Where the hand is: the trick of `hand_size` (RULES.md §1, §6), or the draw."""
    g = 0
    if int(v.phase[g]) == DRAW:  # RULES.md §6 two_player
        out = Text(f"drawing: {stock_left} cards left in the stock", style="dim")
    else:
        out = Text(f"trick {int(v.tricks_played[g]) + 1} of {v.rules.hand_size}", style="dim")
    if int(v.phase[g]) == PLAY:
        lead = int(v.leader[g]) if int(v.trick_size[g]) > 0 else int(v.to_act[g])
        out.append(f"\n{seat_title(lead)} leads", style="dim")
    if int(v.phase[g]) != DRAW:
        out.append(f"\n{trump_label(v)}", style="dim")
    return out


def table_grid(v: SeatView, players: list[str], human: int, stock_left: int = 0) -> RenderableType:
    """The seats, each with its bid, tricks won and card on the table: four as a compass,
    any other number as a row per seat in clockwise (play) order."""
    if v.rules.num_players != 4:
        return _seat_rows(v, players, human, stock_left)
    grid = Table.grid(padding=(0, 2))
    for _ in range(3):
        grid.add_column(justify="center", min_width=24)
    cells = {s: _seat_cell(v, s, players, human) for s in range(4)}
    grid.add_row("", cells[0], "")
    grid.add_row(cells[3], _status(v, stock_left), cells[1])
    grid.add_row("", cells[2], "")
    return grid


def _seat_rows(v: SeatView, players: list[str], human: int, stock_left: int) -> Group:
    g = 0
    t = Table(box=box.SIMPLE_HEAD)
    for col in ("Seat", "Bid", "Won", "Table"):
        t.add_column(col, justify="left" if col == "Seat" else "right")
    for seat in range(v.rules.num_players):
        bid = bid_label(int(v.bids[g, seat]), bool(v.blind[g, seat]))
        t.add_row(
            _seat_head(v, seat, players, human),
            bid,
            str(int(v.tricks_won[g, seat])),
            _table_card(v, seat),
        )
    return Group(t, _status(v, stock_left))


def team_table(v: SeatView, human: int = -1) -> Table:
    """Per team: score, bags, contract, tricks so far; by player with one-player teams
    (no bags column under family scoring, which has none: RULES.md §6)."""
    g, rules = 0, v.rules
    bids, blind = v.bids[g].tolist(), v.blind[g].tolist()
    bags = rules.scoring != "family"
    t = Table(box=box.SIMPLE_HEAD)
    first, contract = ("Team", "Contract") if rules.partnerships else ("Player", "Bid")
    for col in (first, "Score", "Bags", contract, "Tricks"):
        if col != "Bags" or bags:
            t.add_column(col, justify="left" if col in (first, contract) else "right")
    for team in range(rules.num_teams):
        seats = team_seats(rules, team)
        row = [team_name(rules, team, human), str(int(v.scores[g, team]))]
        if bags:
            row.append(str(int(v.bags[g, team])))
        if rules.partnerships:
            row.append(contract_label(bids, blind, seats))
        else:
            row.append(bid_label(bids[seats[0]], blind[seats[0]]))
        row.append(str(sum(int(v.tricks_won[g, s]) for s in seats)))
        t.add_row(*row)
    return t


def trick_text(trick: Trick | None) -> Text:
    if trick is None:
        return Text("no trick played yet", style="dim")
    out = Text(f"trick {trick.number}: ")
    for i, (seat, card) in enumerate(trick.plays):
        out.append(", " if i else "")
        out.append(f"{seat_title(seat)} ")
        out.append_text(card_text(card))
    if trick.winner is not None:
        out.append(f" → won by {seat_title(trick.winner)}", style="bold")
    return out


def _hand_line(v: SeatView) -> Text:
    g = 0
    hand = Text("Your hand: ", style="bold")
    if bool(v.hand_hidden[g]):
        hand.append("face down: decide on blind nil before you look", style="italic")
    elif int(v.hand[g]) == 0 and int(v.phase[g]) == DRAW:
        hand.append("no cards yet", style="italic")
    else:
        legal = set(mask_to_cards(int(v.legal[g]))) if int(v.phase[g]) == PLAY else None
        hand.append_text(hand_text(visible_hand(v), legal))
    return hand


def screen(
    v: SeatView,
    players: list[str],
    human: int,
    header: str,
    last: Trick | None,
    events: list[str],
    stock_left: int = 0,
) -> RenderableType:
    """The whole screen at the human's turn (`stock_left`: RULES.md §6 two_player's
    stock, public, shown while drawing)."""
    g = 0
    parts: list[RenderableType] = [Text(header, style="bold cyan")]
    if events:
        parts.append(Text("\n".join(events), style="dim"))
    parts += [team_table(v, human), table_grid(v, players, human, stock_left)]
    parts.append(Text.assemble("last ", trick_text(last)))
    if int(v.looking[g]) >= 0:  # RULES.md §6 two_player: the card only the drawer sees
        top = Text("On top of the stock, for you: ", style="bold")
        parts.append(top.append_text(card_text(int(v.looking[g]))))
    parts.append(_hand_line(v))
    for label, mask in (("Passed to partner: ", v.passed[g]), ("From partner: ", v.received[g])):
        if int(mask) and int(v.tricks_played[g]) == 0:
            cards = Text(label, style="bold")
            for card in sort_hand(int(mask)):
                cards.append_text(card_text(card)).append(" ")
            parts.append(cards)
    return Group(*parts)
