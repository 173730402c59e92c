"""`pimc`: Perfect Information Monte Carlo search (determinized flat Monte Carlo).

For each decision the agent samples K worlds (complete hidden hands consistent with
what its seat knows, `agents.montecarlo.sampling`), scores every legal action in every world, and
plays the action with the best mean *team hand score margin* (its team's RULES.md §4
hand score, bags and their penalty included, minus the opponents'; `objective=team`
uses its own team's score alone). Bids, blind-nil decisions and exchange passes are
chosen the same way, by rollouts from the bidding position.

Evaluators:

- `rollout` (default): every world x action x rollout is one game, played to the end of
  the hand by the rollout policy: `heuristic` (the default; rule text 000's rules), `greedy`
  (win a trick cheaply unless the partner has it, else play low; bids by a count of top
  cards) or `random`. A card-play decision is one call of a numba loop
  (`agents.montecarlo.pimc_kernel`: the kernels `agents.kernels.play` for greedy and random,
  `agents.heuristic.play` for the heuristic's card play, each differential-tested
  against the engine and the Python agent). A bidding decision plays its games as ONE
  batched engine `State` (`agents.montecarlo.common.state_from_world`) until every game is
  in card play (the heuristic's bids in Python), then hands the card play to the
  kernels. Both paths draw the same random numbers in the same order as the engine
  path (`use_kernel = False`, kept for the tests): the kernels' random policy from a
  stream keyed by the agent's generator (`agents.kernels.streams`).
- `dd`: in card play, the double-dummy solver's value of each card under the score
  objective (`agents.dd`); exact per world but slow before the last ~8 tricks. Bidding
  still uses rollouts.

PIMC's known weaknesses are those of every determinized search: *strategy fusion* (it
assumes it will know the cards at later decisions, so it overrates finesses and guesses)
and *non-locality*. See experiments/tournament/strength.py for how it fares.

Parameters (`pimc:worlds=64,rollouts=1,evaluator=rollout,policy=heuristic,time_ms=0,bid=search`):
`worlds` K; `rollouts` per world and action; `evaluator`; `policy`; `time_ms` a time
budget per decision (0 = none: all K worlds; otherwise worlds are evaluated in chunks
until the budget is spent, at least one chunk); `weight` `bids` weights the sampled
worlds by the bids (`agents.montecarlo.world_weights`), `none` samples uniformly; `objective`
`margin` | `team`; `bid` `search` (the default: bids as above), `heuristic` (the
heuristic's rule-based bids, `heuristic:bid=rules`, with its blind-nil and exchange
decisions; search only in card play, which separates how well the agent bids from how
well it plays) or `model` (the same with the bids of the fitted trick model,
`agents.heuristic.model_bids`).
"""

from __future__ import annotations

import time

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.play import play_out_state as heuristic_play_out
from agents.kernels.play import GREEDY, RANDOM, play_out_state
from agents.kernels.streams import new_stream
from agents.montecarlo.common import (
    POLICIES,
    bid_then_search,
    greedy_actions,
    margins,
    search_bidder,
    state_from_world,
)
from agents.montecarlo.pimc_kernel import HEURISTIC, play_rollouts
from agents.montecarlo.sampling import sample_worlds
from spades_env.engine import PHASE_BASE, random_legal_actions, step
from spades_env.observation import SeatView, seat_view
from spades_env.scoring import apply_bags, score_hand
from spades_env.state import PLAY, State

EVALUATORS = ("rollout", "dd")
CHUNK = 16  # worlds per batch when a time budget is set


def legal_list(view: SeatView, g: int) -> list[int]:
    bits, base = int(view.legal[g]), int(PHASE_BASE[int(view.phase[g])])
    return [base + i for i in range(64) if bits >> i & 1]


def rollout_values(
    st: State,
    team: int,
    policy: str,
    rng: np.random.Generator,
    heuristic: HeuristicAgent | None = None,
    objective: str = "margin",
    kernel: bool = True,
) -> npt.NDArray[np.float64]:
    """(N,) value to `team` of the current hand of each game, played out by `policy`
    (`kernel`: the card play of the rest of the hand in one compiled call; False: step
    by step on the engine). The heuristic draws no random numbers."""
    n = st.batch_size
    value = np.zeros(n)
    done = np.zeros(n, dtype=bool)
    while not done.all():
        if policy == "heuristic" and kernel and (st.phase[~done] == PLAY).all():
            # the heuristic's card play of the whole hand (agents.heuristic.play)
            live = np.flatnonzero(~done)
            sub = st.take(live)
            pts = hand_points(sub, heuristic_play_out(sub))
            value[live] = margins(pts, team) if objective == "margin" else pts[:, team]
            break
        if policy != "heuristic" and (st.phase[~done] == PLAY).all():
            # the card play of the rest of the hand: the numba kernel, one call
            live = np.flatnonzero(~done)
            sub = st.take(live)
            won = play_out_state(sub, GREEDY if policy == "greedy" else RANDOM, new_stream(rng))
            pts = hand_points(sub, won)
            value[live] = margins(pts, team) if objective == "margin" else pts[:, team]
            break
        if policy == "greedy":
            acts = greedy_actions(st, rng)
        elif policy == "heuristic":  # every game: a finished one may be in its next hand
            acts = (heuristic or HeuristicAgent(bid="rules")).act(seat_view(st), None, None)
        else:
            acts = random_legal_actions(st.legal, st.phase, rng)
        info = step(st, acts)
        new = info.hand_over & ~done
        if new.any():
            pts = info.hand_points[new]
            value[new] = margins(pts, team) if objective == "margin" else pts[:, team]
            done |= new
    return value


