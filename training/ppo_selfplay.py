"""PPO self-play for Spades, CleanRL-style: one network plays every seat, bids and cards.

    python -m training.ppo_selfplay --total-timesteps 2000000     # or: spades train ppo

- **Model.** `agents.learned.networks.PolicyValueNet`: an MLP over the seat-relative int16
  information-state encoding, with masked policy logits over the 80 actions (illegal ones
  get probability 0) and a value head. Because observations are relative to the seat,
  one set of weights serves every seat, in bidding and in play.
- **Data.** Each rollout deals `num_games` hands (`training.rollout`); the learner's
  decisions in every seat it holds are its data. Opponents come from a pool, mixed per
  rollout: the latest policy (`selfplay_frac` of the games: all four seats learn), the
  heuristic agent (`heuristic_frac`), and past checkpoints (the rest).
- **Reward.** The zero-sum team hand-score difference at the end of the hand, bag penalty
  included, times `reward_scale` (0.01: one unit of return is 100 points of score
  difference, so typical returns lie in [-4, 4] and the value loss stays well scaled).
- **Update.** PPO with the clipped objective, GAE over each seat's own decisions (the
  reward comes at its last one), advantage normalisation per minibatch, a clipped value
  loss and an entropy bonus, as in CleanRL's `ppo.py`.

- **Distributed collection.** `--backend ray --actors N` plays the rollouts on Ray actors
  while the learner trains (`training/ray_rollout.py`). A batch may then come from weights
  a few updates old: it keeps the log-probabilities of the policy that played it, so the
  ratio above is new policy / behaviour policy, the importance weight of the stale batch,
  and PPO's clip bounds it; batches older than `--max-policy-lag` updates are dropped.

Everything that is not the algorithm (run folder, TensorBoard, pool, evaluation,
checkpoints, `--resume`, local or Ray rollouts) is `training.session.Session`, shared
with `training/dmc.py`.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
import torch
from torch import nn, optim

from agents.learned.networks import (
    PAD_ROWS,
    PolicyValueNet,
    SplitPolicyValueNet,
    autocast,
    network_config,
    policy_probs,
    resolve_precision,
    sample_masked,
)
from spades_env.rules import Rules
from spades_env.tooling.flags import parse_args
from training.rollout import Hands, learner_batch
from training.session import PreparedArgs, Session, SessionArgs


@dataclass
class Args(SessionArgs):
    """PPO self-play for Spades."""

    # SessionArgs' fields with this script's default or docstring (they keep their place)
    exp_name: str = "ppo_selfplay"
    seed: int = 1
    """seed of the run: deals, sampling, initial weights"""
    selfplay_frac: float = 0.25
    """share of each rollout's games where the latest policy holds all four seats"""
    init: str = ""
    """checkpoint to start from instead of new weights (a policy network: distilled by
    spades train bc, or a PPO run's); it stays, frozen, as the teacher"""
    # the algorithm's own
    precision: Literal["auto", "fp32", "bf16"] = "auto"
    """arithmetic of the network's matrix products: bf16 (autocast, fp32 weights and
    losses; about 4x faster on a CPU with AMX tiles), fp32, or auto: bf16 where the
    hardware multiplies bfloat16 natively (a CPU with AMX, a CUDA GPU), else fp32"""
    hidden: str = "128,128"
    """hidden layer sizes of the MLP trunk (ignored with --init; 128,128 learns as fast
    as 256,256 over a run with no flags, 2M decisions, at two thirds of the CPU time)"""
    learning_rate: float = 5e-4
    """Adam learning rate"""
    gamma: float = 1.0
    """discount over a seat's decisions (a hand is short: no discount)"""
    gae_lambda: float = 0.95
    """lambda of generalized advantage estimation"""
    num_minibatches: int = 4
    """minibatches per epoch (4: about 5k decisions each, where a CPU multiplies at about
    twice the rate per row of 1.3k-row minibatches)"""
    update_epochs: int = 1
    """epochs over each rollout (a second costs a third of the run's CPU time and gained
    nothing over a run with no flags, 2M decisions; the learned recipe takes 2)"""
    norm_adv: bool = True
    """normalize advantages per minibatch"""
    clip_coef: float = 0.2
    """PPO's surrogate clipping coefficient"""
    clip_vloss: bool = True
    """clip the value loss as in the PPO paper"""
    ent_coef: float = 0.01
    """entropy bonus coefficient"""
    vf_coef: float = 0.5
    """value loss coefficient"""
    max_grad_norm: float = 0.5
    """gradient clipping norm"""
    target_kl: float = 0.0
    """stop an update's epochs early above this approximate KL (0 = never)"""
    kl_coef: float = 0.0
    """weight of KL(teacher || policy) in the loss, with --init (0 = none)"""
    kl_anneal: float = 0.5
    """share of the run over which the KL weight falls linearly to 0"""


