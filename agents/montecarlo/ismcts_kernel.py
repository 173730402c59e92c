"""numba ISMCTS over the card play: the tree walk, expansion, rollout and backup of
`agents.montecarlo.ismcts` as one compiled loop over flat node arrays.

`search` runs the iterations `lo..hi` of one decision whose root is in card play
(RULES.md §3), one determinization (a row of `worlds`, the hands now) per iteration,
exactly as `ISMCTSAgent.iterate` does on a `FastGame`: the same UCB1 with availability
counts, the same order of children (legal actions in ascending order, ties to the
first), the same rewards (a table by tricks per seat, `reward_table`), and the same
random draws, in the same order, from the decision's stream (`agents.kernels.streams`):
the expansion's choice among the untried actions, then the random rollout's cards
(`agents.kernels.play.play_out_inline`).

The tree: node 0 is the root; each node has its action, the seat that chose it
(`mover`), visits, summed reward, availability count, and its children as a linked list
in creation order (`first`, `last`, `sibling`). At most one node is added per
iteration, so `1 + iterations` nodes always suffice.
"""

from __future__ import annotations

import math

import numpy as np
import numpy.typing as npt

from agents.kernels.compile import jit_inline, jit_unref
from agents.kernels.play import (
    bit_index,
    hand_legal_cards,
    play_card,
    play_out_inline,
)
from agents.kernels.streams import below
from spades_env.cards import NUM_CARDS
from spades_env.core.borrow import borrow, stack_array
from spades_env.rules import MAX_PLAYERS

_PATH = NUM_CARDS + 2  # the longest path: the root, hand_size * P cards and the rollout's


# ----------------------------------------------------------------------------- tree
class Tree:
    """Flat node arrays (module doc) of capacity `n`; `size` nodes in use."""

    FIELDS = ("action", "mover", "visits", "avail", "first", "last", "sibling")

    def __init__(self, n: int) -> None:
        for name in self.FIELDS:
            setattr(self, name, np.full(n, self._fill(name), dtype=np.int64))
        self.reward = np.zeros(n)
        self.size = np.ones(1, dtype=np.int64)  # the root

    @staticmethod
    def _fill(name: str) -> int:
        return 0 if name in ("visits", "avail") else -1

    @property
    def capacity(self) -> int:
        return self.action.size

    def grow(self, need: int) -> None:
        """Double the arrays until `need` nodes fit."""
        n = self.capacity
        while n < need:
            n *= 2
        if n == self.capacity:
            return
        for name in (*self.FIELDS, "reward"):
            old = getattr(self, name)
            new = np.full(n, 0 if name == "reward" else self._fill(name), dtype=old.dtype)
            new[: old.size] = old
            setattr(self, name, new)

    def children(self, node: int) -> list[int]:
        out, ch = [], int(self.first[node])
        while ch >= 0:
            out.append(ch)
            ch = int(self.sibling[ch])
        return out


_FINALS: dict[tuple[int, int], tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]] = {}


def _final_counts(p: int, h: int) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]:
    """(codes, counts): every tricks-per-seat vector of `p` seats summing to `h`, as the
    code `sum(won[s] * (h + 1)**s)` (ascending) and as (n, p) counts; cached."""
    got = _FINALS.get((p, h))
    if got is None:
        grid = np.indices((h + 1,) * p).reshape(p, -1)[::-1].T  # row i: the digits of code i
        codes = np.flatnonzero(grid.sum(axis=1) == h)
        got = _FINALS[(p, h)] = (codes, grid[codes])
    return got


