"""Python reference loops of the search agents, for the tests.

The compiled searches must build the very trees of these loops (the same worlds, random
draws, choices and rewards); tests/agents/test_ismcts.py and tests/agents/test_ismcts_bid_kernel.py
check them tree for tree. They are slow and no agent of the registry uses them.
"""

from __future__ import annotations

import math
import time

from agents.kernels.play import GREEDY, RANDOM, play_out, quick_bid_hand
from agents.kernels.streams import below
from agents.montecarlo.ismcts import FastGame, ISMCTSAgent, Node
from agents.montecarlo.sampling import WorldSampler
from spades_env.observation import SeatView
from spades_env.state import BID, PLAY

__all__ = ["ReferenceISMCTSAgent", "rollout", "select_child"]


def select_child(node: Node, legal: list[int], c: float) -> Node:
    """UCB1 with availability counts over the children legal now; bumps their `avail`."""
    best, best_u = None, -math.inf
    for a in legal:
        ch = node.children[a]
        ch.avail += 1
        u = ch.reward / ch.visits + c * math.sqrt(math.log(ch.avail) / ch.visits)
        if u > best_u:
            best, best_u = ch, u
    return best


def rollout(game: FastGame, policy: str, stream, scores: dict | None = None) -> None:
    """Play `game` to the end of its hand (in place, or for card play by the numba
    kernel `agents.kernels.play.play_out`, which then sets `game.points` alone); random
    choices are draws of `stream` (`agents.kernels.streams`)."""
    while game.points is None and game.phase != PLAY:
        legal = game.legal
        if game.phase == BID:  # both policies: a count of the top cards (quick_bid), not random
            a = int(quick_bid_hand(game.hands[game.to_act] & ~game.played, legal))
        else:
            acts = game.legal_list()
            a = acts[below(stream, len(acts))]
        game.step(a)
    if game.points is not None:
        return
    played = game.played
    won, _ = play_out(
        [h & ~played for h in game.hands],
        game.trick,
        game.leader,
        game.trick_size,
        game.lead_suit,
        game.broken,
        game.tricks_won,
        game.tricks_played,
        game.rules,
        GREEDY if policy == "greedy" else RANDOM,
        stream,
        game.trump,
    )
    key = (tuple(game.bids), tuple(game.blind), tuple(won.tolist()))
    pts = None if scores is None else scores.get(key)
    if pts is None:
        game.tricks_won = won.tolist()
        game._end_hand()
        if scores is not None:
            scores[key] = game.points
    else:
        game.points = pts


class ReferenceISMCTSAgent(ISMCTSAgent):
    """`ISMCTSAgent` whose search is the Python loop over `iterate` (module doc)."""

    def _search(self, view: SeatView, g: int, base: FastGame, sampler: WorldSampler) -> int:
        played_by = [int(x) for x in view.played_by[g]]
        root = Node()
        self._scores: dict = {}
        limit = self.iterations if self.time_ms <= 0 else 1 << 62
        deadline = time.perf_counter() + self.time_ms / 1e3
        block, done = [], 0
        game = base.clone()
        while done < limit:
            if not block:
                n = 256 if self.time_ms > 0 else min(256, limit - done)
                block = sampler.sample(n, self.rng).tolist()
            world = block.pop()
            game.reset_to(base)
            game.hands = [int(h) | pb for h, pb in zip(world, played_by, strict=True)]
            self.iterate(root, game)
            done += 1
            if self.time_ms > 0 and time.perf_counter() >= deadline:
                break
        self.last_root, self.last_iterations = root, done
        best = max(root.children.values(), key=lambda ch: (ch.visits, ch.reward))
        return best.action

    def iterate(self, root: Node, game: FastGame) -> None:
        """One ISMCTS iteration on the determinized `game` (changed in place)."""
        node, path = root, [root]
        # selection
        while game.points is None:
            legal = game.legal_list()
            untried = [a for a in legal if a not in node.children]
            if untried:
                a = untried[below(self._stream, len(untried))]
                for b in legal:  # availability: every legal child was available
                    if b in node.children:
                        node.children[b].avail += 1
                child = Node(a, game.to_act)
                child.avail = 1
                node.children[a] = child
                game.step(a)
                path.append(child)
                break
            node = select_child(node, legal, self.c)
            game.step(node.action)
            path.append(node)
        rollout(game, self.policy, self._stream, self._scores)
        pts = game.points
        t = self.rules_teams(game)
        rewards = []
        for team in range(t):
            others = (sum(pts) - pts[team]) / max(t - 1, 1)
            rewards.append(min(1.0, max(0.0, 0.5 + (pts[team] - others) / 1000)))
        for nd in path:
            nd.visits += 1
            if nd.mover >= 0:
                nd.reward += rewards[nd.mover % t]

    @staticmethod
    def rules_teams(game: FastGame) -> int:
        return game.rules.num_teams