def half_copy(net: nn.Module, dtype: torch.dtype) -> nn.Module:
    """A copy of `net` whose parameters are stored in `dtype` (bfloat16): under autocast
    to that type it computes exactly what `net` does (autocast casts the parameters to
    it anyway), with no cast at each call. Float buffers (the input scales) stay as they
    are: autocast does not cast those."""
    half = copy.deepcopy(net).to(dtype)
    for (_, buf), (_, mine) in zip(net.named_buffers(), half.named_buffers(), strict=True):
        if buf.is_floating_point():
            mine.data = buf.data
    return half


def sampling_fn(
    net: PolicyValueNet | SplitPolicyValueNet,
    device: torch.device,
    gen: torch.Generator,
    precision: str = "fp32",
):
    """The rollout learner: sample from the masked policy; keep log-probs and values.

    It acts with the network's weights as they are when it is built (the local rollouts
    build it for each rollout, a Ray actor whenever new weights arrive): in bf16 on the
    CPU, from a copy of the network stored in bf16 (`half_copy`), so autocast does not
    cast every weight again at every step."""
    if precision == "bf16" and device.type == "cpu":
        net = half_copy(net, torch.bfloat16)
    padded: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # rows -> reused (obs, mask)

    def act(obs: np.ndarray, mask: np.ndarray):
        n = len(obs)
        rows = n + (-n % PAD_ROWS if device.type == "cpu" else 0)
        if rows > n:  # rows past n: whatever an earlier step left, sliced off before sampling
            if rows not in padded:
                padded[rows] = (np.zeros((rows, obs.shape[1]), obs.dtype),
                                np.zeros((rows, mask.shape[1]), mask.dtype))  # fmt: skip
            po, pm = padded[rows]
            po[:n], pm[:n] = obs, mask
            obs, mask = po, pm
        with torch.inference_mode(), autocast(device, precision):
            logits, value = net(torch.from_numpy(obs).to(device), torch.from_numpy(mask).to(device))
        with torch.inference_mode():
            action, logp_all = sample_masked(logits[:n].cpu(), gen)
            logp = logp_all.gather(1, action[:, None])[:, 0]
        return action.numpy(), logp.numpy(), value[:n].float().cpu().numpy()

    return act


def behaviour(
    args: Args,
    net: PolicyValueNet,
    device: torch.device,
    rng: np.random.Generator,
    torch_rng: torch.Generator,
):
    """The acting function of a rollout (here or on a Ray actor): sample the policy."""
    return sampling_fn(net, device, torch_rng, resolve_precision(args.precision, device))


def rollout_batch(args: Args, rules: Rules, hands: Hands):
    """One rollout's learner decisions with their GAE advantages, and its return scalars."""
    returns = hands.seat_returns(rules, args.reward_scale)
    batch = learner_batch(hands, returns, args.gamma, args.gae_lambda)
    return batch, hands.return_stats(returns, args.reward_scale)


