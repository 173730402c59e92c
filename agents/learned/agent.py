"""`checkpoint:PATH`: a trained network (PPO or DMC) as an agent that plays batched.

`checkpoint:runs/x/checkpoints/final.pt` plays greedily (the argmax of the policy
logits, or of Q); `checkpoint:PATH,sample=true` samples (PPO: from the policy; DMC:
epsilon-greedy with the run's exploration rate). `ppo` is the checkpoint shipped in
`agents/learned/checkpoints/ppo_small.pt`, `learned` the strongest learned agent,
`agents/learned/checkpoints/learned.pt` (distilled, then fine-tuned; `learned.json` beside it
holds the commands that reproduce it, their wall time and its results).

`learned:bid=model` (or `checkpoint:PATH,bid=model`) lets the heuristic make every
decision before card play (on the standard table: the bid of highest expected team score
under the fitted trick model, `agents.heuristic.model_bids`) while the network plays the cards;
`bid=rules` takes rule text 000's count instead; `bid=net` (the default) is the network alone.

`endgame=K,worlds=W` (any of them) plays the last K tricks of each hand by a determinized
exact solve over W sampled worlds (`agents.learned.endgame`), the network the rest; `learned`
does so by default (`LEARNED_ENDGAME`, `DEFAULT_WORLDS`: the best measured setting that
keeps its speed targets, see `learned.json`), `endgame=0` is the network alone.
`nil=N` (N > K) also solves the last N tricks of a hand while a nil bid of the seat's
team is alive, for that nil (`agents.learned.endgame`; `learned`: `LEARNED_NIL`, 4, unless
`endgame=0`; `nil=0` off);
`nilplay=heuristic` hands the team's card play to the heuristic while its nil is alive,
before the solved tricks; `setnil=N` solves the last N tricks while a nil of the opponents
is alive (and none of its team's) to set that nil (off by default).

A checkpoint's format and its checks: `agents.learned.checkpoint`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt
import torch

from agents.base import BaseAgent
from agents.learned.checkpoint import CheckpointError, read_checkpoint
from agents.learned.networks import POLICY_KINDS, Network, autocast, build_network, padded_rows
from spades_env.observation import SeatView, obs_size
from spades_env.rules import Rules
from spades_env.state import DONE, PLAY

if TYPE_CHECKING:  # the solver loads on first use
    from agents.learned.endgame import EndgameSolver

#: Rules options that end the game but do not change how a hand is bid, played or scored.
GAME_LENGTH_OPTIONS = ("target", "max_hands", "lose_at")
#: The checkpoints shipped in the repository: `ppo` (PPO from scratch) and `learned` (the
#: strongest learned agent; its recipe in `learned.json` beside it) in the agent registry.
SHIPPED = Path(__file__).resolve().parent / "checkpoints" / "ppo_small.pt"
LEARNED = SHIPPED.with_name("learned.pt")
#: `learned2`: `learned`'s network fine-tuned by PPO against `learned` itself (its
#: endgame solver included) as the fixed opponent; its recipe in `learned2.json`
LEARNED2 = SHIPPED.with_name("learned2.pt")
#: who makes a network agent's decisions before card play: the network, or the heuristic
#: bidding by the fitted trick model or by rule text 000's count (`agents.heuristic.agent`)
BIDDERS = ("net", "model", "rules")
#: `learned`'s endgame: the last tricks solved, and the worlds sampled per decision
#: (`agents.learned.endgame`; measured in agents/learned/checkpoints/learned.json)
LEARNED_ENDGAME = 3
DEFAULT_WORLDS = 16
#: `learned`'s solve for a live nil of its team: the last tricks solved for it (0: off;
#: 5 kept more nils but halved the tournament's speed, see `learned.json`)
LEARNED_NIL = 4
#: who plays the team's cards while its nil is alive (before the solved tricks)
NIL_PLAYERS = ("net", "heuristic")


def rules_mismatch(trained: Rules, playing: Rules) -> list[str]:
    """Options (other than game length) whose values differ, as `name=trained/playing`."""
    a, b = trained.to_dict(), playing.to_dict()
    return [f"{k}={a[k]}/{b[k]}" for k in a if k not in GAME_LENGTH_OPTIONS and a[k] != b.get(k)]


def load_network(ckpt: dict[str, Any], device: str = "cpu") -> Network:
    """The checkpoint's network, weights loaded, in eval mode."""
    net = build_network(ckpt["network"], Rules.from_dict(ckpt["rules"]))
    net.load_state_dict(ckpt["model"])
    return net.to(device).eval()


