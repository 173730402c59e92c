"""The fast single-game path: one game stepped in plain Python, for env loops and search.

At batch size 1 a numpy call costs more than the work it does (PERF_NOTES.md), so the
PettingZoo env and tree search step single games here. It holds the very fields of
`State` for one game as Python ints and lists (`SingleGame.state` turns them into a
batch-of-one `State` on demand, `SingleGame.from_state` goes the other way).

This is not a second rule book. It shares the engine's tables (card suits, trick
strength by trump suit, suit masks, RULES.md §6 auction's choice of the trump namer); it
hands every rare or once-a-hand transition (exchange, the
two_player draw, end of hand, scoring, bags, dealing, the end of the game) to the batched
engine; and it is
differential-tested against `engine.step`, state for state, over many random hands and
rules options (tests/test_single.py). It also keeps every seat's RL encoding up to date
incrementally, so observing a seat is a copy; tests check that buffer against
`observation.encode` after every step.
"""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import numpy.typing as npt

from spades_env import engine, hand_flow
from spades_env.auction import NOT_TRUMP, TRUMP_BITS, TRUMP_STRENGTH, initial_trump, namer_one
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_SUIT,
    NAME_TRUMP,
    NUM_ACTIONS,
    NUM_CARDS,
    SEE_HAND,
    SUIT_MASK,
    TWO_OF_CLUBS,
    action_index,
)
from spades_env.engine import (
    HISTORY_SEAT_SHIFT,
    PHASE_BASE,
    HandResult,
    IllegalActionError,
    StepInfo,
    explain_illegal,
    legal_actions,
)
from spades_env.hand_flow import settle_hands
from spades_env.legality import update_legal
from spades_env.rules import Rules
from spades_env.single_obs import IncrementalObservation
from spades_env.state import (
    BID,
    BLIND,
    DONE,
    DRAW,
    EXCHANGE,
    PLAY,
    TRUMP,
    State,
    deal_hands,
    first_dealer,
    init,
)
from spades_env.variants import bid_bits_one

_SUIT = [int(s) for s in CARD_SUIT]
_STRENGTH = TRUMP_STRENGTH.tolist()  # [trump][card][lead suit]
_SUIT_MASK = [int(m) for m in SUIT_MASK]
_NOT_TRUMP = [int(m) for m in NOT_TRUMP]  # [trump]: every card outside the trump suit
_TWO_CLUBS = 1 << TWO_OF_CLUBS
_PHASE_BASE = [int(b) for b in PHASE_BASE]

#: State fields held per seat (lists of length P) or per card (length C) or per team.
_SCALARS = (
    "seed", "hand_no", "dealer", "phase", "to_act", "played", "legal", "num_bids",
    "leader", "trick_size", "lead_suit", "tricks_played", "broken", "winner", "history_len",
    "stock_pos", "trump",
)  # fmt: skip
_VECTORS = (
    "deal", "hands", "bids", "blind", "passing", "trick", "tricks_won", "voids",
    "card_seat", "card_trick", "scores", "bags", "history", "stock", "seen",
)  # fmt: skip


