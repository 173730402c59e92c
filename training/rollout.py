"""Batched self-play: N games of one hand each, the learner in some seats, a pool in others.

Both training scripts collect data here. The batched engine plays N hands at once; at
every engine step the games are grouped by who owns the seat to act: the learning
network (one forward pass for all its games, whatever the seat, since observations are
seat-relative) or an opponent agent (the heuristic, or a past self). Every decision the
learner makes is recorded; the opponents' are not.

Episodes are single hands dealt from 0-0 (the tournaments' `hand` mode). The reward of a
seat is the zero-sum team hand-score difference, bag penalty included:
`(own team points - other team points) * reward_scale`, given at the seat's last
decision of the hand.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.play_loop import Turn, play
from spades_env.duplicate import AGENT_A, seat_agents
from spades_env.engine import HandResult
from spades_env.rules import Rules
from spades_env.state import State, init

if TYPE_CHECKING:
    from agents.learned.agent import NetworkAgent

#: (obs (K, D) int16, mask (K, A) bool) -> (actions (K,), logp (K,), value (K,)).
LearnerFn = Callable[
    [npt.NDArray[np.int16], npt.NDArray[np.bool_]],
    tuple[npt.NDArray[np.int64], npt.NDArray[np.float32], npt.NDArray[np.float32]],
]
LEARNER = 0  # owner id of the learner's seats; opponent k has owner id k + 1


@dataclass
class StepRecord:
    """The learner's decisions in one engine step (K of them)."""

    games: npt.NDArray[np.int64]  # (K,) game index
    seat: npt.NDArray[np.int64]  # (K,) absolute seat that decided
    # the step's arrays of every game, the learner's rows at `games` (a step's arrays
    # are its own: `learner_batch` copies only the rows it trains on, once)
    obs: npt.NDArray[np.int16]  # (G, D) encoding of the seat to act
    mask: npt.NDArray[np.bool_]  # (G, A) legal actions
    action: npt.NDArray[np.int64]  # (K,)
    logp: npt.NDArray[np.float32]  # (K,) log-probability of the action (PPO)
    value: npt.NDArray[np.float32]  # (K,) value estimate (PPO)


@dataclass
class Hands:
    """N played hands: outcome per game, and the learner's decisions if recorded."""

    owner: npt.NDArray[np.int64]  # (N, P) owner id of each seat
    points: npt.NDArray[np.int32]  # (N, T) hand points per team, bag penalty included
    bids: npt.NDArray[np.int8]  # (N, P) bids (0 = nil)
    blind: npt.NDArray[np.bool_]  # (N, P)
    tricks: npt.NDArray[np.int8]  # (N, P)
    decisions: int = 0  # engine steps summed over games: every seat's decisions
    steps: list[StepRecord] = field(default_factory=list)

    @property
    def learner_decisions(self) -> int:
        """The learner's decisions recorded in `steps` (its seats' only)."""
        return sum(len(s.games) for s in self.steps)

    def learner_return(self, returns: npt.NDArray[np.float32], opponents: str) -> float | None:
        """Mean return of the learner's seats in the games against `heuristic` or `pool`."""
        vs = (self.owner == 1) if opponents == "heuristic" else (self.owner > 1)
        mine = (self.owner == LEARNER) & vs.any(axis=1)[:, None]
        return float(returns[mine].mean()) if mine.any() else None

    def seat_returns(self, rules: Rules, reward_scale: float) -> npt.NDArray[np.float32]:
        """(N, P) zero-sum return of each seat: own team minus the other, scaled."""
        team = np.arange(rules.num_players) % rules.num_teams
        own = self.points[:, team]
        other = self.points[:, (team + 1) % rules.num_teams]
        return ((own - other) * reward_scale).astype(np.float32)

    def return_stats(
        self, returns: npt.NDArray[np.float32], reward_scale: float
    ) -> dict[str, float | None]:
        """The learner's mean return against the heuristic and the pool, in points per hand."""
        stats: dict[str, float | None] = {}
        for vs in ("heuristic", "pool"):
            r = self.learner_return(returns, vs)
            stats[f"charts/return_vs_{vs}"] = None if r is None else r / reward_scale
        return stats