class NetworkAgent(BaseAgent):
    """A network playing every seat it is given, one forward pass per batch.

    Greedy by default; `sample=True` samples (PPO: from the policy; DMC: epsilon-greedy).
    Training uses it for the past selves of the opponent pool; `RLAgent` loads one from a
    checkpoint file.
    """

    name = "network"
    needs_obs = True
    #: it reads only the encoding: the play loop passes view=None after `check_rules`
    needs_view = False

    def __init__(
        self,
        net: Network,
        rules: Rules,
        seed: int | None = None,
        sample: bool = False,
        epsilon: float = 0.0,
        device: str = "cpu",
        precision: str = "fp32",
    ) -> None:
        super().__init__(seed)
        self.net = net.to(device).eval()
        self.precision = precision  # fp32, or bf16 (training's past selves: autocast)
        #: bf16 on the CPU: rows padded to a few shapes (`agents.learned.networks.PAD_ROWS`)
        self.pad = True
        self.rules = rules
        self.kind = net.kind
        self.sample = bool(sample)
        self.epsilon = float(epsilon)
        self.device = torch.device(device)
        self.torch_rng = torch.Generator().manual_seed(int(self.rng.integers(2**62)))
        self.source = "a network"
        self._checked: Rules | None = None
        self.bidder: BaseAgent | None = None
        self.endgame: EndgameSolver | None = None
        self.nil_player: BaseAgent | None = None

    def bid_with(self, bid: str, seed: int | None = None, model: str = "") -> None:
        """Hand every decision before card play to the heuristic bidding by `bid`
        (`model`: the trick model of the file `model`, by default the heuristic's;
        `rules`), or keep them with the network (`net`); ValueError otherwise."""
        check_bid({"bid": bid, "model": model})
        if bid == "net":
            self.bidder = None
            self.needs_view = self.endgame is not None or self.nil_player is not None
            return
        from agents.heuristic.agent import HeuristicAgent

        self.bidder, self.needs_view = HeuristicAgent(seed, bid=bid, model=model), True

    def check_rules(self, rules: Rules) -> None:
        """Refuse rules other than the training ones (game length aside)."""
        if rules is self._checked:
            return
        diff = rules_mismatch(self.rules, rules)
        if diff:
            raise CheckpointError(
                f"{self.source} was trained on other rules "
                f"(trained/playing: {', '.join(diff)}); play it with its training rules"
            )
        if self.endgame is not None:
            from agents.dd.position import check_rules

            check_rules(rules)  # the endgame solver's rules: one line if it cannot play these
        self._checked = rules

    def act(
        self,
        view: SeatView | None,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]:
        if view is not None:  # the play loop checks the rules once and passes None
            self.check_rules(view.rules)
        if self.bidder is not None:
            return self._act_split(view, obs, mask)
        return self._net_act(obs, mask, view)

    def endgame_with(
        self,
        tricks: int,
        worlds: int,
        nil: int = 0,
        nilplay: str = "net",
        seed: int | None = None,
        setnil: int = 0,
    ) -> None:
        """Play the last `tricks` tricks by the determinized double-dummy solver over
        `worlds` sampled worlds (`agents.learned.endgame`), and the last `nil` tricks of a hand
        where the team has a live nil by a solve for that nil; 0 tricks: the network
        alone. `nilplay=heuristic`: the heuristic plays the team's other card decisions
        while its nil is alive; `setnil`: the last tricks solved to set a live nil of the
        opponents."""
        from agents.learned.endgame import EndgameSolver, check_endgame

        check_endgame(tricks, worlds, nil)
        check_endgame(tricks, worlds, setnil)
        check_nilplay(nilplay)
        self.endgame = (
            EndgameSolver(tricks, worlds, self.rng, nil, setnil)
            if tricks or nil or setnil
            else None
        )
        self.nil_player: BaseAgent | None = None
        if nilplay == "heuristic":
            from agents.heuristic.agent import HeuristicAgent

            self.nil_player = HeuristicAgent(seed)
        self.needs_view = (
            self.bidder is not None or self.endgame is not None or self.nil_player is not None
        )

    def preferences(
        self, obs: npt.NDArray[np.int16] | None, mask: npt.NDArray[np.bool_]
    ) -> npt.NDArray[np.float32]:
        """(B, A) the network's preferences over actions (policy logits or Q-values,
        illegal actions at the masked value) for the RL encodings `obs`."""
        if obs is None or obs.shape[1] != obs_size(self.rules):
            raise CheckpointError("a network agent needs the RL encoding (needs_obs=True)")
        n = len(obs)
        rows = padded_rows(n, self.device, self.precision) if self.pad else n
        if rows > n:  # padding rows: a legal first action each, sliced off below
            obs = np.concatenate([obs, np.zeros((rows - n, obs.shape[1]), obs.dtype)])
            pad = np.zeros((rows - n, mask.shape[1]), mask.dtype)
            pad[:, 0] = True
            mask_in = np.concatenate([mask, pad])
        else:
            mask_in = mask
        with torch.inference_mode(), autocast(self.device, self.precision):
            x = torch.from_numpy(np.ascontiguousarray(obs)).to(self.device)
            m = torch.from_numpy(np.ascontiguousarray(mask_in)).to(self.device)
            return self.net.preferences(x, m)[:n].float().cpu().numpy()

    def _net_act(
        self,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
        view: SeatView | None = None,
    ) -> npt.NDArray[np.int64]:
        """The network's actions (argmax, or sampled); with an endgame solver and the
        view, the solver's in the games it plays."""
        prefs = torch.from_numpy(self.preferences(obs, mask))
        if self.endgame is None and self.nil_player is None:
            return self._pick(prefs, mask)
        if view is None:
            raise CheckpointError("a network agent with an endgame solver needs the seat views")
        out = self._pick(prefs, mask)
        late = self.endgame.games(view) if self.endgame is not None else np.zeros(len(out), bool)
        if self.nil_player is not None:
            from agents.learned.endgame import live_nil

            nil = np.flatnonzero((view.phase == PLAY) & (live_nil(view) >= 0) & ~late)
            if nil.size:
                out[nil] = self.nil_player.act(view.take(nil), None, mask[nil])
        late_games = np.flatnonzero(late)
        if late_games.size:
            out[late_games] = self.endgame.choose(view, prefs.numpy(), late_games)
        return out

    def _pick(self, prefs: torch.Tensor, mask: npt.NDArray[np.bool_]) -> npt.NDArray[np.int64]:
        if not self.sample:
            return prefs.argmax(dim=1).numpy().astype(np.int64)
        if self.kind in POLICY_KINDS:
            probs = torch.softmax(prefs, dim=1)
            return torch.multinomial(probs, 1, generator=self.torch_rng)[:, 0].numpy()
        return epsilon_greedy(prefs.numpy(), mask, self.epsilon, self.rng)

    def _act_split(
        self,
        view: SeatView | None,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]:
        """The bidder's actions before card play, the network's in it."""
        if view is None:
            raise CheckpointError("a network agent with a bidder needs the seat views")
        out = np.zeros(len(mask), dtype=np.int64)
        before = (view.phase != PLAY) & (view.phase != DONE)
        if before.any():
            idx = np.flatnonzero(before)
            out[idx] = self.bidder.act(view.take(idx), None, mask[idx])
        if not before.all():
            idx = np.flatnonzero(~before)
            sub = view.take(idx)
            out[idx] = self._net_act(None if obs is None else obs[idx], mask[idx], sub)
        return out


