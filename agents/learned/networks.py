"""The networks of the learned agents: one net for every seat, bidding and play.

Both take the engine's int16 information-state encoding (`spades_env.observation`,
seats relative to the observer, so one set of weights serves every seat) and the
legal-action mask over the one `Discrete(80)` action space (cards, bids, blind nil, the
two_player draw, the auction's trump suits).
The int16 encoding travels as it is from the engine to here; the float conversion and
the per-block scaling happen inside the net (`ObsScaler`), where the learner needs it.

- `PolicyValueNet` (PPO): an MLP trunk, masked policy logits and a state value.
- `SplitPolicyValueNet` (kind `split`, the distilled and fine-tuned agents): the same
  trunk and value, with separate bidding and card-play heads: the bidding head (blind
  nil and bid phases) has a hidden layer of its own, since a bid decides the hand's
  contract from the whole hand at once, while a card is chosen from the trick at hand.
  The phase comes from the encoding's phase block. It has PPO's interface, so PPO
  fine-tunes it.
- `QNet` (Deep Monte Carlo, DouZero-style): the same trunk gives a state embedding h(s);
  Q(s, a) = v · relu(W h(s) + U f(a) + b) + c, where f(a) are the action's features
  (which card: suit, rank, spade; which bid: value, nil; blind nil; see hand; which
  suit a trump naming names; and its one-hot). That is a one-hidden-layer MLP on
  concat(h(s), f(a)); because f(a) is fixed per action, U f(a) is computed once for all
  80 actions, so scoring every legal action
  costs one trunk pass per state.

`build_network(config)` rebuilds either from the plain dict that checkpoints store.
"""

from __future__ import annotations

import contextlib
from typing import Any

import numpy as np
import torch
from torch import nn

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_RANK,
    CARD_SUIT,
    MAX_BID,
    NAME_TRUMP,
    NUM_ACTIONS,
    NUM_CARDS,
    NUM_SUITS,
    SEE_HAND,
    SPADES,
)
from spades_env.observation import obs_size, obs_slices
from spades_env.rules import Rules
from spades_env.state import BID, BLIND

#: A logit low enough to never be sampled, finite so entropy and softmax stay NaN-free.
MASKED_LOGIT = -1e8


def obs_scale(rules: Rules) -> torch.Tensor:
    """(obs_size,) float32 divisor per input: counts and scores brought near [0, 1]."""
    scale = torch.ones(obs_size(rules))
    sl = obs_slices(rules)
    scale[sl["played_trick"]] = rules.hand_size  # trick numbers 1..13
    scale[sl["tricks_won"]] = rules.hand_size
    scale[sl["scores"]] = rules.target
    scale[sl["bags"]] = rules.bag_limit
    scale[sl["hand_no"]] = 10.0
    return scale


class ObsScaler(nn.Module):
    """int16 encoding (B, D) -> float32 (B, D), each block divided by its scale."""

    def __init__(self, rules: Rules) -> None:
        super().__init__()
        self.register_buffer("inv_scale", 1.0 / obs_scale(rules))

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return obs.to(torch.float32).mul_(self.inv_scale)  # in place: one pass fewer


def layer_init(layer: nn.Linear, std: float = float(np.sqrt(2)), bias: float = 0.0) -> nn.Linear:
    """CleanRL's orthogonal init."""
    nn.init.orthogonal_(layer.weight, std)
    nn.init.constant_(layer.bias, bias)
    return layer


