"""What a seat knows: the RL information-state encoding and the structured view.

Both hold exactly what a perfect-recall player in that seat knows and nothing more:
its own hand (hidden while it may still bid blind nil, RULES.md §2), every bid, every
card played with who played it and in which trick, the trick on the table, tricks won,
scores, bags, the dealer, trumps broken, the trump suit (RULES.md §6 auction), the phase,
the exchange cards it passed and received, and the voids every player has shown.

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
broken                 1           trumps broken (spades, or auction's named suit)
phase                  5 (6, 7)    one-hot blind / bid / exchange / play / done (/ draw:
                                   6 slots with RULES.md §6 two_player; / trump: 7 slots
                                   with trump="named", the draw slot 0 unless drawing)
voids                  P * 4       [r, s]: seat r has shown it holds no suit s
hand_no                1           hands completed in this game
open_hands             (P-1) * C   RULES.md §6 open_hands only (else size 0): [r-1, c] 1 if
                                   relative seat r (1..P-1) holds card c now
looking                C (or 0)    two_player only: the top card of the stock while I
                                   decide to keep or discard it (DRAW phase, my turn)
seen                   C (or 0)    two_player only: cards I looked at and discarded
stock                  1 (or 0)    two_player only: cards left in the stock
trump                  4 (or 0)    trump="named" (RULES.md §6 auction) only: one-hot of
                                   the named trump suit (spades, hearts, diamonds,
                                   clubs), all 0 while it is not named yet
=====================  ==========  ====================================================

In two_player the hand block shows my hand as it grows during the draw; the cards
discarded unseen (after a kept card) are in no block of anyone's encoding.

The same information packed into bit-planes (a tenth of the bytes; the Gymnasium envs'
``obs_format="bits"``) is `obs_bits.encode_bits`; `obs_bits.unpack_bits` turns it back
into this encoding.

Version history: 1 the standard table; 2 the RULES.md §6 presets: P = 3..5 seats and
T = 2 (partnerships) or P (one-player teams) change the block sizes, jokers use card
slots 52/53, and the `open_hands` block is appended (size 0 unless the option is on, so
the standard layout is unchanged); 3 RULES.md §6 two_player: the action space grows
to 76 (cards.py: keep / discard), the phase block has a sixth slot and the `looking`,
`seen` and `stock` blocks are appended for two_player only (the layout of every other
preset is the same as in version 2); 4 RULES.md §6 auction: the action space grows to 80
(cards.py: name trump), rules with trump="named" get a seventh phase slot (trump) and
the `trump` block appended, and `broken` means the named trump broken (the layout of
every preset with trump="spades" is the same as in version 3).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spades_env.cards import NUM_CARDS
from spades_env.core.layout import obs_blocks as obs_blocks
from spades_env.core.layout import obs_size as obs_size
from spades_env.core.layout import obs_slices as obs_slices
from spades_env.core.layout import phase_slots as phase_slots
from spades_env.engine import blind_allowed
from spades_env.rules import Rules
from spades_env.state import BID, PLAY, State, seat_rows
from spades_env.stock_draw import looking

OBS_VERSION = 4


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
    looking: npt.NDArray[np.int64]  # (B,) two_player: top card I decide on now, else -1
    seen: npt.NDArray[np.uint64]  # (B,) two_player: cards I looked at and discarded
    trump: npt.NDArray[np.int8]  # (B,) the trump suit (spades; auction: named, -1 before)

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
    seat = state.to_act.astype(np.int64) if seats is None else seat_rows(rules, seats, b)
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
        looking=looking(state, seat),
        seen=state.seen[rows, seat].copy(),
        trump=state.trump.copy(),
    )


def encode(state: State, seats: npt.ArrayLike | None = None) -> npt.NDArray[np.int16]:
    """(B, obs_size) int16 information-state encoding for `seats` (default: to act).

    Written by the compiled core (core/observe.py); tests compare it with a plain one-hot
    reference implementation (tests/observation_reference.py).
    """
    from spades_env.core.observe import encode_rows, obs_offsets
    from spades_env.core.rules_vector import rules_vector

    b = state.batch_size
    # the compiled encoder indexes by seat unchecked: a seat off the table is refused here
    seat = state.to_act.astype(np.int64) if seats is None else seat_rows(state.rules, seats, b)
    out = np.empty((b, obs_size(state.rules)), dtype=np.int16)
    encode_rows(rules_vector(state.rules), obs_offsets(state.rules), state.buffer, seat, out)
    return out
