"""The fast single-game path: one game stepped with scalar Python over the same `State`.

At batch size 1 a numpy call costs more than the work it does (PERF_NOTES.md), so the
PettingZoo env and tree search step single games here. This is not a second rule book:
it shares the engine's tables (card suits, trick strength, suit masks), hands every rare
or once-a-hand transition (exchange, end of hand, scoring, dealing) to the batched engine,
and is differential-tested against `engine.step` state-for-state on many random hands
(tests/test_single.py). It also keeps each seat's RL encoding up to date incrementally,
so that observing a seat is a copy rather than a re-encoding; tests check that buffer
against `observation.encode` after every step.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env import engine
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_BIT,
    CARD_SUIT,
    MAX_BID,
    NUM_ACTIONS,
    NUM_CARDS,
    SEE_HAND,
    SPADE_MASK,
    SPADES,
    SUIT_MASK,
    TWO_OF_CLUBS,
)
from spades_env.engine import (
    HISTORY_SEAT_SHIFT,
    PHASE_BASE,
    STRENGTH,
    HandResult,
    IllegalActionError,
    StepInfo,
    explain_illegal,
    legal_actions,
)
from spades_env.observation import encode, obs_slices
from spades_env.rules import Rules
from spades_env.state import BID, BLIND, DONE, PLAY, State, init

_SUIT = [int(s) for s in CARD_SUIT]
_STRENGTH = STRENGTH.tolist()  # [card][lead suit]
_SUIT_MASK = [int(m) for m in SUIT_MASK]
_SPADES = int(SPADE_MASK)
_NOT_SPADES = ((1 << 64) - 1) ^ _SPADES
_TWO_CLUBS = 1 << TWO_OF_CLUBS


class SingleGame:
    """One game of Spades with O(1)-numpy-call steps during the play of a hand.

    `state` is a batch-of-one `State`, always equal to what `engine.step` would produce.
    """

    def __init__(
        self,
        rules: Rules,
        rng: np.random.Generator | None = None,
        *,
        seed: int | None = None,
        deal: npt.ArrayLike | None = None,
        dealer: int | None = None,
        scores: npt.ArrayLike | None = None,
        bags: npt.ArrayLike | None = None,
    ) -> None:
        self.rules = rules
        seeds = None if seed is None else np.array([seed], dtype=np.uint64)
        if seeds is None and rng is None:
            rng = np.random.default_rng()
        self.state: State = init(
            rules,
            1,
            rng,
            seeds=seeds,
            deals=None if deal is None else np.asarray(deal)[None],
            dealer=dealer,
            scores=None if scores is None else np.asarray(scores)[None],
            bags=None if bags is None else np.asarray(bags)[None],
        )
        p = rules.num_players
        self._p = p
        sl = obs_slices(rules)
        self._off = {k: v.start for k, v in sl.items()}
        self._obs_size = sum(v.stop - v.start for v in sl.values())
        self._width_bids = MAX_BID + 2
        self.obs: npt.NDArray[np.int16] = np.zeros((p, self._obs_size), dtype=np.int16)
        # _rot[v][o] = one-hot of absolute seat v relative to observer o; _rot[-1] = zeros.
        self._rot = [
            np.array([[int((v - o) % p == r) for r in range(p)] for o in range(p)], np.int16)
            for v in range(p)
        ] + [np.zeros((p, p), dtype=np.int16)]
        flat = np.arange(p)[:, None] * self._obs_size
        rel = (np.arange(p)[None, :] - np.arange(p)[:, None]) % p  # rel[o, seat]
        # Flat indices into obs for "seat s played card c", one per observer: (P, C, P).
        cards = np.arange(NUM_CARDS)[None, :, None]
        seat_rel = rel.T[:, None, :]  # [s, _, o]
        self._idx_played = (
            flat.T[None] + sl["played_by"].start + seat_rel * NUM_CARDS + cards
        ).astype(np.int64)
        self._idx_table = (flat.T[None] + sl["table"].start + seat_rel * NUM_CARDS + cards).astype(
            np.int64
        )
        self._idx_trick = (
            flat[:, 0][None, :] + sl["played_trick"].start + np.arange(NUM_CARDS)[:, None]
        ).astype(np.int64)  # (C, P)
        self._rebuild_obs()
        quiet = StepInfo(
            hand_over=np.zeros(1, dtype=bool),
            hand_points=np.zeros((1, rules.num_teams), dtype=np.int32),
            illegal=np.zeros(1, dtype=bool),
            finished=None,
        )
        for arr in (quiet.hand_over, quiet.hand_points, quiet.illegal):
            arr.setflags(write=False)
        self._quiet = quiet  # shared by every step with nothing to report

    # ------------------------------------------------------------------ queries
    @property
    def phase(self) -> int:
        return int(self.state.phase[0])

    @property
    def to_act(self) -> int:
        return int(self.state.to_act[0])

    @property
    def done(self) -> bool:
        return self.phase == DONE

    def legal_mask(self) -> npt.NDArray[np.int8]:
        """(NUM_ACTIONS,) int8 legal actions of the seat to act."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        legal, base = int(self.state.legal[0]), int(PHASE_BASE[self.phase])
        while legal:
            low = legal & -legal
            mask[base + low.bit_length() - 1] = 1
            legal ^= low
        return mask

    def observe(self, seat: int) -> npt.NDArray[np.int16]:
        """The RL encoding of `seat` (a copy), equal to `observation.encode`."""
        return self.obs[seat].copy()

    # ------------------------------------------------------------------ step
    def step(self, action: int, on_illegal: str = "raise") -> StepInfo:
        """Apply the action of the seat to act; same contract as `engine.step`."""
        st = self.state
        phase = int(st.phase[0])
        a = int(action)
        rel = a - int(PHASE_BASE[phase]) if phase != DONE else -1
        legal = int(st.legal[0])
        if phase == DONE:
            return self._info(None, False)
        if not (0 <= rel < 64 and legal >> rel & 1):
            if on_illegal == "raise":
                seat = int(st.to_act[0])
                raise IllegalActionError(
                    0, seat, a, explain_illegal(st, 0, a), legal_actions(st, 0)
                )
            return self._info(None, True)
        seat = int(st.to_act[0])
        n = int(st.history_len[0])
        st.history[0, n] = (seat << HISTORY_SEAT_SHIFT) | a
        st.history_len[0] = n + 1
        if phase == PLAY:
            return self._play(seat, a)
        if phase == BID or (phase == BLIND and a == BLIND_NIL):
            return self._bid(seat, a)
        if phase == BLIND and a == SEE_HAND:
            st.phase[0] = BID
            st.legal[0] = self._bid_bits()
            self._obs_after_look(seat)
            return self._info(None, False)
        # The exchange is rare (an option, at most once a hand): the batched engine does it.
        st.history_len[0] = n
        info = engine.step(st, np.array([a]))
        self._rebuild_obs()
        return info

    def _info(self, finished: HandResult | None, illegal: bool) -> StepInfo:
        if finished is None and not illegal:
            return self._quiet
        t = self.rules.num_teams
        pts = np.zeros((1, t), dtype=np.int32)
        if finished is not None:
            pts[0] = finished.points[0] - finished.penalty[0]
        return StepInfo(
            hand_over=np.array([finished is not None]),
            hand_points=pts,
            illegal=np.array([illegal]),
            finished=finished,
        )

    # ------------------------------------------------------------------ bidding
    def _bid_bits(self) -> int:
        top = int(engine._bid_limit(self.state, slice(None))[0])
        return (2 << top) - 1

    def _bid(self, seat: int, a: int) -> StepInfo:
        st = self.state
        p = self._p
        blind = a == BLIND_NIL
        bid = 0 if blind else a - BID_BASE
        st.bids[0, seat] = bid
        st.blind[0, seat] = blind
        nb = int(st.num_bids[0]) + 1
        st.num_bids[0] = nb
        self._obs_bid(seat, bid, blind)
        if nb < p:
            nxt = (seat + 1) % p
            st.to_act[0] = nxt
            if bool(engine.blind_allowed(st, np.array([0]), np.array([nxt]))[0]):
                st.phase[0] = BLIND
                st.legal[0] = 0b11
            else:
                st.phase[0] = BID
                st.legal[0] = self._bid_bits()
            self._obs_turn()
            return self._info(None, False)
        if self.rules.blind_nil_exchange and st.blind[0].any():
            engine._after_bidding(st, np.array([0]))
            engine._update_legal(st)
            self._rebuild_obs()
            return self._info(None, False)
        # RULES.md §3: play starts with the first lead.
        if self.rules.first_lead == "two_of_clubs":
            leader = next(s for s in range(p) if int(st.hands[0, s]) & _TWO_CLUBS)
        else:
            leader = (int(st.dealer[0]) + 1) % p
        st.leader[0] = leader
        st.to_act[0] = leader
        st.phase[0] = PLAY
        st.legal[0] = self._play_bits(leader)
        self._obs_turn()
        self._refresh_hands()  # a blind-nil bidder looks at the hand once bidding is over
        return self._info(None, False)

    # ------------------------------------------------------------------ play
    def _play_bits(self, seat: int) -> int:
        """RULES.md §3 legality, on Python ints (mirrors engine._legal_cards)."""
        st = self.state
        h = int(st.hands[0, seat]) & ~int(st.played[0])
        if int(st.trick_size[0]) == 0:
            if self.rules.first_lead == "two_of_clubs" and int(st.tricks_played[0]) == 0:
                return h & _TWO_CLUBS
            non_spade = h & _NOT_SPADES
            return h if (bool(st.broken[0]) or non_spade == 0) else non_spade
        follow = h & _SUIT_MASK[int(st.lead_suit[0])]
        return follow if follow else h

    def _play(self, seat: int, a: int) -> StepInfo:
        st = self.state
        p = self._p
        st.played[0] = int(st.played[0]) | (1 << a)
        st.trick[0, seat] = a
        suit = _SUIT[a]
        size = int(st.trick_size[0])
        broken = bool(st.broken[0])
        shown = 0
        if size == 0:
            lead = suit
            st.lead_suit[0] = suit
            st.leader[0] = seat
            if suit == SPADES and not broken:
                shown = 0b1110
        else:
            lead = int(st.lead_suit[0])
            if suit != lead:
                shown = 1 << lead
        if shown:
            st.voids[0, seat] |= shown
        if suit == SPADES:
            st.broken[0] = True
        tricks_played = int(st.tricks_played[0])
        st.card_seat[0, a] = seat
        st.card_trick[0, a] = tricks_played
        self._obs_play(seat, a, tricks_played, size == 0, shown)
        size += 1
        if size < p:
            nxt = (seat + 1) % p
            st.trick_size[0] = size
            st.to_act[0] = nxt
            st.legal[0] = self._play_bits(nxt)
            self._obs_turn()
            return self._info(None, False)
        # RULES.md §3: the highest spade wins, else the highest card of the led suit.
        trick = st.trick[0].tolist()
        winner = max(range(p), key=lambda s: _STRENGTH[trick[s]][lead])
        st.tricks_won[0, winner] += 1
        st.leader[0] = winner
        st.to_act[0] = winner
        st.trick[0] = -1
        st.trick_size[0] = 0
        st.lead_suit[0] = -1
        st.tricks_played[0] = tricks_played + 1
        if tricks_played + 1 < self.rules.hand_size:
            st.legal[0] = self._play_bits(winner)
            self._obs_trick_done(winner, trick)
            return self._info(None, False)
        result = engine._end_hand(st, np.array([0]))
        engine._update_legal(st)
        self._rebuild_obs()
        return self._info(result, False)

    # ------------------------------------------------------------------ observations
    def _rebuild_obs(self) -> None:
        p = self._p
        both = self.state.take(np.zeros(p, dtype=np.int64))
        self.obs[:] = encode(both, np.arange(p))

    def _set_one_hot(self, block: str, width: int, value: int) -> None:
        """Set a one-hot block of a seat (relative to each observer) for every observer."""
        off = self._off[block]
        self.obs[:, off : off + width] = self._rot[value]

    def _obs_turn(self) -> None:
        """Phase, seat to act and leader after a step (cheap one-hot refresh)."""
        st, p, obs, off = self.state, self._p, self.obs, self._off
        phase, to_act = int(st.phase[0]), int(st.to_act[0])
        ph = off["phase"]
        obs[:, ph : ph + 5] = 0
        obs[:, ph + phase] = 1
        self._set_one_hot("to_act", p, to_act)
        leader = int(st.leader[0]) if int(st.trick_size[0]) > 0 else -1
        self._set_one_hot("leader", p, leader)
        if phase != BLIND and phase != BID:
            return
        # A seat may have just looked at its hand (RULES.md §2 blind nil): show it.
        self._refresh_hands()

    def _refresh_hands(self) -> None:
        from spades_env.observation import hand_hidden

        st, p = self.state, self._p
        both = st.take(np.zeros(p, dtype=np.int64))
        hidden = hand_hidden(both, np.arange(p))
        off = self._off["hand"]
        played = int(st.played[0])
        for s in range(p):
            block = self.obs[s, off : off + NUM_CARDS]
            block[:] = 0
            if not hidden[s]:
                h = int(st.hands[0, s]) & ~played
                while h:
                    low = h & -h
                    block[low.bit_length() - 1] = 1
                    h ^= low

    def _obs_after_look(self, seat: int) -> None:
        self._obs_turn()

    def _obs_bid(self, seat: int, bid: int, blind: bool) -> None:
        off, w, p = self._off["bids"], self._width_bids, self._p
        for o in range(p):
            r = (seat - o) % p
            base = off + r * w
            self.obs[o, base : base + w] = 0
            self.obs[o, base + 1 + bid] = 1
            if blind:
                self.obs[o, self._off["blind"] + r] = 1

    def _obs_play(self, seat: int, card: int, trick_no: int, leading: bool, shown: int) -> None:
        obs, off, p = self.obs, self._off, self._p
        flat = obs.reshape(-1)
        obs[seat, off["hand"] + card] = 0
        flat[self._idx_played[seat, card]] = 1
        flat[self._idx_table[seat, card]] = 1
        flat[self._idx_trick[card]] = trick_no + 1
        if leading:
            ls = off["lead_suit"]
            obs[:, ls : ls + 4] = 0
            obs[:, ls + _SUIT[card]] = 1
        if shown:
            for o in range(p):
                v = off["voids"] + ((seat - o) % p) * 4
                for s in range(4):
                    if shown >> s & 1:
                        obs[o, v + s] = 1
        if _SUIT[card] == SPADES:
            obs[:, off["broken"]] = 1

    def _obs_trick_done(self, winner: int, trick: list[int]) -> None:
        obs, off, p = self.obs, self._off, self._p
        flat = obs.reshape(-1)
        for s in range(p):
            flat[self._idx_table[s, trick[s]]] = 0
        tw = off["tricks_won"]
        obs[:, tw : tw + p] += self._rot[winner]
        ls = off["lead_suit"]
        obs[:, ls : ls + 4] = 0
        self._obs_turn()


def play_bits_reference(state: State, game: int) -> int:
    """The batched engine's legal cards of one game, as an int (for tests)."""
    return int(engine._legal_cards(state, np.array([game]))[0])


__all__ = ["SingleGame", "CARD_BIT"]
