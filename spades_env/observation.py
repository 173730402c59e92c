"""What a seat knows: the RL information-state encoding and the structured view.

Both hold exactly what a perfect-recall player in that seat knows and nothing more:
its own hand (hidden while it may still bid blind nil, RULES.md §2), every bid, every
card played with who played it and in which trick, the trick on the table, tricks won,
scores, bags, the dealer, spades broken, the phase, the exchange cards it passed and
received, and the voids every player has shown.

Encoding (`encode`, version `OBS_VERSION`), int16, seats *relative* to the observer
(relative seat r = absolute seat (observer + r) mod P; r = 0 is the observer), teams
relative (own team first). P players, C = NUM_CARDS = 54 card slots (jokers included,
always 0 in the standard deck), K = MAX_BID + 1 bid values, T teams:

=====================  ==========  ====================================================
block                  size        content
=====================  ==========  ====================================================
hand                   C           1 if the card is in my hand now
played_by              P * C       1 at [r, c] if relative seat r played card c
played_trick           C           trick number (1-based) card c was played in, else 0
table                  P * C       1 at [r, c] if seat r's card in the current trick is c
bids                   P * (K+1)   one-hot: [r, 0] not bid yet, [r, 1 + b] bid b (b=0 nil)
blind                  P           seat r bid blind nil
tricks_won             P           tricks taken this hand
passed                 C           cards I passed in the exchange
received               C           cards I received in the exchange
scores                 T           cumulative scores, own team first
bags                   T           bag counters, own team first
dealer                 P           one-hot relative dealer
leader                 P           one-hot relative leader of the current trick
to_act                 P           one-hot relative seat to act
lead_suit              4           one-hot suit led in the current trick
broken                 1           spades broken
phase                  5           one-hot blind / bid / exchange / play / done
voids                  P * 4       [r, s]: seat r has shown it holds no suit s
hand_no                1           hands completed in this game
=====================  ==========  ====================================================
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spades_env.cards import MAX_BID, NUM_CARDS, NUM_SUITS, bits_to_bool
from spades_env.engine import blind_allowed
from spades_env.rules import Rules
from spades_env.state import BID, NUM_PHASES, PLAY, State

OBS_VERSION = 1


def obs_blocks(rules: Rules) -> list[tuple[str, int]]:
    """(name, size) of each block of the encoding, in order."""
    p, c, t, k = rules.num_players, NUM_CARDS, rules.num_teams, MAX_BID + 1
    return [
        ("hand", c),
        ("played_by", p * c),
        ("played_trick", c),
        ("table", p * c),
        ("bids", p * (k + 1)),
        ("blind", p),
        ("tricks_won", p),
        ("passed", c),
        ("received", c),
        ("scores", t),
        ("bags", t),
        ("dealer", p),
        ("leader", p),
        ("to_act", p),
        ("lead_suit", NUM_SUITS),
        ("broken", 1),
        ("phase", NUM_PHASES),
        ("voids", p * NUM_SUITS),
        ("hand_no", 1),
    ]


def obs_size(rules: Rules) -> int:
    return sum(n for _, n in obs_blocks(rules))


def obs_slices(rules: Rules) -> dict[str, slice]:
    out, i = {}, 0
    for name, n in obs_blocks(rules):
        out[name] = slice(i, i + n)
        i += n
    return out


@dataclass(frozen=True)
class SeatView:
    """The structured view of what each observing seat knows, seats *absolute*.

    For rule-based and search agents. Cards are uint64 bitmasks (see `spades_env.cards`).
    """

    rules: Rules
    seat: npt.NDArray[np.int64]  # (B,) the observing seat
    hand: npt.NDArray[np.uint64]  # (B,) my cards now; 0 while my hand is hidden for blind nil
    hand_hidden: npt.NDArray[np.bool_]  # (B,) I may still bid blind nil, so I have not looked
    phase: npt.NDArray[np.int8]  # (B,)
    to_act: npt.NDArray[np.int8]  # (B,)
    legal: npt.NDArray[np.uint64]  # (B,) legal-action bits of the seat to act (engine.PHASE_BASE)
    dealer: npt.NDArray[np.int8]  # (B,)
    bids: npt.NDArray[np.int8]  # (B, P) -1 = not yet, 0 = nil
    blind: npt.NDArray[np.bool_]  # (B, P)
    tricks_won: npt.NDArray[np.int8]  # (B, P)
    trick: npt.NDArray[np.int8]  # (B, P) card on the table per seat, -1 = none
    leader: npt.NDArray[np.int8]  # (B,)
    trick_size: npt.NDArray[np.int8]  # (B,)
    lead_suit: npt.NDArray[np.int8]  # (B,) -1 before the lead
    tricks_played: npt.NDArray[np.int8]  # (B,)
    played: npt.NDArray[np.uint64]  # (B,) every card played this hand (table included)
    played_by: npt.NDArray[np.uint64]  # (B, P) cards played by each seat this hand
    card_trick: npt.NDArray[np.int8]  # (B, C) trick each card was played in, -1 = unplayed
    voids: npt.NDArray[np.uint8]  # (B, P) bit s: seat has shown it holds no suit s
    broken: npt.NDArray[np.bool_]  # (B,)
    passed: npt.NDArray[np.uint64]  # (B,) cards I passed in the exchange
    received: npt.NDArray[np.uint64]  # (B,) cards I received (0 until the exchange is done)
    scores: npt.NDArray[np.int32]  # (B, T)
    bags: npt.NDArray[np.int32]  # (B, T)
    hand_no: npt.NDArray[np.int32]  # (B,)

    @property
    def batch_size(self) -> int:
        return int(self.seat.shape[0])

    def take(self, games: npt.ArrayLike) -> SeatView:
        """The view of a subset of the batch (e.g. the games where one agent acts)."""
        idx = np.asarray(games)
        fields = {f: getattr(self, f)[idx] for f in self.__dataclass_fields__ if f != "rules"}
        return SeatView(rules=self.rules, **fields)


def hand_hidden(state: State, seats: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """RULES.md §2: a seat that may still bid blind nil has not looked at its hand."""
    rows = np.arange(state.batch_size)
    undecided = state.bids[rows, seats] < 0
    looking = (state.phase == BID) & (state.to_act == seats)
    return undecided & ~looking & (state.phase < PLAY) & blind_allowed(state, rows, seats)


def seat_view(state: State, seats: npt.ArrayLike | None = None) -> SeatView:
    """The structured view for `seats` ((B,) absolute seats; default: the seat to act)."""
    rules = state.rules
    b, p = state.batch_size, rules.num_players
    seat = (state.to_act if seats is None else np.broadcast_to(seats, (b,))).astype(np.int64)
    rows = np.arange(b)
    hidden = hand_hidden(state, seat)
    hand = np.where(hidden, np.uint64(0), state.hands[rows, seat] & ~state.played)
    played_by = np.zeros((b, p), dtype=np.uint64)
    bits = np.where(state.card_seat >= 0, np.uint64(1), np.uint64(0)) << np.arange(
        NUM_CARDS, dtype=np.uint64
    )
    for s in range(p):
        played_by[:, s] = np.bitwise_or.reduce(bits * (state.card_seat == s), axis=1)
    partner = (seat + p // 2) % p
    exchanged = state.phase >= PLAY
    return SeatView(
        rules=rules,
        seat=seat,
        hand=hand,
        hand_hidden=hidden,
        phase=state.phase.copy(),
        to_act=state.to_act.copy(),
        legal=np.where(seat == state.to_act, state.legal, np.uint64(0)),
        dealer=state.dealer.copy(),
        bids=state.bids.copy(),
        blind=state.blind.copy(),
        tricks_won=state.tricks_won.copy(),
        trick=state.trick.copy(),
        leader=state.leader.copy(),
        trick_size=state.trick_size.copy(),
        lead_suit=state.lead_suit.copy(),
        tricks_played=state.tricks_played.copy(),
        played=state.played.copy(),
        played_by=played_by,
        card_trick=state.card_trick.copy(),
        voids=state.voids.copy(),
        broken=state.broken.copy(),
        passed=state.passing[rows, seat].copy(),
        received=np.where(exchanged, state.passing[rows, partner], np.uint64(0)),
        scores=state.scores.copy(),
        bags=state.bags.copy(),
        hand_no=state.hand_no.copy(),
    )


def _one_hot(values: npt.NDArray, n: int) -> npt.NDArray[np.int16]:
    """(..., ) ints in 0..n-1 (others -> all zero) -> (..., n) int16."""
    return (values[..., None] == np.arange(n)).astype(np.int16)


def encode(state: State, seats: npt.ArrayLike | None = None) -> npt.NDArray[np.int16]:
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
        _one_hot(state.phase, NUM_PHASES),
        ((rel(state.voids)[..., None] >> np.arange(NUM_SUITS, dtype=np.uint8)) & 1).reshape(b, -1),
        state.hand_no[:, None],
    ]
    return np.concatenate([np.asarray(x).astype(np.int16) for x in parts], axis=1)