class _Learner:
    """The learning network as a player of `agents.play_loop.play`: it keeps the
    log-probabilities and values of its last call for the rollout's record."""

    needs_obs = True
    needs_view = False

    def __init__(self, fn: LearnerFn) -> None:
        self.fn = fn
        self.logp: npt.NDArray[np.float32] | None = None
        self.value: npt.NDArray[np.float32] | None = None

    def act(self, view, obs, mask) -> npt.NDArray[np.int64]:
        actions, self.logp, self.value = self.fn(obs, mask)
        return actions


def play_hands(
    state: State,
    owner: npt.NDArray[np.int64],
    learner: LearnerFn | None,
    opponents: Sequence[BaseAgent],
    record: bool = True,
) -> Hands:
    """Play the first hand of every game of `state` (modified in place) to its end.

    owner: (N, P) `LEARNER` (0) for the learner's seats, k + 1 for `opponents[k]`'s.
    """
    rules = state.rules
    n, p = state.batch_size, rules.num_players
    hands = Hands(
        owner=owner,
        points=np.zeros((n, rules.num_teams), dtype=np.int32),
        bids=np.zeros((n, p), dtype=np.int8),
        blind=np.zeros((n, p), dtype=bool),
        tricks=np.zeros((n, p), dtype=np.int8),
    )
    me = _Learner(learner) if learner is not None else None

    def keep(turn: Turn) -> None:
        mine = np.flatnonzero(turn.who == LEARNER)
        if mine.size:
            seat, act = turn.seat[mine].astype(np.int64), turn.actions[mine]
            hands.steps.append(StepRecord(mine, seat, turn.obs, turn.mask, act, me.logp, me.value))

    def outcome(res: HandResult) -> None:
        g = res.games
        hands.points[g] = res.points - res.penalty
        hands.bids[g], hands.blind[g], hands.tricks[g] = res.bids, res.blind, res.tricks

    players = [me, *opponents]
    on_turn = keep if record and me is not None else None
    hands.decisions = play(state, owner, players, on_turn=on_turn, on_hand=outcome)
    return hands


def pool_rollout(
    rules: Rules,
    num_games: int,
    selfplay: float,
    heuristic_frac: float,
    learner: LearnerFn,
    heuristic: BaseAgent,
    pool: Sequence[NetworkAgent],
    rng: np.random.Generator,
) -> Hands:
    """`num_games` fresh hands from 0-0: the learner against one draw of the opponent mix.

    The owners of the seats (`seat_owners`), the pool's sampling seeds and the deals all
    come from `rng`, in that order.
    """
    owner = seat_owners(num_games, rules, selfplay, heuristic_frac, len(pool), rng)
    for agent in pool:  # past selves sample from the run's generators
        seed = int(rng.integers(2**62))
        agent.rng = np.random.default_rng(seed)
        agent.torch_rng.manual_seed(seed)
    state = init(rules, num_games, rng)
    return play_hands(state, owner, learner, [heuristic, *pool])


def seat_owners(
    n: int,
    rules: Rules,
    selfplay: float,
    heuristic: float,
    pool_size: int,
    rng: np.random.Generator,
) -> npt.NDArray[np.int64]:
    """(n, P) owner ids: the opponent-pool mix of a rollout.

    A share `selfplay` of the games has the learner in every seat; a share `heuristic`
    has the heuristic (owner 1) as one partnership, and the rest a past self drawn
    uniformly from the pool (owners 2..pool_size+1; self-play while the pool is empty).
    The learner's partnership alternates between the teams from game to game.
    """
    p, t = rules.num_players, rules.num_teams
    n_self = round(n * selfplay)
    n_heur = min(n - n_self, round(n * heuristic))
    opp = np.full(n, LEARNER, dtype=np.int64)
    opp[n_self : n_self + n_heur] = 1
    rest = n - n_self - n_heur
    if pool_size and rest:
        opp[n_self + n_heur :] = 2 + rng.integers(pool_size, size=rest)
    learner_team = np.arange(n) % t
    opponent_seat = (np.arange(p)[None, :] % t) != learner_team[:, None]
    return np.where(opponent_seat, opp[:, None], LEARNER)


