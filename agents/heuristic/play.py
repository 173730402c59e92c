"""The heuristic agent's card play, compiled: one card per decision, with the rule that
chose it.

The rules come from rule text 000 ("Så bjuder och spelar den som vill vinna", "Så täcker
partnern ett noll-bud", "Spara spadern till rätt stick", "Räkna spadern", "Bet") and
the whist-family maxims "second hand low", "third hand high enough", "win cheaply". In
order of priority:

1. I bid nil: never win a trick (`_play_nil`).
2. Partner bid nil: protect it (`_protect_nil`): cash high cards early, overtake the
   partner's card, lead suits the partner is void in.
3. An opponent bid nil: set it (`_set_nil`): lead low toward the nil bidder and never
   overtake a nil bidder's card.
4. Otherwise play for the contract (`_play_contract`): take tricks while the team needs
   them (second hand low, third hand high enough, win cheaply, trump when void, keep
   trumps for the right trick, draw trumps with long spades); duck once the contract is
   made, to avoid bags, unless taking at most `set_tricks` (3) more tricks sets the
   opponents (a set costs them ten points a bid trick, a bag costs us about one); when the
   contract is lost, feed bags to the opponents unless they can be set.

"Spades" above means the trump: spades, or in RULES.md §6 auction the named suit, which
takes every role spades have here. The counting is `agents.heuristic.card_tracking`'s.

Every choice records its reason in the decision array: `t[CTX]` the situation (the
prefix), `t[WHY]` the rule (`WHYS`), `t[NEED]` the tricks the team needs; `reason_text`
turns them into the sentence `HeuristicAgent.explain` gives.

`choose_cards` decides every card-play game of a `SeatView` in one call (the agent's
`act`); `play_out_state` plays every game of an engine `State` in card play to the end
of the hand with it (PIMC's heuristic rollouts of its bidding decisions), in a loop
compiled without numba's reference counting.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.heuristic.card_tracking import (
    CTX,
    DEFAULT_SET_TRICKS,
    HAND,
    HAND_SIZE,
    HOLD,
    LATER,
    LEAD,
    LEADER,
    LEGAL,
    NEED,
    NIL_COUNTS,
    NT,
    OPPS,
    PARTNER,
    PARTNERS,
    SEAT,
    SET_TRICKS,
    SIZE,
    TEAMS,
    TRICKS,
    TRUMP,
    UNSEEN,
    WHY,
    WIN_CARD,
    WIN_SEAT,
    P,
    beating,
    can_beat_later,
    high_bit,
    high_card,
    higher_out,
    is_master,
    is_nil,
    low_card,
    max_danger,
    max_rank,
    prepare,
    ruffed,
    side_cards,
    suit_len,
    sure_cards,
    team_need,
    void_among,
)
from agents.kernels.compile import jit, jit_unref
from agents.kernels.play import (
    RANK_OF_CARD,
    SUIT_CARDS,
    SUIT_OF_CARD,
    bit_index,
    hand_legal_cards,
    play_card,
    popcount,
)
from spades_env.cards import SUIT_NAMES
from spades_env.core.borrow import borrow
from spades_env.core.rule_functions import shown_voids
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import deck_mask

# ----------------------------------------------------------------------------- reasons
#: the situation a card is chosen in (`t[CTX]`): the first part of the reason
CONTEXTS = (
    "",
    'rule text 000 "Noll-budet": take no trick',
    'rule text 000 "Så täcker partnern ett noll-bud"',
    "set the opponents' nil",
    'rule text 000 "Bet": our contract is lost, set theirs',
    "contract made: take tricks to set the opponents",
    "the team needs {need} more {tricks}",
    'rule text 000 "Bet": contract lost, feed the opponents bags',
    'rule text 000 "Säckar": contract made, duck to avoid bags',
)
_NIL, _PROTECT, _SET_NIL, _BET_SET, _MADE_SET, _NEED, _BET_FEED, _BAGS = range(1, 9)
#: the rule that chose the card (`t[WHY]`); the first `_WHOLE` are whole reasons, the
#: rest follow the situation after a colon; {trump} is the trump suit's word ("spade")
WHYS = (
    "the only legal card",
    'rule text 000 "Spara spadern till rätt stick": discard a worthless low card',
    "partner's card holds: play low",
    "partner's card holds: discard low",
    # duck
    "lead my lowest card",
    "play the highest loser",
    "play low, someone may still overtake",
    "the trick is mine anyway, shed my highest card",
    # my nil
    "lead a low card from my safest suit",
    "void, shed a danger card",
    "highest card under the winner",
    "play low and hope to be overtaken",
    "forced to win; shed my highest card",
    # the partner's nil
    "lead a suit the partner is void in",
    "cash a high card early",
    "lead high so the partner can duck",
    "overtake the partner's card",
    "cannot overtake the partner",
    "win it surely so the partner can duck",
    "play high so the partner can duck under",
    "cannot win it, play low",
    # the opponents' nil
    "lead low toward the nil bidder",
    "do not overtake the nil bidder",
    "forced over the nil bidder, as low as I can",
    "play low, leave the nil bidder room to win",
    # take
    '"win cheaply" with the lowest sure winner',
    '"second hand low"',
    '"third hand high enough" to beat the trick',
    "cannot win the trick, play my lowest card",
    "void, trump with the lowest {trump} that wins",
    "void, trump low (no one after me has shown out)",
    # lead to take
    "long {trump}s and the top: draw trumps",
    "cash a sure winner",
    "lead a suit the partner can ruff",
    "lead a singleton to ruff that suit later",
    "lead low from my longest suit",
    "only {trump}s left, cash the top one",
    "only {trump}s left, lead the lowest",
)
_WHOLE = 4
(
    _ONLY, _DISCARD, _HOLDS_LOW, _HOLDS_DISCARD,
    _D_LEAD, _D_LOSER, _D_LOW, _D_SHED,
    _N_LEAD, _N_VOID, _N_UNDER, _N_LOW, _N_FORCED,
    _P_VOID, _P_CASH, _P_LEAD_HIGH, _P_OVERTAKE, _P_CANNOT_OVERTAKE, _P_SURE, _P_HIGH, _P_LOW,
    _S_LEAD, _S_UNDER, _S_FORCED, _S_LOW,
    _T_CHEAP, _T_SECOND, _T_THIRD, _T_LOW, _T_RUFF_SURE, _T_RUFF_LOW,
    _L_DRAW, _L_CASH, _L_PARTNER_RUFF, _L_SINGLETON, _L_LONG, _L_TOP_TRUMP, _L_LOW_TRUMP,
) = range(len(WHYS))  # fmt: skip


def reason_text(ctx: int, why: int, need: int, trump: int) -> str:
    """The sentence of a recorded reason (`t[CTX]`, `t[WHY]`, `t[NEED]`, the trump)."""
    word = SUIT_NAMES[trump][:-1] if trump >= 0 else "trump"
    rule = WHYS[why].format(trump=word)
    if why < _WHOLE:
        return rule
    situation = CONTEXTS[ctx].format(need=need, tricks="trick" if need == 1 else "tricks")
    return f"{situation}: {rule}"


@jit
def _say(t, why, card):
    """Record the rule `why` and return the card it chose."""
    t[WHY] = why
    return card


# ----------------------------------------------------------------------------- play
@jit
def _discard_low(t, legal, rank, suit, suit_mask, tmask):
    """Throw the least useful card: no trump, no master, the lowest, from the shortest
    side suit."""
    cs = side_cards(legal, tmask)
    best, best_k = -1, 1 << 30
    while cs:
        c = bit_index(cs & -cs)
        cs &= cs - 1
        k = is_master(t, c, suit, suit_mask) * 10000 + rank[c] * 100
        k += suit_len(t, suit[c], suit_mask)
        if k < best_k:
            best, best_k = c, k
    return best


@jit
def _duck(t, legal, rank, suit, suit_mask, tmask):
    """Lose the trick with the most dangerous card that still loses (sheds future
    winners)."""
    if t[SIZE] == 0:
        # lead the card most certain to be beaten: many unseen cards above it, no trump
        cs = side_cards(legal, tmask)
        best, best_k = -1, -(1 << 30)
        while cs:
            c = bit_index(cs & -cs)
            cs &= cs - 1
            k = higher_out(t, c, suit, suit_mask) * 100 - rank[c]
            if k > best_k:
                best, best_k = c, k
        return _say(t, _D_LEAD, best)
    _, lose = beating(t, legal)
    if lose:
        non_trump = lose & ~tmask
        card = max_danger(t, non_trump if non_trump else lose, rank, suit, suit_mask)
        return _say(t, _D_LOSER, card)
    if t[LATER]:
        return _say(t, _D_LOW, low_card(legal, rank, tmask))
    return _say(t, _D_SHED, high_card(legal, rank, tmask))


@jit
def _play_nil(t, legal, rank, suit, suit_mask, tmask):
    """rule text 000 "Noll-budet": I promised no trick; duck every trick."""
    t[CTX] = _NIL
    if t[SIZE] == 0:
        # lead a card sure to be beaten, from the suit whose top card is safest: leading
        # the low card of a short suit would leave its high card bare
        cs = side_cards(legal, tmask)
        best, best_k = -1, -(1 << 30)
        while cs:
            c = bit_index(cs & -cs)
            cs &= cs - 1
            top = high_bit(t[HAND] & suit_mask[suit[c]])
            k = (
                min(higher_out(t, c, suit, suit_mask), 3) * 10000
                + higher_out(t, top, suit, suit_mask) * 100
                - rank[c]
            )
            if k > best_k:
                best, best_k = c, k
        return _say(t, _N_LEAD, best)
    _, lose = beating(t, legal)
    if lose:
        if suit[bit_index(lose & -lose)] != t[LEAD]:
            # void: throw the card most likely to win a trick later (a high side card)
            card = max_danger(t, side_cards(lose, tmask), rank, suit, suit_mask)
            return _say(t, _N_VOID, card)
        return _say(t, _N_UNDER, max_rank(lose, rank))
    if t[LATER]:
        return _say(t, _N_LOW, low_card(legal, rank, tmask))
    return _say(t, _N_FORCED, high_card(legal, rank, tmask))


@jit
def _protect_nil(t, bids, won, trick, voids, legal, rank, suit, suit_mask, tmask):
    """rule text 000 "Så täcker partnern ett noll-bud": take the tricks myself."""
    t[CTX] = _PROTECT
    p = t[PARTNER]
    if t[SIZE] == 0:
        void, masters = 0, 0
        bits = legal
        while bits:
            c = bit_index(bits & -bits)
            bits &= bits - 1
            if voids[p] >> suit[c] & 1 and suit[c] != t[TRUMP]:
                void |= 1 << c
            if is_master(t, c, suit, suit_mask):
                masters |= 1 << c
        if void:  # "Spela också ut färger där partnern är kort": partner discards
            return _say(t, _P_VOID, high_card(void, rank, tmask))
        if masters:  # "Spela dina höga kort tidigt": cash while the partner can unload
            return _say(t, _P_CASH, high_card(side_cards(masters, tmask), rank, tmask))
        return _say(t, _P_LEAD_HIGH, high_card(side_cards(legal, tmask), rank, tmask))
    win, _ = beating(t, legal)
    if t[WIN_SEAT] == p:
        if win:  # "Lägg alltid över partnerns kort när du kan"
            return _say(t, _P_OVERTAKE, low_card(win, rank, tmask))
        return _say(t, _P_CANNOT_OVERTAKE, low_card(legal, rank, tmask))
    if t[LATER] >> p & 1:
        if win:
            sure = sure_cards(t, voids, win, suit, suit_mask)
            if sure:
                return _say(t, _P_SURE, low_card(sure, rank, tmask))
            return _say(t, _P_HIGH, high_card(win, rank, tmask))
        return _say(t, _P_LOW, low_card(legal, rank, tmask))
    return _play_contract(t, bids, won, voids, legal, rank, suit, suit_mask, tmask)


@jit
def _set_nil(t, voids, legal, nils, rank, suit, suit_mask, tmask):
    """The card that sets an opponent's nil (lead low toward it, never overtake its
    card), or -1 to play for the contract instead."""
    t[CTX] = _SET_NIL
    if t[SIZE] == 0:  # lead low toward the nil bidder, in a suit it still holds
        pool = 0
        bits = legal
        while bits:
            c = bit_index(bits & -bits)
            bits &= bits - 1
            if not void_among(nils, voids, suit[c], t[P]):
                pool |= 1 << c
        if pool:
            pool = side_cards(pool, tmask)
        if not pool:
            return -1
        card, best_k = -1, 1 << 30  # the lowest rank, the first card among equals
        while pool:
            c = bit_index(pool & -pool)
            pool &= pool - 1
            if rank[c] < best_k:
                card, best_k = c, rank[c]
        if rank[card] > 7:
            return -1  # no low card to lead
        return _say(t, _S_LEAD, card)
    seat = t[WIN_SEAT]
    if seat >= 0 and nils >> seat & 1:  # never overtake a nil bidder's card
        _, lose = beating(t, legal)
        if lose:
            return _say(t, _S_UNDER, max_rank(lose, rank))
        return _say(t, _S_FORCED, low_card(legal, rank, tmask))
    if t[LATER] & nils and seat != t[PARTNER]:
        # the nil bidder plays after me: keep the trick low so it may be forced to win
        follow = legal & suit_mask[t[LEAD]]
        if follow:
            return _say(t, _S_LOW, low_card(follow, rank, tmask))
    return -1


@jit
def _play_contract(t, bids, won, voids, legal, rank, suit, suit_mask, tmask):
    """Play for the team's contract: take, duck, or feed bags (module doc)."""
    team = t[SEAT] % t[TEAMS]
    need = team_need(t, bids, won, team)
    # RULES.md §6 one-player teams: the opponent closest to a contract stands for them all
    opp_need = -(1 << 30)
    for u in range(t[TEAMS]):
        if u != team:
            opp_need = max(opp_need, team_need(t, bids, won, u))
    rem = t[HAND_SIZE] - t[TRICKS]
    # the tricks that set them: taking them is worth far more than the bags they cost
    set_them = opp_need > 0 and rem - opp_need + 1 <= t[SET_TRICKS]
    t[NEED] = need
    if need > rem:
        t[CTX] = _BET_SET if set_them else _BET_FEED
    elif need <= 0:
        t[CTX] = _MADE_SET if set_them else _BAGS
    else:
        t[CTX] = _NEED
    if t[CTX] == _BET_FEED or t[CTX] == _BAGS:
        return _duck(t, legal, rank, suit, suit_mask, tmask)
    return _take(t, voids, legal, rank, suit, suit_mask, tmask)


