"""numba ISMCTS from a decision before the card play: bids, blind nil and the exchange.

`bid_search` runs the iterations `lo..hi` of a decision whose root is in the bidding
(RULES.md §2: BLIND, BID, or the blind-nil EXCHANGE), exactly as `ISMCTSAgent.iterate`
does on a `FastGame`, on the flat tree of `agents.ismcts_kernel.Tree`: each iteration
walks down the tree through the rest of the bidding, the exchange and into the card play
(the same UCB1 with availability counts, children in ascending action order, ties to the
first), expands one node, then rolls out as `agents.ismcts.rollout` does:

- bids by `search_common.quick_bid` (`_quick_bid`: aces, half the kings, the spades from
  the queen up and every spade past the third, `np.rint` to even, the nearest legal bid,
  ties to the lowest);
- the blind-nil choice and the exchange cards uniformly among the legal actions, by a
  draw of the decision's stream (`agents.kernel_random`) as the tree's expansion draws;
- the card play by `agents.search_kernel._play_out`, drawing from the same stream.

The bidding rules are `SingleGame`'s (RULES.md §2, §6 bid constraints: `_bid_bits`,
`_blind_allowed`; the exchange order and hand-over of `hand_flow._next_passer`; the first
lead of `hand_flow._start_play`). Rewards: team points come from `team_tables`, every
team's RULES.md §4 hand points (bag penalty included) of each combination of its members'
bids, blind nils and tricks, computed by `scoring.score_hand` and `scoring.apply_bags`
themselves; the reward arithmetic is `iterate`'s, term for term. RULES.md §6 auction: after
the last bid the highest bidder (first among equals) names trump, a tree decision like a
bid, random in the rollout; the card play then uses the named suit. RULES.md §6
two_player's draw is over before any search (`search_common.bid_then_search`).
"""

from __future__ import annotations

import copy

import numpy as np
import numpy.typing as npt

from agents.ismcts_kernel import Tree, _descend, _low_bit
from agents.kernel_random import below
from agents.search_kernel import (
    _RANK,
    _SUIT,
    _SUIT_MASK,
    _jit,
    _kth_bit,
    _legal_cards,
    _play_card,
    _play_out,
    _popcount,
)
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    NAME_TRUMP,
    NUM_ACTIONS,
    NUM_CARDS,
    SPADES,
    TWO_OF_CLUBS,
)
from spades_env.core.rules import (
    bid_top,
    first_leader,
    legal_bids,
    next_passer,
    trump_namer,
)
from spades_env.core.spec import BID_FREE, BID_MIRROR, BID_SUICIDE, BID_WHIZ
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, score_hand
from spades_env.state import BID, BLIND, EXCHANGE, PLAY, TRUMP

_KINDS = {"none": BID_FREE, "mirror": BID_MIRROR, "whiz": BID_WHIZ, "suicide": BID_SUICIDE}
# slots of the scalar state `st` of one iteration
_PH, _TO, _NB, _LD, _TS, _LS, _BR, _TP, _TR = range(9)
_SPADE_MASK = int(_SUIT_MASK[SPADES])
_CLUB2 = 1 << TWO_OF_CLUBS
_HAND_TABLES: dict[Rules, tuple[npt.NDArray, npt.NDArray, npt.NDArray, int]] = {}


# ----------------------------------------------------------------------------- rules
@_jit
def _bid_bits(seat, hands, bids, max_bid, max_total, min_bid, kind, partnerships):
    """RULES.md §2, §6 (the rules core's `bid_top` and `legal_bids`): bit i = bid i."""
    p = hands.shape[0]
    top = bid_top(max_bid, max_total, bids, p)
    partner = bids[(seat + 2) % 4] if partnerships else -1
    return np.int64(legal_bids(min_bid, top, kind, hands[seat], partner))


@_jit
def _legal(st, hands, bids, passing, rule, spade_mask):
    """(legal bits, action of bit 0, seat to act) of the state."""
    ph, seat = st[_PH], st[_TO]
    if ph == TRUMP:  # RULES.md §6 auction: any of the four suits
        return 0b1111, NAME_TRUMP, seat
    if ph == BLIND:
        return 3, BLIND_NIL, seat  # blind nil, or look at the hand (SEE_HAND)
    if ph == BID:
        bits = _bid_bits(seat, hands, bids, rule[0], rule[1], rule[2], rule[3], rule[4])
        return bits, BID_BASE, seat
    if ph == EXCHANGE:
        return hands[seat] & ~passing[seat], 0, seat
    p = hands.shape[0]
    seat = (st[_LD] + st[_TS]) % p
    bits = _legal_cards(hands[seat], st[_TS], st[_TP], rule[5] != 0, st[_BR] != 0, st[_LS],
                        st[_TR])  # fmt: skip
    return bits, 0, seat