class RLAgent(NetworkAgent):
    """`checkpoint:PATH`: the network of a checkpoint file (see the module doc)."""

    name = "checkpoint"

    def __init__(
        self,
        seed: int | None = None,
        path: str | Path = SHIPPED,
        sample: bool = False,
        device: str = "cpu",
        bid: str = "net",
        model: str = "",
        endgame: int = 0,
        worlds: int = DEFAULT_WORLDS,
        nil: int = 0,
        nilplay: str = "net",
        setnil: int = 0,
    ) -> None:
        ckpt = read_checkpoint(path)
        epsilon = float(ckpt.get("args", {}).get("epsilon", 0.0))
        rules = Rules.from_dict(ckpt["rules"])
        super().__init__(load_network(ckpt), rules, seed, sample, epsilon, device)
        self.path = str(path)
        self.source = f"checkpoint {self.path!r}"
        self.endgame_with(endgame, worlds, nil, nilplay, seed, setnil)
        self.bid_with(bid, seed, model)


def epsilon_greedy(
    prefs: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_],
    epsilon: float,
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """Argmax of `prefs`, replaced by a uniformly random legal action with prob. epsilon."""
    greedy = prefs.argmax(axis=1)
    explore = rng.random(len(greedy)) < epsilon
    if explore.any():
        noise = rng.random(mask[explore].shape) * mask[explore]
        greedy[explore] = noise.argmax(axis=1)
    return greedy.astype(np.int64)