def ppo_update(
    args: Args,
    net: PolicyValueNet,
    optimizer: optim.Optimizer,
    batch: dict[str, np.ndarray],
    session: Session,
) -> dict[str, float]:
    """Clipped PPO epochs over one rollout's learner decisions; returns the loss stats."""
    dev = session.device
    cast = resolve_precision(args.precision, dev)
    b = {k: torch.from_numpy(v).to(dev) for k, v in batch.items()}
    size = len(batch["action"])
    kl_coef = args.kl_coef * max(0.0, 1.0 - session.progress_fraction / max(args.kl_anneal, 1e-9))
    if session.teacher is None:
        kl_coef = 0.0
    if kl_coef > 0:
        with torch.no_grad():  # the teacher's policy on the whole rollout, once
            parts = []
            for i in range(0, size, 8192):
                with autocast(dev, cast):
                    t_logits = session.teacher(b["obs"][i : i + 8192], b["mask"][i : i + 8192])[0]
                parts.append(t_logits.float())
            t_logits = torch.cat(parts)
            b["teacher_logp"] = torch.log_softmax(t_logits, 1)
            b["teacher_p"] = policy_probs(t_logits)
    kl = torch.tensor(0.0)
    mb_size = max(1, size // args.num_minibatches)
    clipfracs, approx_kl = [], torch.tensor(0.0)
    for _epoch in range(args.update_epochs):
        order = torch.randperm(size, generator=session.torch_rng).to(dev)
        for start in range(0, size - mb_size + 1, mb_size):
            # index_select: several times faster than indexing a 2-D tensor by a tensor
            m = {k: v.index_select(0, order[start : start + mb_size]) for k, v in b.items()}
            with autocast(dev, cast):
                logits, value = net(m["obs"], m["mask"])
            logits, value = logits.float(), value.float()
            logp_all = torch.log_softmax(logits, dim=1)
            newlogp = logp_all.gather(1, m["action"][:, None])[:, 0]
            entropy = -(policy_probs(logits) * logp_all).sum(dim=1)
            logratio = newlogp - m["logp"]
            ratio = logratio.exp()
            with torch.no_grad():
                approx_kl = ((ratio - 1) - logratio).mean()
                clipfracs.append(((ratio - 1.0).abs() > args.clip_coef).float().mean().item())
            adv = m["adv"]
            if args.norm_adv:
                adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            pg_loss = torch.max(
                -adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)
            ).mean()
            ret, old_v = m["ret"], m["value"]
            v_loss = (value - ret) ** 2
            if args.clip_vloss:
                v_clipped = old_v + (value - old_v).clamp(-args.clip_coef, args.clip_coef)
                v_loss = torch.max(v_loss, (v_clipped - ret) ** 2)
            v_loss = 0.5 * v_loss.mean()
            ent = entropy.mean()
            loss = pg_loss - args.ent_coef * ent + args.vf_coef * v_loss
            if kl_coef > 0:  # KL(teacher || policy) over the legal actions
                t_logp = m["teacher_logp"]
                kl = (m["teacher_p"] * (t_logp - logp_all)).sum(dim=1).mean()
                loss = loss + kl_coef * kl
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), args.max_grad_norm)
            optimizer.step()
        if args.target_kl and approx_kl > args.target_kl:
            break
    y_pred, y_true = batch["value"], batch["ret"]
    var_y = np.var(y_true)
    return {
        "losses/value_loss": v_loss.item(),
        "losses/policy_loss": pg_loss.item(),
        "losses/entropy": ent.item(),
        "losses/approx_kl": approx_kl.item(),
        "losses/kl_teacher": kl.item(),
        "losses/kl_coef": kl_coef,
        "losses/clipfrac": float(np.mean(clipfracs)) if clipfracs else 0.0,
        "losses/explained_variance": float(1 - np.var(y_true - y_pred) / var_y)
        if var_y > 0
        else 0.0,
    }


def train(args: Args, progress=None, prepared: PreparedArgs | None = None) -> Path:
    """Run (or resume) PPO self-play; return the final (or last) checkpoint's path.
    `prepared`: the args already prepared (`training.session.prepare_args`)."""
    hidden = [int(h) for h in args.hidden.split(",")]
    session = Session(args, network_config("ppo", hidden), progress, prepared=prepared)
    args, net = session.args, session.net
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate, eps=1e-5)
    session.restore_optimizer(optimizer)
    try:
        rollouts = session.open_rollouts(behaviour, rollout_batch)
        while not session.done:
            if args.anneal_lr:
                frac = 1.0 - session.progress_fraction
                optimizer.param_groups[0]["lr"] = frac * args.learning_rate
            net.eval()
            batch, stats = rollouts.next_batch()
            net.train()
            stats.update(ppo_update(args, net, optimizer, batch, session))
            stats["charts/learning_rate"] = optimizer.param_groups[0]["lr"]
            stats["charts/learner_decisions"] = session.learner_steps
            session.end_update(optimizer, stats)
    finally:
        path = session.close()
    return path


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> Path:
    return train(parse_args(Args, argv, prog))


if __name__ == "__main__":
    main()
