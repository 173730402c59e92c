"""Deep Monte Carlo (DouZero-style) self-play for Spades.

    python -m training.dmc --total-timesteps 2000000     # or: spades train dmc

DouZero (Zha et al., 2021) learned DouDizhu with nothing more than this: play whole
episodes epsilon-greedily with an action-value network, then regress Q(s, a) of every
decision taken on the episode's return. No bootstrapping, no policy gradient, so it is
stable with large, changing action sets; action features let similar actions share
what they learn.

- **Model.** `agents.learned.networks.QNet`: the seat-relative int16 encoding goes through an MLP
  trunk to a state embedding; Q(s, a) is a small MLP on (embedding, action features),
  scored for all 80 actions at once and masked to the legal ones. One network plays
  every seat, bids and cards.
- **Acting.** Epsilon-greedy: the legal action of highest Q, or with probability
  `epsilon` a uniformly random legal one.
- **Target.** The seat's episode return: the zero-sum team hand-score difference, bag
  penalty included, times `reward_scale` (0.01: one unit is 100 points), undiscounted
  (a hand is one episode).
- **Opponents, logging, checkpoints, resume.** As in `training/ppo_selfplay.py`; both use
  `training.session.Session`, so with the same `--total-timesteps` the two methods get
  the same budget of environment decisions and the same evaluation.
- **Distributed collection.** `--backend ray --actors N` plays the rollouts on Ray actors
  (`training/ray_rollout.py`). The Monte Carlo target is the return the hand actually
  had, whatever network chose the moves, so a stale batch needs no correction; batches
  older than `--max-policy-lag` updates are still dropped, since their exploration was
  that of an older network.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn, optim

from agents.learned.agent import epsilon_greedy
from agents.learned.networks import QNet, network_config
from spades_env.rules import Rules
from spades_env.tooling.flags import parse_args
from training.rollout import Hands, learner_batch
from training.session import PreparedArgs, Session, SessionArgs


@dataclass
class Args(SessionArgs):
    """Deep Monte Carlo (DouZero-style) self-play for Spades."""

    # SessionArgs' fields with this script's default or docstring (they keep their place)
    exp_name: str = "dmc"
    seed: int = 1
    """seed of the run: deals, exploration, initial weights"""
    init: str = ""
    """checkpoint to start from instead of new weights (a DMC network); it stays, frozen, as the
    teacher"""
    # the algorithm's own
    hidden: str = "256,256"
    """hidden layer sizes of the MLP trunk"""
    head: int = 64
    """hidden units of the Q head over (state embedding, action features)"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    epsilon: float = 0.05
    """exploration: probability of a uniformly random legal action"""
    num_minibatches: int = 8
    """minibatches per epoch"""
    update_epochs: int = 1
    """epochs over each rollout (DouZero uses each sample once)"""
    max_grad_norm: float = 40.0
    """gradient clipping norm (DouZero's value)"""


def explore_fn(net: QNet, device: torch.device, epsilon: float, rng: np.random.Generator):
    """The rollout learner: epsilon-greedy on the masked Q-values."""

    def act(obs: np.ndarray, mask: np.ndarray):
        with torch.no_grad():
            q = net.preferences(torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device))
        actions = epsilon_greedy(q.cpu().numpy(), mask, epsilon, rng)
        zeros = np.zeros(len(actions), dtype=np.float32)
        return actions, zeros, zeros

    return act


def behaviour(
    args: Args,
    net: QNet,
    device: torch.device,
    rng: np.random.Generator,
    torch_rng: torch.Generator,
):
    """The acting function of a rollout (here or on a Ray actor): epsilon-greedy."""
    return explore_fn(net, device, args.epsilon, rng)


def rollout_batch(args: Args, rules: Rules, hands: Hands):
    """One rollout's learner decisions with their Monte Carlo returns, and its scalars."""
    returns = hands.seat_returns(rules, args.reward_scale)
    return learner_batch(hands, returns), hands.return_stats(returns, args.reward_scale)


def dmc_update(
    args: Args,
    net: QNet,
    optimizer: optim.Optimizer,
    batch: dict[str, np.ndarray],
    session: Session,
) -> dict[str, float]:
    """Regress Q(s, a) of the decisions taken on their Monte Carlo returns."""
    dev = session.device
    b = {k: torch.from_numpy(batch[k]).to(dev) for k in ("obs", "action", "mc")}
    size = len(batch["action"])
    mb_size = max(1, size // args.num_minibatches)
    losses, q_means = [], []
    for _epoch in range(args.update_epochs):
        order = torch.randperm(size, generator=session.torch_rng).to(dev)
        for start in range(0, size - mb_size + 1, mb_size):
            mb = order[start : start + mb_size]
            q = net.q_of(b["obs"][mb], b["action"][mb])
            loss = ((q - b["mc"][mb]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
            losses.append(loss.item())
            q_means.append(q.mean().item())
    return {"losses/q_loss": float(np.mean(losses)), "losses/q_mean": float(np.mean(q_means))}


def train(args: Args, progress=None, prepared: PreparedArgs | None = None) -> Path:
    """Run (or resume) DMC self-play; return the final (or last) checkpoint's path.
    `prepared`: the args already prepared (`training.session.prepare_args`)."""
    hidden = [int(h) for h in args.hidden.split(",")]
    session = Session(
        args,
        network_config("dmc", hidden, head=args.head),
        progress,
        init_kinds=("dmc",),
        prepared=prepared,
    )
    args, net = session.args, session.net
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    session.restore_optimizer(optimizer)
    try:
        rollouts = session.open_rollouts(behaviour, rollout_batch)
        while not session.done:
            if args.anneal_lr:
                frac = 1.0 - session.progress_fraction
                optimizer.param_groups[0]["lr"] = frac * args.learning_rate
            batch, stats = rollouts.next_batch()
            stats.update(dmc_update(args, net, optimizer, batch, session))
            stats["charts/learning_rate"] = optimizer.param_groups[0]["lr"]
            stats["charts/epsilon"] = args.epsilon
            stats["charts/learner_decisions"] = session.learner_steps
            session.end_update(optimizer, stats)
    finally:
        path = session.close()
    return path


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> Path:
    return train(parse_args(Args, argv, prog))


if __name__ == "__main__":
    main()
