"""What one seat can work out about one game: card counting on plain Python ints.

`Table.from_view(view, i)` turns row `i` of a batched `SeatView` into a small per-game
object whose hands are Python `int` bitmasks (bit `card` set; see `spades_env.cards`).
Python ints make the per-card questions a rule-based player asks cheap: which cards are
still out (`unseen`), who may hold them (`voids`), is a card the master of its suit, who
is winning the trick and can a later player still beat it.

Everything here is built from the seat's own view only: its hand, the cards played and
who played them, the voids players have shown, the bids. No hidden card is ever read.
Seed 000 "Räkna spadern: 13 kort" (count the spades and the cards gone) is the habit this
module gives the agent.

The trump is `Table.trump`: spades, or in RULES.md §6 auction the named suit (-1 while it
is not named yet, during the bidding); every question about trumps reads it.
"""

from __future__ import annotations

from dataclasses import dataclass

from spades_env.auction import TRUMP_STRENGTH
from spades_env.cards import CARD_SUIT, NUM_CARDS, NUM_SUITS, SPADES, SUIT_MASK, SUIT_NAMES
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import deck_mask

#: Python-int versions of the card tables: cheaper than numpy scalars in a per-card loop.
SUIT_BITS: list[int] = [int(m) for m in SUIT_MASK]
SUIT_OF: list[int] = [int(s) for s in CARD_SUIT]
#: [trump][card][lead suit] trick strength (RULES.md §3; §6 auction: any trump suit)
STRENGTH_OF: list[list[list[int]]] = TRUMP_STRENGTH.astype(int).tolist()


def cards(mask: int) -> list[int]:
    """Cards of a mask, lowest bit first (within a suit: lowest rank first)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def lowest(mask: int) -> int:
    """The lowest card of a non-empty mask (within one suit: the lowest rank)."""
    return (mask & -mask).bit_length() - 1


def highest(mask: int) -> int:
    """The highest card of a non-empty mask (within one suit: the highest rank)."""
    return mask.bit_length() - 1


def above(card: int) -> int:
    """Mask of the cards of `card`'s suit that rank above it (jokers sit above A♠)."""
    return SUIT_BITS[SUIT_OF[card]] & ~((2 << card) - 1)


def below(card: int) -> int:
    """Mask of the cards of `card`'s suit that rank below it."""
    return SUIT_BITS[SUIT_OF[card]] & ((1 << card) - 1)


def beats(card: int, best: int, lead: int, trump: int = SPADES) -> bool:
    """RULES.md §3: does `card` beat `best` in a trick led in suit `lead`?"""
    strength = STRENGTH_OF[trump]
    return strength[card][lead] > strength[best][lead]


