"""The batched rules engine: `step` (legality in legality.py, the hand's flow in hand_flow.py).

`step(state, actions)` applies one action per game (games that are DONE ignore theirs)
and updates `state` in place for speed; `State.copy()` branches a state for search.
Games may sit in different phases; when every game is in the same phase (the common,
lockstep case) the handlers run on whole arrays, otherwise on each phase's games.

Flow of a hand (RULES.md §1-§4): deal -> for each seat from left of the dealer, an
optional blind-nil decision (BLIND) then a bid (BID) -> in RULES.md §6 auction, the
highest bidder names trump (TRUMP, spades_env/auction.py) -> optional exchange
(EXCHANGE) -> 13 tricks (PLAY) -> scoring, bags, end-of-game check -> next deal with the
next dealer. Trick strength, lead legality, "broken" and the voids read the game's trump
(`State.trump`) through tables indexed by it; rules with `trump="spades"` use the spades
rows directly.

An illegal action raises `IllegalActionError` naming the game, the seat, the rule and the
legal actions. With `on_illegal="report"` (for RL wrappers that penalise instead), illegal
games are left exactly as they were and flagged in `StepInfo.illegal`; nothing is ever
replaced by another action.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from spades_env.auction import TRUMP_STRENGTH, VOID_OTHERS
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_BIT,
    CARD_SUIT,
    NAME_TRUMP,
    NUM_CARDS,
    NUM_SUITS,
    SPADES,
    action_array,
    action_to_str,
    mask_to_cards,
)
from spades_env.draw import apply_draw
from spades_env.hand_flow import (
    HandResult,
    _advance_bidding,
    _end_hand,
    _next_passer,
    _open_bidding,
    after_naming,
    blind_allowed,
    start_hand,
)
from spades_env.legality import (
    PHASE_BASE,
    explain_illegal,
    legal_action_mask,
    legal_actions,
    random_legal_actions,
    update_legal,
)
from spades_env.state import (
    BID,
    BLIND,
    DONE,
    DRAW,
    EXCHANGE,
    PLAY,
    TRUMP,
    State,
)
from spades_env.state import arange_cached as _arange

#: The engine's public face; legality lives in spades_env/legality.py and is re-exported.
__all__ = [
    "HISTORY_SEAT_SHIFT",
    "PHASE_BASE",
    "SEAT_NAMES",
    "STRENGTH",
    "HandResult",
    "IllegalActionError",
    "StepInfo",
    "blind_allowed",
    "explain_illegal",
    "legal_action_mask",
    "legal_actions",
    "random_legal_actions",
    "reset_done",
    "seat_name",
    "start_hand",
    "step",
]

SEAT_NAMES = ("North", "East", "South", "West")
HISTORY_SEAT_SHIFT = 7  # history entries are (seat << 7) | action

#: (NUM_CARDS, NUM_SUITS) int8 strength of a card in a trick led in a suit (RULES.md §3):
#: any spade beats every other suit, then the led suit by rank; other cards never win.
#: The spades-trump row of `auction.TRUMP_STRENGTH` (RULES.md §6 auction: other trumps).
STRENGTH = np.ascontiguousarray(TRUMP_STRENGTH[SPADES])
_SUIT_BIT = np.array([1 << s for s in range(NUM_SUITS)], dtype=np.uint8)


@functools.cache
def _next_seat(p: int) -> npt.NDArray[np.int8]:
    return np.roll(np.arange(p, dtype=np.int8), -1)


class IllegalActionError(ValueError):
    """An action that the rules forbid; names the game, seat, rule and legal actions."""

    def __init__(self, game: int, seat: int, action: int, reason: str, legal: list[int]):
        self.game, self.seat, self.action, self.reason, self.legal = (
            game,
            seat,
            action,
            reason,
            legal,
        )
        shown = ", ".join(action_to_str(a) for a in legal)
        super().__init__(
            f"game {game}, seat {seat} ({seat_name(seat)}): {_action_name(action)} is "
            f"illegal: {reason}; legal: {shown}"
        )


def seat_name(seat: int) -> str:
    return SEAT_NAMES[seat] if seat < len(SEAT_NAMES) else f"seat {seat}"


def _action_name(action: int) -> str:
    try:
        return action_to_str(action)
    except ValueError:
        return f"action {action}"


@dataclass(frozen=True)
class StepInfo:
    hand_over: npt.NDArray[np.bool_]  # (B,) a hand finished in this step
    hand_points: npt.NDArray[np.int32]  # (B, T) its points, bag penalty included; else 0
    illegal: npt.NDArray[np.bool_]  # (B,) action refused ("report" mode only)
    finished: HandResult | None  # details of the finished hands, None if none


# ----------------------------------------------------------------------------- step
def _check(state: State, rows, actions: npt.NDArray[np.int64], phase: int) -> npt.NDArray:
    """Is each action among the legal ones cached in `state.legal`?"""
    rel = actions - PHASE_BASE[phase]
    inside = (rel >= 0) & (rel < 64)
    bit = np.left_shift(np.uint64(1), (rel * inside).astype(np.uint64))
    return inside & ((state.legal[rows] & bit) != 0)


def _play(state: State, rows, actions: npt.NDArray[np.int64]) -> None:
    """Play one card in each game of `rows` (RULES.md §3)."""
    p = state.rules.num_players
    ar = _arange(state.batch_size)[rows]
    seat = state.to_act[rows]
    fi = ar * p + seat  # flat (game, seat) index: much cheaper than 2-D fancy indexing
    bit = CARD_BIT[actions]
    state.played[rows] |= bit
    state.trick.reshape(-1)[fi] = actions
    suit = CARD_SUIT[actions]
    size = state.trick_size[rows]
    # RULES.md §3: spades are trump; §6 auction: the named suit (auction.py)
    trump = state.trump[rows] if state.rules.trump == "named" else SPADES
    is_trump = suit == trump
    void_others = VOID_OTHERS[trump]
    # Public information for samplers and agents: a player who does not follow has no
    # card of the led suit; one who leads a trump before trumps are broken holds only
    # trumps (RULES.md §3).
    first = int(size[0])
    if (size == first).all():  # lockstep: every game at the same place in the trick
        if first == 0:
            state.lead_suit[rows] = suit
            shown = (is_trump & ~state.broken[rows]) * void_others
        else:
            shown = (suit != state.lead_suit[rows]) * _SUIT_BIT[state.lead_suit[rows]]
    else:
        leading = size == 0
        lead_suit = np.where(leading, suit, state.lead_suit[rows])
        state.lead_suit[rows] = lead_suit
        shown = (suit != lead_suit) * _SUIT_BIT[lead_suit] | (
            leading & is_trump & ~state.broken[rows]
        ) * void_others
    state.voids.reshape(-1)[fi] |= shown.astype(np.uint8)
    state.broken[rows] |= is_trump  # RULES.md §3: any trump played breaks trumps
    fc = ar * NUM_CARDS + actions
    state.card_seat.reshape(-1)[fc] = seat
    state.card_trick.reshape(-1)[fc] = state.tricks_played[rows]
    state.trick_size[rows] = size + 1
    state.to_act[rows] = _next_seat(p)[seat]


def _resolve_tricks(state: State, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Close full tricks; return the games whose hand is now complete."""
    trick = state.trick[rows]
    lead = state.lead_suit[rows][:, None]
    if state.rules.trump == "named":  # RULES.md §6 auction: the named suit trumps
        strength = TRUMP_STRENGTH[state.trump[rows][:, None], trick, lead]
    else:
        strength = STRENGTH[trick, lead]
    winner = strength.argmax(axis=1)  # RULES.md §3: highest trump, else highest led
    state.tricks_won[rows, winner] += 1
    state.leader[rows] = winner
    state.to_act[rows] = winner
    state.trick[rows] = -1
    state.trick_size[rows] = 0
    state.lead_suit[rows] = -1
    played = state.tricks_played[rows] + 1
    state.tricks_played[rows] = played
    return rows[played == state.rules.hand_size]