@jit
def _take(t, voids, legal, rank, suit, suit_mask, tmask):
    """Win the tricks the team needs, as cheaply as possible."""
    if t[SIZE] == 0:
        return _lead_to_take(t, voids, legal, rank, suit, suit_mask, tmask)
    seat, best = t[WIN_SEAT], t[WIN_CARD]
    follow = suit[bit_index(legal & -legal)] == t[LEAD]
    later = t[LATER]
    partner = t[PARTNER]
    if seat == partner:
        beaten = False
        for s in range(t[P]):
            if later >> s & 1 and can_beat_later(t, voids, s, best, t[LEAD], suit, suit_mask):
                beaten = True
        if not beaten:
            if follow:
                return _say(t, _HOLDS_LOW, low_card(legal, rank, tmask))
            card = _discard_low(t, legal, rank, suit, suit_mask, tmask)
            return _say(t, _HOLDS_DISCARD, card)
    win, _ = beating(t, legal)
    sure = sure_cards(t, voids, win, suit, suit_mask)
    if follow:
        if sure:
            return _say(t, _T_CHEAP, low_card(sure, rank, tmask))
        if t[SIZE] == 1:
            return _say(t, _T_SECOND, low_card(legal, rank, tmask))
        if win and seat != partner:
            return _say(t, _T_THIRD, high_card(win, rank, tmask))
        return _say(t, _T_LOW, low_card(legal, rank, tmask))
    # void in the led suit: trump, with the lowest trump that wins
    if sure & tmask:
        return _say(t, _T_RUFF_SURE, low_card(sure & tmask, rank, tmask))
    shown = False
    for s in range(t[P]):
        if later >> s & 1 and s != partner and voids[s] >> t[LEAD] & 1:
            shown = True
    if win & tmask and not shown:  # nobody after me has shown out: an over-ruff is a risk
        return _say(t, _T_RUFF_LOW, low_card(win & tmask, rank, tmask))
    return _say(t, _DISCARD, _discard_low(t, legal, rank, suit, suit_mask, tmask))


