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
  (`core.rule_functions.card_strength`; `TRUMP_STRENGTH[trump, card, lead]` tabulates it);
- a trump may not be led until trumps are broken (a trump played in an earlier trick),
  unless the leader holds only trumps (`core.rule_functions.legal_cards`);
- a trump led before trumps are broken shows that the leader held only trumps
  (`core.rule_functions.shown_voids`).

With spades named the hand plays exactly as standard; with another suit named spades are
an ordinary suit. The rules core takes the trump suit as an argument everywhere, so the
same code plays both. The naming itself is `core.rule_functions.trump_namer`.
"""

from __future__ import annotations

import numpy as np

from spades_env.cards import NUM_CARDS, NUM_SUITS
from spades_env.core.rule_functions import card_strength

#: (NUM_SUITS, NUM_CARDS, NUM_SUITS) int8 strength of a card in a trick led in a suit,
#: by trump suit (RULES.md §3, `core.rule_functions.card_strength`): any trump beats every other
#: suit, then the led suit by rank; other cards never win (-1).
TRUMP_STRENGTH = np.array(
    [
        [  # the rule's Python body: importing the package loads no compiled kernel
            [card_strength.py_func(c, lead, t) for lead in range(NUM_SUITS)]
            for c in range(NUM_CARDS)
        ]
        for t in range(NUM_SUITS)
    ],
    dtype=np.int8,
)