def reward_table(rules, won_now, points_of) -> tuple[npt.NDArray[np.float64], int]:
    """(codes, T) reward to each team of every final tricks-per-seat vector reachable
    from `won_now`, indexed by `code = sum(won[s] * base**s)`; and `base`.

    `points_of(won_rows)` gives the (n, T) hand points of final trick counts (RULES.md
    §4, bag penalty included); the reward is `ISMCTSAgent.iterate`'s, term for term.
    """
    p, h = rules.num_players, rules.hand_size
    base = h + 1
    every, finals = _final_counts(p, h)
    ok = (finals >= np.asarray(won_now)[None, :]).all(axis=1)
    codes = every[ok]
    pts = np.asarray(points_of(finals[ok]), dtype=np.int64)  # (n, T)
    t = pts.shape[1]
    # iterate's arithmetic, elementwise (the same IEEE operations in the same order)
    others = (pts.sum(axis=1, keepdims=True) - pts) / max(t - 1, 1)
    table = np.zeros((base**p, t))
    table[codes] = np.minimum(1.0, np.maximum(0.0, 0.5 + (pts - others) / 1000))
    return table, base


@jit_unref
def _search(
    worlds, lo, hi, trick0, won0, leader0, trick_size0, lead0, broken0, tricks_played0,
    hand_size, two_clubs, policy, partnerships, c, rewards, base, teams,
    action, mover, visits, reward, avail, first, last, sibling, size, stream,
    trump,
):  # fmt: skip
    """Every array is the caller's or on the stack (`search_kernel.jit_unref`)."""
    worlds, trick0, won0, rewards = borrow(worlds), borrow(trick0), borrow(won0), borrow(rewards)
    action, mover, visits, reward = borrow(action), borrow(mover), borrow(visits), borrow(reward)
    avail, first, last, sibling = borrow(avail), borrow(first), borrow(last), borrow(sibling)
    size, stream = borrow(size), borrow(stream)
    p = worlds.shape[1]
    hands = stack_array(MAX_PLAYERS, np.int64)[:p]
    trick = stack_array(MAX_PLAYERS, np.int64)[:p]
    won = stack_array(MAX_PLAYERS, np.int64)[:p]
    child_of = stack_array(NUM_CARDS, np.int64)
    child_of[:] = -1
    path = stack_array(_PATH, np.int64)
    seq = stack_array(NUM_CARDS, np.int64)
    for it in range(lo, hi):
        for s in range(p):
            hands[s] = worlds[it, s]
            trick[s] = trick0[s]
            won[s] = won0[s]
        leader, trick_size, lead = leader0, trick_size0, lead0
        broken, tricks_played = broken0, tricks_played0
        path[0] = 0
        plen, leader, trick_size, lead, broken, tricks_played = walk_play(
            path, 1, hands, trick, won, leader, trick_size, lead, broken, tricks_played,
            hand_size, two_clubs, trump, c, stream, child_of, size, action, mover, visits,
            reward, avail, first, last, sibling,
        )  # fmt: skip
        play_out_inline(
            hands, trick, leader, trick_size, lead, broken, won, tricks_played, hand_size,
            two_clubs, policy, partnerships, trump, seq, stream,
        )  # fmt: skip
        code = 0
        mult = 1
        for s in range(p):
            code += won[s] * mult
            mult *= base
        for i in range(plen):
            nd = path[i]
            visits[nd] += 1
            if mover[nd] >= 0:
                reward[nd] += rewards[code, mover[nd] % teams]


@jit_inline
def walk_play(
    path, plen, hands, trick, won, leader, trick_size, lead, broken, tricks_played, hand_size,
    two_clubs, trump, c, stream, child_of, size, action, mover, visits, reward, avail, first,
    last, sibling,
):  # fmt: skip
    """Selection and expansion through the card play (RULES.md §3, `play_card`) from the
    last node of `path[:plen]`, until a node is expanded or the hand is over; the cards go
    from `hands` to `trick` and `won` in place. Returns (plen, leader, trick_size, lead,
    broken, tricks_played) for the rollout."""
    p = hands.shape[0]
    node = path[plen - 1]
    while tricks_played < hand_size:
        seat = (leader + trick_size) % p
        legal = hand_legal_cards(
            hands[seat], trick_size, tricks_played, two_clubs, broken, lead, trump
        )
        node = descend(
            node, legal, 0, seat, c, stream, child_of, size, action, mover, visits, reward,
            avail, first, last, sibling,
        )  # fmt: skip
        path[plen] = node
        plen += 1
        leader, trick_size, lead, broken, tricks_played = play_card(
            hands, trick, won, seat, action[node], leader, trick_size, lead, broken,
            tricks_played, trump,
        )  # fmt: skip
        if visits[node] == 0:  # expanded: the rest of the hand is the rollout's
            break
    return plen, leader, trick_size, lead, broken, tricks_played


