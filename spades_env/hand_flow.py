"""The flow of a hand: dealing, bidding (with blind nil), naming trump (RULES.md §6
auction), the exchange, the first lead, and the end of a hand (scoring, bags, the end of
the game, the next deal).

RULES.md §1-§5. `engine.step` calls these for the games that reach each transition;
they work on rows of a batched `State` in place.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spades_env.auction import initial_trump, open_naming
from spades_env.cards import CARD_BIT, TWO_OF_CLUBS
from spades_env.draw import start_draw
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, game_result, score_hand
from spades_env.state import BID, BLIND, DONE, EXCHANGE, PLAY, State, deal_hands
from spades_env.variants import blind_blocked


@dataclass(frozen=True)
class HandResult:
    """The hands that finished in one step (K of them), for records and rewards."""

    games: npt.NDArray[np.int64]  # (K,) game index in the batch
    seed: npt.NDArray[np.uint64]  # (K,) game seed
    hand_no: npt.NDArray[np.int32]  # (K,) 0-based number of this hand in its game
    dealer: npt.NDArray[np.int8]  # (K,)
    deal: npt.NDArray[np.uint64]  # (K, P) hands as dealt
    bids: npt.NDArray[np.int8]  # (K, P)
    blind: npt.NDArray[np.bool_]  # (K, P)
    history: npt.NDArray[np.int16]  # (K, H) (seat << 7) | action, -1 padded
    history_len: npt.NDArray[np.int16]  # (K,)
    tricks: npt.NDArray[np.int8]  # (K, P) tricks per seat
    trump: npt.NDArray[np.int8]  # (K,) the hand's trump suit (RULES.md §6 auction)
    scores_before: npt.NDArray[np.int32]  # (K, T)
    bags_before: npt.NDArray[np.int32]  # (K, T)
    points: npt.NDArray[np.int32]  # (K, T) hand score before the bag penalty
    bags_gained: npt.NDArray[np.int32]  # (K, T)
    penalty: npt.NDArray[np.int32]  # (K, T) bag penalties applied after this hand
    scores: npt.NDArray[np.int32]  # (K, T) cumulative after the hand
    bags: npt.NDArray[np.int32]  # (K, T) bag counters after the hand
    game_over: npt.NDArray[np.bool_]  # (K,)
    winner: npt.NDArray[np.int8]  # (K,) winning team or -1


def _partner(rules: Rules) -> npt.NDArray[np.int64]:
    p = rules.num_players
    return np.array([(s + p // 2) % p for s in range(p)], dtype=np.int64)


def blind_allowed(state: State, rows: npt.NDArray[np.int64], seats: npt.ArrayLike) -> npt.NDArray:
    """RULES.md §2 option blind_nil: may `seats` declare blind nil now."""
    rules = state.rules
    n = len(rows)
    if rules.blind_nil == "never":
        return np.zeros(n, dtype=bool)
    seats = np.broadcast_to(np.asarray(seats, dtype=np.int64), (n,))
    if rules.bid_constraint == "suicide":
        partner = state.bids[rows, (seats + rules.num_players // 2) % rules.num_players]
        allowed = ~blind_blocked(rules, partner)
    else:
        allowed = np.ones(n, dtype=bool)
    if rules.blind_nil == "always":
        return allowed
    team = seats % rules.num_teams
    sc = state.scores[rows]
    own = sc[np.arange(n), team]
    sc_other = sc.copy()
    sc_other[np.arange(n), team] = np.iinfo(np.int32).min
    return allowed & (sc_other.max(axis=1) - own >= 100)


def start_hand(state: State, rows: npt.NDArray[np.int64], given=None) -> None:
    """Deal hand `hand_no` of each game in `rows` and open the bidding."""
    rules = state.rules
    if rows.size == 0:
        return
    deal = deal_hands(rules, state.seed[rows], state.hand_no[rows]) if given is None else given
    state.deal[rows] = deal
    state.hands[rows] = deal
    state.played[rows] = 0
    state.legal[rows] = 0
    state.bids[rows] = -1
    state.blind[rows] = False
    state.num_bids[rows] = 0
    state.passing[rows] = 0
    state.trick[rows] = -1
    state.trick_size[rows] = 0
    state.lead_suit[rows] = -1
    state.tricks_played[rows] = 0
    state.tricks_won[rows] = 0
    state.broken[rows] = False
    state.trump[rows] = initial_trump(rules)
    state.voids[rows] = 0
    state.card_seat[rows] = -1
    state.card_trick[rows] = -1
    state.history[rows] = -1
    state.history_len[rows] = 0
    if rules.draw and given is None:
        start_draw(state, rows)  # RULES.md §6 two_player: draw the hands, then bid
        return
    _open_bidding(state, rows)


def _open_bidding(state: State, rows: npt.NDArray[np.int64]) -> None:
    """RULES.md §2: bidding starts left of the dealer."""
    rules = state.rules
    first = (state.dealer[rows].astype(np.int64) + 1) % rules.num_players
    state.to_act[rows] = first
    state.phase[rows] = np.where(blind_allowed(state, rows, first), BLIND, BID)


def _advance_bidding(state: State, rows: npt.NDArray[np.int64], seats: npt.NDArray) -> None:
    rules = state.rules
    state.num_bids[rows] += 1
    more = state.num_bids[rows] < rules.num_players
    if more.all():
        nxt = (seats + 1) % rules.num_players
        state.to_act[rows] = nxt
        state.phase[rows] = np.where(blind_allowed(state, rows, nxt), BLIND, BID)
        return
    q, s = rows[more], seats[more]
    nxt = (s + 1) % rules.num_players
    state.to_act[q] = nxt
    state.phase[q] = np.where(blind_allowed(state, q, nxt), BLIND, BID)
    _after_bidding(state, rows[~more])


def _exchange_needed(state: State, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.bool_]:
    """(K, P): seat must pass 2 cards (RULES.md §2 blind_nil_exchange)."""
    rules = state.rules
    blind = state.blind[rows]
    team_blind = blind | blind[:, _partner(rules)]
    return team_blind


def _after_bidding(state: State, rows: npt.NDArray[np.int64]) -> None:
    if rows.size == 0:
        return
    if state.rules.trump == "named":
        open_naming(state, rows)  # RULES.md §6 auction: the highest bidder names trump
        return
    after_naming(state, rows)


def after_naming(state: State, rows: npt.NDArray[np.int64]) -> None:
    """The bidding (and in auction the naming of trump) is over: exchange, or play."""
    if rows.size == 0:
        return
    if state.rules.blind_nil_exchange:
        need = _exchange_needed(state, rows).any(axis=1)
        _next_passer(state, rows[need])
        _start_play(state, rows[~need])
    else:
        _start_play(state, rows)


def _next_passer(state: State, rows: npt.NDArray[np.int64]) -> None:
    """Give the exchange turn to the next seat (from left of the dealer) still to pass."""
    if rows.size == 0:
        return
    p = state.rules.num_players
    need = _exchange_needed(state, rows)
    pending = need & (np.bitwise_count(state.passing[rows]) < 2)
    seats = np.arange(p)
    order = (seats[None, :] - state.dealer[rows, None].astype(np.int64) - 1) % p
    key = np.where(pending, order, p)
    nxt = (state.dealer[rows].astype(np.int64) + 1 + key.min(axis=1)) % p
    waiting = pending.any(axis=1)
    q = rows[waiting]
    state.phase[q] = EXCHANGE
    state.to_act[q] = nxt[waiting]
    done = rows[~waiting]
    if done.size:
        # RULES.md §2: the passed cards change hands once every pass is chosen.
        passing = state.passing[done]
        partner = _partner(state.rules)
        state.hands[done] = (state.hands[done] & ~passing) | passing[:, partner]
        _start_play(state, done)


def _start_play(state: State, rows: npt.NDArray[np.int64]) -> None:
    rules = state.rules
    if rows.size == 0:
        return
    if rules.first_lead == "two_of_clubs":
        # RULES.md §3 first_lead=two_of_clubs: the holder of 2C leads it.
        holds = (state.hands[rows] & CARD_BIT[TWO_OF_CLUBS]) != 0
        leader = holds.argmax(axis=1)
    else:
        leader = (state.dealer[rows].astype(np.int64) + 1) % rules.num_players
    state.leader[rows] = leader
    state.to_act[rows] = leader
    state.phase[rows] = PLAY


def settle_hands(rules: Rules, finished: dict[str, npt.NDArray]) -> HandResult:
    """Score finished hands, carry bags and decide the games (RULES.md §4-§5).

    `finished` holds the HandResult fields that describe the hands as played (games,
    seed, hand_no, dealer, deal, bids, blind, history, history_len, tricks, trump,
    scores_before, bags_before); the rest is computed here. The batched engine and
    `SingleGame` both settle their hands through this one function.
    """
    hs = score_hand(rules, finished["bids"], finished["blind"], finished["tricks"])
    scores, bags, penalty = apply_bags(
        rules, finished["scores_before"] + hs.points, finished["bags_before"] + hs.bags
    )
    over, winner = game_result(rules, scores, finished["hand_no"] + 1)
    return HandResult(
        **finished,
        points=hs.points,
        bags_gained=hs.bags,
        penalty=penalty,
        scores=scores,
        bags=bags,
        game_over=over,
        winner=winner,
    )


def _end_hand(state: State, rows: npt.NDArray[np.int64]) -> HandResult:
    """Score finished hands, carry bags, decide the game, deal the next hand."""
    rules = state.rules
    result = settle_hands(
        rules,
        {
            "games": rows,
            "seed": state.seed[rows].copy(),
            "hand_no": state.hand_no[rows].copy(),
            "dealer": state.dealer[rows].copy(),
            "deal": state.deal[rows].copy(),
            "bids": state.bids[rows].copy(),
            "blind": state.blind[rows].copy(),
            "history": state.history[rows].copy(),
            "history_len": state.history_len[rows].copy(),
            "tricks": state.tricks_won[rows].copy(),
            "trump": state.trump[rows].copy(),
            "scores_before": state.scores[rows].copy(),
            "bags_before": state.bags[rows].copy(),
        },
    )
    state.scores[rows] = result.scores
    state.bags[rows] = result.bags
    state.hand_no[rows] = result.hand_no + 1
    over, winner = result.game_over, result.winner
    ended = rows[over]
    state.phase[ended] = DONE
    state.winner[ended] = winner[over]
    state.legal[ended] = 0
    going = rows[~over]
    # RULES.md §1: the deal passes one seat clockwise every hand.
    state.dealer[going] = (state.dealer[going] + 1) % rules.num_players
    start_hand(state, going)
    return result
