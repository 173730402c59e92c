"""One game as one seat sees it, on plain Python ints: what the heuristic's bidding,
blind-nil, exchange, trump-naming and draw decisions read.

`rows_from_view(view)` turns every game of a batched `SeatView` into a small `Table`
whose hand is a Python `int` bitmask (bit `card` set; see `spades_env.cards`): cheap to
ask per-card questions of in a loop. Nothing hidden is read: the seat's own hand (unless
it is hidden for the blind-nil choice), the bids, the scores. The card play, which
counts the cards gone and who may hold the rest, is compiled (`agents.heuristic.play`).

The trump is `Table.trump`: spades, or in RULES.md §6 auction the named suit (-1 while it
is not named yet, during the bidding).
"""

from __future__ import annotations

from dataclasses import dataclass

from spades_env.cards import CARD_SUIT, SUIT_MASK
from spades_env.observation import SeatView
from spades_env.rules import Rules

#: Python-int versions of the card tables: cheaper than numpy scalars in a per-card loop.
SUIT_BITS: list[int] = [int(m) for m in SUIT_MASK]
SUIT_OF: list[int] = [int(s) for s in CARD_SUIT]


def cards(mask: int) -> list[int]:
    """Cards of a mask, lowest bit first (within a suit: lowest rank first)."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def highest(mask: int) -> int:
    """The highest card of a non-empty mask (within one suit: the highest rank)."""
    return mask.bit_length() - 1


@dataclass
class Table:
    """One game as seen from one seat, with Python ints (see the module docstring)."""

    rules: Rules
    seat: int
    hand: int  # my cards now
    legal: int  # legal-action bits of this phase (engine.PHASE_BASE)
    phase: int
    bids: list[int]  # per seat, -1 = not yet, 0 = nil
    scores: list[int]  # per team
    bags: list[int]  # per team
    looking: int = -1  # RULES.md §6 two_player: the stock's top card I decide on, else -1
    trump: int = 0  # spades; RULES.md §6 auction: the named suit, -1 before it is named
    dealer: int = 0  # the dealer's seat (RULES.md §2: the bidding starts at its left)

    @property
    def players(self) -> int:
        return self.rules.num_players

    @property
    def partner(self) -> int:
        """The partner's seat; without partnerships (RULES.md §6) my own seat, so code that
        reads the partner's bid sees nothing it could count on twice."""
        if not self.rules.partnerships:
            return self.seat
        return (self.seat + self.players // 2) % self.players

    @property
    def team(self) -> int:
        return self.seat % self.rules.num_teams


#: the view's columns a Table copies
_COLUMNS = ("seat", "hand", "legal", "phase", "bids", "scores", "bags", "looking", "dealer")


def rows_from_view(view: SeatView, rows=None) -> list[Table]:
    """The games `rows` (default: all) of a batched view as `Table`s."""
    rows = range(view.batch_size) if rows is None else rows
    cols = {name: getattr(view, name)[rows].tolist() for name in _COLUMNS}
    trump = view.trump[rows].tolist()
    return [
        Table(rules=view.rules, trump=trump[k], **{n: v[k] for n, v in cols.items()})
        for k in range(len(trump))
    ]
