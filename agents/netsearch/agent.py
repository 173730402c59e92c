"""`search`: PIMC card play on top of the learned network's bidding, with exact endgames.

The two strongest agents are blind in different places. The network (`learned`) bids
from one forward pass that has learned what its own play makes of a hand, but plays the
first ten tricks without looking ahead. PIMC (`pimc`) looks ahead in card play, but its
bids come from rollouts of the heuristic, which play worse than PIMC itself, so it
underbids and gathers bags. This agent gives each decision to the part that sees it:

- **before card play** (blind nil, bids, the exchange: RULES.md §2): the network of
  `agents/learned/checkpoints/learned.pt` (`bid=net`, the default), or PIMC's search
  (`bid=search`) or the heuristic's count (`bid=heuristic`);
- **card play** (RULES.md §3): PIMC over `worlds` sampled worlds with heuristic rollouts
  (`agents.montecarlo.pimc`), the worlds weighted by the bids (`weight=bids`,
  `agents.montecarlo.world_weights`) or uniform (`weight=none`);
- **the last `solve` tricks** of a hand, and the last `nil` tricks while a nil of its
  team is alive: the determinized exact solve of `agents.learned.endgame` over
  `solve_worlds` worlds (the score objective; for a live nil, the chance to keep it),
  ties broken by the network's preference; `setnil=N`, the last N tricks while a nil of
  the opponents is alive (and none of its team's), solved to set that nil.

On rules the network was not trained for (another preset), the bids fall back to the
search and the network breaks no ties; on rules the exact solver cannot play, PIMC plays
every card. So the agent runs on every preset `pimc` runs on.

Parameters (`search:worlds=128,bid=net,weight=bids,solve=6,solve_worlds=16,nil=7,setnil=0`,
the defaults: the setting chosen by measurement, docs/results/history.md).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent
from agents.dd.position import check_rules
from agents.learned.agent import LEARNED, NetworkAgent, load_network, rules_mismatch
from agents.learned.checkpoint import read_checkpoint
from agents.learned.endgame import MAX_TRICKS, MAX_WORLDS, EndgameSolver
from agents.montecarlo.pimc import PIMCAgent
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import DONE, PLAY

BIDDERS = ("net", "search", "heuristic")


class SearchAgent(BaseAgent):
    """PIMC card play, the network's bids, exact endgames (module doc)."""

    name = "search"
    needs_obs = True

    def __init__(
        self,
        seed: int | None = None,
        worlds: int = 128,
        bid: str = "net",
        weight: str = "bids",
        solve: int = 6,
        solve_worlds: int = 16,
        nil: int = 7,
        setnil: int = 0,
    ) -> None:
        super().__init__(seed)
        if bid not in BIDDERS:
            raise ValueError(f"search: bid {bid!r}; use one of {', '.join(BIDDERS)}")
        for key, value, low, high in (
            ("solve", solve, 0, MAX_TRICKS), ("nil", nil, 0, MAX_TRICKS),
            ("setnil", setnil, 0, MAX_TRICKS),
            ("solve_worlds", solve_worlds, 1, MAX_WORLDS),
        ):  # fmt: skip
            if not low <= value <= high:
                raise ValueError(f"search: {key}={value}; use {low} to {high}")
        self.bid = bid
        self.solve, self.solve_worlds, self.nil = int(solve), int(solve_worlds), int(nil)
        self.setnil = int(setnil)
        pimc_bid = "heuristic" if bid == "heuristic" else "search"
        self.pimc = PIMCAgent(self._seed(), worlds=worlds, weight=weight, bid=pimc_bid)
        ckpt = read_checkpoint(LEARNED)
        self.net_rules = Rules.from_dict(ckpt["rules"])
        self.net = NetworkAgent(load_network(ckpt), self.net_rules, self._seed())
        self._rules: Rules | None = None
        self._net_ok = False
        self._endgame: EndgameSolver | None = None

    def _seed(self) -> int:
        return int(self.rng.integers(2**62))

    def _setup(self, rules: Rules) -> None:
        """What plays these rules: the network if it was trained on them, the solver if
        it can play them."""
        if rules is self._rules:
            return
        self._net_ok = not rules_mismatch(self.net_rules, rules)
        self._endgame = None
        if self.solve or self.nil or self.setnil:
            try:
                check_rules(rules)
            except ValueError:
                pass  # PIMC plays every card
            else:
                self._endgame = EndgameSolver(
                    self.solve, self.solve_worlds, self.rng, self.nil, self.setnil
                )
        self._rules = rules

    def act(
        self,
        view: SeatView,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]:
        self._setup(view.rules)
        out = np.zeros(view.batch_size, dtype=np.int64)
        before = (view.phase != PLAY) & (view.phase != DONE)
        net_bids = before & self._net_ok & (self.bid == "net") & (obs is not None)
        if net_bids.any():
            idx = np.flatnonzero(net_bids)
            out[idx] = self.net.act(view.take(idx), obs[idx], mask[idx])
        late = np.zeros(view.batch_size, dtype=bool)
        if self._endgame is not None:
            late = self._endgame.games(view)
        if late.any():
            idx = np.flatnonzero(late)
            prefs = np.zeros(mask.shape, dtype=np.float32)
            if self._net_ok and obs is not None:
                prefs[idx] = self.net.preferences(obs[idx], mask[idx])
            out[idx] = self._endgame.choose(view, prefs, idx)
        rest = np.flatnonzero(~net_bids & ~late)
        if rest.size:
            sub = view.take(rest)
            out[rest] = self.pimc.act(sub, None, mask[rest])
        return out


def check_params(params: dict) -> None:
    """Registry check: the parameters build an agent (ValueError names a bad one)."""
    SearchAgent(**params)
