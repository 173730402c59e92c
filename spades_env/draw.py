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

What a drawer knows: its own hand as it grows (`State.hands`), the card on top while it
decides (`looking`), and the cards it looked at and discarded (`State.seen`). The unseen
discards (the card after a kept one) are known to nobody and appear in no observation.

Choices where RULES.md §6 is silent: the first drawer is the seat left of the dealer; a
discarded card is face down (the opponent learns only that a card went, not which); the
hands of `init(deals=...)` skip the draw (a hand-built position starts at the bidding).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import CARD_BIT, NUM_CARDS, mask_to_cards
from spades_env.state import DRAW, State, _stream, deck_mask

KEEP_BIT, DISCARD_BIT = 0b01, 0b10  # legal bits above PHASE_BASE[DRAW]


def stock_order(rules, seed: npt.NDArray[np.uint64], hand_no) -> npt.NDArray[np.int8]:
    """(B, NUM_CARDS) int8: the shuffled stock of hand `hand_no`, top first, -1 padded."""
    cards = np.array(mask_to_cards(deck_mask(rules)), dtype=np.int64)
    words = _stream(seed, np.asarray(hand_no), cards.size)
    order = np.argsort(words, axis=1, kind="stable")
    out = np.full((order.shape[0], NUM_CARDS), -1, dtype=np.int8)
    out[:, : cards.size] = cards[order]
    return out


def start_draw(state: State, rows: npt.NDArray[np.int64]) -> None:
    """Lay out the stock of each game in `rows`; the seat left of the dealer draws first."""
    if rows.size == 0:
        return
    state.stock[rows] = stock_order(state.rules, state.seed[rows], state.hand_no[rows])
    state.stock_pos[rows] = 0
    state.seen[rows] = 0
    state.deal[rows] = 0
    state.hands[rows] = 0
    state.to_act[rows] = (state.dealer[rows].astype(np.int64) + 1) % state.rules.num_players
    state.phase[rows] = DRAW


def apply_draw(
    state: State, rows: npt.NDArray[np.int64], seats: npt.NDArray[np.int64], actions
) -> npt.NDArray[np.int64]:
    """One keep/discard decision per game of `rows`; return the games whose stock is
    now empty (their hands are complete and the bidding must open)."""
    from spades_env.cards import DRAW_KEEP

    pos = state.stock_pos[rows].astype(np.int64)
    top = state.stock[rows, pos].astype(np.int64)
    nxt = state.stock[rows, pos + 1].astype(np.int64)
    keep = np.asarray(actions) == DRAW_KEEP
    taken = np.where(keep, top, nxt)
    state.hands[rows, seats] |= CARD_BIT[taken]
    state.seen[rows, seats] |= np.where(keep, np.uint64(0), CARD_BIT[top])
    pos += 2
    state.stock_pos[rows] = pos
    state.to_act[rows] = (seats + 1) % state.rules.num_players
    done = rows[pos >= np.bitwise_count(deck_mask(state.rules))]
    state.deal[done] = state.hands[done]
    return done


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
