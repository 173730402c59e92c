"""The batched rules engine: `step`, `legal_action_mask` and the per-hand flow.

`step(state, actions)` applies one action per game (games that are DONE ignore theirs)
and updates `state` in place for speed; `State.copy()` branches a state for search.
Games may sit in different phases; when every game is in the same phase (the common,
lockstep case) the handlers run on whole arrays, otherwise on each phase's games.

Flow of a hand (RULES.md §1-§4): deal -> for each seat from left of the dealer, an
optional blind-nil decision (BLIND) then a bid (BID) -> optional exchange (EXCHANGE) ->
13 tricks (PLAY) -> scoring, bags, end-of-game check -> next deal with the next dealer.

An illegal action raises `IllegalActionError` naming the game, the seat, the rule and the
legal actions. With `on_illegal="report"` (for RL wrappers that penalise instead), illegal
games are left exactly as they were and flagged in `StepInfo.illegal`; nothing is ever
replaced by another action.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_BIT,
    CARD_RANK,
    CARD_SUIT,
    DRAW_KEEP,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_SUITS,
    SPADE_MASK,
    SPADES,
    SUIT_MASK,
    SUIT_NAMES,
    TWO_OF_CLUBS,
    action_to_str,
    bits_to_bool,
    mask_to_cards,
    select_bit,
)
from spades_env.draw import apply_draw, start_draw
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, game_result, score_hand
from spades_env.state import (
    BID,
    BLIND,
    DONE,
    DRAW,
    EXCHANGE,
    PHASE_NAMES,
    PLAY,
    State,
    deal_hands,
)
from spades_env.variants import bid_bits, blind_blocked, describe

SEAT_NAMES = ("North", "East", "South", "West")
HISTORY_SEAT_SHIFT = 7  # history entries are (seat << 7) | action

#: (NUM_CARDS, NUM_SUITS) int8 strength of a card in a trick led in a suit (RULES.md §3):
#: any spade beats every other suit, then the led suit by rank; other cards never win.
STRENGTH = np.full((NUM_CARDS, NUM_SUITS), -1, dtype=np.int8)
for _c in range(NUM_CARDS):
    for _lead in range(NUM_SUITS):
        if CARD_SUIT[_c] == SPADES:
            STRENGTH[_c, _lead] = 32 + CARD_RANK[_c]
        elif CARD_SUIT[_c] == _lead:
            STRENGTH[_c, _lead] = CARD_RANK[_c]
_VOID_OTHERS = np.uint8(0b1110)  # shown void in hearts, diamonds, clubs
_SUIT_BIT = np.array([1 << s for s in range(NUM_SUITS)], dtype=np.uint8)
_ARANGE = np.arange(0, dtype=np.int64)


def _arange(n: int) -> npt.NDArray[np.int64]:
    """A cached arange(n): the hot path indexes it with a slice or rows every step."""
    global _ARANGE
    if _ARANGE.size < n:
        _ARANGE = np.arange(max(n, 2 * _ARANGE.size), dtype=np.int64)
    return _ARANGE[:n]


@functools.cache
def _next_seat(p: int) -> npt.NDArray[np.int8]:
    return np.roll(np.arange(p, dtype=np.int8), -1)


class IllegalActionError(ValueError):
    """An action that the rules forbid; names the game, seat, rule and legal actions."""

    def __init__(self, game: int, seat: int, action: int, reason: str, legal: list[int]):
        self.game, self.seat, self.action, self.reason, self.legal = (
            game,
            seat,
            action,
            reason,
            legal,
        )
        shown = ", ".join(action_to_str(a) for a in legal)
        super().__init__(
            f"game {game}, seat {seat} ({seat_name(seat)}): {_action_name(action)} is "
            f"illegal: {reason}; legal: {shown}"
        )


def seat_name(seat: int) -> str:
    return SEAT_NAMES[seat] if seat < len(SEAT_NAMES) else f"seat {seat}"


def _action_name(action: int) -> str:
    try:
        return action_to_str(action)
    except ValueError:
        return f"action {action}"


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
    scores_before: npt.NDArray[np.int32]  # (K, T)
    bags_before: npt.NDArray[np.int32]  # (K, T)
    points: npt.NDArray[np.int32]  # (K, T) hand score before the bag penalty
    bags_gained: npt.NDArray[np.int32]  # (K, T)
    penalty: npt.NDArray[np.int32]  # (K, T) bag penalties applied after this hand
    scores: npt.NDArray[np.int32]  # (K, T) cumulative after the hand
    bags: npt.NDArray[np.int32]  # (K, T) bag counters after the hand
    game_over: npt.NDArray[np.bool_]  # (K,)
    winner: npt.NDArray[np.int8]  # (K,) winning team or -1


@dataclass(frozen=True)
class StepInfo:
    hand_over: npt.NDArray[np.bool_]  # (B,) a hand finished in this step
    hand_points: npt.NDArray[np.int32]  # (B, T) its points, bag penalty included; else 0
    illegal: npt.NDArray[np.bool_]  # (B,) action refused ("report" mode only)
    finished: HandResult | None  # details of the finished hands, None if none


# ----------------------------------------------------------------------------- hands
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


# ----------------------------------------------------------------------------- legality
def _legal_cards(state: State, rows: npt.NDArray[np.int64] | slice) -> npt.NDArray[np.uint64]:
    """Legal cards of the seat to act, for games in PLAY (RULES.md §3)."""
    rules = state.rules
    ar = _arange(state.batch_size)[rows]
    fi = ar * rules.num_players + state.to_act[rows]
    h = state.hands.reshape(-1)[fi] & ~state.played[rows]
    lead_suit = state.lead_suit[rows]
    follow = h & SUIT_MASK[np.maximum(lead_suit, 0)]
    # RULES.md §3: follow suit when you can, otherwise play any card.
    legal_follow = np.where(follow != 0, follow, h)
    # RULES.md §3: no spade lead before spades are broken, unless only spades are held.
    non_spade = h & ~SPADE_MASK
    legal_lead = np.where(state.broken[rows] | (non_spade == 0), h, non_spade)
    leading = state.trick_size[rows] == 0
    legal = np.where(leading, legal_lead, legal_follow)
    if rules.first_lead == "two_of_clubs":
        first = leading & (state.tricks_played[rows] == 0)
        legal = np.where(first, h & CARD_BIT[TWO_OF_CLUBS], legal)
    return legal


def _update_legal(state: State) -> None:
    """Refresh `state.legal`, the legal actions as bits above the phase's first action."""
    phase = state.phase
    if phase[0] == PLAY and (phase == PLAY).all():
        state.legal[:] = _legal_cards(state, slice(None))
        return
    legal = np.zeros(state.batch_size, dtype=np.uint64)
    q = np.flatnonzero(phase == PLAY)
    if q.size:
        legal[q] = _legal_cards(state, q)
    x = np.flatnonzero(phase == EXCHANGE)
    if x.size:
        seat = state.to_act[x]
        legal[x] = state.hands[x, seat] & ~state.passing[x, seat]
    q = np.flatnonzero(phase == BID)
    if q.size:
        # RULES.md §2: bids 0..hand_size, capped by max_total_bid; bit i = bid i;
        # RULES.md §6: the preset's bid constraint (spades_env/variants.py).
        seat = state.to_act[q].astype(np.int64)
        p = state.rules.num_players
        partner = state.bids[q, (seat + p // 2) % p] if state.rules.partnerships else None
        legal[q] = bid_bits(state.rules, _bid_limit(state, q), state.hands[q, seat], partner)
    legal[phase == BLIND] = 0b11  # blind nil, see hand
    legal[phase == DRAW] = 0b11  # RULES.md §6 two_player: keep, discard (spades_env/draw.py)
    state.legal[:] = legal


#: (NUM_PHASES,) first action of each phase: bit i of `legal` is action base + i.
PHASE_BASE = np.array([BLIND_NIL, BID_BASE, 0, 0, 0, DRAW_KEEP], dtype=np.int64)


def _bid_limit(state: State, rows) -> npt.NDArray[np.int64]:
    """Largest legal bid (RULES.md §2: 0..hand_size, and the max_total_bid option)."""
    rules = state.rules
    top = np.full(_arange(state.batch_size)[rows].size, rules.max_bid, dtype=np.int64)
    if rules.max_total_bid is not None:
        made = np.where(state.bids[rows] > 0, state.bids[rows], 0).sum(axis=1)
        top = np.minimum(top, rules.max_total_bid - made)
    return top


def legal_action_mask(state: State) -> npt.NDArray[np.bool_]:
    """(B, NUM_ACTIONS) bool: the legal actions of the seat to act in each game."""
    b = state.batch_size
    mask = np.zeros((b, NUM_ACTIONS), dtype=bool)
    bits = bits_to_bool(state.legal)
    phase = state.phase
    for ph in np.unique(phase):
        if ph == DONE:
            continue
        base = int(PHASE_BASE[ph])
        width = min(NUM_CARDS, NUM_ACTIONS - base)
        q = slice(None) if ph == phase[0] and (phase == ph).all() else phase == ph
        mask[q, base : base + width] = bits[q, :width]
    return mask


def legal_actions(state: State, game: int) -> list[int]:
    return np.flatnonzero(legal_action_mask(state.take([game]))[0]).tolist()


def explain_illegal(state: State, game: int, action: int) -> str:
    """Name the rule an illegal action breaks (slow path, one game)."""
    phase = int(state.phase[game])
    seat = int(state.to_act[game])
    a = int(action)
    if phase == BLIND:
        return "first decide blind nil or see hand (RULES.md §2)"
    if phase == DRAW:
        return "keep or discard the top card of the stock (RULES.md §6 two_player)"
    if phase == BID:
        if not BID_BASE <= a < BLIND_NIL:
            return "a bid is expected: nil or 1..13 (RULES.md §2)"
        bid = a - BID_BASE
        if not state.rules.min_bid <= bid <= state.rules.max_bid:
            return f"bids are {state.rules.min_bid}..{state.rules.max_bid} (RULES.md §2, §6)"
        if state.rules.bid_constraint != "none":
            return describe(state.rules)
        return (
            f"the bids would total more than max_total_bid={state.rules.max_total_bid} "
            "(RULES.md §2)"
        )
    if not 0 <= a < NUM_CARDS:
        return f"a card is expected in the {PHASE_NAMES[phase]} phase"
    hand = int(state.hands[game, seat]) & ~int(state.played[game])
    if not hand >> a & 1:
        return "that card is not in the seat's hand"
    if phase == EXCHANGE:
        return "that card is already chosen to pass (RULES.md §2)"
    lead = int(state.lead_suit[game])
    if state.trick_size[game] > 0:
        return f"must follow {SUIT_NAMES[lead]} (RULES.md §3)"
    if state.rules.first_lead == "two_of_clubs" and state.tricks_played[game] == 0:
        return "the first lead must be the 2C (RULES.md §3 first_lead=two_of_clubs)"
    return "spades are not broken yet (RULES.md §3)"


# ----------------------------------------------------------------------------- step
def _check(state: State, rows, actions: npt.NDArray[np.int64], phase: int) -> npt.NDArray:
    """Is each action among the legal ones cached in `state.legal`?"""
    rel = actions - PHASE_BASE[phase]
    inside = (rel >= 0) & (rel < 64)
    bit = np.left_shift(np.uint64(1), (rel * inside).astype(np.uint64))
    return inside & ((state.legal[rows] & bit) != 0)


def _play(state: State, rows, actions: npt.NDArray[np.int64]) -> None:
    """Play one card in each game of `rows` (RULES.md §3)."""
    p = state.rules.num_players
    ar = _arange(state.batch_size)[rows]
    seat = state.to_act[rows]
    fi = ar * p + seat  # flat (game, seat) index: much cheaper than 2-D fancy indexing
    bit = CARD_BIT[actions]
    state.played[rows] |= bit
    state.trick.reshape(-1)[fi] = actions
    suit = CARD_SUIT[actions]
    size = state.trick_size[rows]
    is_spade = suit == SPADES
    # Public information for samplers and agents: a player who does not follow has no
    # card of the led suit; one who leads a spade before spades are broken holds only
    # spades (RULES.md §3).
    first = int(size[0])
    if (size == first).all():  # lockstep: every game at the same place in the trick
        if first == 0:
            state.lead_suit[rows] = suit
            shown = (is_spade & ~state.broken[rows]) * _VOID_OTHERS
        else:
            shown = (suit != state.lead_suit[rows]) * _SUIT_BIT[state.lead_suit[rows]]
    else:
        leading = size == 0
        lead_suit = np.where(leading, suit, state.lead_suit[rows])
        state.lead_suit[rows] = lead_suit
        shown = (suit != lead_suit) * _SUIT_BIT[lead_suit] | (
            leading & is_spade & ~state.broken[rows]
        ) * _VOID_OTHERS
    state.voids.reshape(-1)[fi] |= shown.astype(np.uint8)
    state.broken[rows] |= is_spade  # RULES.md §3: any spade played breaks spades
    fc = ar * NUM_CARDS + actions
    state.card_seat.reshape(-1)[fc] = seat
    state.card_trick.reshape(-1)[fc] = state.tricks_played[rows]
    state.trick_size[rows] = size + 1
    state.to_act[rows] = _next_seat(p)[seat]


def _resolve_tricks(state: State, rows: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
    """Close full tricks; return the games whose hand is now complete."""
    trick = state.trick[rows]
    strength = STRENGTH[trick, state.lead_suit[rows][:, None]]
    winner = strength.argmax(axis=1)  # RULES.md §3: highest spade, else highest led
    state.tricks_won[rows, winner] += 1
    state.leader[rows] = winner
    state.to_act[rows] = winner
    state.trick[rows] = -1
    state.trick_size[rows] = 0
    state.lead_suit[rows] = -1
    played = state.tricks_played[rows] + 1
    state.tricks_played[rows] = played
    return rows[played == state.rules.hand_size]


def _end_hand(state: State, rows: npt.NDArray[np.int64]) -> HandResult:
    """Score finished hands, carry bags, decide the game, deal the next hand."""
    rules = state.rules
    hs = score_hand(rules, state.bids[rows], state.blind[rows], state.tricks_won[rows])
    before, bags_before = state.scores[rows].copy(), state.bags[rows].copy()
    scores, bags, penalty = apply_bags(rules, before + hs.points, bags_before + hs.bags)
    state.scores[rows] = scores
    state.bags[rows] = bags
    hand_no = state.hand_no[rows].copy()
    state.hand_no[rows] = hand_no + 1
    over, winner = game_result(rules, scores, hand_no + 1)
    result = HandResult(
        games=rows,
        seed=state.seed[rows].copy(),
        hand_no=hand_no,
        dealer=state.dealer[rows].copy(),
        deal=state.deal[rows].copy(),
        bids=state.bids[rows].copy(),
        blind=state.blind[rows].copy(),
        history=state.history[rows].copy(),
        history_len=state.history_len[rows].copy(),
        tricks=state.tricks_won[rows].copy(),
        scores_before=before,
        bags_before=bags_before,
        points=hs.points,
        bags_gained=hs.bags,
        penalty=penalty,
        scores=scores,
        bags=bags,
        game_over=over,
        winner=winner,
    )
    ended = rows[over]
    state.phase[ended] = DONE
    state.winner[ended] = winner[over]
    state.legal[ended] = 0
    going = rows[~over]
    # RULES.md §1: the deal passes one seat clockwise every hand.
    state.dealer[going] = (state.dealer[going] + 1) % rules.num_players
    start_hand(state, going)
    return result


def _groups(phase: npt.NDArray[np.int8]) -> list[tuple[int, slice | npt.NDArray[np.int64]]]:
    first = int(phase[0])
    if (phase == first).all():
        return [(first, slice(None))]
    return [(int(ph), np.flatnonzero(phase == ph)) for ph in np.unique(phase)]


def step(
    state: State,
    actions: npt.ArrayLike,
    on_illegal: Literal["raise", "report"] = "raise",
) -> StepInfo:
    """Apply one action per game (ignored where the game is DONE); update `state`."""
    b = state.batch_size
    acts = np.asarray(actions, dtype=np.int64).reshape(-1)
    if acts.shape[0] != b:
        raise ValueError(f"step needs {b} actions, one per game; got {acts.shape[0]}")
    illegal = np.zeros(b, dtype=bool)
    hand_over = np.zeros(b, dtype=bool)
    points = np.zeros((b, state.rules.num_teams), dtype=np.int32)
    finished: list[HandResult] = []
    # Check every game before changing any: an error never leaves the batch half-stepped.
    checked = []
    for phase, rows in _groups(state.phase):
        if phase == DONE:
            continue
        a = acts[rows]
        ok = _check(state, rows, a, phase)
        if not ok.all():
            bad_local = np.flatnonzero(~ok)
            games = np.arange(b)[rows][bad_local]
            if on_illegal == "raise":
                g = int(games[0])
                act = int(a[bad_local[0]])
                raise IllegalActionError(
                    g,
                    int(state.to_act[g]),
                    act,
                    explain_illegal(state, g, act),
                    legal_actions(state, g),
                )
            illegal[games] = True
            rows = np.arange(b)[rows][ok]
            a = a[ok]
        checked.append((phase, rows, a))
    for phase, rows, a in checked:
        _apply(state, phase, rows, a, finished)
    for res in finished:
        hand_over[res.games] = True
        points[res.games] = res.points - res.penalty
    _update_legal(state)
    return StepInfo(
        hand_over=hand_over,
        hand_points=points,
        illegal=illegal,
        finished=_concat(finished),
    )


def _apply(state: State, phase: int, rows, a: npt.NDArray[np.int64], out: list) -> None:
    ar = _arange(state.batch_size)[rows]
    if ar.size == 0:
        return
    seat = state.to_act[rows].astype(np.int64)
    # History entries carry the actor: (seat << 7) | action.
    hlen = state.history_len[rows]
    state.history.reshape(-1)[ar * state.history.shape[1] + hlen] = (seat << HISTORY_SEAT_SHIFT) | a
    state.history_len[rows] = hlen + 1
    if phase == PLAY:
        _play(state, rows, a)
        size = state.trick_size[rows]
        full = ar[size == state.rules.num_players]
        if full.size:
            done = _resolve_tricks(state, full)
            if done.size:
                out.append(_end_hand(state, done))
    elif phase == BID:
        state.bids[ar, seat] = a - BID_BASE
        _advance_bidding(state, ar, seat)
    elif phase == BLIND:
        blind = a == BLIND_NIL
        q, s = ar[blind], seat[blind]
        state.bids[q, s] = 0
        state.blind[q, s] = True
        _advance_bidding(state, q, s)
        state.phase[ar[~blind]] = BID  # RULES.md §2: declined; sees the hand and bids
    elif phase == EXCHANGE:
        state.passing[ar, seat] |= CARD_BIT[a]
        _next_passer(state, ar)
    elif phase == DRAW:
        _open_bidding(state, apply_draw(state, ar, seat, a))


def _concat(results: list[HandResult]) -> HandResult | None:
    if not results:
        return None
    if len(results) == 1:
        return results[0]
    fields = HandResult.__dataclass_fields__
    return HandResult(**{f: np.concatenate([getattr(r, f) for r in results]) for f in fields})


def reset_done(state: State, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Start a fresh game (new seed, scores 0) in every DONE slot; return their indices."""
    rows = np.flatnonzero(state.phase == DONE)
    if rows.size == 0:
        return rows
    from spades_env.state import first_dealer

    n = rows.size
    state.seed[rows] = rng.integers(0, np.iinfo(np.uint64).max, size=n, dtype=np.uint64)
    state.hand_no[rows] = 0
    state.scores[rows] = 0
    state.bags[rows] = 0
    state.winner[rows] = -1
    state.dealer[rows] = first_dealer(state.rules, state.seed[rows])
    start_hand(state, rows)
    _update_legal(state)
    return rows


def cards_of(mask: int | np.uint64) -> list[int]:
    return mask_to_cards(mask)


def random_legal_actions(
    legal: npt.NDArray[np.uint64], phase: npt.NDArray[np.int8], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per game from the engine's legal bits.

    `legal` is `State.legal` (bit i = action PHASE_BASE[phase] + i); games with no legal
    action (DONE) get action 0, which the engine ignores.
    """
    count = np.bitwise_count(legal).astype(np.int64)
    k = (rng.random(legal.shape[0]) * count).astype(np.int64)
    has = count > 0
    k = np.minimum(k, np.maximum(count - 1, 0))
    bit = select_bit(np.where(has, legal, np.uint64(1)), k * has)
    return (bit + PHASE_BASE[phase]) * has
