"""PPO on the native vector env, in one file in the CleanRL style: no framework, every
step of the algorithm in view.

`SpadesVectorEnv` steps N single-seat games as one engine batch (the opponents are the
compiled random ones here; `opponents=` takes agents). Illegal actions are masked out of
the policy's logits with `env.action_masks()`. Gymnasium's NEXT_STEP autoreset: the step
after a hand ends starts the next one and ignores its action, so that step is left out
of the loss. Needs torch (the `train` or `integrations` extra).

    python examples/cleanrl_ppo_vector.py             # 100 updates of 64 games x 64 steps
    python examples/cleanrl_ppo_vector.py --tiny      # 2 updates of 8 x 16 (the tests)
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import numpy as np

from training.threads import add_threads_flag, one_thread


@dataclass
class Args:
    num_envs: int = 64
    num_steps: int = 64
    updates: int = 100
    lr: float = 2.5e-4
    gamma: float = 1.0  # a hand is one short episode: no discount
    gae_lambda: float = 0.95
    epochs: int = 4
    minibatches: int = 4
    clip: float = 0.2
    ent_coef: float = 0.01
    vf_coef: float = 0.5
    reward_scale: float = 0.01  # hand scores are in the hundreds
    seed: int = 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="2 updates of 8 games x 16 steps")
    parser.add_argument("--updates", type=int, default=Args.updates)
    add_threads_flag(parser)
    cli = parser.parse_args()
    try:
        import torch
        from torch import nn
    except ImportError:
        print("torch is not installed (pip install -e '.[train]'): skipped")
        return 0
    print(f"torch threads: {one_thread(cli.threads)}")
    from spades_env.vector_env import SpadesVectorEnv

    args = Args(num_envs=8, num_steps=16, updates=2) if cli.tiny else Args(updates=cli.updates)
    torch.manual_seed(args.seed)
    env = SpadesVectorEnv(num_envs=args.num_envs)
    n_obs, n_act = env.single_observation_space.shape[0], env.single_action_space.n

    class Agent(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.body = nn.Sequential(
                nn.Linear(n_obs, 256), nn.Tanh(), nn.Linear(256, 256), nn.Tanh()
            )
            self.pi, self.v = nn.Linear(256, n_act), nn.Linear(256, 1)

        def forward(self, obs, mask, action=None):
            h = self.body(obs)
            logits = self.pi(h).masked_fill(~mask, -1e9)  # illegal actions: never sampled
            dist = torch.distributions.Categorical(logits=logits)
            if action is None:
                action = dist.sample()
            return action, dist.log_prob(action), dist.entropy(), self.v(h).squeeze(-1)

    agent = Agent()
    optim = torch.optim.Adam(agent.parameters(), lr=args.lr, eps=1e-5)
    T, N = args.num_steps, args.num_envs
    obs_buf = torch.zeros(T, N, n_obs)
    mask_buf = torch.zeros(T, N, n_act, dtype=torch.bool)
    act_buf, logp_buf, rew_buf, val_buf = (torch.zeros(T, N) for _ in range(4))
    done_buf, valid_buf = torch.zeros(T, N), torch.zeros(T, N)

    obs, _ = env.reset(seed=args.seed)
    next_obs = torch.as_tensor(obs, dtype=torch.float32)
    next_mask = torch.as_tensor(env.action_masks())
    next_done = torch.zeros(N)
    restarting = torch.zeros(N)  # this step only starts the next hand (NEXT_STEP autoreset)
    hand_scores: list[float] = []
    for update in range(args.updates):
        for t in range(T):  # ---- rollout
            obs_buf[t], mask_buf[t], done_buf[t] = next_obs, next_mask, next_done
            valid_buf[t] = 1 - restarting
            with torch.no_grad():
                action, logp, _, value = agent(next_obs, next_mask)
            act_buf[t], logp_buf[t], val_buf[t] = action, logp, value
            obs, reward, term, trunc, _ = env.step(action.numpy())
            rew_buf[t] = torch.as_tensor(reward, dtype=torch.float32) * args.reward_scale
            ended = np.logical_or(term, trunc)
            hand_scores += reward[ended].tolist()
            restarting = next_done.clone()
            next_obs = torch.as_tensor(obs, dtype=torch.float32)
            next_mask = torch.as_tensor(env.action_masks())
            next_done = torch.as_tensor(ended, dtype=torch.float32)

        with torch.no_grad():  # ---- generalised advantage estimation
            next_value = agent(next_obs, next_mask)[3]
            adv, last = torch.zeros(T, N), torch.zeros(N)
            for t in reversed(range(T)):
                nonterminal = 1 - (next_done if t == T - 1 else done_buf[t + 1])
                v_next = next_value if t == T - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * v_next * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_buf

        b = {  # ---- PPO update on the flattened batch
            "obs": obs_buf.reshape(T * N, n_obs),
            "mask": mask_buf.reshape(T * N, n_act),
            "act": act_buf.reshape(-1),
            "logp": logp_buf.reshape(-1),
            "adv": adv.reshape(-1),
            "ret": ret.reshape(-1),
            "valid": valid_buf.reshape(-1),
        }
        size = T * N // args.minibatches
        for _ in range(args.epochs):
            for idx in torch.randperm(T * N).split(size):
                _, logp, entropy, value = agent(b["obs"][idx], b["mask"][idx], b["act"][idx])
                ratio = (logp - b["logp"][idx]).exp()
                a = b["adv"][idx]
                a = (a - a.mean()) / (a.std() + 1e-8)
                pg = torch.max(-a * ratio, -a * ratio.clamp(1 - args.clip, 1 + args.clip))
                v_loss = 0.5 * (value - b["ret"][idx]) ** 2
                w = b["valid"][idx]
                loss = (w * (pg + args.vf_coef * v_loss - args.ent_coef * entropy)).sum() / w.sum()
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), 0.5)
                optim.step()
        recent = hand_scores[-200:]
        mean = f"{np.mean(recent):+.1f}" if recent else "-"
        print(
            f"update {update + 1}/{args.updates}: hands {len(hand_scores)}, mean hand score {mean}"
        )
    env.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