def duplicate_owners(deals: int, rules: Rules, opponent: int = 1) -> npt.NDArray[np.int64]:
    """(2 * deals, P) owner ids of a duplicate evaluation, seated as the tournament seats
    its pairs (`spades_env.duplicate.seat_agents`): the learner is agent A, in the even
    seats of game 2k (team 0 with partnerships) and the odd seats of game 2k + 1, the
    same deal; `opponent` holds the other seats."""
    return np.where(seat_agents(rules, deals) == AGENT_A, LEARNER, opponent).astype(np.int64)


def learner_batch(
    hands: Hands, returns: npt.NDArray[np.float32], gamma: float = 1.0, lam: float = 1.0
) -> dict[str, npt.NDArray]:
    """The learner's decisions of a rollout as flat arrays, with their targets.

    returns: (N, P) each seat's episode return (`Hands.seat_returns`). Each seat's
    decisions form one trajectory whose only reward comes at its last decision; `adv` is
    its GAE(gamma, lam) advantage, `ret` = adv + value (PPO's value target) and `mc` the
    Monte Carlo return (DMC's target; with gamma = 1, the seat's return). Forced moves
    (one legal action) shape the advantages of earlier decisions but are dropped from the
    batch: there is nothing to learn from them.
    """
    n, p = returns.shape
    next_value = np.zeros((n, p), dtype=np.float32)
    next_adv = np.zeros((n, p), dtype=np.float32)
    pending = returns.astype(np.float32).copy()  # the reward not yet handed out
    next_mc = np.zeros((n, p), dtype=np.float32)
    advs, mcs = [], []
    for rec in reversed(hands.steps):
        g, s = rec.games, rec.seat
        reward = pending[g, s]
        pending[g, s] = 0.0
        delta = reward + gamma * next_value[g, s] - rec.value
        adv = delta + gamma * lam * next_adv[g, s]
        mc = reward + gamma * next_mc[g, s]
        next_value[g, s], next_adv[g, s], next_mc[g, s] = rec.value, adv, mc
        advs.append(adv)
        mcs.append(mc)
    steps = hands.steps
    # forced moves (one legal action) are dropped: the rows each step trains on
    keep = [np.count_nonzero(r.mask[r.games], axis=1) > 1 for r in steps]
    rows = [r.games[k] for r, k in zip(steps, keep, strict=True)]
    batch = {
        "obs": _gather([r.obs for r in steps], rows),
        "mask": _gather([r.mask for r in steps], rows),
    }
    for name, parts in (
        ("action", [r.action for r in steps]),
        ("logp", [r.logp for r in steps]),
        ("value", [r.value for r in steps]),
        ("adv", advs[::-1]),
        ("mc", mcs[::-1]),
    ):
        batch[name] = np.concatenate([x[k] for x, k in zip(parts, keep, strict=True)])
    batch["ret"] = batch["adv"] + batch["value"]
    return batch


def _gather(arrays: list[npt.NDArray], rows: list[npt.NDArray[np.int64]]) -> npt.NDArray:
    """The given rows of each array, stacked in order: one copy (`np.take` into place)."""
    out = np.empty((sum(len(r) for r in rows), *arrays[0].shape[1:]), dtype=arrays[0].dtype)
    at = 0
    for a, r in zip(arrays, rows, strict=True):
        np.take(a, r, axis=0, out=out[at : at + len(r)])
        at += len(r)
    return out
