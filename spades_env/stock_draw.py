"""RULES.md §6 `two_player`: the hands are drawn from the stock by the players' decisions.

The whole shuffled deck is a face-down stock (`State.stock`, top card first; its order is
a pure function of `(seed, hand_no)`, the same stream as a deal). Starting left of the
dealer, the two players take turns; a turn is one decision (phase DRAW):

- `DRAW_KEEP` (action 74): keep the top card, which the drawer has looked at; the next
  card is discarded face down, unseen by anyone;
- `DRAW_DISCARD` (action 75): discard the looked-at card face down; the next card goes to
  the drawer's hand (the drawer sees it, the opponent does not).

Each turn takes two cards, so 52 cards give 26 turns and 13 cards each; then the bidding
opens left of the dealer as usual. Both actions are always legal (legal bits 0b11 above
`PHASE_BASE[DRAW] = DRAW_KEEP`).

The rules of the draw are the core's (core/kernel.py `_start_draw`, `_draw`; the
shuffle is core/deal.py's). What a drawer knows: its own hand as it grows
(`State.hands`), the card on top while it decides (`looking`), and the cards it looked
at and discarded (`State.seen`). The unseen
discards (the card after a kept one) are known to nobody and appear in no observation.

Choices where RULES.md §6 is silent: the first drawer is the seat left of the dealer; a
discarded card is face down (the opponent learns only that a card went, not which); the
hands of `init(deals=...)` skip the draw (a hand-built position starts at the bidding).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import NUM_CARDS
from spades_env.state import DRAW, State, deck_mask


def looking(state: State, seats: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """(B,) the card on top of the stock if `seats` is deciding on it now, else -1."""
    rows = np.arange(state.batch_size)
    pos = np.minimum(state.stock_pos.astype(np.int64), NUM_CARDS - 1)
    deciding = (state.phase == DRAW) & (state.to_act == seats)
    return np.where(deciding, state.stock[rows, pos].astype(np.int64), -1)


def stock_left(state: State) -> npt.NDArray[np.int64]:
    """(B,) cards still in the stock (public: both players see the pile shrink)."""
    total = int(np.bitwise_count(deck_mask(state.rules)))
    return np.where(state.phase == DRAW, total - state.stock_pos.astype(np.int64), 0)
