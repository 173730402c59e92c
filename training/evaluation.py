"""Periodic duplicate evaluation of the learning network against a fixed opponent.

Each evaluation deal is played twice, with the agents' seats swapped (same cards in the
same seats, same dealer), seated as in the tournament (`spades_env.duplicate`): once with
the network at North-South, once at East-West; with one-player teams, once in the even
seats and once in the odd. The per-deal margin is the network's hand points (its teams'
summed) minus the opponent's, averaged over the two sides, so the luck of the cards
cancels; the 95% interval is `training.stats.mean_ci`
over the deals, the same statistic the tournament summary reports. The evaluation deals
depend only on `seed`, so every evaluation of a run (and of runs with the same seed)
sees the same deals. The network plays greedily.

Bid accuracy of the network's seats: bid error |tricks - bid| over its non-nil bids, set
rate of its team contracts, nil bids per seat-hand and the share of nils made.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from agents.base import BaseAgent
from agents.learned.networks import PolicyValueNet, QNet
from spades_env.rules import Rules
from spades_env.scoring import score_hand
from spades_env.state import init
from training.rollout import LEARNER, Hands, LearnerFn, duplicate_owners, play_hands
from training.stats import mean_ci


def greedy_fn(net: PolicyValueNet | QNet, device: torch.device) -> LearnerFn:
    """The network's argmax action, as a rollout learner (no log-probs, no values)."""

    def act(obs: npt.NDArray[np.int16], mask: npt.NDArray[np.bool_]):
        with torch.no_grad():
            prefs = net.preferences(
                torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device)
            )
        actions = prefs.argmax(dim=1).cpu().numpy().astype(np.int64)
        zeros = np.zeros(len(actions), dtype=np.float32)
        return actions, zeros, zeros

    return act


def eval_seeds(seed: int, deals: int) -> npt.NDArray[np.uint64]:
    """(deals,) game seeds of the evaluation deal set."""
    rng = np.random.default_rng([seed, 0xE7A1])
    return rng.integers(0, np.iinfo(np.uint64).max, size=deals, dtype=np.uint64, endpoint=True)


def duplicate_eval(
    learner: LearnerFn,
    opponent: BaseAgent,
    rules: Rules,
    deals: int,
    seed: int,
    chunk: int = 500,
) -> dict[str, Any]:
    """Margin (points per deal, with its 95% CI) and bid accuracy over `deals` deals."""
    start = time.perf_counter()
    seeds = eval_seeds(seed, deals)
    margins: list[float] = []
    parts: list[Hands] = []
    decisions = 0
    for lo in range(0, deals, chunk):
        part = seeds[lo : lo + chunk]
        state = init(rules, 2 * len(part), seeds=np.repeat(part, 2))
        owner = duplicate_owners(len(part), rules)
        hands = play_hands(state, owner, learner, [opponent], record=False)
        diff = learner_lead(rules, hands)
        margins.extend(((diff[0::2] + diff[1::2]) / 2).tolist())
        parts.append(hands)
        decisions += hands.decisions
    seconds = time.perf_counter() - start
    return {
        "deals": deals,
        "margin": mean_ci(margins),
        **bid_accuracy(rules, parts),
        "seconds": seconds,
        "decisions_per_s": decisions / max(seconds, 1e-9),
    }


def learner_lead(rules: Rules, hands: Hands) -> npt.NDArray[np.int64]:
    """(N,) the hand points of the learner's teams minus those of the others, per game.

    With one-player teams the learner holds several teams (every second seat) and its
    points are theirs summed, as the tournament folds them into its agent slots."""
    mine = hands.owner[:, : rules.num_teams] == LEARNER  # seat t belongs to team t
    points = hands.points.astype(np.int64)
    return np.where(mine, points, -points).sum(axis=1)


def bid_accuracy(rules: Rules, parts: list[Hands]) -> dict[str, float | None]:
    """Bid error, set rate and nil figures of the learner's seats (see the module doc)."""
    owner = np.concatenate([h.owner for h in parts])
    bids = np.concatenate([h.bids for h in parts]).astype(np.int64)
    blind = np.concatenate([h.blind for h in parts])
    tricks = np.concatenate([h.tricks for h in parts]).astype(np.int64)
    mine = owner == LEARNER
    scored = score_hand(rules, bids, blind, tricks)
    team_mine = mine[:, : rules.num_teams]  # seat t belongs to team t
    contracts = team_mine & (scored.contract > 0)
    bidders = mine & (bids > 0)
    nils = mine & (bids == 0)

    def rate(hits: npt.NDArray[np.bool_], of: npt.NDArray[np.bool_]) -> float | None:
        n = int(of.sum())
        return float((hits & of).sum() / n) if n else None

    return {
        "bid_error": float(np.abs(tricks - bids)[bidders].mean()) if bidders.any() else None,
        "set_rate": rate(~scored.made, contracts),
        "nil_rate": rate(nils, mine),
        "nil_success": rate(tricks == 0, nils),
    }
