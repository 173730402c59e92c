"""A plain one-hot reference implementation of `spades_env.observation.encode`.

Slow and obviously correct: every block is built with explicit one-hot comparisons.
The tests check the fast encoder against it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import MAX_BID, NUM_CARDS, NUM_SUITS, bits_to_bool
from spades_env.observation import hand_hidden
from spades_env.state import DONE, DRAW, PLAY, TRUMP, State


def _one_hot(values: npt.NDArray, n: int) -> npt.NDArray[np.int16]:
    """(..., ) ints in 0..n-1 (others -> all zero) -> (..., n) int16."""
    return (values[..., None] == np.arange(n)).astype(np.int16)


def encode_reference(state: State, seats: npt.ArrayLike | None = None) -> npt.NDArray[np.int16]:
    """(B, obs_size) int16 information-state encoding for `seats` (default: to act)."""
    rules = state.rules
    b, p, t = state.batch_size, rules.num_players, rules.num_teams
    seat = (state.to_act if seats is None else np.broadcast_to(seats, (b,))).astype(np.int64)
    rows = np.arange(b)
    rot = (seat[:, None] + np.arange(p)[None, :]) % p  # (B, P) absolute seat of relative r

    def rel(arr: npt.NDArray) -> npt.NDArray:
        return np.take_along_axis(arr, rot, axis=1)

    def rel_seat(abs_seat: npt.NDArray) -> npt.NDArray:
        return np.where(
            abs_seat >= 0,
            (abs_seat.astype(np.int64) - seat.reshape((-1,) + (1,) * (abs_seat.ndim - 1))) % p,
            -1,
        )

    own_team = seat % t
    team_rot = (own_team[:, None] + np.arange(t)[None, :]) % t
    hidden = hand_hidden(state, seat)
    hand = np.where(hidden, np.uint64(0), state.hands[rows, seat] & ~state.played)
    card_rel = rel_seat(state.card_seat)  # (B, C)
    table_rel = rel(state.trick.astype(np.int64))  # (B, P) card per relative seat
    exchanged = state.phase >= PLAY
    partner = (seat + p // 2) % p
    received = np.where(exchanged, state.passing[rows, partner], np.uint64(0))
    bids = rel(state.bids.astype(np.int64))
    # phases these rules reach: up to DONE, DRAW (two_player) or TRUMP (auction)
    phases = TRUMP + 1 if rules.trump == "named" else DRAW + 1 if rules.draw else DONE + 1
    parts = [
        bits_to_bool(hand).astype(np.int16),
        _one_hot(card_rel, p).transpose(0, 2, 1).reshape(b, -1),
        (state.card_trick.astype(np.int16) + 1),
        _one_hot(table_rel, NUM_CARDS).reshape(b, -1),
        _one_hot(bids + 1, MAX_BID + 2).reshape(b, -1),
        rel(state.blind).astype(np.int16),
        rel(state.tricks_won).astype(np.int16),
        bits_to_bool(state.passing[rows, seat]).astype(np.int16),
        bits_to_bool(received).astype(np.int16),
        np.clip(np.take_along_axis(state.scores, team_rot, axis=1), -32768, 32767),
        np.take_along_axis(state.bags, team_rot, axis=1),
        _one_hot(rel_seat(state.dealer), p),
        _one_hot(np.where(state.trick_size > 0, rel_seat(state.leader), -1), p),
        _one_hot(rel_seat(state.to_act), p),
        _one_hot(state.lead_suit, NUM_SUITS),
        state.broken[:, None],
        _one_hot(state.phase, phases),
        ((rel(state.voids)[..., None] >> np.arange(NUM_SUITS, dtype=np.uint8)) & 1).reshape(b, -1),
        state.hand_no[:, None],
    ]
    if rules.draw:  # RULES.md §6 two_player: the top card while I decide, my seen discards
        deciding = (state.phase == DRAW) & (state.to_act == seat)
        pos = np.minimum(state.stock_pos.astype(np.int64), NUM_CARDS - 1)
        top = np.where(deciding, state.stock[rows, pos], -1)
        left = np.where(state.phase == DRAW, 52 - state.stock_pos.astype(np.int64), 0)
        parts += [
            _one_hot(top, NUM_CARDS),
            bits_to_bool(state.seen[rows, seat]).astype(np.int16),
            left[:, None],
        ]
    if rules.trump == "named":  # RULES.md §6 auction: the named trump, zeros before
        parts.append(_one_hot(state.trump, NUM_SUITS))
    return np.concatenate([np.asarray(x).astype(np.int16) for x in parts], axis=1)
