"""Periodic duplicate evaluation of the learning network against a fixed opponent.

Each evaluation deal is played twice, with the agents' seats swapped (same cards in the
same seats, same dealer), seated and scored as in the tournament (`spades_env.duplicate`): once with
the network at North-South, once at East-West; with one-player teams, once in the even
seats and once in the odd. The per-deal margin is the network's hand points (its teams'
summed) minus the opponent's, averaged over the two sides, so the luck of the cards
cancels; the 95% interval is `spades_env.tooling.stats.mean_ci` over the deals: the numbers the
tournament summary reports for the same games. The evaluation deals depend only on
`seed`, so every evaluation of a run (and of runs with the same seed) sees the same
deals. The network plays greedily.

Bid accuracy of the network's seats, by the tournament's definitions
(`spades_env.duplicate.bid_samples`): bid error |tricks - bid| over its non-nil bids,
set rate of its slot's contracts (one-player teams folded, as the tournament folds
them), nil bids per seat-hand and the share of nils made.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from agents.base import BaseAgent
from agents.learned.networks import PolicyValueNet, QNet
from spades_env.duplicate import (
    bid_samples,
    deal_margin,
    fold_made,
    fold_teams,
    mean,
    slot_lead,
)
from spades_env.rules import Rules
from spades_env.scoring import score_hand
from spades_env.state import init
from spades_env.tooling.stats import mean_ci
from training.rollout import LEARNER, Hands, LearnerFn, duplicate_owners, play_hands


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
        leads = diff.tolist()
        margins.extend(deal_margin(a, b) for a, b in zip(leads[0::2], leads[1::2], strict=True))
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
    """(N,) the hand points of the learner's slot minus the other's, per game
    (`spades_env.duplicate.slot_lead`: with one-player teams the learner holds every
    second seat and its points are its teams' summed, as the tournament folds them)."""
    return slot_lead(rules, hands.points, learner_slot(hands))


def learner_slot(hands: Hands) -> npt.NDArray[np.int64]:
    """(N,) the learner's agent slot in each game: 0 where it holds seat 0, else 1."""
    return np.where(hands.owner[:, 0] == LEARNER, 0, 1)


def bid_accuracy(rules: Rules, parts: list[Hands]) -> dict[str, float | None]:
    """Bid error, set rate and nil figures of the learner's seats (see the module doc)."""
    seats: list[dict[str, Any]] = []
    slots: list[dict[str, Any]] = []
    for hands in parts:
        scored = score_hand(rules, hands.bids, hands.blind, hands.tricks)
        for g, slot in enumerate(learner_slot(hands).tolist()):
            seats += [
                {"bid": int(b), "blind": bool(bl), "tricks": int(t)}
                for o, b, bl, t in zip(
                    hands.owner[g], hands.bids[g], hands.blind[g], hands.tricks[g], strict=True
                )
                if o == LEARNER
            ]
            contract = fold_teams(rules, scored.contract[g].tolist())
            slots.append(
                {
                    "contract": contract[slot],
                    "made": fold_made(rules, scored.made[g].tolist())[slot],
                    "bags_gained": fold_teams(rules, scored.bags[g].tolist())[slot],
                }
            )
    x = bid_samples(seats, slots)
    return {
        "bid_error": mean(x["abs_error"]),
        "set_rate": mean(x["set"]),
        "nil_rate": mean(x["nil_bid"]),
        "nil_success": mean(x["nil"]),
    }