@jit
def _lead_to_take(t, voids, legal, rank, suit, suit_mask, tmask):
    """Lead to win tricks: draw trumps, cash winners, set up ruffs, else lead low."""
    trumps, sides = legal & tmask, legal & ~tmask
    mine = popcount(t[HAND] & tmask)
    out = popcount(t[UNSEEN] & tmask)
    if trumps and out:
        top = high_bit(trumps)
        if is_master(t, top, suit, suit_mask) and mine >= out:
            # rule text 000 "Har du däremot lång trumf och toppkorten": draw the trumps early
            return _say(t, _L_DRAW, top)
    p = t[PARTNER]
    masters, partner_ruffs, safe = 0, 0, 0
    bits = sides
    while bits:
        c = bit_index(bits & -bits)
        bits &= bits - 1
        if is_master(t, c, suit, suit_mask) and not ruffed(t, voids, suit[c], suit_mask):
            masters |= 1 << c
        if t[PARTNERS] and voids[p] >> suit[c] & 1 and t[HOLD + p] & tmask:
            partner_ruffs |= 1 << c
        if not void_among(t[OPPS], voids, suit[c], t[P]):
            safe |= 1 << c  # no lead into an opponent's void: a cheap ruff for them
    if masters:
        # a sure winner; with no trump left outside, every master is as good as an ace
        # (rule text 000 "Räkna spadern")
        return _say(t, _L_CASH, high_card(masters, rank, tmask))
    if partner_ruffs:
        return _say(t, _L_PARTNER_RUFF, low_card(partner_ruffs, rank, tmask))
    if not safe:
        safe = sides
    if safe and mine >= 1:
        single = 0
        bits = safe
        while bits:
            c = bit_index(bits & -bits)
            bits &= bits - 1
            if suit_len(t, suit[c], suit_mask) == 1 and not is_master(t, c, suit, suit_mask):
                single |= 1 << c
        if single and rank[bit_index(single & -single)] < 10:
            return _say(t, _L_SINGLETON, low_card(single, rank, tmask))
    if safe:
        # low from a long suit not headed by a king or queen that waits to be guarded:
        # the least by (unguarded top, -length, rank)
        best, best_k = -1, 1 << 30
        bits = safe
        while bits:
            c = bit_index(bits & -bits)
            bits &= bits - 1
            top = high_bit(safe & suit_mask[suit[c]])
            unguarded = higher_out(t, top, suit, suit_mask) > 0 and rank[top] >= 10
            k = unguarded * 10000 - suit_len(t, suit[c], suit_mask) * 100 + rank[c]
            if k < best_k:
                best, best_k = c, k
        return _say(t, _L_LONG, best)
    masters = 0
    bits = trumps
    while bits:
        c = bit_index(bits & -bits)
        bits &= bits - 1
        if is_master(t, c, suit, suit_mask):
            masters |= 1 << c
    if masters:
        return _say(t, _L_TOP_TRUMP, low_card(masters, rank, tmask))
    # rule text 000 "Vänta med att bryta trumfen så länge motståndarna har fler spader än du"
    return _say(t, _L_LOW_TRUMP, low_card(trumps, rank, tmask))


