"""The words of the game at a table, shared by the terminal (`spades play`) and the
browser (`spades serve`): card and seat names, bids and contracts, how an action is
listed and described. Plain text only; the terminal's colours are `experiments.play.screen`'s.
"""

from __future__ import annotations

from dataclasses import dataclass

from spades_env.cards import (
    BLIND_NIL,
    CARD_RANK,
    CARD_SUIT,
    DRAW_DISCARD,
    DRAW_KEEP,
    NAME_TRUMP,
    NUM_CARDS,
    SEE_HAND,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    action_to_str,
    card_to_str,
    mask_to_cards,
)
from spades_env.engine import seat_name
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import BID, BLIND, DRAW, EXCHANGE, TRUMP

TEAM_NAMES = ("North–South", "East–West")


@dataclass
class Trick:
    """A finished (or, while `winner` is None, running) trick: (seat, card) in play order."""

    number: int  # 1-based within its hand
    plays: list[tuple[int, int]]
    winner: int | None = None


def card_label(card: int) -> str:
    """`T♥`, `Q♠`: the product's one notation (`spades_env.cards.card_to_str`)."""
    return card_to_str(card, unicode=True)


def sort_hand(mask: int) -> list[int]:
    """Rule text 000's order: spades first, then hearts, diamonds, clubs; high cards first."""
    return sorted(mask_to_cards(mask), key=lambda c: (int(CARD_SUIT[c]), -int(CARD_RANK[c])))


def visible_hand(v: SeatView) -> list[int]:
    """The seat's cards in screen order, less those already chosen to pass (RULES.md §2)."""
    mask = int(v.hand[0])
    if int(v.phase[0]) == EXCHANGE:
        mask &= ~int(v.passed[0])
    return sort_hand(mask)


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


def seat_title(seat: int) -> str:
    """The seat's name as a line may start with it: North .. West, Seat 4 (cutthroat_5)."""
    name = seat_name(seat)
    return name[:1].upper() + name[1:]


def team_seats(rules: Rules, team: int) -> tuple[int, ...]:
    """The seats of a team: (0, 2) and (1, 3) in partnerships (RULES.md §1), else one."""
    return tuple(s for s in range(rules.num_players) if rules.team_of(s) == team)


def team_name(rules: Rules, team: int, human: int) -> str:
    """North–South / East–West, or the player's seat with one-player teams (RULES.md §6)."""
    if rules.partnerships:
        return TEAM_NAMES[team]
    seat = team_seats(rules, team)[0]
    return f"{seat_title(seat)} (you)" if seat == human else seat_title(seat)


def action_label(action: int) -> str:
    """How a prompt lists the action, which is also how it may be typed."""
    if 0 <= action < NUM_CARDS:
        return card_label(action)
    return "see" if action == SEE_HAND else action_to_str(action)


def hint_label(action: int) -> str:
    if 0 <= action < NUM_CARDS:
        return f"play {card_label(action)}"
    if action == SEE_HAND:
        return "see your cards (no blind nil)"
    if action >= NAME_TRUMP:  # RULES.md §6 auction
        return f"name {SUIT_NAMES[action - NAME_TRUMP]} trump"
    if action == DRAW_KEEP:  # RULES.md §6 two_player
        return "keep the card you see"
    if action == DRAW_DISCARD:
        return "discard the card you see and take the next"
    return action_to_str(action) if action == BLIND_NIL else f"bid {action_to_str(action)}"


def describe(
    seat: int, phase: int, action: int, human: bool, looked: int = -1, taken: int = -1
) -> str:
    """One event line. A draw (RULES.md §6 two_player) names cards only to the drawer:
    `looked` is the card they looked at, `taken` the one that went to their hand."""
    who = "You" if human else seat_title(seat)
    if phase == DRAW:
        if not human:
            return f"{who} draws"
        if action == DRAW_KEEP:
            return f"You keep {card_label(looked)}"
        drop, take = card_label(looked), card_label(taken)
        return f"You discard {drop} and take the next card ({take})"
    if phase == BLIND:
        return f"{who}: blind nil!" if action == BLIND_NIL else f"{who}: no blind nil"
    if phase == BID:
        return f"{who} bid{'' if human else 's'} {action_to_str(action)}"
    if phase == EXCHANGE:
        return f"{who} pass{'' if human else 'es'} a card to partner"
    if phase == TRUMP:  # RULES.md §6 auction
        suit = action - NAME_TRUMP
        return f"{who} name{'' if human else 's'} {SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]} trump"
    return f"{who} play{'' if human else 's'} {card_label(action)}"