class SingleGame(IncrementalObservation):
    """One game of Spades whose play steps cost a few microseconds.

    Same contract as `engine.step` on a batch of one: `step(action)` returns a
    `StepInfo`, and `state` equals the `State` the batched engine would hold.
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
        seeds = None if seed is None else np.array([seed], dtype=np.uint64)
        if seeds is None and rng is None:
            rng = np.random.default_rng()
        state = init(
            rules,
            1,
            rng,
            seeds=seeds,
            deals=None if deal is None else np.asarray(deal)[None],
            dealer=dealer,
            scores=None if scores is None else np.asarray(scores)[None],
            bags=None if bags is None else np.asarray(bags)[None],
        )
        self._setup(rules)
        self._load(state)
        self._rebuild_obs()

    @classmethod
    def from_state(cls, state: State, game: int = 0) -> SingleGame:
        """A single game continuing game `game` of a batched state."""
        self = cls.__new__(cls)
        self._setup(state.rules)
        self._load(state.take([game]))
        self._rebuild_obs()
        return self

    def restart(self, seed: int) -> None:
        """Start a new game in place with deal key `seed`, as `SingleGame(rules, seed=seed)`
        would, without going through the batched engine (milliseconds saved per game)."""
        key = np.array([seed], dtype=np.uint64)
        self.seed, self.hand_no, self.winner = int(seed), 0, -1
        self.scores = [0] * self.rules.num_teams
        self.bags = [0] * self.rules.num_teams
        self.dealer = int(first_dealer(self.rules, key)[0])
        self._start_hand(deal_hands(self.rules, key, np.zeros(1, dtype=np.int32))[0].tolist())

    def clone(self) -> SingleGame:
        """An independent copy (for search)."""
        new = copy.copy(self)
        for name in _VECTORS:
            setattr(new, name, list(getattr(self, name)))
        new.obs = self.obs.copy()
        return new

    def _setup(self, rules: Rules) -> None:
        p = rules.num_players
        self.rules, self._p = rules, p
        self._setup_obs(rules)
        quiet = StepInfo(
            hand_over=np.zeros(1, dtype=bool),
            hand_points=np.zeros((1, rules.num_teams), dtype=np.int32),
            illegal=np.zeros(1, dtype=bool),
            finished=None,
        )
        for arr in (quiet.hand_over, quiet.hand_points, quiet.illegal):
            arr.setflags(write=False)
        self._quiet = quiet  # shared by every step with nothing to report

    # ------------------------------------------------------------------ State <-> fields
    def _load(self, state: State) -> None:
        for name in _SCALARS:
            value = getattr(state, name)[0]
            setattr(self, name, bool(value) if value.dtype == bool else int(value))
        for name in _VECTORS:
            setattr(self, name, getattr(state, name)[0].tolist())

    @property
    def state(self) -> State:
        """The game as a batch-of-one `State` (a new object each time)."""
        template = _TEMPLATES.get(self.rules)
        if template is None:
            template = _TEMPLATES[self.rules] = init(self.rules, 1, seeds=[0])
        values = {}
        for f in dataclasses.fields(State):
            if f.name == "rules":
                continue
            like = getattr(template, f.name)
            values[f.name] = np.array([getattr(self, f.name)], dtype=like.dtype)
        return State(rules=self.rules, **values)

    # ------------------------------------------------------------------ queries
    @property
    def done(self) -> bool:
        return self.phase == DONE

    def legal_list(self) -> list[int]:
        """The legal actions of the seat to act."""
        out, legal, base = [], self.legal, _PHASE_BASE[self.phase]
        while legal:
            low = legal & -legal
            out.append(base + low.bit_length() - 1)
            legal ^= low
        return out

    def legal_mask(self) -> npt.NDArray[np.int8]:
        """(NUM_ACTIONS,) int8 legal actions of the seat to act."""
        mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
        mask[self.legal_list()] = 1
        return mask

    def observe(self, seat: int) -> npt.NDArray[np.int16]:
        """The RL encoding of `seat` (a copy), equal to `observation.encode`."""
        return self.obs[seat].copy()

    # ------------------------------------------------------------------ step
    def step(self, action: int, on_illegal: str = "raise") -> StepInfo:
        """Apply the action of the seat to act; same contract as `engine.step`."""
        phase = self.phase
        if phase == DONE:
            return self._quiet
        # whole numbers only: never truncate 54.7 to a bid (cards.py)
        a = action if type(action) is int else action_index(action)
        rel = a - _PHASE_BASE[phase]
        if not (0 <= rel < 64 and self.legal >> rel & 1):
            if on_illegal == "raise":
                st = self.state
                raise IllegalActionError(
                    0, self.to_act, a, explain_illegal(st, 0, a), legal_actions(st, 0)
                )
            return self._info(None, True)
        if phase in (EXCHANGE, DRAW):
            # rare (an option, once a hand) or two_player's draw: the batched engine
            return self._via_engine(a)
        seat = self.to_act
        self.history[self.history_len] = (seat << HISTORY_SEAT_SHIFT) | a
        self.history_len += 1
        if phase == PLAY:
            return self._play(seat, a)
        if phase == BID or a == BLIND_NIL:
            return self._bid(seat, a)
        if phase == TRUMP:  # RULES.md §6 auction: the highest bidder names trump
            self.trump = a - NAME_TRUMP
            self._obs_trump()
            return self._after_naming()
        if a == SEE_HAND:  # RULES.md §2: declined blind nil; looks at the hand and bids
            self.phase = BID
            self.legal = self._bid_bits()
            self._obs_turn(hands=True)
        return self._quiet

    def _via_engine(self, action: int) -> StepInfo:
        state = self.state
        info = engine.step(state, np.array([action]))
        self._load(state)
        self._rebuild_obs()
        return info

    def _flow_via_engine(self, transition) -> StepInfo:
        """A once-a-hand transition (exchange, two_player's draw) run by the engine."""
        state = self.state
        transition(state, np.zeros(1, dtype=np.int64))
        update_legal(state)
        self._load(state)
        self._rebuild_obs()
        return self._quiet

    def _info(self, finished: HandResult | None, illegal: bool) -> StepInfo:
        pts = np.zeros((1, self.rules.num_teams), dtype=np.int32)
        if finished is not None:
            pts[0] = finished.points[0] - finished.penalty[0]
        # StepInfo(hand_over, hand_points, illegal, finished)
        return StepInfo(np.array([finished is not None]), pts, np.array([illegal]), finished)

    # ------------------------------------------------------------------ bidding
    def _blind_allowed(self, seat: int) -> bool:
        """RULES.md §2 option blind_nil (mirrors engine.blind_allowed)."""
        mode = self.rules.blind_nil
        if mode == "never":
            return False
        if self.rules.bid_constraint == "suicide" and self.bids[(seat + 2) % 4] == 0:
            return False  # RULES.md §6 suicide: the partner's nil is the team's nil
        if mode == "always":
            return True
        team = seat % self.rules.num_teams
        others = [s for t, s in enumerate(self.scores) if t != team]
        return max(others) - self.scores[team] >= 100

    def _bid_bits(self) -> int:
        """RULES.md §2: bids 0..hand_size, capped by max_total_bid (bit i = bid i);
        RULES.md §6: the preset's bid constraint (spades_env/variants.py)."""
        rules, seat = self.rules, self.to_act
        top = rules.max_bid
        if rules.max_total_bid is not None:
            top = min(top, rules.max_total_bid - sum(b for b in self.bids if b > 0))
        partner = self.bids[(seat + 2) % 4] if rules.partnerships else -1
        return bid_bits_one(rules, top, self.hands[seat], partner)

    def _bid(self, seat: int, a: int) -> StepInfo:
        p = self._p
        blind = a == BLIND_NIL
        bid = 0 if blind else a - BID_BASE
        self.bids[seat] = bid
        self.blind[seat] = blind
        self.num_bids += 1
        self._obs_bid(seat, bid, blind)
        if self.num_bids < p:
            nxt = (seat + 1) % p
            self.to_act = nxt
            if self._blind_allowed(nxt):
                self.phase, self.legal = BLIND, 0b11
            else:
                self.phase, self.legal = BID, self._bid_bits()
            # RULES.md §6 suicide: a nil ends the partner's blind-nil option, so it looks.
            self._obs_turn(hands=blind or (bid == 0 and self.rules.bid_constraint == "suicide"))
            return self._quiet
        if self.rules.trump == "named":
            # RULES.md §6 auction: the highest bidder, first among equals, names trump.
            self.to_act = namer_one(p, self.dealer, self.bids)
            self.phase, self.legal = TRUMP, TRUMP_BITS
            self._obs_turn(hands=True)  # a blind-nil bidder looks once bidding is over
            return self._quiet
        return self._after_naming()

    def _after_naming(self) -> StepInfo:
        """Bidding (and naming trump) over: the exchange (via the engine) or the play."""
        p = self._p
        if self.rules.blind_nil_exchange and any(self.blind):
            return self._flow_via_engine(hand_flow.after_naming)
        # RULES.md §3: the first lead.
        if self.rules.first_lead == "two_of_clubs":
            leader = next(s for s in range(p) if self.hands[s] & _TWO_CLUBS)
        else:
            leader = (self.dealer + 1) % p
        self.leader = self.to_act = leader
        self.phase = PLAY
        self.legal = self._play_bits(leader)
        self._obs_turn(hands=True)  # a blind-nil bidder looks once bidding is over
        return self._quiet

    # ------------------------------------------------------------------ play
    def _play_bits(self, seat: int) -> int:
        """RULES.md §3 legality on Python ints (mirrors legality.legal_cards)."""
        h = self.hands[seat] & ~self.played
        if self.trick_size == 0:
            if self.rules.first_lead == "two_of_clubs" and self.tricks_played == 0:
                return h & _TWO_CLUBS
            non_trump = h & _NOT_TRUMP[self.trump]  # RULES.md §3, §6 auction: the trump
            return h if (self.broken or non_trump == 0) else non_trump
        follow = h & _SUIT_MASK[self.lead_suit]
        return follow if follow else h

    def _play(self, seat: int, a: int) -> StepInfo:
        p = self._p
        self.played |= 1 << a
        self.trick[seat] = a
        suit = _SUIT[a]
        shown = 0
        leading = self.trick_size == 0
        trump = self.trump
        if leading:
            self.lead_suit = suit
            if suit == trump and not self.broken:
                # RULES.md §3: led a trump unbroken, so held only trumps
                shown = 0b1111 ^ (1 << trump)
        elif suit != self.lead_suit:
            shown = 1 << self.lead_suit  # did not follow: void in the led suit
        if shown:
            self.voids[seat] |= shown
        if suit == trump:
            self.broken = True
        self.card_seat[a] = seat
        self.card_trick[a] = self.tricks_played
        self._obs_play(seat, a, leading, shown)
        self.trick_size += 1
        if self.trick_size < p:
            self.to_act = (seat + 1) % p
            self.legal = self._play_bits(self.to_act)
            self._obs_turn()
            return self._quiet
        # RULES.md §3: the highest trump wins, else the highest card of the led suit.
        trick, lead, strength = self.trick, self.lead_suit, _STRENGTH[trump]
        winner = max(range(p), key=lambda s: strength[trick[s]][lead])
        self._obs_trick_done(winner, trick)
        self.tricks_won[winner] += 1
        self.leader = self.to_act = winner
        self.trick = [-1] * p
        self.trick_size = 0
        self.lead_suit = -1
        self.tricks_played += 1
        if self.tricks_played < self.rules.hand_size:
            self.legal = self._play_bits(winner)
            self._obs_turn()
            return self._quiet
        return self._info(self._end_hand(), False)

    def _end_hand(self) -> HandResult:
        """Score the hand, carry bags, decide the game, deal the next hand (RULES.md §4-§5).

        The arithmetic is the engine's own (`hand_flow.settle_hands`, `deal_hands`); only
        the bookkeeping of the fields is done here.
        """
        rules, p = self.rules, self._p
        result = settle_hands(
            rules,
            {
                "games": np.zeros(1, dtype=np.int64),
                "seed": np.array([self.seed], dtype=np.uint64),
                "hand_no": np.array([self.hand_no], dtype=np.int32),
                "dealer": np.array([self.dealer], dtype=np.int8),
                "deal": np.array([self.deal], dtype=np.uint64),
                "bids": np.array([self.bids], dtype=np.int8),
                "blind": np.array([self.blind], dtype=bool),
                "history": np.array([self.history], dtype=np.int16),
                "history_len": np.array([self.history_len], dtype=np.int16),
                "tricks": np.array([self.tricks_won], dtype=np.int8),
                "trump": np.array([self.trump], dtype=np.int8),
                "scores_before": np.array([self.scores], dtype=np.int32),
                "bags_before": np.array([self.bags], dtype=np.int32),
            },
        )
        scores, bags, over, winner = result.scores, result.bags, result.game_over, result.winner
        self.scores, self.bags = scores[0].tolist(), bags[0].tolist()
        self.hand_no += 1
        if over[0]:
            self.phase, self.winner, self.legal = DONE, int(winner[0]), 0
            self._obs_turn()
            self._obs_scores()
            self.obs[:, self._off["hand_no"]] = self.hand_no
            return result
        # RULES.md §1: the deal passes one seat clockwise; deal the next hand.
        self.dealer = (self.dealer + 1) % p
        deal = deal_hands(rules, np.array([self.seed], dtype=np.uint64), np.array([self.hand_no]))
        self._start_hand(deal[0].tolist())
        return result

    def _start_hand(self, deal: list[int]) -> None:
        """Mirror of engine.start_hand for one game."""
        if self.rules.draw:  # RULES.md §6 two_player: the draw goes through the engine
            self._flow_via_engine(engine.start_hand)
            return
        p = self._p
        self.deal, self.hands = list(deal), list(deal)
        self.played = 0
        self.bids, self.blind, self.num_bids = [-1] * p, [False] * p, 0
        self.passing, self.trick = [0] * p, [-1] * p
        self.trick_size, self.lead_suit, self.tricks_played = 0, -1, 0
        self.tricks_won, self.broken, self.voids = [0] * p, False, [0] * p
        self.trump = initial_trump(self.rules)
        self.card_seat, self.card_trick = [-1] * NUM_CARDS, [-1] * NUM_CARDS
        self.history = [-1] * len(self.history)
        self.history_len = 0
        first = (self.dealer + 1) % p  # RULES.md §2: bidding starts left of the dealer
        self.to_act = first
        if self._blind_allowed(first):
            self.phase, self.legal = BLIND, 0b11
        else:
            self.phase, self.legal = BID, self._bid_bits()
        self._new_hand_obs()


_TEMPLATES: dict[Rules, State] = {}
