"""Shared pieces of the Monte Carlo search agents (`pimc`, `ismcts`).

- `bid_then_search`: which decisions a search agent searches (all of them but RULES.md
  §6 two_player's draw, which the heuristic makes; with `bid=heuristic`, the card play).
- `state_from_world`: a batched engine `State` continuing one game of a seat's view in
  each of N sampled worlds (`agents.montecarlo.sampling`), so that rollouts run on the engine.
- `margins`: the reward of a finished hand to a team: its hand score (RULES.md §4, bag
  penalty included) minus the mean of the other teams' (the score the duplicate
  tournament compares; a team's own score alone would not see setting a contract).
- `greedy_actions`: a cheap rollout policy over the batch: lead the highest card, win a
  trick as cheaply as possible unless the partner is winning it, otherwise play the
  lowest card (trumps count as highest; compiled, `search_kernel._greedy`); bids by
  `quick_bid`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import numpy.typing as npt

from agents.heuristic.agent import HeuristicAgent
from agents.kernels.play import greedy_cards, quick_bid_rows
from spades_env.cards import NUM_CARDS
from spades_env.core.rule_functions import partner_of
from spades_env.engine import random_legal_actions, update_legal
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import BID, DONE, DRAW, PLAY, State, init

_TEMPLATES: dict[Rules, State] = {}
_CARD_BITS = np.uint64(1) << np.arange(NUM_CARDS, dtype=np.uint64)


_DRAWER = HeuristicAgent(bid="rules")  # RULES.md §6 two_player's draw decisions (deterministic)


def search_bidder(bid: str, agent: str, seed: int | None) -> HeuristicAgent | None:
    """The agent that makes a search agent's bidding decisions: None for `bid=search`
    (the search decides them too), the heuristic with rule text 000's count for
    `bid=heuristic` (`heuristic:bid=rules`), the heuristic with the fitted trick model
    for `bid=model` (`agents.heuristic.model_bids`)."""
    if bid == "search":
        return None
    if bid == "heuristic":
        return HeuristicAgent(seed, bid="rules")
    if bid == "model":
        return HeuristicAgent(seed, bid="model")
    raise ValueError(f"{agent}: bid {bid!r}; use search, heuristic or model")


def bid_then_search(
    bidder: HeuristicAgent | None, view: SeatView, decide: Callable[[SeatView, int], int]
) -> npt.NDArray[np.int64]:
    """A search agent's actions for a batch: `decide(view, g)` per game, except that with
    a `bidder` every decision before card play (bids, blind nil, naming trump, the
    exchange) is its, and RULES.md §6 two_player's draw is the heuristic's (the sampler
    needs the draw over: `agents.montecarlo.sampling`)."""
    out = np.zeros(view.batch_size, dtype=np.int64)
    before_play = (view.phase != PLAY) & (view.phase != DONE)
    given = (view.phase == DRAW) | (before_play if bidder is not None else False)
    if given.any():
        out[given] = (bidder or _DRAWER).act(view, None, None)[given]
    for g in np.flatnonzero(~given):
        out[g] = decide(view, int(g))
    return out


def state_from_world(view: SeatView, worlds: npt.ArrayLike, game: int = 0) -> State:
    """(N,) games: game `game` of the view, with the hidden hands of each world.

    `worlds` is (N, P) uint64 hands *now* (as `agents.montecarlo.sampling.sample_worlds` draws
    them); `State.hands` holds the cards played too, so each seat gets its world hand
    plus what it has played. Everything else is copied from the view. Not known to the
    seat and so not restored: the pre-exchange deal (`deal` = `hands`), the other seats'
    exchange choices, the action history and the deal key of later hands.
    """
    rules = view.rules
    w = np.atleast_2d(np.asarray(worlds, dtype=np.uint64))
    n, p, g = w.shape[0], rules.num_players, game
    template = _TEMPLATES.get(rules)
    if template is None:
        template = _TEMPLATES[rules] = init(rules, 1, seeds=[0])
    st = template.take(np.zeros(n, dtype=np.int64))
    played_by = view.played_by[g].astype(np.uint64)
    st.hands[:] = w | played_by[None, :]
    st.deal[:] = st.hands
    st.seed[:] = 0
    st.hand_no[:] = view.hand_no[g]
    st.dealer[:] = view.dealer[g]
    st.phase[:] = view.phase[g]
    st.to_act[:] = view.to_act[g]
    st.played[:] = view.played[g]
    st.bids[:] = view.bids[g]
    st.blind[:] = view.blind[g]
    st.num_bids[:] = int((view.bids[g] >= 0).sum())
    seat = int(view.seat[g])
    st.passing[:] = 0
    st.passing[:, seat] = view.passed[g]
    st.seen[:] = 0  # RULES.md §6 two_player: the discards I looked at; others' unknown
    st.seen[:, seat] = view.seen[g]
    if view.phase[g] >= PLAY:
        st.passing[:, partner_of(seat, p)] = view.received[g]
    st.trick[:] = view.trick[g]
    st.leader[:] = view.leader[g]
    st.trick_size[:] = view.trick_size[g]
    st.lead_suit[:] = view.lead_suit[g]
    st.tricks_played[:] = view.tricks_played[g]
    st.tricks_won[:] = view.tricks_won[g]
    st.broken[:] = view.broken[g]
    st.trump[:] = view.trump[g]
    st.voids[:] = view.voids[g]
    card_seat = np.full(NUM_CARDS, -1, dtype=np.int8)
    for s in range(p):
        card_seat[(played_by[s] & _CARD_BITS) != 0] = s
    st.card_seat[:] = card_seat
    st.card_trick[:] = view.card_trick[g]
    st.scores[:] = view.scores[g]
    st.bags[:] = view.bags[g]
    st.winner[:] = -1
    st.history[:] = -1
    st.history_len[:] = 0
    update_legal(st)
    return st


def margins(points: npt.ArrayLike, team: int) -> npt.NDArray[np.float64]:
    """(..., T) hand points -> (...,) the team's points minus the other teams' mean."""
    pts = np.asarray(points, dtype=np.float64)
    t = pts.shape[-1]
    others = (pts.sum(axis=-1) - pts[..., team]) / max(t - 1, 1)
    return pts[..., team] - others


# ----------------------------------------------------------------------------- policies
def quick_bid(hands: npt.NDArray[np.uint64], legal: npt.NDArray[np.uint64]) -> npt.NDArray:
    """(B,) bid actions: aces, guarded kings and the top and long spades, the legal bid
    nearest to that count (compiled, `search_kernel.quick_bid_hand`)."""
    out = np.empty(len(hands), dtype=np.int64)
    i64 = np.int64
    quick_bid_rows(np.asarray(hands, dtype=np.uint64).astype(i64),
                    np.asarray(legal, dtype=np.uint64).astype(i64), out)  # fmt: skip
    return out


def greedy_actions(state: State, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """The vectorised greedy policy (module doc); random outside play and bidding."""
    acts = random_legal_actions(state.legal, state.phase, rng)
    q = np.flatnonzero(state.phase == PLAY)
    if q.size:
        acts[q] = greedy_cards(state, q)  # compiled (agents.kernels.play._greedy)
    b = np.flatnonzero(state.phase == BID)
    if b.size:
        seat = state.to_act[b].astype(np.int64)
        acts[b] = quick_bid(state.hands[b, seat] & ~state.played[b], state.legal[b])
    return acts


POLICIES = ("heuristic", "greedy", "random")
