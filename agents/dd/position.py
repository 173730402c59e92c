"""A Spades card-play position with every hand visible: what the double-dummy solver solves.

Cards are `suit * 13 + rank` and hands are 52-bit Python ints, as in `spades_env.cards`.
Only the standard 52-card deck and four seats are supported (RULES.md §1); the jokers
of the `jokers` preset are not.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import numpy.typing as npt

from spades_env.cards import SPADES, STANDARD_DECK, TWO_OF_CLUBS, mask_to_cards
from spades_env.core.rule_functions import breaks_trump, card_strength, legal_cards
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import PLAY, State

NUM_SEATS = 4
_DECK = int(STANDARD_DECK)


class PositionError(ValueError):
    """A position that is not a reachable card-play position of the standard game."""


@dataclass(frozen=True)
class Position:
    """A position in the play of a hand, every hand visible."""

    hands: tuple[int, ...]  # (4,) cards each seat still holds (52-bit masks)
    leader: int  # seat that led (or leads) the current trick
    trick: tuple[int, ...] = ()  # cards played to the current trick, in order from leader
    broken: bool = False  # RULES.md §3: a spade has been played this hand
    tricks_won: tuple[int, ...] = (0, 0, 0, 0)  # (4,) tricks taken so far per seat
    first_lead: int = -1  # a card that must be led now (RULES.md §3 first_lead), or -1

    def __post_init__(self) -> None:
        hands = tuple(int(h) for h in self.hands)
        object.__setattr__(self, "hands", hands)
        object.__setattr__(self, "trick", tuple(int(c) for c in self.trick))
        object.__setattr__(self, "tricks_won", tuple(int(t) for t in self.tricks_won))
        if len(hands) != NUM_SEATS or len(self.tricks_won) != NUM_SEATS:
            raise PositionError("a position has 4 hands and 4 trick counts (RULES.md §1)")
        if len(self.trick) >= NUM_SEATS:
            raise PositionError("the current trick holds at most 3 cards; resolve a full one")
        sizes = [h.bit_count() for h in hands]
        for j in range(NUM_SEATS):
            seat = (self.leader + j) % NUM_SEATS
            expect = sizes[self.leader] + (1 if self.trick and j >= len(self.trick) else 0)
            if sizes[seat] != expect:
                raise PositionError(
                    f"hand sizes {sizes} do not fit a trick of {len(self.trick)} cards "
                    f"led by seat {self.leader}"
                )
        union = 0
        for h in hands:
            if union & h or h & ~_DECK:
                raise PositionError("hands must be disjoint sets of standard-deck cards")
            union |= h
        for c in self.trick:
            if union >> c & 1:
                raise PositionError("a card on the table is also in a hand")

    # ------------------------------------------------------------------ queries
    @property
    def to_act(self) -> int:
        return (self.leader + len(self.trick)) % NUM_SEATS

    @property
    def lead_suit(self) -> int:
        return self.trick[0] // 13 if self.trick else -1

    @property
    def tricks_left(self) -> int:
        """Tricks still to be completed, the current one included."""
        return self.hands[self.leader].bit_count() + (1 if self.trick else 0)

    def legal_mask(self) -> int:
        """RULES.md §3 legality of the seat to act, as a card mask (the rules core's)."""
        h = self.hands[self.to_act]
        if not self.trick and self.first_lead >= 0:
            return h & (1 << self.first_lead)
        return int(legal_cards(h, len(self.trick), self.lead_suit, self.broken, SPADES, False))

    def legal_cards(self) -> list[int]:
        return mask_to_cards(self.legal_mask())

    def play(self, card: int) -> Position:
        """The position after the seat to act plays `card` (a full trick is resolved)."""
        card = int(card)
        if not self.legal_mask() >> card & 1:
            raise PositionError(f"card {card} is not legal for seat {self.to_act}")
        hands = list(self.hands)
        hands[self.to_act] ^= 1 << card
        trick = (*self.trick, card)
        broken = self.broken or bool(breaks_trump(card, SPADES))
        if len(trick) < NUM_SEATS:
            return replace(self, hands=tuple(hands), trick=trick, broken=broken, first_lead=-1)
        winner = self.trick_winner(trick)
        won = list(self.tricks_won)
        won[winner] += 1
        return Position(tuple(hands), winner, (), broken, tuple(won))

    def trick_winner(self, trick: tuple[int, ...] | None = None) -> int:
        """Seat winning the (complete or partial) current trick so far, -1 if empty
        (RULES.md §3 by the core's `card_strength`); `trick` in place of the current."""
        trick = self.trick if trick is None else trick
        if not trick:
            return -1
        lead = trick[0] // 13
        j = max(range(len(trick)), key=lambda i: card_strength(trick[i], lead, SPADES))
        return (self.leader + j) % NUM_SEATS

    # ------------------------------------------------------------------ constructors
    @classmethod
    def from_deal(
        cls, deal: npt.ArrayLike, leader: int, broken: bool = False, rules: Rules | None = None
    ) -> Position:
        """A fresh hand: (4,) uint64 masks as dealt, `leader` to lead the first trick."""
        hands = tuple(int(h) for h in np.asarray(deal, dtype=np.uint64))
        first = -1
        if rules is not None:
            check_rules(rules)
        if rules is not None and rules.first_lead == "two_of_clubs":
            first = TWO_OF_CLUBS  # RULES.md §3: the holder of 2C must lead it
            leader = next(s for s in range(NUM_SEATS) if hands[s] >> TWO_OF_CLUBS & 1)
        return cls(hands, leader, (), broken, (0, 0, 0, 0), first)

    @classmethod
    def from_state(cls, state: State, game: int = 0) -> Position:
        """Game `game` of an engine state in the PLAY phase."""
        if int(state.phase[game]) != PLAY:
            raise PositionError("the double-dummy solver needs a game in the PLAY phase")
        played = int(state.played[game])
        hands = tuple(int(h) & ~played for h in state.hands[game])
        return cls._from_fields(
            state.rules,
            hands,
            int(state.leader[game]),
            state.trick[game].tolist(),
            int(state.trick_size[game]),
            bool(state.broken[game]),
            state.tricks_won[game].tolist(),
            int(state.tricks_played[game]),
        )

    @classmethod
    def from_view(cls, view: SeatView, world: npt.ArrayLike, game: int = 0) -> Position:
        """A sampled world ((4,) uint64 hands now, `agents.montecarlo.sampling`) of a seat's
        view."""
        return cls._from_fields(
            view.rules,
            tuple(int(h) for h in np.asarray(world, dtype=np.uint64)),
            int(view.leader[game]),
            view.trick[game].tolist(),
            int(view.trick_size[game]),
            bool(view.broken[game]),
            view.tricks_won[game].tolist(),
            int(view.tricks_played[game]),
        )

    @classmethod
    def _from_fields(cls, rules, hands, leader, trick_by_seat, size, broken, won, played):
        check_rules(rules)
        trick = tuple(trick_by_seat[(leader + j) % NUM_SEATS] for j in range(size))
        first = -1
        if rules.first_lead == "two_of_clubs" and played == 0 and size == 0:
            first = TWO_OF_CLUBS
        return cls(hands, leader, trick, broken, tuple(won), first)


def check_rules(rules: Rules) -> None:
    """The solver plays RULES.md §1-§3: four seats in two partnerships, 52 cards."""
    if (
        rules.num_players != NUM_SEATS
        or not rules.partnerships
        or rules.deck != "standard"
        or rules.trump != "spades"
    ):
        raise PositionError(
            f"preset {rules.name!r}: the double-dummy solver needs 4 seats in partnerships, "
            "the standard 52-card deck and spades trump"
        )
