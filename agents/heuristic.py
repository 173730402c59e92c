"""`heuristic`: a rule-based Spades player following seed 000's strategy.

Seed 000 "Så bjuder och spelar den som vill vinna" (how the player who wants to win bids
and plays), with its nil sections, is the whole playbook:

- bidding and nil (`agents.heuristic_bidding`): count sure tricks, discount lone
  honours, bid a little low but up when bags are near the penalty, use the bids already
  made; nil on low hands; blind nil only as a rescue when far behind; in RULES.md §6
  auction, count the hand with the trump suit it would name when it may win the
  auction, more cautiously otherwise, and name the suit of best length and honours;
- card play (`agents.heuristic_play`, compiled, with the counting of
  `agents.card_tracking`: only what the seat has seen): second hand low, third
  hand high enough, win cheaply, duck when the contract is safe, keep trumps for the
  right trick, count the spades, protect a partner's nil, set the opponents' nil, feed
  bags when set.

The agent is deterministic (the seed is kept for the interface). `explain(view)` gives
the reason for each game's decision, quoting the rule; `last_reasons` keeps those of the
last `act` call.

Parameters (`heuristic:aggression=0.2,nil_risk=0,blind_deficit=200`):

- `aggression` (float, 0): shades every bid; +0.5 bids about half a trick more.
- `nil_risk` (float, 0): extra danger a hand may carry and still bid nil; -2 never bids
  nil, +0.5 bids noticeably more nils.
- `blind_deficit` (int, 200): how far behind the team must be (with the opponents near
  the target) to bid blind nil when the rules offer it.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.heuristic_bidding import choose_bid, choose_blind, choose_pass, choose_trump
from agents.heuristic_draw import choose_draw
from agents.heuristic_play import choose_cards, reason_text
from agents.seat_table import Table, rows_from_view
from spades_env.cards import BID_BASE
from spades_env.observation import SeatView
from spades_env.state import BID, BLIND, DRAW, EXCHANGE, PLAY, TRUMP


class HeuristicAgent(BaseAgent):
    """Seed 000's strategy as rules; acts on a batch with a loop over its games."""

    name = "heuristic"

    def __init__(
        self,
        seed: int | None = None,
        aggression: float = 0.0,
        nil_risk: float = 0.0,
        blind_deficit: int = 200,
    ) -> None:
        super().__init__(seed)
        self.aggression = float(aggression)
        self.nil_risk = float(nil_risk)
        self.blind_deficit = int(blind_deficit)
        self.last_reasons: list[str] = []

    def decide(self, t: Table) -> tuple[int, str]:
        """One game before or outside the card play: (action, reason)."""
        if t.legal == 0:
            return 0, "no legal action: not this seat's turn, or the game is over"
        if t.phase == BID:
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

    def _decide_all(self, view: SeatView) -> tuple[npt.NDArray[np.int64], list[str]]:
        """Every game's action and reason: the card play in one compiled call, the other
        decisions one game at a time."""
        actions = np.zeros(view.batch_size, dtype=np.int64)
        reasons = [""] * view.batch_size
        play = (view.phase == PLAY) & (view.legal != 0)
        rows = np.flatnonzero(play)
        if rows.size:
            out = choose_cards(view, rows)
            actions[rows] = out[rows, 0]
            trump = view.trump.tolist()
            for i, (ctx, why, need) in zip(rows.tolist(), out[rows, 1:].tolist(), strict=True):
                reasons[i] = reason_text(ctx, why, need, trump[i])
        rest = np.flatnonzero(~play)
        for i, t in zip(rest.tolist(), rows_from_view(view, rest), strict=True):
            actions[i], reasons[i] = self.decide(t)
        return actions, reasons

    def explain(self, view: SeatView) -> list[str]:
        """The reason for each game's decision, quoting the rule that chose it."""
        return self._decide_all(view)[1]

    def act(self, view: SeatView, obs, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        del obs, mask  # the view carries the legal bits
        actions, self.last_reasons = self._decide_all(view)
        return actions