def hand_points(st: State, won: npt.NDArray) -> npt.NDArray[np.int64]:
    """(N, T) RULES.md §4 hand points, bag penalty included, with these tricks per seat."""
    hs = score_hand(st.rules, st.bids, st.blind, won)
    _, _, penalty = apply_bags(st.rules, st.scores + hs.points, st.bags + hs.bags)
    return hs.points - penalty


class PIMCAgent(BaseAgent):
    """Determinized flat Monte Carlo over sampled worlds (module doc)."""

    name = "pimc"
    #: card play by the numba loops (False: the engine reference path, for tests)
    use_kernel = True

    def __init__(
        self,
        seed: int | None = None,
        worlds: int = 64,
        rollouts: int = 1,
        evaluator: str = "rollout",
        policy: str = "heuristic",
        time_ms: float = 0.0,
        weight: str = "none",
        objective: str = "margin",
        bid: str = "search",
    ) -> None:
        super().__init__(seed)
        self._bidder = search_bidder(bid, "pimc", seed)
        if evaluator not in EVALUATORS:
            raise ValueError(f"pimc: evaluator {evaluator!r}; use one of {EVALUATORS}")
        if policy not in POLICIES:
            raise ValueError(f"pimc: policy {policy!r}; use one of {POLICIES}")
        if weight not in ("none", "bids"):
            raise ValueError(f"pimc: weight {weight!r}; use none or bids")
        if objective not in ("margin", "team"):
            raise ValueError(f"pimc: objective {objective!r}; use margin or team")
        if worlds < 1 or rollouts < 1:
            raise ValueError("pimc: worlds and rollouts must be >= 1")
        self.worlds, self.rollouts = int(worlds), int(rollouts)
        self.evaluator, self.policy = evaluator, policy
        self.time_ms, self.weight, self.objective = float(time_ms), weight, objective
        self._heuristic = HeuristicAgent(bid="rules")  # rollouts: rule text 000's count, fast
        self._solver = None
        self.last_values: dict[int, float] = {}  # mean value per action, last decision

    def act(self, view: SeatView, obs, mask) -> npt.NDArray[np.int64]:
        del obs, mask
        return bid_then_search(self._bidder, view, self.decide)

    def decide(self, view: SeatView, g: int = 0) -> int:
        """The action of game `g` of the view (its seat must be the one to act)."""
        actions = legal_list(view, g)
        if not actions:
            return 0
        if len(actions) == 1:
            self.last_values = {actions[0]: 0.0}
            return actions[0]
        start = time.perf_counter()
        weight = None if self.weight == "none" else "bids"
        worlds = sample_worlds(view, self.worlds, self.rng, game=g, weight=weight)
        use_dd = self.evaluator == "dd" and int(view.phase[g]) == PLAY
        chunk = len(worlds) if self.time_ms <= 0 else min(CHUNK, len(worlds))
        total = np.zeros(len(actions))
        count = 0
        for lo in range(0, len(worlds), chunk):
            part = worlds[lo : lo + chunk]
            vals = (
                self._dd(view, g, part, actions) if use_dd else self._roll(view, g, part, actions)
            )
            total += vals.sum(axis=0)
            count += vals.shape[0]
            if self.time_ms > 0 and (time.perf_counter() - start) * 1e3 >= self.time_ms:
                break
        mean = total / count
        self.last_values = dict(zip(actions, mean.tolist(), strict=True))
        return actions[int(np.argmax(mean))]

    def _roll(self, view: SeatView, g: int, worlds, actions: list[int]) -> npt.NDArray:
        """(K * rollouts, A) values of each action in each world."""
        k, a, r = len(worlds), len(actions), self.rollouts
        if int(view.phase[g]) == PLAY and self.use_kernel:
            # card play: the numba loop, the same games in the same order (pimc_kernel)
            policy = {"greedy": GREEDY, "random": RANDOM, "heuristic": HEURISTIC}[self.policy]
            return play_rollouts(view, g, worlds, actions, r, policy, self.rng, self.objective)
        base = state_from_world(view, worlds, g)
        # game index = (world * A + action) * R + rollout
        st = base.take(np.repeat(np.arange(k), a * r))
        acts = np.tile(np.repeat(np.asarray(actions, dtype=np.int64), r), k)
        team = view.rules.team_of(int(view.seat[g]))
        value = np.zeros(st.batch_size)
        info = step(st, acts)
        over = info.hand_over
        if over.any():  # the action ended the hand (the last card)
            pts = info.hand_points[over]
            value[over] = margins(pts, team) if self.objective == "margin" else pts[:, team]
        live = np.flatnonzero(~over)
        if live.size:
            sub = st.take(live)
            value[live] = rollout_values(
                sub, team, self.policy, self.rng, self._heuristic, self.objective, self.use_kernel
            )
        return value.reshape(k, a, r).transpose(0, 2, 1).reshape(k * r, a)

    def _dd(self, view: SeatView, g: int, worlds, actions: list[int]) -> npt.NDArray:
        """(K, A) double-dummy values of each card in each world."""
        from agents.dd import DDSolver, Position, score_objective
        from agents.dd.position import check_rules

        check_rules(view.rules)  # one line if the solver cannot play these rules
        if self._solver is None:
            self._solver = DDSolver()
        team = view.rules.team_of(int(view.seat[g]))
        obj = score_objective(
            view.rules,
            view.bids[g],
            view.blind[g],
            team,
            relative=self.objective == "margin",
        )
        out = np.zeros((len(worlds), len(actions)))
        for i, w in enumerate(worlds):
            vals = self._solver.move_values(Position.from_view(view, w, g), obj)
            out[i] = [vals[c] for c in actions]
        return out


def check_params(params: dict) -> None:
    """Registry check: the parameters build an agent (ValueError names a bad one)."""
    PIMCAgent(**params)
