"""`spades bench` section `search`, Monte Carlo rows: PIMC and ISMCTS.

- `pimc W worlds, <position>, <policy>`: decision latency of `pimc` (one seat's decision,
  batch 1), at the opening lead (bidding done, no card played) and mid-hand (after 5
  tricks). rate = decisions per second; `median_ms` / `p95_ms` the latency. The issue's
  target: 64 worlds in <= 20 ms.
- `ismcts bid, 1000 iterations`: decision latency of an ISMCTS bid (the first bid of a
  fresh deal, random rollouts; `agents.montecarlo.ismcts_bid_kernel`); reference: the same decisions
  by the agent's reference Python loop (`use_kernel = False`), the ratio ours over it.
- `ismcts iterations`: ISMCTS iterations per second at the opening lead (random
  rollouts). Reference, if `open_spiel` is installed: OpenSpiel's Python `ISMCTSBot` on
  its `spades` game (one hand, as here) from the opening lead, random rollouts, with a
  small resampler (`openspiel_resampler`): OpenSpiel's spades has no
  `resample_from_infostate`, so the deal in the state's history is re-dealt, the other
  seats' unplayed cards shuffled among them (exact at the opening lead, where nobody
  has shown a void). The ratio is ours over OpenSpiel's (target 10x).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from agents.montecarlo.ismcts import ISMCTSAgent
from agents.montecarlo.pimc import PIMCAgent
from spades_env.engine import random_legal_actions, step
from spades_env.observation import SeatView, seat_view
from spades_env.rules import Rules
from spades_env.state import PLAY, init

Row = dict[str, Any]


def views(n: int, tricks: int, seed: int = 0) -> list[SeatView]:
    """Views of the seat to act after random bidding and `tricks` random tricks."""
    rng = np.random.default_rng(seed)
    state = init(Rules(blind_nil="never"), n, rng)
    while not ((state.phase == PLAY) & (state.history_len >= 4 + 4 * tricks)).all():
        step(state, random_legal_actions(state.legal, state.phase, rng))
    view = seat_view(state)
    return [view.take([g]) for g in range(n)]


def _latency(decide, items, seconds: float, least: int = 3) -> np.ndarray:
    out, start = [], time.perf_counter()
    for item in items:
        t = time.perf_counter()
        decide(item)
        out.append(time.perf_counter() - t)
        if len(out) >= least and time.perf_counter() - start >= seconds:
            break
    return np.array(out)


def _row(name: str, times: np.ndarray, unit: str = "decisions/s", **extra) -> Row:
    return {
        "name": name,
        "batch": 1,
        "rate": len(times) / times.sum(),
        "unit": unit,
        "reference": None,
        "reference_rate": None,
        "ratio": None,
        "median_ms": float(np.median(times) * 1e3),
        "p95_ms": float(np.percentile(times, 95) * 1e3),
        **extra,
    }


def pimc_rows(seconds: float, policies=("greedy", "heuristic")) -> list[Row]:
    rows = []
    positions = {"opening lead": views(12, 0), "mid-hand": views(12, 5)}
    for policy in policies:
        for vs in positions.values():  # compile (or load) the policy's kernels untimed
            PIMCAgent(worlds=2, policy=policy).decide(vs[0])
        for where, vs in positions.items():
            for worlds in (32, 64):
                agent = PIMCAgent(seed=0, worlds=worlds, policy=policy)
                times = _latency(agent.decide, vs, seconds / 8)
                rows.append(_row(f"pimc {worlds} worlds, {where}, {policy} rollouts", times))
    return rows


def openspiel_resampler(rng: np.random.Generator):
    """A resampler for OpenSpiel's spades (module doc)."""
    import pyspiel

    def resample(state, player: int):
        hist = state.history()
        deal, rest = hist[:52], hist[52:]
        played = {a for a in rest if a < 52}
        free = [i for i in range(52) if i % 4 != player and deal[i] not in played]
        cards = [deal[i] for i in free]
        rng.shuffle(cards)
        new = list(deal)
        for i, c in zip(free, cards, strict=True):
            new[i] = c
        out = state.get_game().new_initial_state()
        for a in new + rest:
            out.apply_action(int(a))
        return out

    del pyspiel
    return resample


def openspiel_rate(iterations: int, repeats: int) -> float | None:
    """OpenSpiel ISMCTSBot iterations per second at the opening lead, or None."""
    try:
        import pyspiel
        from open_spiel.python.algorithms import ismcts, mcts
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = np.random.default_rng(0)
    times = []
    for _ in range(repeats):
        state = game.new_initial_state()
        while state.is_chance_node():
            state.apply_action(int(rng.choice([a for a, _ in state.chance_outcomes()])))
        while state.legal_actions()[0] >= 52:  # bids
            state.apply_action(int(rng.choice(state.legal_actions())))
        rs = np.random.RandomState(0)
        bot = ismcts.ISMCTSBot(
            game,
            mcts.RandomRolloutEvaluator(1, rs),
            2.0,
            iterations,
            random_state=rs,
            use_observation_string=True,  # spades has no information-state string
        )
        bot.set_resampler(openspiel_resampler(rng))
        t = time.perf_counter()
        bot.run_search(state)
        times.append(time.perf_counter() - t)
    return iterations * len(times) / sum(times)


def ismcts_rows(seconds: float, iterations: int = 1000) -> list[Row]:
    vs = views(6, 0, seed=1)
    ISMCTSAgent(seed=0, iterations=20).decide(vs[0])  # compile / load the kernel
    agent = ISMCTSAgent(seed=0, iterations=iterations)
    times = _latency(agent.decide, vs, seconds / 2)
    row = _row("ismcts iterations, opening lead, random rollouts", times / iterations)
    row["unit"] = "iterations/s"
    row["median_ms"], row["p95_ms"] = row["median_ms"] * iterations, row["p95_ms"] * iterations
    row["iterations"] = iterations
    ref = openspiel_rate(iterations, repeats=max(1, len(times) // 2))
    if ref is not None:
        row["reference"] = "OpenSpiel ISMCTSBot (Python) on its spades, random rollouts"
        row["reference_rate"] = ref
        row["ratio"] = row["rate"] / ref
    return [row]


def bid_views(n: int, seed: int = 0) -> list[SeatView]:
    """Views of the first bidder of `n` fresh deals (standard rules)."""
    view = seat_view(init(Rules(), n, np.random.default_rng(seed)))
    return [view.take([g]) for g in range(n)]


def ismcts_bid_rows(seconds: float, iterations: int = 1000) -> list[Row]:
    vs = bid_views(6, seed=2)
    ISMCTSAgent(seed=0, iterations=20).decide(vs[0])  # compile / load the kernel
    times = _latency(ISMCTSAgent(seed=0, iterations=iterations).decide, vs, seconds / 2)
    ref = ISMCTSAgent(seed=0, iterations=20)
    ref.use_kernel = False
    ref.decide(vs[0])  # load the play-out kernel it calls from Python, untimed too
    ref.iterations = iterations
    ref_times = _latency(ref.decide, vs, seconds / 2)
    row = _row(f"ismcts bid, {iterations} iterations, random rollouts", times)
    row["reference"] = "the same agent's Python loop (use_kernel=False)"
    row["reference_rate"] = len(ref_times) / ref_times.sum()
    row["ratio"] = row["rate"] / row["reference_rate"]
    return [row]


def mc_rows(seconds: float) -> list[Row]:
    return pimc_rows(seconds) + ismcts_bid_rows(seconds) + ismcts_rows(seconds)
