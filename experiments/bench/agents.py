"""`spades bench` section `agents`: decision latency of whole agents, batch 1, one core.

For each agent spec of `SPECS`: the time of `agent.act` on one seat's decision (batch
1, torch on one thread), over the decisions of a few hands of standard rules played by
the heuristic (bids that mean what they say, as in a tournament; random bids are the
worst case of `weight=bids`, whose sampler then rejects most worlds): every bid (`bids`)
and every card play with more than one legal card (`cards`), the same decisions for
every agent. `median_ms` / `p95_ms` are the latency, rate = decisions per
second; the reference is `pimc:worlds=64` on the same decisions, and the ratio ours over
its rate. The targets of the `search` agent: a median of at most 500 ms a bid and 50 ms
a card.

`<spec>, self-play`: the agent in all four seats of `SELF_PLAY` games played as one batch
by the play loop, as a tournament's unit plays them (`agents.play_loop.play`), one core:
decisions per second of the whole hand, bids and cards.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from agents.heuristic.agent import HeuristicAgent
from agents.play_loop import play
from agents.registry import make_agent, parse_agent
from spades_env.engine import legal_action_mask, step
from spades_env.observation import encode, seat_view
from spades_env.rules import Rules
from spades_env.state import BID, PLAY, init

Row = dict[str, Any]
SPECS = ("pimc:worlds=64", "learned", "learned:endgame=0", "learned2", "search")
REFERENCE = "pimc:worlds=64"
HANDS = 6
WARM = 8  # decisions played untimed first: the kernels compile or load
SELF_PLAY = 16


def decisions(hands: int | None = None, seed: int = 0) -> dict[str, list[tuple]]:
    """{"bids": [...], "cards": [...]}: (view, obs, mask) of batch 1 at every bid and
    every card play with a choice of `hands` hands of the heuristic."""
    hands = hands or HANDS
    rng = np.random.default_rng(seed)
    state = init(Rules(), hands, rng)
    player = HeuristicAgent(seed)
    out: dict[str, list[tuple]] = {"bids": [], "cards": []}
    over = np.zeros(hands, dtype=bool)
    while not over.all():
        view, obs, mask = seat_view(state), encode(state), legal_action_mask(state)
        for g in np.flatnonzero(~over):
            kind = {BID: "bids", PLAY: "cards"}.get(int(state.phase[g]))
            if kind and (kind == "bids" or mask[g].sum() > 1):
                out[kind].append((view.take([g]), obs[[g]], mask[[g]]))
        over |= step(state, player.act(view, None, mask)).hand_over
    return out


def _latency(act: Callable, items: list[tuple], seconds: float, least: int = 5) -> np.ndarray:
    for item in items[:: max(1, len(items) // WARM)]:  # compile / load the kernels, untimed
        act(*item)
    out, start = [], time.perf_counter()
    for item in items:
        t = time.perf_counter()
        act(*item)
        out.append(time.perf_counter() - t)
        if len(out) >= least and time.perf_counter() - start >= seconds:
            break
    return np.array(out)


def self_play_row(spec: str, agent, rates: dict) -> Row:
    """Decisions per second of `SELF_PLAY` hands of `agent` in every seat, one batch."""
    state = init(Rules(), SELF_PLAY, np.random.default_rng(1))
    t = time.perf_counter()
    n = play(state, np.zeros((SELF_PLAY, 4), dtype=np.int64), [agent])
    rate = n / (time.perf_counter() - t)
    rates[spec, "self-play"] = rate
    ref = rates.get((REFERENCE, "self-play"))
    return {
        "name": f"{spec}, self-play",
        "batch": SELF_PLAY,
        "rate": rate,
        "unit": "decisions/s",
        "reference": None if spec == REFERENCE else f"{REFERENCE}, self-play",
        "reference_rate": None if spec == REFERENCE else ref,
        "ratio": None if spec == REFERENCE or not ref else rate / ref,
        "decisions": n,
    }


def agents_section(seconds: float, specs: tuple[str, ...] = SPECS) -> list[Row]:
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        items = decisions()
        rates: dict[tuple[str, str], float] = {}
        rows = []
        for spec in (REFERENCE, *[s for s in specs if s != REFERENCE]):
            agent = make_agent(parse_agent(spec), seed=0)
            for kind, its in items.items():
                times = _latency(agent.act, its, seconds / (2 * len(specs)))
                rate = len(times) / times.sum()
                rates[spec, kind] = rate
                ref = rates[REFERENCE, kind]
                rows.append({
                    "name": f"{spec}, {kind[:-1]}",
                    "batch": 1,
                    "rate": rate,
                    "unit": "decisions/s",
                    "reference": None if spec == REFERENCE else f"{REFERENCE}, same decisions",
                    "reference_rate": ref if spec != REFERENCE else None,
                    "ratio": rate / ref if spec != REFERENCE else None,
                    "median_ms": float(np.median(times) * 1e3),
                    "p95_ms": float(np.percentile(times, 95) * 1e3),
                    "decisions": len(times),
                })  # fmt: skip
            rows.append(self_play_row(spec, agent, rates))
        return rows
    finally:
        torch.set_num_threads(threads)


SECTIONS: dict[str, Callable[[float], list[Row]]] = {"agents": agents_section}
