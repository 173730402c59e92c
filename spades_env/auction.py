"""RULES.md §6 `auction`: the highest bidder names the trump suit (rules `trump="named"`).

The hand is bid as in RULES.md §2 (nil and blind nil included). After the last bid the
game enters phase TRUMP: the highest bidder chooses one of four actions `NAME_TRUMP + s`
(cards.py: 76 spades, 77 hearts, 78 diamonds, 79 clubs; all four are always legal, legal
bits 0b1111 above `PHASE_BASE[TRUMP]`). Highest means the most tricks bid, nil and blind
nil counting 0; among equal bids the first in bidding order (which starts left of the
dealer) names. Then the blind-nil exchange (if the option and a blind nil call for it)
and the play from RULES.md §3's first lead.

The named suit takes every role of spades in RULES.md §3, through the per-game
`State.trump` ((B,) int8; SPADES in every game of rules with `trump="spades"`, -1 in an
auction game until the suit is named):

- a trump beats every card of another suit, and the highest trump wins the trick
  (`TRUMP_STRENGTH[trump, card, lead]`);
- a trump may not be led until trumps are broken (a trump played in an earlier trick),
  unless the leader holds only trumps (`legality.legal_cards`, `NOT_TRUMP`);
- a trump led before trumps are broken shows that the leader held only trumps
  (`VOID_OTHERS[trump]`: the voids it reveals).

With spades named the hand plays exactly as standard; with another suit named spades are
an ordinary suit. The engine indexes these tables by `State.trump` (no branch per game);
with `trump="spades"` rules it uses the spades rows directly, so the standard preset pays
nothing for the variant.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import CARD_RANK, CARD_SUIT, NUM_CARDS, NUM_SUITS, SPADES, SUIT_MASK
from spades_env.rules import Rules
from spades_env.state import TRUMP, State

#: (NUM_SUITS, NUM_CARDS, NUM_SUITS) int8 strength of a card in a trick led in a suit,
#: by trump suit (RULES.md §3): any trump beats every other suit, then the led suit by
#: rank; other cards never win. `TRUMP_STRENGTH[SPADES]` is the standard table.
TRUMP_STRENGTH = np.full((NUM_SUITS, NUM_CARDS, NUM_SUITS), -1, dtype=np.int8)
for _trump in range(NUM_SUITS):
    for _c in range(NUM_CARDS):
        for _lead in range(NUM_SUITS):
            if CARD_SUIT[_c] == _trump:
                TRUMP_STRENGTH[_trump, _c, _lead] = 32 + CARD_RANK[_c]
            elif CARD_SUIT[_c] == _lead:
                TRUMP_STRENGTH[_trump, _c, _lead] = CARD_RANK[_c]
#: (NUM_SUITS,) uint8 by trump: the suits a leader of an unbroken trump has shown void in.
VOID_OTHERS = np.array([0b1111 & ~(1 << s) for s in range(NUM_SUITS)], dtype=np.uint8)
#: (NUM_SUITS,) uint64 by trump: every card outside the trump suit (jokers are spades).
NOT_TRUMP = np.array([~SUIT_MASK[s] for s in range(NUM_SUITS)], dtype=np.uint64)
#: legal bits of the TRUMP phase: the four suits.
TRUMP_BITS = (1 << NUM_SUITS) - 1


def initial_trump(rules: Rules) -> int:
    """The trump at the start of a hand: spades, or -1 (not named yet) in auction."""
    return SPADES if rules.trump == "spades" else -1


def namer(
    rules: Rules, dealer: npt.NDArray[np.integer], bids: npt.NDArray[np.int8]
) -> npt.NDArray[np.int64]:
    """(K,) the seat that names trump: the highest bid, the first bidder among equals.

    `bids` is (K, P) with every bid made (0 = nil or blind nil).
    """
    p = rules.num_players
    order = (dealer.astype(np.int64)[:, None] + 1 + np.arange(p)[None, :]) % p
    in_order = np.take_along_axis(bids.astype(np.int64), order, axis=1)
    first_best = in_order.argmax(axis=1)  # argmax returns the first of equal maxima
    return order[np.arange(order.shape[0]), first_best]


def namer_one(num_players: int, dealer: int, bids: list[int]) -> int:
    """`namer` for one game on Python ints (SingleGame)."""
    order = [(dealer + 1 + k) % num_players for k in range(num_players)]
    return max(order, key=lambda s: (bids[s], -order.index(s)))


def open_naming(state: State, rows: npt.NDArray[np.int64]) -> None:
    """After the last bid: the highest bidder of each game in `rows` names trump."""
    if rows.size == 0:
        return
    state.to_act[rows] = namer(state.rules, state.dealer[rows], state.bids[rows])
    state.phase[rows] = TRUMP
