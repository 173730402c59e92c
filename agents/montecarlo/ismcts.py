"""`ismcts`: Information Set Monte Carlo Tree Search (Cowling, Powley & Whitehouse 2012).

SO-ISMCTS: one tree over the acting seat's information sets, whose edges are actions
(every seat's decisions are nodes of the one tree). Each iteration

1. draws one determinization: a world of hidden hands consistent with what the seat
   knows (`agents.montecarlo.sampling`, exactly uniform; worlds are drawn in blocks up front);
2. selects down the tree among the children *legal in this world* by UCB1 with
   availability counts: `mean + c * sqrt(ln(avail) / visits)`, where `avail` counts the
   iterations in which the child was legal (its parent was visited and the action was
   available), not the parent's visits;
3. expands one untried legal action; 4. plays the rest of the hand out with the rollout
   policy; 5. backs up, to each node, the reward of the team of the seat that chose the
   node's action: `0.5 + margin / 1000` clipped to [0, 1], margin = the team's RULES.md
   §4 hand score (bag penalty included) minus the other teams' mean.

It covers bidding (every seat's bids are tree decisions; rollouts bid by
`search_common.quick_bid`, a count of aces, kings and spades, whatever the policy) and
card play; the search ends at the end of the current hand. Every decision runs whole in
a numba kernel over flat node arrays: `agents.montecarlo.ismcts_kernel.search` in card play,
`agents.montecarlo.ismcts_bid_kernel.bid_search` for bids, blind nil and the exchange (the same
worlds, random draws, UCB choices and rewards as the Python reference loop of
`agents.montecarlo.reference`, which tests/agents/test_ismcts.py and
tests/agents/test_ismcts_bid_kernel.py check tree for tree). The reference loop walks the
tree on `FastGame`, the single-game engine (`spades_env.single.SingleGame`,
differential-tested against the batched engine) without its RL-encoding upkeep.

Parameters (`ismcts:iterations=1000,time_ms=0,c=0.7,policy=random,bid=search`): `iterations`;
`time_ms` a time budget per decision instead (0 = none); `c` the exploration constant;
`policy` the rollout policy, `random` (default, fastest) or `greedy` (win a trick as
cheaply as possible unless the partner is winning it, else play low; lead high);
`bid` `search` (the default), `heuristic` (the heuristic's rule-based bids,
`heuristic:bid=rules`, with its blind-nil and exchange decisions, search only in card
play) or `model` (the same with the fitted trick model's bids, `agents.heuristic.model_bids`).
The most visited root action is played.
"""

from __future__ import annotations

import copy
import time

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.kernels.play import GREEDY, RANDOM
from agents.kernels.streams import new_stream
from agents.montecarlo.common import (
    bid_then_search,
    search_bidder,
    state_from_world,
)
from agents.montecarlo.ismcts_bid_kernel import bid_search, team_tables
from agents.montecarlo.ismcts_kernel import Tree, reward_table, search
from agents.montecarlo.sampling import WorldSampler, knowledge
from spades_env.observation import SeatView
from spades_env.scoring import apply_bags, score_hand
from spades_env.single import SingleGame
from spades_env.state import DONE, PLAY, State

_TIMED_CHUNK = 16  # iterations between clock reads under a time budget


class FastGame(SingleGame):
    """A SingleGame for search: no RL encoding upkeep; the hand's end is terminal
    (`points`: the hand points per team, bag penalty included)."""

    points: list[int] | None = None

    @classmethod
    def from_state(cls, state: State, game: int = 0) -> FastGame:
        self = cls.__new__(cls)
        self._setup(state.rules)
        self._load(state.take([game]))
        self.points = None
        return self

    def clone(self) -> FastGame:
        """A copy for one iteration (the game's packed row is copied)."""
        return copy.copy(self)

    def reset_to(self, other: FastGame) -> None:
        """Become `other` again (same rules) by copying its packed row into this game's:
        an iteration's game without a new `State` and its field views each time."""
        self._buf[...] = other._buf
        self.points = other.points

    def step(self, action: int, on_illegal: str = "raise"):
        info = super().step(action, on_illegal)
        if info.hand_over[0]:  # the end of the hand is terminal in search
            self.points = info.hand_points[0].tolist()
            self.phase, self.legal = DONE, 0
        return info

    def _end_hand(self):
        """Score the hand from `tricks_won` (after a kernel played the cards out)."""
        rules = self.rules
        hs = score_hand(rules, [self.bids], [self.blind], [self.tricks_won])
        _, _, penalty = apply_bags(
            rules, np.add([self.scores], hs.points), np.add([self.bags], hs.bags)
        )
        self.points = (hs.points[0] - penalty[0]).tolist()
        self.phase, self.legal = DONE, 0
        return None


class Node:
    __slots__ = ("action", "avail", "children", "mover", "reward", "visits")

    def __init__(self, action: int = -1, mover: int = -1) -> None:
        self.action, self.mover = action, mover
        self.children: dict[int, Node] = {}
        self.visits, self.reward, self.avail = 0, 0.0, 0


