"""numba ISMCTS from a decision before the card play: bids, blind nil and the exchange.

`bid_search` runs the iterations `lo..hi` of a decision whose root is in the bidding
(RULES.md §2: BLIND, BID, or the blind-nil EXCHANGE; §6 auction: naming trump), exactly
as `ISMCTSAgent.iterate` does on a `FastGame`, on the flat tree of
`agents.montecarlo.ismcts_kernel.Tree`: each iteration walks down the tree through the rest of the
bidding, the exchange and into the card play (the same UCB1 with availability counts,
children in ascending action order, ties to the first), expands one node, then rolls
out as `agents.montecarlo.ismcts.rollout` does:

- bids by `search_common.quick_bid` (`search_kernel.quick_bid_hand`);
- the blind-nil choice, naming trump and the exchange cards uniformly among the legal
  actions, by a draw of the decision's stream (`agents.kernels.streams`) as the tree's
  expansion draws;
- the card play by `agents.kernels.play.play_out_inline`, drawing from the same stream.

Until the card play each iteration steps a copy of the game's packed `State` row with
the rules core's own `step_game` (spades_env/core/kernel.py), so the bidding order, the
blind-nil offer (RULES.md §2 option and §6 suicide), the bid constraints, auction's trump
naming, the exchange and its hand-over and the first lead are the engine's, not a copy.
From the first lead on, the tree's card play and the rollout use the search kernels'
flat layout (`agents.kernels.play.play_card`, on the core's card rules). Rewards: team
points come from `team_tables`, every team's RULES.md §4 hand points (bag penalty
included) of each combination of its members' bids, blind nils and tricks, computed by
`scoring.score_hand` and `scoring.apply_bags` themselves; the reward arithmetic is
`iterate`'s, term for term. RULES.md §6 two_player's draw is over before any search
(`search_common.bid_then_search`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.kernels.compile import jit, jit_unref
from agents.kernels.play import (
    play_out_inline,
    popcount,
    quick_bid_hand,
)
from agents.kernels.streams import below
from agents.montecarlo.ismcts_kernel import Tree, descend, walk_play
from spades_env.cards import NUM_ACTIONS, NUM_CARDS
from spades_env.core.borrow import borrow, stack_array
from spades_env.core.kernel import PHASE_BASE, as_tuple, legal_bits, step_game
from spades_env.core.rule_functions import kth_bit
from spades_env.core.rules_vector import (
    L_BIDS,
    L_BLIND,
    L_BROKEN,
    L_HANDS,
    L_LEAD_SUIT,
    L_LEADER,
    L_LEGAL,
    L_PHASE,
    L_PLAYED,
    L_TO_ACT,
    L_TRICK,
    L_TRICK_SIZE,
    L_TRICKS_PLAYED,
    L_TRICKS_WON,
    L_TRUMP,
    R_K,
    R_P,
    R_PARTNERS,
    R_T,
    R_TWO_CLUBS,
    rules_vector,
)
from spades_env.rules import MAX_PLAYERS, Rules
from spades_env.scoring import apply_bags, score_hand
from spades_env.state import BID, BLIND, EXCHANGE, PLAY, TRUMP

_PATH = NUM_CARDS + 6 * MAX_PLAYERS + 2  # a path's length: k * p + 6 * p + 2 at most
_HAND_TABLES: dict[Rules, tuple[npt.NDArray, npt.NDArray, npt.NDArray, int]] = {}


# ----------------------------------------------------------------------------- search
@jit
def _to_play(r, u64, i8, hands, trick, won):
    """The game row at its first lead into the flat play-out layout: hands now, the
    trick and tricks won into the arrays; returns (leader, trick size, lead suit, broken,
    tricks played, trump)."""
    played = u64[0, r[L_PLAYED]]
    for s in range(r[R_P]):
        hands[s] = np.int64(u64[0, r[L_HANDS] + s] & ~played)
        trick[s] = i8[0, r[L_TRICK] + s]
        won[s] = i8[0, r[L_TRICKS_WON] + s]
    return (
        np.int64(i8[0, r[L_LEADER]]), np.int64(i8[0, r[L_TRICK_SIZE]]),
        np.int64(i8[0, r[L_LEAD_SUIT]]), i8[0, r[L_BROKEN]] != 0,
        np.int64(i8[0, r[L_TRICKS_PLAYED]]), np.int64(i8[0, r[L_TRUMP]]),
    )  # fmt: skip


@jit_unref
def _bid_search(
    worlds, lo, hi, spec_, row0, policy, c, team_pts, members, digit, max_bid,
    action, mover, visits, reward, avail, first, last, sibling, size, stream,
    row, fin, res, points,
):  # fmt: skip
    """`row`: scratch of `row0`'s shape; `fin`, `res`, `points`: step_game's record of an
    ended hand (never written here). Every array is the caller's or on the stack
    (`search_kernel.jit_unref`)."""
    worlds, spec_, row0, team_pts = borrow(worlds), borrow(spec_), borrow(row0), borrow(team_pts)
    members, action, mover, visits = borrow(members), borrow(action), borrow(mover), borrow(visits)
    reward, avail, first, last = borrow(reward), borrow(avail), borrow(first), borrow(last)
    sibling, size, stream, row = borrow(sibling), borrow(size), borrow(stream), borrow(row)
    fin, res, points = borrow(fin), borrow(res), borrow(points)
    r = as_tuple(spec_)  # as the engine's kernels take it (the same compiled core)
    p, k, teams = r[R_P], r[R_K], r[R_T]
    two_clubs, partnerships = r[R_TWO_CLUBS] != 0, r[R_PARTNERS] != 0
    u64, i32 = row.view(np.uint64), row.view(np.int32)
    i16, i8 = row.view(np.int16), row.view(np.int8)
    hands = stack_array(MAX_PLAYERS, np.int64)[:p]
    trick = stack_array(MAX_PLAYERS, np.int64)[:p]
    won = stack_array(MAX_PLAYERS, np.int64)[:p]
    pts = stack_array(MAX_PLAYERS, np.int64)[:teams]
    rewards = stack_array(MAX_PLAYERS, np.float64)[:teams]
    child_of = stack_array(NUM_ACTIONS, np.int64)
    child_of[:] = -1
    path = stack_array(_PATH, np.int64)
    seq = stack_array(NUM_CARDS, np.int64)
    for it in range(lo, hi):
        for j in range(row.shape[1]):  # row[0, :] = row0[0, :] would allocate a temporary
            row[0, j] = row0[0, j]
        for s in range(p):
            u64[0, r[L_HANDS] + s] = np.uint64(worlds[it, s])
        u64[0, r[L_LEGAL]] = legal_bits(r, u64, i32, i8, 0)
        node = 0
        path[0] = 0
        plen = 1
        expanded = False
        while i8[0, r[L_PHASE]] != PLAY:  # the bidding: the tree's, then the rollout's
            phase, seat = i8[0, r[L_PHASE]], i8[0, r[L_TO_ACT]]
            legal = np.int64(u64[0, r[L_LEGAL]])
            if not expanded:  # selection, or the expansion of one new node
                node = descend(
                    node, legal, PHASE_BASE[phase], seat, c, stream, child_of, size, action,
                    mover, visits, reward, avail, first, last, sibling,
                )  # fmt: skip
                path[plen] = node
                plen += 1
                a = action[node]
                expanded = visits[node] == 0  # the rest of the hand is the rollout's
            elif phase == BID:  # the rollout (agents.montecarlo.ismcts.rollout)
                a = quick_bid_hand(np.int64(u64[0, r[L_HANDS] + seat]), legal)
            else:
                a = PHASE_BASE[phase] + kth_bit(legal, below(stream, popcount(legal)))
            step_game(r, row, u64, i32, i16, i8, 0, a, fin, res, points)
        leader, size_, lead, broken, tp, trump = _to_play(r, u64, i8, hands, trick, won)
        if not expanded:  # selection and expansion go on into the card play
            plen, leader, size_, lead, broken, tp = walk_play(
                path, plen, hands, trick, won, leader, size_, lead, broken, tp, k, two_clubs,
                trump, c, stream, child_of, size, action, mover, visits, reward, avail, first,
                last, sibling,
            )  # fmt: skip
        play_out_inline(
            hands, trick, leader, size_, lead, broken, won, tp, k, two_clubs, policy,
            partnerships, trump, seq, stream,
        )  # fmt: skip
        total = 0
        for t in range(teams):
            code, mult = 0, 1
            for m in range(members.shape[1]):
                s = members[t, m]
                if s >= 0:
                    b = max_bid + 1 if i8[0, r[L_BLIND] + s] else i8[0, r[L_BIDS] + s]
                    code += (b * (k + 1) + won[s]) * mult
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
    team_pts, members, digit = tables
    row0 = game.state.buffer
    teams = rules.num_teams
    _bid_search(
        worlds, lo, hi, rules_vector(rules), row0, policy, float(c), team_pts, members,
        digit, rules.max_bid, tree.action, tree.mover, tree.visits, tree.reward, tree.avail,
        tree.first, tree.last, tree.sibling, tree.size, stream, np.empty_like(row0),
        np.empty_like(row0), np.empty((1, 3 * teams + 1), dtype=np.int32),
        np.empty((1, teams), dtype=np.int32),
    )  # fmt: skip


__all__ = ["bid_search", "team_tables"]