def _groups(phase: npt.NDArray[np.int8]) -> list[tuple[int, slice | npt.NDArray[np.int64]]]:
    first = int(phase[0])
    if (phase == first).all():
        return [(first, slice(None))]
    return [(int(ph), np.flatnonzero(phase == ph)) for ph in np.unique(phase)]


def step(
    state: State,
    actions: npt.ArrayLike,
    on_illegal: Literal["raise", "report"] = "raise",
) -> StepInfo:
    """Apply one action per game (ignored where the game is DONE); update `state`."""
    b = state.batch_size
    acts = action_array(actions).reshape(-1)  # whole numbers only (cards.py)
    if acts.shape[0] != b:
        raise ValueError(f"step needs {b} actions, one per game; got {acts.shape[0]}")
    illegal = np.zeros(b, dtype=bool)
    hand_over = np.zeros(b, dtype=bool)
    points = np.zeros((b, state.rules.num_teams), dtype=np.int32)
    finished: list[HandResult] = []
    # Check every game before changing any: an error never leaves the batch half-stepped.
    checked = []
    for phase, rows in _groups(state.phase):
        if phase == DONE:
            continue
        a = acts[rows]
        ok = _check(state, rows, a, phase)
        if not ok.all():
            bad_local = np.flatnonzero(~ok)
            games = np.arange(b)[rows][bad_local]
            if on_illegal == "raise":
                g = int(games[0])
                act = int(a[bad_local[0]])
                raise IllegalActionError(
                    g,
                    int(state.to_act[g]),
                    act,
                    explain_illegal(state, g, act),
                    legal_actions(state, g),
                )
            illegal[games] = True
            rows = np.arange(b)[rows][ok]
            a = a[ok]
        checked.append((phase, rows, a))
    for phase, rows, a in checked:
        _apply(state, phase, rows, a, finished)
    for res in finished:
        hand_over[res.games] = True
        points[res.games] = res.points - res.penalty
    update_legal(state)
    return StepInfo(
        hand_over=hand_over,
        hand_points=points,
        illegal=illegal,
        finished=_concat(finished),
    )