@jit
def _choose_card(t, bids, won, trick, voids, rank, suit, suit_mask):
    """The card of the decision `t` (module doc), its reason recorded in `t`."""
    legal = t[LEGAL]
    t[CTX], t[NEED] = 0, 0
    if popcount(legal) == 1:
        return _say(t, _ONLY, bit_index(legal))
    trump = t[TRUMP]
    tmask = suit_mask[trump]
    prepare(t, trick, voids, suit_mask)
    me = t[SEAT]
    if bids[me] == 0 and (won[me] == 0 or not t[NIL_COUNTS]):
        return _play_nil(t, legal, rank, suit, suit_mask, tmask)
    if t[PARTNERS] and is_nil(bids, won, t[PARTNER]):
        return _protect_nil(t, bids, won, trick, voids, legal, rank, suit, suit_mask, tmask)
    nils = 0
    for s in range(t[P]):
        if t[OPPS] >> s & 1 and is_nil(bids, won, s):
            nils |= 1 << s
    if nils:
        need = team_need(t, bids, won, me % t[TEAMS])
        rem = t[HAND_SIZE] - t[TRICKS]
        if not rem - 1 <= need <= rem:  # the nil is worth more, unless the contract is tight
            card = _set_nil(t, voids, legal, nils, rank, suit, suit_mask, tmask)
            if card >= 0:
                return card
    return _play_contract(t, bids, won, voids, legal, rank, suit, suit_mask, tmask)


