"""The RL encodings of every seat of a `SingleGame`, kept up to date step by step.

Re-encoding a seat costs a batch of numpy calls; a step changes a handful of values.
`IncrementalObservation` writes just those values into one (P, obs_size) int16 buffer, so
observing a seat is a copy. tests/test_single.py checks the buffer against
`observation.encode` after every step of many random games and presets.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import CARD_SUIT, MAX_BID, NUM_CARDS
from spades_env.observation import encode, obs_slices
from spades_env.rules import Rules
from spades_env.state import BID, PLAY

_SUIT = [int(s) for s in CARD_SUIT]


class IncrementalObservation:
    """Mixin of `SingleGame`: the observation buffer and its updates.

    It reads the game's plain-Python fields (phase, to_act, hands, bids, ...) and writes
    `self.obs`; the game calls the `_obs_*` hooks as it steps.
    """

    def _setup_obs(self, rules: Rules) -> None:
        p = rules.num_players
        sl = obs_slices(rules)
        self._off = {k: v.start for k, v in sl.items()}
        self._phase_width = sl["phase"].stop - sl["phase"].start
        size = max(v.stop for v in sl.values())
        self.obs: npt.NDArray[np.int16] = np.zeros((p, size), dtype=np.int16)
        # _rot[v][o]: one-hot of absolute seat v relative to observer o; _rot[-1]: none.
        self._rot = [
            np.array([[int((v - o) % p == r) for r in range(p)] for o in range(p)], np.int16)
            for v in range(p)
        ] + [np.zeros((p, p), dtype=np.int16)]
        # Flat indices into obs for "seat s played card c", one per observer: [s, c, o].
        rows = np.arange(p)[None, None, :] * size
        rel = ((np.arange(p)[:, None, None] - np.arange(p)[None, None, :]) % p) * NUM_CARDS
        cards = np.arange(NUM_CARDS)[None, :, None]
        self._idx_played = (rows + sl["played_by"].start + rel + cards).astype(np.int64)
        self._idx_table = (rows + sl["table"].start + rel + cards).astype(np.int64)
        self._idx_trick = (rows[0] + sl["played_trick"].start + cards[0]).astype(np.int64)

    def _rebuild_obs(self) -> None:
        p = self._p
        many = self.state.take(np.zeros(p, dtype=np.int64))
        self.obs[:] = encode(many, np.arange(p))

    def _obs_turn(self, hands: bool = False) -> None:
        """Refresh phase, seat to act and leader; with `hands`, who can see their hand."""
        obs, off, p = self.obs, self._off, self._p
        ph = off["phase"]
        obs[:, ph : ph + self._phase_width] = 0
        obs[:, ph + self.phase] = 1
        ta = off["to_act"]
        obs[:, ta : ta + p] = self._rot[self.to_act]
        ld = off["leader"]
        obs[:, ld : ld + p] = self._rot[self.leader if self.trick_size > 0 else -1]
        if hands:
            self._refresh_hands()

    def _hidden(self, seat: int) -> bool:
        """RULES.md §2: a seat that may still bid blind nil has not seen its hand
        (mirrors observation.hand_hidden)."""
        if self.phase >= PLAY or self.bids[seat] >= 0:
            return False
        if self.phase == BID and self.to_act == seat:
            return False
        return self._blind_allowed(seat)

    def _refresh_hands(self) -> None:
        off = self._off["hand"]
        if self.rules.open_hands:  # RULES.md §6 open_hands: every seat sees every hand
            o, c, p = self._off["open_hands"], NUM_CARDS, self._p
            for s in range(p):
                for r in range(1, p):
                    h = self.hands[(s + r) % p] & ~self.played
                    self.obs[s, o + (r - 1) * c : o + r * c] = [h >> i & 1 for i in range(c)]
        for s in range(self._p):
            block = self.obs[s, off : off + NUM_CARDS]
            block[:] = 0
            if not self._hidden(s):
                h = self.hands[s] & ~self.played
                while h:
                    low = h & -h
                    block[low.bit_length() - 1] = 1
                    h ^= low

    def _obs_scores(self) -> None:
        """Scores and bags, own team first, for every observer."""
        t = self.rules.num_teams
        sc, bg = self._off["scores"], self._off["bags"]
        for o in range(self._p):
            own = o % t
            for k in range(t):
                team = (own + k) % t
                self.obs[o, sc + k] = max(-32768, min(32767, self.scores[team]))
                self.obs[o, bg + k] = self.bags[team]

    def _new_hand_obs(self) -> None:
        """The encoding at the start of a hand: only the position and the hands."""
        obs, off, p = self.obs, self._off, self._p
        obs[:] = 0
        self._obs_scores()
        dl = off["dealer"]
        obs[:, dl : dl + p] = self._rot[self.dealer]
        obs[:, off["hand_no"]] = self.hand_no
        w = MAX_BID + 2
        obs[:, off["bids"] : off["bids"] + p * w : w] = 1  # nobody has bid yet
        self._obs_turn(hands=True)

    def _obs_bid(self, seat: int, bid: int, blind: bool) -> None:
        off, w, p = self._off["bids"], MAX_BID + 2, self._p
        for o in range(p):
            r = (seat - o) % p
            self.obs[o, off + r * w] = 0
            self.obs[o, off + r * w + 1 + bid] = 1
            if blind:
                self.obs[o, self._off["blind"] + r] = 1

    def _obs_play(self, seat: int, card: int, leading: bool, shown: int) -> None:
        obs, off = self.obs, self._off
        flat = obs.reshape(-1)
        obs[seat, off["hand"] + card] = 0
        if self.rules.open_hands:
            for o in range(self._p):
                if o != seat:
                    r = (seat - o) % self._p
                    obs[o, off["open_hands"] + (r - 1) * NUM_CARDS + card] = 0
        flat[self._idx_played[seat, card]] = 1
        flat[self._idx_table[seat, card]] = 1
        flat[self._idx_trick[card]] = self.tricks_played + 1
        if leading:
            ls = off["lead_suit"]
            obs[:, ls : ls + 4] = 0
            obs[:, ls + _SUIT[card]] = 1
        if shown:
            for o in range(self._p):
                v = off["voids"] + ((seat - o) % self._p) * 4
                for s in range(4):
                    if shown >> s & 1:
                        obs[o, v + s] = 1
        if _SUIT[card] == self.trump:  # RULES.md §3: a trump played breaks trumps
            obs[:, off["broken"]] = 1

    def _obs_trump(self) -> None:
        """RULES.md §6 auction: the named trump suit, seen by every seat."""
        tr = self._off["trump"]
        self.obs[:, tr : tr + 4] = 0
        self.obs[:, tr + self.trump] = 1

    def _obs_trick_done(self, winner: int, trick: list[int]) -> None:
        obs, off, p = self.obs, self._off, self._p
        flat = obs.reshape(-1)
        for s in range(p):
            flat[self._idx_table[s, trick[s]]] = 0
        tw = off["tricks_won"]
        obs[:, tw : tw + p] += self._rot[winner]
        ls = off["lead_suit"]
        obs[:, ls : ls + 4] = 0