def mlp_trunk(in_size: int, hidden: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for h in hidden:
        layers += [layer_init(nn.Linear(in_size, h)), nn.ReLU()]
        in_size = h
    return nn.Sequential(*layers)


def masked(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Illegal actions get MASKED_LOGIT: probability 0 after the softmax."""
    return torch.where(mask, logits, torch.full_like(logits, MASKED_LOGIT))


class PolicyValueNet(nn.Module):
    """PPO's actor-critic: shared trunk, masked policy logits (80) and a value."""

    kind = "ppo"

    def __init__(self, rules: Rules, hidden: list[int]) -> None:
        super().__init__()
        self.scaler = ObsScaler(rules)
        self.trunk = mlp_trunk(obs_size(rules), hidden)
        self.policy = layer_init(nn.Linear(hidden[-1], NUM_ACTIONS), std=0.01)
        self.value = layer_init(nn.Linear(hidden[-1], 1), std=1.0)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (B, 80), value (B,))."""
        h = self.trunk(self.scaler(obs))
        return masked(self.policy(h), mask), self.value(h).squeeze(-1)

    def preferences(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked logits: what the greedy agent takes the argmax of."""
        return self(obs, mask)[0]


class SplitPolicyValueNet(nn.Module):
    """Shared trunk, a bidding head and a card-play head, a value (see the module doc)."""

    kind = "split"

    def __init__(self, rules: Rules, hidden: list[int], bid_hidden: int = 128) -> None:
        super().__init__()
        self.scaler = ObsScaler(rules)
        self.trunk = mlp_trunk(obs_size(rules), hidden)
        self.play = layer_init(nn.Linear(hidden[-1], NUM_ACTIONS), std=0.01)
        self.bid = nn.Sequential(
            layer_init(nn.Linear(hidden[-1], bid_hidden)),
            nn.ReLU(),
            layer_init(nn.Linear(bid_hidden, NUM_ACTIONS), std=0.01),
        )
        self.value = layer_init(nn.Linear(hidden[-1], 1), std=1.0)
        start = obs_slices(rules)["phase"].start
        # RULES.md §2: the blind-nil decision and the bid are the bidding phases
        self.register_buffer("bid_cols", torch.tensor([start + BLIND, start + BID]))

    def bidding(self, obs: torch.Tensor) -> torch.Tensor:
        """(B, 1) bool: the seat is in a bidding phase."""
        return (obs[:, self.bid_cols] > 0).any(dim=1, keepdim=True)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(masked logits (B, 80), value (B,))."""
        h = self.trunk(self.scaler(obs))
        logits = torch.where(self.bidding(obs), self.bid(h), self.play(h))
        return masked(logits, mask), self.value(h).squeeze(-1)

    def preferences(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        return self(obs, mask)[0]


def action_features() -> torch.Tensor:
    """(80, F) float32 static features of every action (see the module doc)."""
    f = np.zeros((NUM_ACTIONS, NUM_ACTIONS + NUM_SUITS + 6), dtype=np.float32)
    f[:, :NUM_ACTIONS] = np.eye(NUM_ACTIONS)
    o = NUM_ACTIONS
    cards = np.arange(NUM_CARDS)
    f[cards, o + CARD_SUIT[cards]] = 1.0
    f[cards, o + NUM_SUITS] = CARD_RANK[cards] / 12.0
    f[cards, o + NUM_SUITS + 1] = CARD_SUIT[cards] == SPADES
    bids = np.arange(MAX_BID + 1)
    f[BID_BASE + bids, o + NUM_SUITS + 2] = bids / 13.0
    f[BID_BASE, o + NUM_SUITS + 3] = 1.0  # nil
    f[BLIND_NIL, o + NUM_SUITS + 4] = 1.0
    f[SEE_HAND, o + NUM_SUITS + 5] = 1.0
    suits = np.arange(NUM_SUITS)
    f[NAME_TRUMP + suits, o + suits] = 1.0  # RULES.md §6 auction: the suit it names
    return torch.from_numpy(f)


class QNet(nn.Module):
    """DMC's action-value net: Q(s, a) for all 80 actions at once (see the module doc)."""

    kind = "dmc"

    def __init__(self, rules: Rules, hidden: list[int], head: int = 64) -> None:
        super().__init__()
        self.scaler = ObsScaler(rules)
        self.trunk = mlp_trunk(obs_size(rules), hidden)
        self.register_buffer("features", action_features())
        self.state_in = layer_init(nn.Linear(hidden[-1], head))
        self.action_in = nn.Linear(self.features.shape[1], head, bias=False)
        self.out = layer_init(nn.Linear(head, 1), std=1.0)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        """Q-values (B, 80) of every action, legal or not."""
        s = self.state_in(self.trunk(self.scaler(obs)))  # (B, head)
        a = self.action_in(self.features)  # (80, head)
        return self.out(torch.relu(s[:, None, :] + a[None, :, :])).squeeze(-1)

    def q_of(self, obs: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """Q(s, a) (B,) of one action per state: what training regresses, at 1/80 the cost."""
        s = self.state_in(self.trunk(self.scaler(obs)))  # (B, head)
        a = self.action_in(self.features[actions])  # (B, head)
        return self.out(torch.relu(s + a)).squeeze(-1)

    def preferences(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Masked Q-values: the greedy action is their argmax."""
        return masked(self(obs), mask)


def policy_probs(logits: torch.Tensor) -> torch.Tensor:
    """softmax(logits): exactly 0 at masked actions. Prefer it to `log_softmax(..).exp()`,
    whose exp of the masked entries' -1e8 takes a slow path on the CPU."""
    return torch.softmax(logits, dim=1)


def sample_masked(logits: torch.Tensor, gen: torch.Generator) -> tuple[torch.Tensor, torch.Tensor]:
    """(actions (B,), log-probabilities of all actions (B, 80)): one draw per row from the
    masked policy, by inverting its cumulative distribution (one uniform per row; cheaper
    than `torch.multinomial`). A masked action has probability 0 and is never drawn: the
    draw is the first action whose cumulative probability exceeds u * total, and the
    cumulative sum only grows at actions of positive probability."""
    logits = logits.float()
    logp = torch.log_softmax(logits, dim=1)
    cdf = policy_probs(logits).cumsum(dim=1)
    u = torch.rand(len(logits), 1, generator=gen, device=logits.device) * cdf[:, -1:]
    return (cdf <= u).sum(dim=1), logp


#: On the CPU in bf16, a forward pass pads its rows up to a multiple of this: oneDNN compiles
#: a bf16 matrix product for every new batch shape (a compile costs far more than the
#: product itself), and the games an agent acts in vary from step to step. fp32 products
#: have no such cost, so fp32 runs unpadded.
PAD_ROWS = 64


def padded_rows(n: int, device: torch.device, precision: str) -> int:
    """The rows a forward pass of `n` rows runs on (`PAD_ROWS`)."""
    if precision == "bf16" and device.type == "cpu":
        return n + (-n % PAD_ROWS)
    return n


def autocast(device: torch.device, precision: str):
    """The context the network runs in: `bf16` autocasts its matrix products to bfloat16
    (fp32 weights, fp32 losses), `fp32` changes nothing."""
    if precision != "bf16":
        return contextlib.nullcontext()  # no autocast state to enter: batch-1 calls stay cheap
    return torch.autocast(device.type, dtype=torch.bfloat16)


def resolve_precision(precision: str, device: torch.device) -> str:
    """`auto` is bf16 where the hardware multiplies bfloat16 natively (a CPU with AMX
    tiles, a CUDA GPU with bf16), else fp32; `fp32` and `bf16` are taken as given."""
    if precision not in ("auto", "fp32", "bf16"):
        raise ValueError(f"--precision {precision!r}: choose auto, fp32 or bf16")
    if precision != "auto":
        return precision
    if device.type == "cuda":
        return "bf16" if torch.cuda.is_bf16_supported() else "fp32"
    amx = getattr(torch.cpu, "_is_amx_tile_supported", lambda: False)
    return "bf16" if device.type == "cpu" and amx() else "fp32"


def network_config(kind: str, hidden: list[int], **extra: Any) -> dict[str, Any]:
    """The plain dict a checkpoint stores to rebuild a network."""
    return {"kind": kind, "hidden": [int(h) for h in hidden], **extra}


#: Networks with a policy and a value: what PPO trains and distillation writes.
POLICY_KINDS = ("ppo", "split")
Network = PolicyValueNet | SplitPolicyValueNet | QNet


def build_network(config: dict[str, Any], rules: Rules) -> Network:
    """A fresh network of the kind and sizes `config` names."""
    kind, hidden = config["kind"], list(config["hidden"])
    if kind == "ppo":
        return PolicyValueNet(rules, hidden)
    if kind == "split":
        return SplitPolicyValueNet(rules, hidden, int(config.get("bid_hidden", 128)))
    if kind == "dmc":
        return QNet(rules, hidden, int(config.get("head", 64)))
    raise ValueError(f"unknown network kind {kind!r}; known: ppo, split, dmc")
