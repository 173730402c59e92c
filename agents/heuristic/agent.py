"""`heuristic`: a rule-based Spades player following rule text 000's strategy.

Rule text 000 "Så bjuder och spelar den som vill vinna" (how the player who wants to win bids
and plays), with its nil sections, is the playbook, except that on the standard table
the number or nil it bids is, by default, the one of highest expected team score under a
model of the tricks fitted to the project's own play (`agents.heuristic.model_bids`):

- bidding and nil by rule text 000's count (`agents.heuristic.bidding`; `bid=rules`, and
  every rule set but the standard table): count sure tricks, discount lone
  honours, bid a little low but up when bags are near the penalty, use the bids already
  made; nil on low hands; blind nil only as a rescue when far behind; in RULES.md §6
  auction, count the hand with the trump suit it would name when it may win the
  auction, more cautiously otherwise, and name the suit of best length and honours;
- card play (`agents.heuristic.play`, compiled, with the counting of
  `agents.heuristic.card_tracking`: only what the seat has seen): second hand low, third
  hand high enough, win cheaply, duck when the contract is safe, keep trumps for the
  right trick, count the spades, protect a partner's nil, set the opponents' nil, feed
  bags when set, and once the contract is made take the few tricks that set the
  opponents' contract.

The agent is deterministic (the seed is kept for the interface). `explain(view)` gives
the reason for each game's decision, quoting the rule; `last_reasons` keeps those of the
last `act` call.

Parameters (`heuristic:bid=model,bag_cost=-1,aggression=0,nil_risk=0,blind_deficit=200,
set_tricks=3`):

- `bid` (`model`, or `rules` when `aggression` or `nil_risk` is set): `model` bids the
  number or nil of highest expected team score under the trick model fitted to the
  project's own play (`agents.heuristic.model_bids`, `agents.heuristic.trick_model`; on the standard
  table, other rules fall back to `rules`); `rules` is rule text 000's count below, the
  heuristic's bidding before the model.
- `model` (path, the shipped `agents/heuristic/data/trick_model.json`): another fitted model file.
- `bag_cost` (float, -1): `bid=model` only: what a bag costs the bid choice; below 0,
  its share of the penalty (`bag_penalty / bag_limit`, 10 by default); 0 bids for the
  hand alone, as a hand-mode tournament scores it.
- `aggression` (float, 0): rule text 000's count only: shades every bid; +0.5 bids about half a
  trick more.
- `nil_risk` (float, 0): rule text 000's count only: extra danger a hand may carry and still bid
  nil; -2 never bids nil, +0.5 bids noticeably more nils.
- `blind_deficit` (int, 200): how far behind the team must be (with the opponents near
  the target) to bid blind nil when the rules offer it.
- `set_tricks` (int, 3): card play: once the team's contract is made (or lost), it still
  takes tricks while taking this many or fewer sets the opponents' contract, else it
  ducks; 2 is the card play before this parameter (`heuristic:bid=rules,set_tricks=2`
  is the heuristic as it was before the trick model), 13 always tries to set them.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.heuristic.bidding import choose_bid, choose_blind, choose_pass, choose_trump
from agents.heuristic.card_tracking import DEFAULT_SET_TRICKS
from agents.heuristic.draw import choose_draw
from agents.heuristic.model_bids import ModelBids, choose_model_bid, model_bids
from agents.heuristic.play import choose_cards, reason_text
from agents.heuristic.seat_table import Table, rows_from_view
from agents.heuristic.trick_features import context_features_batch, hand_features_batch
from agents.heuristic.trick_model import DEFAULT_PATH, applies, load_cached
from spades_env.cards import BID_BASE
from spades_env.observation import SeatView
from spades_env.state import BID, BLIND, DRAW, EXCHANGE, PLAY, TRUMP

#: the heuristic's bidders: the fitted trick model, or rule text 000's count
BIDDERS = ("model", "rules")


def bidder(bid: str | None, aggression: float, nil_risk: float) -> str:
    """The bidder a heuristic's parameters select: `bid`, or by default the model unless
    `aggression` or `nil_risk` (which shade rule text 000's count) are set. ValueError names
    a bad combination."""
    shaded = aggression != 0 or nil_risk != 0
    bid = bid if bid is not None else ("rules" if shaded else "model")
    if bid not in BIDDERS:
        raise ValueError(f"bid {bid!r}; use {' or '.join(BIDDERS)}")
    if bid == "model" and shaded:
        raise ValueError(
            "aggression and nil_risk shade rule text 000's count: use them with bid=rules"
        )
    return bid


def check_set_tricks(n: int) -> None:
    """ValueError unless `set_tricks` is 0..13 (tricks of the standard hand)."""
    if not 0 <= n <= 13:
        raise ValueError(f"set_tricks {n}; use 0..13")


def check_params(params: dict) -> None:
    """Registry check: a known bidder, a model file that loads, `set_tricks` in 0..13
    (ValueError, one line)."""
    check_set_tricks(params.get("set_tricks", DEFAULT_SET_TRICKS))
    bid = bidder(params.get("bid"), params.get("aggression", 0.0), params.get("nil_risk", 0.0))
    if bid == "model":
        load_cached(params.get("model") or str(DEFAULT_PATH))


class HeuristicAgent(BaseAgent):
    """Rule text 000's strategy as rules; acts on a batch with a loop over its games."""

    name = "heuristic"

    def __init__(
        self,
        seed: int | None = None,
        aggression: float = 0.0,
        nil_risk: float = 0.0,
        blind_deficit: int = 200,
        bid: str | None = None,
        model: str = "",
        bag_cost: float = -1.0,
        set_tricks: int = DEFAULT_SET_TRICKS,
    ) -> None:
        super().__init__(seed)
        try:
            self.bid = bid = bidder(bid, aggression, nil_risk)
        except ValueError as exc:
            raise ValueError(f"heuristic: {exc}") from None
        self.bag_cost = None if bag_cost < 0 else float(bag_cost)
        self.model = load_cached(model or str(DEFAULT_PATH)) if bid == "model" else None
        self.aggression = float(aggression)
        self.nil_risk = float(nil_risk)
        self.blind_deficit = int(blind_deficit)
        try:
            check_set_tricks(set_tricks)
        except ValueError as exc:
            raise ValueError(f"heuristic: {exc}") from None
        self.set_tricks = int(set_tricks)
        self._last_reasons: list[str] | Callable[[], list[str]] = []

    def decide(self, t: Table) -> tuple[int, str]:
        """One game before or outside the card play: (action, reason). `act` makes the
        trick model's bids of a whole batch at once (`_model_bids`), the same bids."""
        if t.legal == 0:
            return 0, "no legal action: not this seat's turn, or the game is over"
        if t.phase == BID:
            if self.model is not None and applies(t.rules):
                bid, why = choose_model_bid(t, t.dealer, self.model, self.bag_cost)
            else:
                bid, why = choose_bid(t, self.aggression, self.nil_risk)
            if not t.legal >> bid & 1:
                # RULES.md §6 forced bids (family no nil, suicide, mirror, whiz): the legal
                # bid nearest the hand's own choice, the lower one on a tie.
                forced = min(
                    (b for b in range(t.legal.bit_length()) if t.legal >> b & 1),
                    key=lambda b: (abs(b - bid), b),
                )
                why = f"{why}; the rules force {forced} (RULES.md §6)"
                bid = forced
            return BID_BASE + bid, why
        if t.phase == BLIND:
            return choose_blind(t, self.blind_deficit)
        if t.phase == EXCHANGE:
            return choose_pass(t)
        if t.phase == DRAW:
            return choose_draw(t)  # RULES.md §6 two_player
        if t.phase == TRUMP:
            return choose_trump(t)  # RULES.md §6 auction
        return 0, "game over"  # DONE: the engine ignores the action

    def _decide_all(self, view: SeatView) -> tuple[npt.NDArray[np.int64], Callable[[], list[str]]]:
        """Every game's action, and a function that puts their reasons into words (only
        `explain` and `last_reasons` read them): the card play in one compiled call, the
        trick model's bids in one vectorised pass, the other decisions one game at a time."""
        actions = np.zeros(view.batch_size, dtype=np.int64)
        play = (view.phase == PLAY) & (view.legal != 0)
        rows = np.flatnonzero(play)
        cards = None
        if rows.size:
            out = choose_cards(view, rows, self.set_tricks)
            actions[rows] = out[rows, 0]
            cards = (rows, out[rows, 1:], view.trump[rows])
        rest = np.flatnonzero(~play)
        bids: tuple[npt.NDArray[np.int64], ModelBids] | None = None
        if self.model is not None and applies(view.rules):
            k = rest[(view.phase[rest] == BID) & (view.legal[rest] != 0)]
            if k.size:  # the model picks among the legal bids: no bid to force
                picks = self._model_bids(view, k)
                actions[k] = BID_BASE + picks.bids
                bids = (k, picks)
                rest = np.setdiff1d(rest, k)
        said: list[str] = []
        for i, t in zip(rest.tolist(), rows_from_view(view, rest), strict=True):
            actions[i], why = self.decide(t)
            said.append(why)

        def reasons() -> list[str]:
            out = [""] * view.batch_size
            if cards is not None:
                for i, (ctx, why, need), trump in zip(*(a.tolist() for a in cards), strict=True):
                    out[i] = reason_text(ctx, why, need, trump)
            if bids is not None:
                for j, i in enumerate(bids[0].tolist()):
                    out[i] = bids[1].reason(j)
            for i, why in zip(rest.tolist(), said, strict=True):
                out[i] = why
            return out

        return actions, reasons

    def _model_bids(self, view: SeatView, rows: npt.NDArray[np.int64]) -> ModelBids:
        """The trick model's bids of the bidding games `rows` (standard table)."""
        seat = view.seat[rows].astype(np.int64)
        bids = view.bids[rows].astype(np.int64)
        context = context_features_batch(
            seat, view.dealer[rows], bids, view.scores[rows], view.bags[rows]
        )
        x = np.column_stack([hand_features_batch(view.hand[rows]), context])
        partner = bids[np.arange(len(rows)), (seat + 2) % 4]
        return model_bids(self.model, x, partner, view.legal[rows], view.rules, self.bag_cost)

    def explain(self, view: SeatView) -> list[str]:
        """The reason for each game's decision, quoting the rule that chose it."""
        return self._decide_all(view)[1]()

    @property
    def last_reasons(self) -> list[str]:
        """The reasons of the last `act` call's decisions (put into words when read)."""
        if not isinstance(self._last_reasons, list):
            self._last_reasons = self._last_reasons()
        return self._last_reasons

    def act(self, view: SeatView, obs, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        del obs, mask  # the view carries the legal bits
        actions, self._last_reasons = self._decide_all(view)
        return actions