class ISMCTSAgent(BaseAgent):
    """SO-ISMCTS over the current hand (module doc)."""

    name = "ismcts"

    def __init__(
        self,
        seed: int | None = None,
        iterations: int = 1000,
        time_ms: float = 0.0,
        c: float = 0.7,
        policy: str = "random",
        bid: str = "search",
    ) -> None:
        super().__init__(seed)
        self._bidder = search_bidder(bid, "ismcts", seed)
        if policy not in ("random", "greedy"):
            raise ValueError(f"ismcts: policy {policy!r}; use random or greedy")
        if iterations < 1 and time_ms <= 0:
            raise ValueError("ismcts: give iterations >= 1 or a time budget time_ms > 0")
        self.iterations, self.time_ms = int(iterations), float(time_ms)
        self.c, self.policy = float(c), policy
        self._stream = np.zeros(2, dtype=np.uint64)  # each decision draws a new one
        self._root: Node | None = None
        self._tree: Tree | None = None
        self.last_iterations = 0

    def act(self, view: SeatView, obs, mask) -> npt.NDArray[np.int64]:
        del obs, mask
        return bid_then_search(self._bidder, view, self.decide)

    def decide(self, view: SeatView, g: int = 0) -> int:
        """The action of game `g` of the view (its seat must be the one to act)."""
        sampler = WorldSampler(knowledge(view, g))
        base = FastGame.from_state(state_from_world(view, sampler.sample(1, self.rng), g))
        legal = base.legal_list()
        if len(legal) <= 1:
            self.last_root, self.last_iterations = None, 0
            return legal[0] if legal else 0
        self._stream = new_stream(self.rng)  # the decision's random draws
        return self._search(view, g, base, sampler)

    def _search(self, view: SeatView, g: int, base: FastGame, sampler: WorldSampler) -> int:
        """The decision's search by the numba kernels, `agents.montecarlo.ismcts_kernel.search`
        in card play and `agents.montecarlo.ismcts_bid_kernel.bid_search` before it: the same
        iterations, worlds and random draws as the reference loop
        (`agents.montecarlo.reference.ReferenceISMCTSAgent`)."""
        del view, g
        stream = self._stream
        policy = GREEDY if self.policy == "greedy" else RANDOM
        if base.phase == PLAY:
            rewards, radix = reward_table(base.rules, base.tricks_won, _points_of(base))

            def run(tree, worlds, lo, hi):
                search(
                    tree, worlds, lo, hi, base, base.rules, self.c, policy, rewards, radix, stream
                )
        else:
            tables = team_tables(base.rules, base.bags)

            def run(tree, worlds, lo, hi):
                bid_search(tree, worlds, lo, hi, base, self.c, policy, tables, stream)

        timed = self.time_ms > 0
        tree = Tree(1 + (256 if timed else min(self.iterations, 4096)))  # grown as needed
        deadline = time.perf_counter() + self.time_ms / 1e3
        done = 0
        while timed or done < self.iterations:
            # worlds in blocks of 256 as the loop draws them, used last first
            n = 256 if timed else min(256, self.iterations - done)
            worlds = sampler.sample(n, self.rng)[::-1].astype(np.int64)
            step = _TIMED_CHUNK if timed else n
            for lo in range(0, n, step):
                hi = min(n, lo + step)
                run(tree, worlds, lo, hi)
                done += hi - lo
                if timed and time.perf_counter() >= deadline:
                    break
            if timed and time.perf_counter() >= deadline:
                break
        self._tree, self._root, self.last_iterations = tree, None, done
        kids = tree.children(0)
        best = max(kids, key=lambda i: (tree.visits[i], tree.reward[i]))
        return int(tree.action[best])

    @property
    def last_root(self) -> Node | None:
        """The root of the last decision's tree (built from the flat arrays on demand)."""
        if self._root is None and self._tree is not None:
            self._root = _to_nodes(self._tree)
        return self._root

    @last_root.setter
    def last_root(self, root: Node | None) -> None:
        self._root, self._tree = root, None


def _points_of(game: FastGame):
    """(n, P) final tricks per seat -> (n, T) hand points, bag penalty included: the
    arithmetic of `FastGame._end_hand`, over many trick counts at once."""
    rules = game.rules

    def points(won: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        n = won.shape[0]
        bids, blind = np.tile(game.bids, (n, 1)), np.tile(game.blind, (n, 1))
        hs = score_hand(rules, bids, blind, won)
        scores, bags = np.tile(game.scores, (n, 1)), np.tile(game.bags, (n, 1))
        _, _, penalty = apply_bags(rules, scores + hs.points, bags + hs.bags)
        return hs.points - penalty

    return points


def _to_nodes(tree: Tree) -> Node:
    """The flat tree as `Node` objects, children in creation order (dict order)."""
    n = int(tree.size[0])
    nodes = [Node(int(a), int(m)) for a, m in zip(tree.action[:n], tree.mover[:n], strict=True)]
    for i in range(n):
        nd = nodes[i]
        nd.visits, nd.reward, nd.avail = (
            int(tree.visits[i]),
            float(tree.reward[i]),
            int(tree.avail[i]),
        )
        for ch in tree.children(i):
            nd.children[nodes[ch].action] = nodes[ch]
    return nodes[0]


__all__ = ["FastGame", "ISMCTSAgent", "Node"]


def check_params(params: dict) -> None:
    """Registry check: the parameters build an agent (ValueError names a bad one)."""
    ISMCTSAgent(**params)