@jit
def _decision_table(p, teams, partnerships, hand_size, nil_counts, trump):
    t = np.zeros(NT, dtype=np.int64)
    t[P], t[TEAMS], t[PARTNERS], t[HAND_SIZE], t[NIL_COUNTS], t[TRUMP] = (
        p, teams, partnerships, hand_size, nil_counts, trump,
    )  # fmt: skip
    t[SET_TRICKS] = DEFAULT_SET_TRICKS
    return t


def decision_table(rules: Rules, trump: int = 0) -> npt.NDArray[np.int64]:
    """`_decision_table` of a table of `rules` (for the compiled play-outs' callers)."""
    return _decision_table(
        rules.num_players, rules.num_teams, rules.partnerships, rules.hand_size,
        rules.nil_tricks == "count", trump,
    )  # fmt: skip


# ----------------------------------------------------------------------------- a view
@jit
def _choose_cards(
    rows, seat, hand, legal, unseen, leader, size, lead, tricks, trump, bids, won, trick,
    voids, p, teams, partnerships, hand_size, nil_counts, set_tricks, out,
    rank, suit, suit_mask,
):  # fmt: skip
    t = _decision_table(p, teams, partnerships, hand_size, nil_counts, 0)
    t[SET_TRICKS] = set_tricks
    for i in rows:
        t[SEAT], t[HAND], t[LEGAL], t[UNSEEN] = seat[i], hand[i], legal[i], unseen[i]
        t[LEADER], t[SIZE], t[LEAD], t[TRICKS] = leader[i], size[i], lead[i], tricks[i]
        t[TRUMP] = trump[i]
        out[i, 0] = _choose_card(t, bids[i], won[i], trick[i], voids[i], rank, suit,
                                 suit_mask)  # fmt: skip
        out[i, 1], out[i, 2], out[i, 3] = t[CTX], t[WHY], t[NEED]