def _apply(state: State, phase: int, rows, a: npt.NDArray[np.int64], out: list) -> None:
    ar = _arange(state.batch_size)[rows]
    if ar.size == 0:
        return
    seat = state.to_act[rows].astype(np.int64)
    # History entries carry the actor: (seat << 7) | action.
    hlen = state.history_len[rows]
    state.history.reshape(-1)[ar * state.history.shape[1] + hlen] = (seat << HISTORY_SEAT_SHIFT) | a
    state.history_len[rows] = hlen + 1
    if phase == PLAY:
        _play(state, rows, a)
        size = state.trick_size[rows]
        full = ar[size == state.rules.num_players]
        if full.size:
            done = _resolve_tricks(state, full)
            if done.size:
                out.append(_end_hand(state, done))
    elif phase == BID:
        state.bids[ar, seat] = a - BID_BASE
        _advance_bidding(state, ar, seat)
    elif phase == BLIND:
        blind = a == BLIND_NIL
        q, s = ar[blind], seat[blind]
        state.bids[q, s] = 0
        state.blind[q, s] = True
        _advance_bidding(state, q, s)
        state.phase[ar[~blind]] = BID  # RULES.md §2: declined; sees the hand and bids
    elif phase == EXCHANGE:
        state.passing[ar, seat] |= CARD_BIT[a]
        _next_passer(state, ar)
    elif phase == DRAW:
        _open_bidding(state, apply_draw(state, ar, seat, a))
    elif phase == TRUMP:
        state.trump[ar] = a - NAME_TRUMP  # RULES.md §6 auction: the named suit
        after_naming(state, ar)


def _concat(results: list[HandResult]) -> HandResult | None:
    if not results:
        return None
    if len(results) == 1:
        return results[0]
    fields = HandResult.__dataclass_fields__
    return HandResult(**{f: np.concatenate([getattr(r, f) for r in results]) for f in fields})


def reset_done(state: State, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Start a fresh game (new seed, scores 0) in every DONE slot; return their indices."""
    rows = np.flatnonzero(state.phase == DONE)
    if rows.size == 0:
        return rows
    from spades_env.state import first_dealer

    n = rows.size
    state.seed[rows] = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64)
    state.hand_no[rows] = 0
    state.scores[rows] = 0
    state.bags[rows] = 0
    state.winner[rows] = -1
    state.dealer[rows] = first_dealer(state.rules, state.seed[rows])
    start_hand(state, rows)
    update_legal(state)
    return rows


def cards_of(mask: int | np.uint64) -> list[int]:
    return mask_to_cards(mask)