@dataclass
class Table:
    """One game as seen from one seat, with Python ints (see the module docstring)."""

    rules: Rules
    seat: int
    hand: int  # my cards now
    legal: int  # legal-action bits of this phase (engine.PHASE_BASE)
    phase: int
    bids: list[int]  # per seat, -1 = not yet, 0 = nil
    blind: list[bool]
    tricks_won: list[int]
    trick: list[int]  # card per seat on the table, -1 = none
    leader: int
    trick_size: int
    lead_suit: int
    tricks_played: int
    played: int  # every card played this hand, the table included
    voids: list[int]  # bit s: seat has shown no suit s
    broken: bool
    scores: list[int]  # per team
    bags: list[int]  # per team
    dealer: int
    unseen: int  # cards in the other three hands (deck - played - mine)
    looking: int = -1  # RULES.md §6 two_player: the stock's top card I decide on, else -1
    trump: int = SPADES  # RULES.md §6 auction: the named suit, -1 before it is named

    @classmethod
    def from_view(cls, view: SeatView, i: int) -> Table:
        """Row `i` of a batched view (slow-ish; `rows_from_view` converts a whole batch)."""
        return rows_from_view(view)[i]

    @property
    def trump_word(self) -> str:
        """The trump suit in reasons: "spade", "heart", ... ("trump" before it is named)."""
        return SUIT_NAMES[self.trump][:-1] if self.trump >= 0 else "trump"

    # ------------------------------------------------------------------ seats
    @property
    def players(self) -> int:
        return self.rules.num_players

    @property
    def has_partner(self) -> bool:
        """RULES.md §6: the one-player-team presets (family, cutthroat) have no partner."""
        return self.rules.partnerships

    @property
    def partner(self) -> int:
        """The partner's seat; without partnerships (RULES.md §6) my own seat, so code that
        reads the partner's bid or cards sees nothing it could count on twice."""
        if not self.has_partner:
            return self.seat
        return (self.seat + self.players // 2) % self.players

    @property
    def team(self) -> int:
        return self.seat % self.rules.num_teams

    def opponents(self) -> tuple[int, ...]:
        """Every seat of another team (RULES.md §6: all other seats without partners)."""
        t = self.rules.num_teams
        return tuple(s for s in range(self.players) if s % t != self.team)

    def later_seats(self) -> list[int]:
        """Seats still to play to the current trick after me, in order."""
        left = self.players - self.trick_size - 1
        return [(self.seat + k) % self.players for k in range(1, left + 1)]

    def is_nil(self, seat: int) -> bool:
        """Seat bid nil (or blind nil) and has taken no trick yet: the nil still stands."""
        return self.bids[seat] == 0 and self.tricks_won[seat] == 0

    # ------------------------------------------------------------------ counting
    @property
    def remaining(self) -> int:
        """Tricks not yet completed, the current one included."""
        return self.rules.hand_size - self.tricks_played

    def team_need(self, team: int) -> int:
        """Tricks the team still needs for its contract (<= 0: made; RULES.md §4)."""
        seats = [s for s in range(self.players) if s % self.rules.num_teams == team]
        contract = sum(max(self.bids[s], 0) for s in seats)
        counting = self.rules.nil_tricks == "count"
        # RULES.md §4 nil_tricks=bags: a nil bidder's tricks do not count for the contract.
        taken = sum(self.tricks_won[s] for s in seats if counting or self.bids[s] != 0)
        return contract - taken

    def can_hold(self, seat: int) -> int:
        """Unseen cards `seat` may hold: none of a suit it has shown void in."""
        mask = self.unseen
        for s in range(NUM_SUITS):
            if self.voids[seat] >> s & 1:
                mask &= ~SUIT_BITS[s]
        return mask

    def spades_out(self) -> int:
        """Seed 000 "Räkna spadern": trumps (spades unless named) still in the other hands."""
        return (self.unseen & SUIT_BITS[self.trump]).bit_count()

    def is_master(self, card: int) -> bool:
        """No unseen card of its suit ranks higher: it wins its suit (if not trumped)."""
        return self.unseen & above(card) == 0

    def may_ruff(self, seat: int, suit: int) -> bool:
        """Might `seat` trump a lead of `suit`? Shown void, or the suit is nearly gone."""
        trump = self.trump
        if suit == trump or self.can_hold(seat) & SUIT_BITS[trump] == 0:
            return False
        if self.voids[seat] >> suit & 1:
            return True
        # Seed 000 "Räkna spadern": with at most one card of the suit left among the three
        # other hands, a player is likely out of it.
        return (self.unseen & SUIT_BITS[suit]).bit_count() <= 1

    # ------------------------------------------------------------------ the trick
    def winner(self) -> tuple[int, int]:
        """(seat, card) winning the current trick so far; (-1, -1) before the lead."""
        best_seat, best = -1, -1
        for k in range(self.trick_size):
            s = (self.leader + k) % self.players
            c = self.trick[s]
            if best < 0 or beats(c, best, self.lead_suit, self.trump):
                best_seat, best = s, c
        return best_seat, best

    def can_beat_later(self, seat: int, card: int, lead: int) -> bool:
        """Could `seat`, still to play, beat `card` in a trick led in `lead`?"""
        hold, trump = self.can_hold(seat), self.trump
        if SUIT_OF[card] == lead and lead != trump:
            if hold & above(card):
                return True
            return self.may_ruff(seat, lead)
        if SUIT_OF[card] == trump:
            higher = hold & above(card)
            if not higher:
                return False
            return lead == trump or self.may_ruff(seat, lead)
        return False  # a discard never wins

    def sure_win(self, card: int, seats: list[int] | None = None) -> bool:
        """`card` beats the trick now and no opponent still to play can beat it."""
        lead = SUIT_OF[card] if self.trick_size == 0 else self.lead_suit
        _, best = self.winner()
        if best >= 0 and not beats(card, best, lead, self.trump):
            return False
        later = self.later_seats() if seats is None else seats
        return not any(self.can_beat_later(s, card, lead) for s in later if s in self.opponents())

    def winning(self, legal: list[int]) -> list[int]:
        """The legal cards that beat the current winner (all of them when leading)."""
        _, best = self.winner()
        if best < 0:
            return list(legal)
        return [c for c in legal if beats(c, best, self.lead_suit, self.trump)]


def rows_from_view(view: SeatView) -> list[Table]:
    """Every game of a batched view as a `Table` (one `.tolist()` per field)."""
    rules = view.rules
    deck = int(deck_mask(rules))
    hand = view.hand.tolist()
    played = view.played.tolist()
    looking = view.looking.tolist()
    # RULES.md §6 two_player: cards I looked at and discarded are in nobody's hand.
    seen = view.seen.tolist()
    cols = {
        "seat": view.seat.tolist(),
        "legal": view.legal.tolist(),
        "phase": view.phase.tolist(),
        "bids": view.bids.tolist(),
        "blind": view.blind.tolist(),
        "tricks_won": view.tricks_won.tolist(),
        "trick": view.trick.tolist(),
        "leader": view.leader.tolist(),
        "trick_size": view.trick_size.tolist(),
        "lead_suit": view.lead_suit.tolist(),
        "tricks_played": view.tricks_played.tolist(),
        "voids": view.voids.tolist(),
        "broken": view.broken.tolist(),
        "scores": view.scores.tolist(),
        "bags": view.bags.tolist(),
        "dealer": view.dealer.tolist(),
        "trump": view.trump.tolist(),
    }
    out = []
    for i in range(view.batch_size):
        row = {k: v[i] for k, v in cols.items()}
        out.append(
            Table(
                rules=rules,
                hand=hand[i],
                played=played[i],
                unseen=deck & ~played[i] & ~hand[i] & ~seen[i] & ((1 << NUM_CARDS) - 1),
                looking=looking[i],
                **row,
            )
        )
    return out