def choose_cards(
    view: SeatView, rows: npt.NDArray[np.int64], set_tricks: int = DEFAULT_SET_TRICKS
) -> npt.NDArray[np.int64]:
    """(B, 4) int64 per game: the card, and its reason (ctx, why, need; `reason_text`),
    for the card-play games `rows` of the view (other rows are left 0); `set_tricks` the
    heuristic's parameter (`agents.heuristic.agent`)."""
    rules = view.rules
    i64 = np.int64
    # RULES.md §6 two_player: cards I looked at and discarded are in nobody's hand
    hidden = view.played | view.hand | view.seen
    unseen = (np.uint64(deck_mask(rules)) & ~hidden).astype(i64)
    out = np.zeros((view.batch_size, 4), dtype=i64)
    _choose_cards(
        np.asarray(rows, dtype=i64), view.seat.astype(i64), view.hand.astype(i64),
        view.legal.astype(i64), unseen, view.leader.astype(i64), view.trick_size.astype(i64),
        view.lead_suit.astype(i64), view.tricks_played.astype(i64), view.trump.astype(i64),
        view.bids.astype(i64), view.tricks_won.astype(i64), view.trick.astype(i64),
        view.voids.astype(i64), rules.num_players, rules.num_teams, rules.partnerships,
        rules.hand_size, rules.nil_tricks == "count", set_tricks, out, RANK_OF_CARD, SUIT_OF_CARD,
        SUIT_CARDS,
    )  # fmt: skip
    return out


# ----------------------------------------------------------------------------- play-outs
@jit
def heuristic_game(
    hands, played, trick, voids, bids, won, leader, size, lead, broken, tricks, first,
    deck, seen, t, two_clubs, rank, suit, suit_mask,
):  # fmt: skip
    """Play one game's hand out by the heuristic's card play (hands, trick, voids and won
    in place), the card `first` first if it is >= 0. `t`: a `_decision_table` (its trump
    set); `seen` (P,): RULES.md §6 two_player's cards each seat looked at and discarded
    (0 elsewhere). The rules are the core's (RULES.md §3), the voids recorded as the
    engine does."""
    p = hands.shape[0]
    trump = t[TRUMP]
    while tricks < t[HAND_SIZE]:
        seat = (leader + size) % p
        h = hands[seat]
        if first >= 0:
            c, first = first, -1
        else:
            legal = hand_legal_cards(h, size, tricks, two_clubs, broken, lead, trump)
            t[SEAT], t[HAND], t[LEGAL] = seat, h, legal
            t[UNSEEN] = deck & ~played & ~h & ~seen[seat]
            t[LEADER], t[SIZE], t[LEAD], t[TRICKS] = leader, size, lead, tricks
            c = _choose_card(t, bids, won, trick, voids, rank, suit, suit_mask)
        voids[seat] |= shown_voids(c, size, lead, broken, trump)
        played |= 1 << c
        leader, size, lead, broken, tricks = play_card(
            hands, trick, won, seat, c, leader, size, lead, broken, tricks, trump
        )