def checkpoint_agent(seed: int | None = None, **params: Any) -> RLAgent:
    """Registry factory for `checkpoint:PATH[,sample=true][,device=cpu]`."""
    return RLAgent(seed, **params)


def shipped_agent(
    seed: int | None = None, sample: bool = False, bid: str = "net", model: str = ""
) -> RLAgent:
    """Registry factory for `ppo`: the checkpoint shipped with the repository."""
    return RLAgent(seed, SHIPPED, sample=sample, bid=bid, model=model)


def learned_agent(
    seed: int | None = None,
    sample: bool = False,
    bid: str = "net",
    model: str = "",
    endgame: int = LEARNED_ENDGAME,
    worlds: int = DEFAULT_WORLDS,
    nil: int | None = None,
    nilplay: str = "net",
    setnil: int = 0,
) -> RLAgent:
    """Registry factory for `learned`: the strongest learned agent shipped (the network,
    and the endgame solver for the last `endgame` tricks, and for the last `nil` tricks
    while the team's nil is alive: `LEARNED_NIL` unless `endgame=0`, the network alone)."""
    if nil is None:
        nil = LEARNED_NIL if endgame else 0
    return RLAgent(
        seed, LEARNED, sample=sample, bid=bid, model=model, endgame=endgame, worlds=worlds,
        nil=nil, nilplay=nilplay, setnil=setnil,
    )  # fmt: skip


def learned2_agent(seed: int | None = None, **options: Any) -> RLAgent:
    """Registry factory for `learned2`: the network of `learned2.pt` alone (no search) by
    default; `endgame=K`, `nil=N`, `setnil=N` add the solver as for `learned` (the options
    and their defaults are `RLAgent`'s)."""
    return RLAgent(seed, LEARNED2, **options)


def check_bid(params: dict[str, Any]) -> None:
    """A known `bid`, and a `model` file only with `bid=model` (ValueError, one line)."""
    bid = params.get("bid", "net")
    if bid not in BIDDERS:
        raise ValueError(f"bid {bid!r}; use {', '.join(BIDDERS)}")
    if params.get("model") and bid != "model":
        raise ValueError("model=PATH is the trick model of bid=model: add bid=model")
    if bid == "model":
        from agents.heuristic.trick_model import DEFAULT_PATH, load_cached

        load_cached(params.get("model") or str(DEFAULT_PATH))


def check_nilplay(nilplay: str) -> None:
    """A known `nilplay` (ValueError, one line)."""
    if nilplay not in NIL_PLAYERS:
        raise ValueError(f"nilplay={nilplay!r}; use {', '.join(NIL_PLAYERS)}")


def check_endgame_params(params: dict[str, Any]) -> None:
    """Valid `endgame` / `worlds` / `nil` / `nilplay` (ValueError, one line); `worlds` is
    checked even where `endgame` is 0 and the solver is off."""
    from agents.learned.endgame import check_endgame

    tricks, worlds = params.get("endgame", 0), params.get("worlds", DEFAULT_WORLDS)
    check_endgame(tricks, worlds, params.get("nil", 0))
    check_endgame(tricks, worlds, params.get("setnil", 0))
    check_nilplay(params.get("nilplay", "net"))


def check_params(params: dict[str, Any]) -> None:
    """Registry check: the spec names a loadable checkpoint (before any game starts)."""
    check_bid(params)
    check_endgame_params(params)
    if "path" not in params:
        raise CheckpointError("write the checkpoint's path: checkpoint:PATH")
    read_checkpoint(os.fspath(params["path"]))


def check_shipped(params: dict[str, Any]) -> None:
    """Registry check for `ppo`: the shipped checkpoint is present and loads."""
    check_bid(params)
    read_checkpoint(SHIPPED)


def check_learned(params: dict[str, Any]) -> None:
    """Registry check for `learned`: the shipped checkpoint is present and loads."""
    check_bid(params)
    check_endgame_params({"endgame": LEARNED_ENDGAME, **params})
    read_checkpoint(LEARNED)


def check_learned2(params: dict[str, Any]) -> None:
    """Registry check for `learned2`: the shipped checkpoint is present and loads."""
    check_bid(params)
    check_endgame_params({"endgame": 0, **params})
    read_checkpoint(LEARNED2)
