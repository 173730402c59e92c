"""What each seat may do: legal actions as bits, the action mask, and why an action is
illegal (RULES.md §2, §3, §6; the trump of §3 is `State.trump`, spades_env/auction.py).

`State.legal` caches the legal actions of the seat to act as bits above the first action
of the phase (`PHASE_BASE`); `step` refreshes it with `update_legal` after every step.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.auction import NOT_TRUMP, TRUMP_BITS
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_BIT,
    DRAW_KEEP,
    NAME_TRUMP,
    NUM_ACTIONS,
    NUM_CARDS,
    SPADE_MASK,
    SUIT_MASK,
    SUIT_NAMES,
    TWO_OF_CLUBS,
    bits_to_bool,
    select_bit,
)
from spades_env.state import BID, BLIND, DONE, DRAW, EXCHANGE, PHASE_NAMES, PLAY, TRUMP, State
from spades_env.state import arange_cached as _arange
from spades_env.variants import bid_bits, describe


def legal_cards(state: State, rows: npt.NDArray[np.int64] | slice) -> npt.NDArray[np.uint64]:
    """Legal cards of the seat to act, for games in PLAY (RULES.md §3)."""
    rules = state.rules
    ar = _arange(state.batch_size)[rows]
    fi = ar * rules.num_players + state.to_act[rows]
    h = state.hands.reshape(-1)[fi] & ~state.played[rows]
    lead_suit = state.lead_suit[rows]
    follow = h & SUIT_MASK[np.maximum(lead_suit, 0)]
    # RULES.md §3: follow suit when you can, otherwise play any card.
    legal_follow = np.where(follow != 0, follow, h)
    # RULES.md §3: no trump lead before trumps are broken, unless only trumps are held;
    # the trump is spades, or in RULES.md §6 auction the named suit.
    not_trump = NOT_TRUMP[state.trump[rows]] if rules.trump == "named" else ~SPADE_MASK
    non_trump = h & not_trump
    legal_lead = np.where(state.broken[rows] | (non_trump == 0), h, non_trump)
    leading = state.trick_size[rows] == 0
    legal = np.where(leading, legal_lead, legal_follow)
    if rules.first_lead == "two_of_clubs":
        first = leading & (state.tricks_played[rows] == 0)
        legal = np.where(first, h & CARD_BIT[TWO_OF_CLUBS], legal)
    return legal


def update_legal(state: State) -> None:
    """Refresh `state.legal`, the legal actions as bits above the phase's first action."""
    phase = state.phase
    if phase[0] == PLAY and (phase == PLAY).all():
        state.legal[:] = legal_cards(state, slice(None))
        return
    legal = np.zeros(state.batch_size, dtype=np.uint64)
    q = np.flatnonzero(phase == PLAY)
    if q.size:
        legal[q] = legal_cards(state, q)
    x = np.flatnonzero(phase == EXCHANGE)
    if x.size:
        seat = state.to_act[x]
        legal[x] = state.hands[x, seat] & ~state.passing[x, seat]
    q = np.flatnonzero(phase == BID)
    if q.size:
        # RULES.md §2: bids 0..hand_size, capped by max_total_bid; bit i = bid i;
        # RULES.md §6: the preset's bid constraint (spades_env/variants.py).
        seat = state.to_act[q].astype(np.int64)
        p = state.rules.num_players
        partner = state.bids[q, (seat + p // 2) % p] if state.rules.partnerships else None
        legal[q] = bid_bits(state.rules, bid_limit(state, q), state.hands[q, seat], partner)
    legal[phase == BLIND] = 0b11  # blind nil, see hand
    legal[phase == DRAW] = 0b11  # RULES.md §6 two_player: keep, discard (spades_env/draw.py)
    if state.rules.trump == "named":
        legal[phase == TRUMP] = TRUMP_BITS  # RULES.md §6 auction: any of the four suits
    state.legal[:] = legal


#: (NUM_PHASES,) first action of each phase: bit i of `legal` is action base + i.
PHASE_BASE = np.array([BLIND_NIL, BID_BASE, 0, 0, 0, DRAW_KEEP, NAME_TRUMP], dtype=np.int64)


def bid_limit(state: State, rows) -> npt.NDArray[np.int64]:
    """Largest legal bid (RULES.md §2: 0..hand_size, and the max_total_bid option)."""
    rules = state.rules
    top = np.full(_arange(state.batch_size)[rows].size, rules.max_bid, dtype=np.int64)
    if rules.max_total_bid is not None:
        made = np.where(state.bids[rows] > 0, state.bids[rows], 0).sum(axis=1)
        top = np.minimum(top, rules.max_total_bid - made)
    return top


def legal_action_mask(state: State) -> npt.NDArray[np.bool_]:
    """(B, NUM_ACTIONS) bool: the legal actions of the seat to act in each game."""
    b = state.batch_size
    mask = np.zeros((b, NUM_ACTIONS), dtype=bool)
    bits = bits_to_bool(state.legal)
    phase = state.phase
    for ph in np.unique(phase):
        if ph == DONE:
            continue
        base = int(PHASE_BASE[ph])
        width = min(NUM_CARDS, NUM_ACTIONS - base)
        q = slice(None) if ph == phase[0] and (phase == ph).all() else phase == ph
        mask[q, base : base + width] = bits[q, :width]
    return mask


def legal_actions(state: State, game: int) -> list[int]:
    return np.flatnonzero(legal_action_mask(state.take([game]))[0]).tolist()


def explain_illegal(state: State, game: int, action: int) -> str:
    """Name the rule an illegal action breaks (slow path, one game)."""
    phase = int(state.phase[game])
    seat = int(state.to_act[game])
    a = int(action)
    if phase == BLIND:
        return "first decide blind nil or see hand (RULES.md §2)"
    if phase == DRAW:
        return "keep or discard the top card of the stock (RULES.md §6 two_player)"
    if phase == TRUMP:
        return "name the trump suit: trump spades, hearts, diamonds or clubs (RULES.md §6 auction)"
    if phase == BID:
        if not BID_BASE <= a < BLIND_NIL:
            return "a bid is expected: nil or 1..13 (RULES.md §2)"
        bid = a - BID_BASE
        if not state.rules.min_bid <= bid <= state.rules.max_bid:
            return f"bids are {state.rules.min_bid}..{state.rules.max_bid} (RULES.md §2, §6)"
        if state.rules.bid_constraint != "none":
            return describe(state.rules)
        return (
            f"the bids would total more than max_total_bid={state.rules.max_total_bid} "
            "(RULES.md §2)"
        )
    if not 0 <= a < NUM_CARDS:
        return f"a card is expected in the {PHASE_NAMES[phase]} phase"
    hand = int(state.hands[game, seat]) & ~int(state.played[game])
    if not hand >> a & 1:
        return "that card is not in the seat's hand"
    if phase == EXCHANGE:
        return "that card is already chosen to pass (RULES.md §2)"
    lead = int(state.lead_suit[game])
    if state.trick_size[game] > 0:
        return f"must follow {SUIT_NAMES[lead]} (RULES.md §3)"
    if state.rules.first_lead == "two_of_clubs" and state.tricks_played[game] == 0:
        return "the first lead must be the 2C (RULES.md §3 first_lead=two_of_clubs)"
    if state.rules.trump == "named":
        trump = SUIT_NAMES[int(state.trump[game])]
        return f"{trump} are trump and not broken yet (RULES.md §3, §6 auction)"
    return "spades are not broken yet (RULES.md §3)"


def random_legal_actions(
    legal: npt.NDArray[np.uint64], phase: npt.NDArray[np.int8], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per game from the engine's legal bits.

    `legal` is `State.legal` (bit i = action PHASE_BASE[phase] + i); games with no legal
    action (DONE) get action 0, which the engine ignores.
    """
    count = np.bitwise_count(legal).astype(np.int64)
    k = (rng.random(legal.shape[0]) * count).astype(np.int64)
    has = count > 0
    k = np.minimum(k, np.maximum(count - 1, 0))
    bit = select_bit(np.where(has, legal, np.uint64(1)), k * has)
    return (bit + PHASE_BASE[phase]) * has
