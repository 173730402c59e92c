"""numba card play of the heuristic agent, for PIMC's heuristic rollouts.

`_choose_card` is `agents.heuristic_play.choose_card` (with `agents.card_tracking`'s
counting) rule for rule, on int64 card masks instead of Python lists: a list of cards
is a mask, its order the ascending card order the Python lists have, and each
`min`/`max` with a key keeps Python's tie rule (the first of equal keys). Spades are
trumps (the presets PIMC plays; RULES.md §6 auction is not one of them).
`tests/test_heuristic_kernel.py` checks it against `choose_card` on many positions.

`play_out_state` plays every game of an engine `State` in card play to the end of the
hand with it, recording the voids each card shows as the engine does (RULES.md §3), and
returns the tricks per seat.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.card_tracking_kernel import (
    _VOID_OTHERS,
    HAND,
    HAND_SIZE,
    LEAD,
    LEADER,
    LEGAL,
    NIL_COUNTS,
    NT,
    PARTNERS,
    SEAT,
    SIZE,
    TEAMS,
    TRICKS,
    UNSEEN,
    P,
    _beating,
    _can_beat_later,
    _can_hold,
    _discard_low,
    _high,
    _high_bit,
    _higher_out,
    _is_master,
    _is_nil,
    _later,
    _low,
    _max_danger,
    _max_rank,
    _opponents,
    _partner,
    _prepare,
    _ruffed,
    _side,
    _suit_len,
    _sure,
    _team_need,
    _winner,
)
from agents.search_kernel import (
    _CLUB2,
    _RANK,
    _SPADE_MASK,
    _STR,
    _SUIT,
    _SUIT_MASK,
    _bit_index,
    _jit,
    _legal_cards,
    _play_card,
    _popcount,
)
from spades_env.cards import SPADES
from spades_env.state import deck_mask


@_jit
def _duck(t, trick, legal, rank, suit, suit_mask, spade_mask, strt):
    if t[SIZE] == 0:  # max over side(legal) by (higher out, -rank)
        cs = _side(legal, spade_mask)
        best, best_k = -1, -(1 << 30)
        while cs:
            c = _bit_index(cs & -cs)
            cs &= cs - 1
            k = _higher_out(t, c, suit, suit_mask) * 100 - rank[c]
            if k > best_k:
                best, best_k = c, k
        return best
    _, lose = _beating(t, trick, legal, strt)
    if lose:
        non_spade = lose & ~spade_mask
        return _max_danger(t, non_spade if non_spade else lose, rank, suit, suit_mask)
    if _later(t):
        return _low(legal, rank, suit)
    return _high(legal, rank, suit)


@_jit
def _play_nil(t, trick, legal, rank, suit, suit_mask, spade_mask, strt):
    if t[SIZE] == 0:
        # max over side(legal) by (min(higher out, 3), higher out of my top card of the
        # suit, -rank)
        cs = _side(legal, spade_mask)
        best, best_k = -1, -(1 << 30)
        while cs:
            c = _bit_index(cs & -cs)
            cs &= cs - 1
            top = _high_bit(t[HAND] & suit_mask[suit[c]])
            k = (
                min(_higher_out(t, c, suit, suit_mask), 3) * 10000
                + _higher_out(t, top, suit, suit_mask) * 100
                - rank[c]
            )
            if k > best_k:
                best, best_k = c, k
        return best
    _, lose = _beating(t, trick, legal, strt)
    if lose:
        if suit[_bit_index(lose & -lose)] != t[LEAD]:
            return _max_danger(t, _side(lose, spade_mask), rank, suit, suit_mask)
        return _max_rank(lose, rank)
    if _later(t):
        return _low(legal, rank, suit)
    return _high(legal, rank, suit)


@_jit
def _protect_nil(t, bids, won, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt):
    p = _partner(t)
    if t[SIZE] == 0:
        void, masters = 0, 0
        bits = legal
        while bits:
            c = _bit_index(bits & -bits)
            bits &= bits - 1
            if voids[p] >> suit[c] & 1 and suit[c] != SPADES:
                void |= 1 << c
            if _is_master(t, c, suit, suit_mask):
                masters |= 1 << c
        if void:
            return _high(void, rank, suit)
        if masters:
            return _high(_side(masters, spade_mask), rank, suit)
        return _high(_side(legal, spade_mask), rank, suit)
    seat, _ = _winner(t, trick, strt)
    win, _ = _beating(t, trick, legal, strt)
    if seat == p:
        return _low(win if win else legal, rank, suit)
    if _later(t) >> p & 1:
        if win:
            sure = _sure(t, trick, voids, win, strt, suit, suit_mask)
            if sure:
                return _low(sure, rank, suit)
            return _high(win, rank, suit)
        return _low(legal, rank, suit)
    return _play_contract(
        t, bids, won, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt
    )


@_jit
def _void_among(seats, voids, s, n):
    """Whether a seat of the bit set `seats` (of `n` seats) has shown a void in suit `s`."""
    for o in range(n):  # noqa: SIM110 (numba compiles no generator expressions)
        if seats >> o & 1 and voids[o] >> s & 1:
            return True
    return False


@_jit
def _set_nil(t, trick, voids, legal, nils, rank, suit, suit_mask, spade_mask, strt):
    """The card that sets an opponent's nil, or -1 (Python's None)."""
    if t[SIZE] == 0:
        pool = 0
        bits = legal
        while bits:
            c = _bit_index(bits & -bits)
            bits &= bits - 1
            if not _void_among(nils, voids, suit[c], t[P]):
                pool |= 1 << c
        if pool:
            pool = _side(pool, spade_mask)
        if not pool:
            return -1
        card, best_k = -1, 1 << 30  # min by (rank, card)
        while pool:
            c = _bit_index(pool & -pool)
            pool &= pool - 1
            if rank[c] < best_k:
                card, best_k = c, rank[c]
        if rank[card] > 7:
            return -1
        return card
    seat, _ = _winner(t, trick, strt)
    if seat >= 0 and nils >> seat & 1:
        _, lose = _beating(t, trick, legal, strt)
        if lose:
            return _max_rank(lose, rank)
        return _low(legal, rank, suit)
    if _later(t) & nils and seat != _partner(t):
        follow = legal & suit_mask[t[LEAD]]
        if follow:
            return _low(follow, rank, suit)
    return -1


@_jit
def _play_contract(t, bids, won, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt):
    team = t[SEAT] % t[TEAMS]
    need = _team_need(t, bids, won, team)
    opp_need = -(1 << 30)
    for u in range(t[TEAMS]):
        if u != team:
            opp_need = max(opp_need, _team_need(t, bids, won, u))
    rem = t[HAND_SIZE] - t[TRICKS]
    to_set = rem - opp_need + 1
    if need > rem or need <= 0:
        if opp_need > 0 and to_set <= 2:
            return _take(t, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt)
        return _duck(t, trick, legal, rank, suit, suit_mask, spade_mask, strt)
    return _take(t, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt)


@_jit
def _take(t, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt):
    if t[SIZE] == 0:
        return _lead_to_take(t, voids, legal, rank, suit, suit_mask, spade_mask)
    seat, best = _winner(t, trick, strt)
    follow = suit[_bit_index(legal & -legal)] == t[LEAD]
    later = _later(t)
    partner = _partner(t)
    if seat == partner:
        beaten = False
        for s in range(t[P]):
            if later >> s & 1 and _can_beat_later(t, voids, s, best, t[LEAD], suit, suit_mask):
                beaten = True
        if not beaten:
            if follow:
                return _low(legal, rank, suit)
            return _discard_low(t, legal, rank, suit, suit_mask, spade_mask)
    win, _ = _beating(t, trick, legal, strt)
    sure = _sure(t, trick, voids, win, strt, suit, suit_mask)
    if follow:
        if sure:
            return _low(sure, rank, suit)
        if t[SIZE] == 1:
            return _low(legal, rank, suit)
        if win and seat != partner:
            return _high(win, rank, suit)
        return _low(legal, rank, suit)
    if sure & spade_mask:
        return _low(sure & spade_mask, rank, suit)
    shown = False
    for s in range(t[P]):
        if later >> s & 1 and s != partner and voids[s] >> t[LEAD] & 1:
            shown = True
    if win & spade_mask and not shown:
        return _low(win & spade_mask, rank, suit)
    return _discard_low(t, legal, rank, suit, suit_mask, spade_mask)


@_jit
def _lead_to_take(t, voids, legal, rank, suit, suit_mask, spade_mask):
    spades, sides = legal & spade_mask, legal & ~spade_mask
    mine = _popcount(t[HAND] & spade_mask)
    out = _popcount(t[UNSEEN] & spade_mask)
    if spades and out:
        top = _high_bit(spades)
        if _is_master(t, top, suit, suit_mask) and mine >= out:
            return top
    opps = _opponents(t)
    p = _partner(t)
    masters, partner_ruffs, safe = 0, 0, 0
    bits = sides
    while bits:
        c = _bit_index(bits & -bits)
        bits &= bits - 1
        if _is_master(t, c, suit, suit_mask) and not _ruffed(t, voids, suit[c], opps, suit_mask):
            masters |= 1 << c
        if (
            t[PARTNERS]
            and voids[p] >> suit[c] & 1
            and _can_hold(t, voids, p, suit_mask) & suit_mask[SPADES]
        ):
            partner_ruffs |= 1 << c
        if not _void_among(opps, voids, suit[c], t[P]):
            safe |= 1 << c
    if masters:
        return _high(masters, rank, suit)
    if partner_ruffs:
        return _low(partner_ruffs, rank, suit)
    if not safe:
        safe = sides
    if safe and mine >= 1:
        single = 0
        bits = safe
        while bits:
            c = _bit_index(bits & -bits)
            bits &= bits - 1
            if _suit_len(t, suit[c], suit_mask) == 1 and not _is_master(t, c, suit, suit_mask):
                single |= 1 << c
        if single and rank[_bit_index(single & -single)] < 10:
            return _low(single, rank, suit)
    if safe:  # min by (unguarded top of its suit, -length, rank)
        best, best_k = -1, 1 << 30
        bits = safe
        while bits:
            c = _bit_index(bits & -bits)
            bits &= bits - 1
            top = _high_bit(safe & suit_mask[suit[c]])
            unguarded = _higher_out(t, top, suit, suit_mask) > 0 and rank[top] >= 10
            k = unguarded * 10000 - _suit_len(t, suit[c], suit_mask) * 100 + rank[c]
            if k < best_k:
                best, best_k = c, k
        return best
    masters = 0
    bits = spades
    while bits:
        c = _bit_index(bits & -bits)
        bits &= bits - 1
        if _is_master(t, c, suit, suit_mask):
            masters |= 1 << c
    if masters:
        return _low(masters, rank, suit)
    return _low(spades, rank, suit)


@_jit
def _choose_card(t, bids, won, trick, voids, rank, suit, suit_mask, spade_mask, strt):
    """`heuristic_play.choose_card` of the decision `t` (module doc)."""
    legal = t[LEGAL]
    if _popcount(legal) == 1:
        return _bit_index(legal)
    _prepare(t, trick, voids, strt, suit_mask)
    me = t[SEAT]
    if bids[me] == 0 and (won[me] == 0 or not t[NIL_COUNTS]):
        return _play_nil(t, trick, legal, rank, suit, suit_mask, spade_mask, strt)
    if t[PARTNERS] and _is_nil(bids, won, _partner(t)):
        return _protect_nil(
            t, bids, won, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt
        )
    nils = 0
    opps = _opponents(t)
    for s in range(t[P]):
        if opps >> s & 1 and _is_nil(bids, won, s):
            nils |= 1 << s
    if nils:
        need = _team_need(t, bids, won, me % t[TEAMS])
        rem = t[HAND_SIZE] - t[TRICKS]
        if not rem - 1 <= need <= rem:
            card = _set_nil(t, trick, voids, legal, nils, rank, suit, suit_mask, spade_mask, strt)
            if card >= 0:
                return card
    return _play_contract(
        t, bids, won, trick, voids, legal, rank, suit, suit_mask, spade_mask, strt
    )


@_jit
def choose_card_kernel(t, bids, won, trick, voids):
    """`_choose_card` with the card tables (for tests and single decisions)."""
    return _choose_card(t, bids, won, trick, voids, _RANK, _SUIT, _SUIT_MASK, _SPADE_MASK, _STR)


@_jit
def _decision_table(p, teams, partnerships, hand_size, nil_counts):
    t = np.zeros(NT, dtype=np.int64)
    t[P], t[TEAMS], t[PARTNERS], t[HAND_SIZE], t[NIL_COUNTS] = (
        p, teams, partnerships, hand_size, nil_counts,
    )  # fmt: skip
    return t


@_jit
def heuristic_game(
    hands, played, trick, voids, bids, won, leader, size, lead, broken, tricks, first,
    deck, t, two_clubs, rank, suit, suit_mask, spade_mask, club2, strt,
):  # fmt: skip
    """Play one game's hand out by the heuristic's card play (hands, trick, voids and won
    in place), the card `first` first if it is >= 0. `t`: a `_decision_table`."""
    p = hands.shape[0]
    while tricks < t[HAND_SIZE]:
        seat = (leader + size) % p
        h = hands[seat]
        if first >= 0:
            c, first = first, -1
        else:
            legal = _legal_cards(
                h, size, tricks, two_clubs, broken, lead, suit_mask, spade_mask, club2
            )
            t[SEAT], t[HAND], t[LEGAL], t[UNSEEN] = seat, h, legal, deck & ~played & ~h
            t[LEADER], t[SIZE], t[LEAD], t[TRICKS] = leader, size, lead, tricks
            c = _choose_card(t, bids, won, trick, voids, rank, suit, suit_mask, spade_mask, strt)
        # RULES.md §3, as the engine records it: a seat that does not follow is void in
        # the led suit; one that leads a spade before they are broken held only spades
        if size == 0:
            if suit[c] == SPADES and not broken:
                voids[seat] |= _VOID_OTHERS
        elif suit[c] != lead:
            voids[seat] |= 1 << lead
        played |= 1 << c
        leader, size, lead, broken, tricks = _play_card(
            hands, trick, won, seat, c, leader, size, lead, broken, tricks, strt, suit
        )


@_jit
def _play_out_batch(
    hands, played, trick, voids, bids, won, leader, trick_size, lead, broken, tricks_played,
    deck, p, teams, partnerships, hand_size, nil_counts, two_clubs,
    rank, suit, suit_mask, spade_mask, club2, strt,
):  # fmt: skip
    t = _decision_table(p, teams, partnerships, hand_size, nil_counts)
    for g in range(hands.shape[0]):
        heuristic_game(
            hands[g], played[g], trick[g], voids[g], bids[g], won[g], leader[g], trick_size[g],
            lead[g], broken[g], tricks_played[g], -1, deck, t, two_clubs, rank, suit,
            suit_mask, spade_mask, club2, strt,
        )  # fmt: skip


def play_out_state(state) -> npt.NDArray[np.int64]:
    """(B, P) tricks per seat at the end of the hand of every game of an engine `State`
    in card play, played by the heuristic's card play (the state is not changed)."""
    rules = state.rules
    won = state.tricks_won.astype(np.int64)
    _play_out_batch(
        (state.hands & ~state.played[:, None]).astype(np.int64),
        state.played.astype(np.int64), state.trick.astype(np.int64),
        state.voids.astype(np.int64), state.bids.astype(np.int64), won,
        state.leader.astype(np.int64), state.trick_size.astype(np.int64),
        state.lead_suit.astype(np.int64), state.broken.copy(),
        state.tricks_played.astype(np.int64), int(deck_mask(rules)), rules.num_players,
        rules.num_teams, rules.partnerships, rules.hand_size, rules.nil_tricks == "count",
        rules.first_lead == "two_of_clubs", _RANK, _SUIT, _SUIT_MASK, _SPADE_MASK, _CLUB2, _STR,
    )  # fmt: skip
    return won