@_jit
def _start_play(st, hands, dealer, two_clubs, club2) -> None:
    """`hand_flow._start_play`: the first lead (RULES.md §3)."""
    leader = first_leader(two_clubs, hands, dealer, hands.shape[0])
    st[_LD], st[_TO], st[_PH] = leader, leader, PLAY


@_jit
def _next_passer(st, hands, blind, passing, dealer, two_clubs, club2) -> None:
    """`hand_flow._next_passer` (RULES.md §2 blind_nil_exchange): the next seat from left
    of the dealer still to pass, else the passed cards change hands and play starts."""
    p = hands.shape[0]
    s = next_passer(blind, passing, dealer, p)
    if s >= 0:
        st[_PH], st[_TO] = EXCHANGE, s
        return
    kept = hands & ~passing
    for s in range(p):
        hands[s] = kept[s] | passing[(s + p // 2) % p]
    _start_play(st, hands, dealer, two_clubs, club2)


@_jit
def _apply(st, a, hands, bids, blind, passing, trick, won, dealer, blind_ok, rule, club2):
    """The seat to act takes action `a` (`SingleGame.step` before the card play, and the
    card play of `search_kernel._play_card`)."""
    ph, seat = st[_PH], st[_TO]
    p = hands.shape[0]
    if ph == PLAY:
        seat = (st[_LD] + st[_TS]) % p
        st[_LD], st[_TS], st[_LS], st[_BR], st[_TP] = _play_card(
            hands, trick, won, seat, a, st[_LD], st[_TS], st[_LS], st[_BR] != 0, st[_TP], st[_TR]
        )
        return
    if ph == EXCHANGE:
        passing[seat] |= 1 << a
        _next_passer(st, hands, blind, passing, dealer, rule[5], club2)
        return
    if ph == TRUMP:  # RULES.md §6 auction: the named suit is trump for the hand
        st[_TR] = a - NAME_TRUMP
        _after_naming(st, hands, blind, passing, dealer, rule, club2)
        return
    if ph == BLIND and a != BLIND_NIL:  # RULES.md §2: declined; looks at the hand and bids
        st[_PH] = BID
        return
    is_blind = a == BLIND_NIL
    bids[seat] = 0 if is_blind else a - BID_BASE
    blind[seat] = is_blind
    st[_NB] += 1
    if st[_NB] < p:
        nxt = (seat + 1) % p
        st[_TO] = nxt
        ok = blind_ok[nxt] and not (rule[3] == BID_SUICIDE and bids[(nxt + 2) % 4] == 0)
        st[_PH] = BLIND if ok else BID
        return
    if rule[7]:  # RULES.md §6 auction: the highest bidder, first among equals, names trump
        st[_PH], st[_TO] = TRUMP, trump_namer(dealer, bids, p)
        return
    _after_naming(st, hands, blind, passing, dealer, rule, club2)


@_jit
def _after_naming(st, hands, blind, passing, dealer, rule, club2) -> None:
    """Bidding (and naming trump) over: the exchange, or the first lead."""
    exchange = False
    if rule[6]:
        for s in range(hands.shape[0]):
            exchange |= blind[s] != 0
    if exchange:
        _next_passer(st, hands, blind, passing, dealer, rule[5], club2)
    else:
        _start_play(st, hands, dealer, rule[5], club2)


@_jit
def _quick_bid(hand, legal, rank, suit) -> int:
    """`search_common.quick_bid` for one hand: the count in halves, rounded half to even."""
    spades, aces, kings, top = 0, 0, 0, 0
    bits = hand
    while bits:
        c = _low_bit(bits)
        bits &= bits - 1
        if suit[c] == SPADES:
            spades += 1
            top += rank[c] >= 10
        elif rank[c] == 12:
            aces += 1
        elif rank[c] == 11:
            kings += 1
    halves = 2 * aces + kings + 2 * (top + max(spades - 3, 0))
    est = halves // 2
    if halves % 2 and est % 2:
        est += 1
    best, best_d = -1, 1 << 30
    for i in range(NUM_CARDS):
        d = abs(i - est) + (0 if legal >> i & 1 else 1000)
        if d < best_d:
            best, best_d = i, d
    return BID_BASE + best


# ----------------------------------------------------------------------------- search
@_jit
def _bid_search(
    worlds, lo, hi, st0, bids0, blind0, passing0, trick0, won0, dealer, hand_size, policy,
    partnerships, c, blind_ok, rule, team_pts, members, digit, max_bid, teams,
    action, mover, visits, reward, avail, first, last, sibling, size, stream,
    rank, suit, spade_mask, club2,
):  # fmt: skip
    p = worlds.shape[1]
    hands = np.empty(p, dtype=np.int64)
    bids, blind, passing = np.empty_like(hands), np.empty_like(hands), np.empty_like(hands)
    trick, won, st = np.empty_like(hands), np.empty_like(hands), np.empty_like(st0)
    pts = np.empty(teams, dtype=np.int64)
    rewards = np.empty(teams)
    child_of = np.full(NUM_ACTIONS, -1, dtype=np.int64)
    path = np.empty(hand_size * p + 6 * p + 2, dtype=np.int64)
    seq = np.empty(NUM_CARDS, dtype=np.int64)
    for it in range(lo, hi):
        for s in range(p):
            hands[s], bids[s], blind[s] = worlds[it, s], bids0[s], blind0[s]
            passing[s], trick[s], won[s] = passing0[s], trick0[s], won0[s]
        st[:] = st0
        node = 0
        path[0] = 0
        plen = 1
        while st[_TP] < hand_size:  # selection and expansion
            legal, base, seat = _legal(st, hands, bids, passing, rule, spade_mask)
            node = _descend(
                node, legal, base, seat, c, stream, child_of, size, action, mover, visits,
                reward, avail, first, last, sibling,
            )  # fmt: skip
            path[plen] = node
            plen += 1
            _apply(st, action[node], hands, bids, blind, passing, trick, won, dealer, blind_ok,
                   rule, club2)  # fmt: skip
            if visits[node] == 0:  # expanded: the rest of the hand is the rollout's
                break
        while st[_PH] != PLAY:  # the rollout's bidding and exchange (agents.ismcts.rollout)
            if st[_PH] == BID:
                legal, _, seat = _legal(st, hands, bids, passing, rule, spade_mask)
                a = _quick_bid(hands[seat], legal, rank, suit)
            else:
                legal, base, _ = _legal(st, hands, bids, passing, rule, spade_mask)
                a = base + _kth_bit(legal, below(stream, _popcount(legal)))
            _apply(st, a, hands, bids, blind, passing, trick, won, dealer, blind_ok, rule, club2)
        _play_out(
            hands, trick, st[_LD], st[_TS], st[_LS], st[_BR] != 0, won, st[_TP], hand_size,
            rule[5] != 0, policy, partnerships, st[_TR], seq, stream,
        )  # fmt: skip
        total = 0
        for t in range(teams):
            code, mult = 0, 1
            for k in range(members.shape[1]):
                s = members[t, k]
                if s >= 0:
                    b = max_bid + 1 if blind[s] else bids[s]
                    code += (b * (hand_size + 1) + won[s]) * mult
                    mult *= digit
            pts[t] = team_pts[t, code]
            total += pts[t]
        for t in range(teams):  # ISMCTSAgent.iterate's arithmetic
            others = (total - pts[t]) / max(teams - 1, 1)
            rewards[t] = min(1.0, max(0.0, 0.5 + (pts[t] - others) / 1000))
        for i in range(plen):
            nd = path[i]
            visits[nd] += 1
            if mover[nd] >= 0:
                reward[nd] += rewards[mover[nd] % teams]


# ----------------------------------------------------------------------------- tables
def _hand_tables(rules: Rules) -> tuple[npt.NDArray, npt.NDArray, npt.NDArray, int]:
    """Per rules (cached): (T, D**m) hand points and bags of every team (RULES.md §4,
    before the bag penalty) by the code of its members' (bid or blind nil, tricks), the
    (T, m) members (-1 pads), and the digit base D."""
    got = _HAND_TABLES.get(rules)
    if got is not None:
        return got
    p, t, h = rules.num_players, rules.num_teams, rules.hand_size
    members = [[s for s in range(p) if rules.team_of(s) == team] for team in range(t)]
    m = max(len(ms) for ms in members)
    if m > 2:
        raise NotImplementedError(f"ismcts: teams of {m} seats are not supported")
    digit = (rules.max_bid + 2) * (h + 1)  # bid 0..max_bid or blind nil, times tricks 0..h
    codes = np.arange(digit**m)
    points = np.zeros((t, codes.size), dtype=np.int64)
    bags = np.zeros_like(points)
    for team, ms in enumerate(members):
        bids = np.ones((codes.size, p), dtype=np.int64)  # other seats: any value
        blind = np.zeros((codes.size, p), dtype=bool)
        tricks = np.zeros((codes.size, p), dtype=np.int64)
        for k, s in enumerate(ms):
            d = codes // digit**k % digit
            b, tricks[:, s] = d // (h + 1), d % (h + 1)
            blind[:, s] = b == rules.max_bid + 1
            bids[:, s] = np.where(blind[:, s], 0, b)
        hs = score_hand(rules, bids, blind, tricks)
        points[team], bags[team] = hs.points[:, team], hs.bags[:, team]
    pad = np.array([ms + [-1] * (m - len(ms)) for ms in members], dtype=np.int64)
    _HAND_TABLES[rules] = out = (points, bags, pad, digit)
    return out


def team_tables(rules: Rules, bags_before) -> tuple[npt.NDArray, npt.NDArray, int]:
    """(T, D**m) every team's hand points with the bag penalty its bags so far bring
    (`FastGame._end_hand`'s arithmetic), the (T, m) members, and the digit base D."""
    points, bags, members, digit = _hand_tables(rules)
    before = np.asarray(bags_before, dtype=np.int64)[:, None]
    _, _, penalty = apply_bags(rules, points, before + bags)
    return points - penalty, members, digit


def bid_search(tree: Tree, worlds, lo: int, hi: int, game, c: float, policy: int, tables,
               stream) -> None:  # fmt: skip
    """Iterations `lo..hi` (rows of `worlds`, (N, P) int64 hands) from the position of
    `game` (a `FastGame` before the card play) into `tree` (grown to fit); `tables` from
    `team_tables`."""
    rules = game.rules
    if game.phase not in (BLIND, BID, TRUMP, EXCHANGE) or game.played:
        raise ValueError("ismcts: bid_search needs a position in the bidding or the exchange")
    tree.grow(int(tree.size[0]) + hi - lo)
    st0 = np.array(
        [game.phase, game.to_act, game.num_bids, game.leader, game.trick_size, game.lead_suit,
         game.broken, game.tricks_played, game.trump], dtype=np.int64,
    )  # fmt: skip
    rule = np.array(
        [rules.max_bid, -1 if rules.max_total_bid is None else rules.max_total_bid,
         rules.min_bid > 0, _KINDS[rules.bid_constraint], rules.partnerships,
         rules.first_lead == "two_of_clubs", rules.blind_nil_exchange, rules.trump == "named"],
        dtype=np.int64,
    )  # fmt: skip
    blind_ok = _blind_options(game)
    team_pts, members, digit = tables
    _bid_search(
        worlds, lo, hi, st0, np.asarray(game.bids, dtype=np.int64),
        np.asarray(game.blind, dtype=np.int64), np.asarray(game.passing, dtype=np.int64),
        np.asarray(game.trick, dtype=np.int64), np.asarray(game.tricks_won, dtype=np.int64),
        int(game.dealer), rules.hand_size, policy, rules.partnerships, float(c), blind_ok,
        rule, team_pts, members, digit, rules.max_bid, rules.num_teams,
        tree.action, tree.mover, tree.visits, tree.reward, tree.avail, tree.first, tree.last,
        tree.sibling, tree.size, stream, _RANK, _SUIT, _SPADE_MASK, _CLUB2,
    )  # fmt: skip


def _blind_options(game) -> npt.NDArray[np.bool_]:
    """(P,) `SingleGame._blind_allowed` of each seat before any bid: the option and the
    scores (RULES.md §2); the kernel adds §6 suicide's condition on the partner's bid."""
    probe = copy.copy(game)
    probe.bids = [-1] * game.rules.num_players
    return np.array([probe._blind_allowed(s) for s in range(game.rules.num_players)])


__all__ = ["bid_search", "team_tables"]