@jit_inline
def descend(
    node, legal, base, seat, c, stream, child_of, size, action, mover, visits, reward, avail,
    first, last, sibling,
):  # fmt: skip
    """One step of SO-ISMCTS down from `node`, over the actions `base + bit` of `legal`:
    if some legal action has no child yet, one of them chosen uniformly (one draw
    of `stream`) becomes a new child (expansion, 0 visits); otherwise the UCB child
    with availability counts (selection). Either way the availability of every existing
    child that is legal now goes up by one. Returns the child; its action is `action[child]`.
    """
    ch = first[node]
    while ch >= 0:
        child_of[action[ch]] = ch
        ch = sibling[ch]
    untried = 0
    bits = legal
    while bits:
        a = base + _low_bit(bits)
        bits &= bits - 1
        if child_of[a] < 0:
            untried += 1
    if untried:
        r = below(stream, untried)
        chosen = -1
        bits = legal
        while bits:
            a = base + _low_bit(bits)
            bits &= bits - 1
            if child_of[a] < 0:
                if r == 0 and chosen < 0:
                    chosen = a
                r -= 1
            else:
                avail[child_of[a]] += 1
        new = size[0]
        size[0] = new + 1
        action[new], mover[new], avail[new] = chosen, seat, 1
        visits[new], reward[new], first[new], last[new], sibling[new] = 0, 0.0, -1, -1, -1
        if last[node] >= 0:
            sibling[last[node]] = new
        else:
            first[node] = new
        last[node] = new
        _clear(child_of, first, sibling, action, node)
        return new
    best, best_u = -1, -math.inf
    bits = legal
    while bits:
        a = base + _low_bit(bits)
        bits &= bits - 1
        ch = child_of[a]
        avail[ch] += 1
        u = reward[ch] / visits[ch] + c * math.sqrt(math.log(avail[ch]) / visits[ch])
        if u > best_u:
            best, best_u = ch, u
    _clear(child_of, first, sibling, action, node)
    return best


@jit_inline
def _low_bit(bits: int) -> int:
    return bit_index(bits & -bits)


@jit_inline
def _clear(child_of, first, sibling, action, node) -> None:
    ch = first[node]
    while ch >= 0:
        child_of[action[ch]] = -1
        ch = sibling[ch]


def search(tree: Tree, worlds, lo: int, hi: int, game, rules, c: float, policy: int,
           rewards, base: int, stream) -> None:  # fmt: skip
    """Iterations `lo..hi` (rows of `worlds`, (N, P) int64 hands now) from the card-play
    position of `game` (a `FastGame`), into `tree` (grown to fit)."""
    tree.grow(int(tree.size[0]) + hi - lo)
    _search(
        worlds, lo, hi, np.asarray(game.trick, dtype=np.int64),
        np.asarray(game.tricks_won, dtype=np.int64), int(game.leader), int(game.trick_size),
        int(game.lead_suit), bool(game.broken), int(game.tricks_played), rules.hand_size,
        rules.first_lead == "two_of_clubs", policy, rules.partnerships, float(c), rewards,
        base, rules.num_teams, tree.action, tree.mover, tree.visits, tree.reward, tree.avail,
        tree.first, tree.last, tree.sibling, tree.size, stream,
        int(game.trump),
    )  # fmt: skip


__all__ = ["Tree", "reward_table", "search"]