@jit_unref
def _play_out_rows(
    hands, played, trick, voids, bids, won, leader, trick_size, lead, broken, tricks_played,
    trump, deck, seen, t, two_clubs, rank, suit, suit_mask,
):  # fmt: skip
    """Every game (row) played out by `heuristic_game`, in place; `t` its
    `_decision_table`. Every array is the caller's (`search_kernel.jit_unref`)."""
    hands, played, trick, voids = borrow(hands), borrow(played), borrow(trick), borrow(voids)
    bids, won, leader, trick_size = borrow(bids), borrow(won), borrow(leader), borrow(trick_size)
    lead, broken, tricks_played = borrow(lead), borrow(broken), borrow(tricks_played)
    trump, seen, t = borrow(trump), borrow(seen), borrow(t)
    rank, suit, suit_mask = borrow(rank), borrow(suit), borrow(suit_mask)
    for g in range(hands.shape[0]):
        t[TRUMP] = trump[g]
        heuristic_game(
            hands[g], played[g], trick[g], voids[g], bids[g], won[g], leader[g], trick_size[g],
            lead[g], broken[g], tricks_played[g], -1, deck, seen[g], t, two_clubs, rank, suit,
            suit_mask,
        )  # fmt: skip


def play_out_state(state) -> npt.NDArray[np.int64]:
    """(B, P) tricks per seat at the end of the hand of every game of an engine `State`
    in card play, played by the heuristic's card play (the state is not changed); the
    arrays handed to `_play_out_rows` live until it returns."""
    rules = state.rules
    i64 = np.int64
    won = state.tricks_won.astype(i64)
    table = decision_table(rules)
    _play_out_rows(
        (state.hands & ~state.played[:, None]).astype(i64), state.played.astype(i64),
        state.trick.astype(i64), state.voids.astype(i64), state.bids.astype(i64), won,
        state.leader.astype(i64), state.trick_size.astype(i64), state.lead_suit.astype(i64),
        state.broken.copy(), state.tricks_played.astype(i64), state.trump.astype(i64),
        int(deck_mask(rules)), state.seen.astype(i64), table,
        rules.first_lead == "two_of_clubs", RANK_OF_CARD, SUIT_OF_CARD, SUIT_CARDS,
    )  # fmt: skip
    return won


def decide_card(rules, position: dict, set_tricks: int = DEFAULT_SET_TRICKS) -> tuple[int, str]:
    """(card, reason) of one card-play decision given as a dict of its fields: `seat`,
    `hand`, `legal`, `unseen`, `leader`, `trick_size`, `lead_suit`, `tricks_played`,
    `trump` (ints; masks as card bits) and `bids`, `tricks_won`, `trick`, `voids` (per
    seat); `set_tricks` the heuristic's parameter. For tests and single decisions;
    `choose_cards` decides a whole view."""
    i64 = np.int64
    one = {k: np.asarray([v], dtype=i64) for k, v in position.items()}
    out = np.zeros((1, 4), dtype=i64)
    _choose_cards(
        np.zeros(1, dtype=i64), one["seat"], one["hand"], one["legal"], one["unseen"],
        one["leader"], one["trick_size"], one["lead_suit"], one["tricks_played"], one["trump"],
        one["bids"], one["tricks_won"], one["trick"], one["voids"], rules.num_players,
        rules.num_teams, rules.partnerships, rules.hand_size, rules.nil_tricks == "count",
        set_tricks, out, RANK_OF_CARD, SUIT_OF_CARD, SUIT_CARDS,
    )  # fmt: skip
    ctx, why, need = out[0, 1:].tolist()
    return int(out[0, 0]), reason_text(ctx, why, need, int(position["trump"]))
