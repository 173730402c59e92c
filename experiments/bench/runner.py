"""`spades bench`: throughput, printed as ratios against a reference measured in the same run.

Absolute rates on shared machines are noisy; the ratio against a reference measured in
the same process is the figure to quote. Each section is a function that returns rows
`{"name", "batch", "rate", "unit", "reference", "ratio"}`; `SECTIONS` lists them.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from experiments.bench import agents as bench_agents
from experiments.bench import dd as bench_dd
from experiments.bench import envs as bench_envs
from experiments.bench import llm as bench_llm
from experiments.bench import search as bench_search
from experiments.bench import training as bench_training
from experiments.bench import web as bench_web
from experiments.bench.engine import (
    DECISIONS_PER_HAND,
    engine_rate,
    engine_run,
    single_run,
    timed,
)
from spades_env.rules import PRESETS, Rules

Row = dict[str, Any]


def openspiel_bots_run(seed: int = 0) -> Callable[[], int] | None:
    """OpenSpiel `spades` with its C++ uniform-random bots via `evaluate_bots` (50 hands a
    run), or None without pyspiel (the `bench` extra)."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    bots = [pyspiel.make_uniform_random_bot(p, seed + p) for p in range(4)]
    counter = iter(range(10**12))

    def run() -> int:
        for _ in range(50):
            pyspiel.evaluate_bots(game.new_initial_state(), bots, next(counter))
        return 50 * DECISIONS_PER_HAND  # OpenSpiel's game is one hand: 56 decisions

    return run


def openspiel_loop_run(seed: int = 0) -> Callable[[], int] | None:
    """OpenSpiel `spades` stepped from Python, a uniformly random legal action each
    decision (one hand a run: the deal's chance nodes are not counted), or None."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = random.Random(seed)

    def run() -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                state.apply_action(rng.choice(state.chance_outcomes())[0])
            else:
                state.apply_action(rng.choice(state.legal_actions()))
                decisions += 1
        return decisions

    return run


def openspiel_rate(seconds: float, seed: int = 0) -> float | None:
    """Decisions per second of `openspiel_bots_run`, or None without pyspiel."""
    run = openspiel_bots_run(seed)
    return None if run is None else timed(run, seconds)


def engine_section(seconds: float, batches: tuple[int, ...] = (1, 64, 1024, 8192)) -> list[Row]:
    """The batched engine at several batch sizes against OpenSpiel's C++ random bots (the
    random choice inside the step, `engine.step_random`; at 8192 also on two threads; at
    64 and 8192 also made outside and passed to `step`), and `SingleGame` against
    OpenSpiel stepped from Python, all measured in turns (`envs._rates`) so a passing load
    weighs on every figure alike."""
    runs = {f"engine {b}": engine_run(Rules(), b) for b in batches}
    agent_batches = tuple(b for b in batches if b in (64, 8192))
    runs.update({f"agent {b}": engine_run(Rules(), b, agent=True) for b in agent_batches})
    threaded = tuple(b for b in batches if b >= 8192)  # two threads: N=8192 (`step`)
    runs.update({f"threads {b}": engine_run(Rules(), b, num_threads=2) for b in threaded})
    runs["single"] = single_run(Rules())
    bots, loop = openspiel_bots_run(), openspiel_loop_run()
    if bots is not None and loop is not None:
        runs["openspiel bots"], runs["openspiel loop"] = bots, loop
    rates = bench_envs._rates(runs, seconds)
    ref_bots, ref_loop = rates.get("openspiel bots"), rates.get("openspiel loop")

    def row(name: str, batch: int, rate: float, ref: str, ref_rate: float | None) -> Row:
        return {
            "name": name,
            "batch": batch,
            "rate": rate,
            "unit": "decisions/s",
            "reference": ref if ref_rate else None,
            "reference_rate": ref_rate,
            "ratio": rate / ref_rate if ref_rate else None,
        }

    bots_name = "OpenSpiel spades, C++ random bots"
    loop_name = "OpenSpiel spades, Python loop of random legal actions"
    rows = [
        row("engine random play (standard)", b, rates[f"engine {b}"], bots_name, ref_bots)
        for b in batches
    ]
    rows += [
        row("engine random play, 2 threads", b, rates[f"threads {b}"], bots_name, ref_bots)
        for b in threaded
    ]
    rows += [
        row("engine + agent's actions (standard)", b, rates[f"agent {b}"], bots_name, ref_bots)
        for b in agent_batches
    ]
    rows.append(row("single-game path (SingleGame)", 1, rates["single"], loop_name, ref_loop))
    rows.append(row("single-game path (SingleGame)", 1, rates["single"], bots_name, ref_bots))
    return rows


def presets_section(seconds: float, batch: int = 1024) -> list[Row]:
    """Every implemented RULES.md §6 preset at one batch size, as a ratio to `standard`
    measured in the same run (variants cost only their masks, not another engine)."""
    reference = engine_rate(Rules(), batch, seconds)
    rows = []
    for name in PRESETS:
        rate = reference if name == "standard" else engine_rate(Rules.preset(name), batch, seconds)
        rows.append(
            {
                "name": f"engine random play ({name})",
                "batch": batch,
                "rate": rate,
                "unit": "decisions/s",
                "reference": "the standard preset, same batch",
                "reference_rate": reference,
                "ratio": rate / reference,
            }
        )
    return rows


SECTIONS: dict[str, Callable[[float], list[Row]]] = {
    "engine": engine_section,
    "presets": presets_section,
}
SECTIONS.update(bench_envs.SECTIONS)  # aec, vector: the environments
SECTIONS.update(bench_search.SECTIONS)  # search: the double-dummy solver and the Monte Carlo agents
SECTIONS.update(bench_dd.SECTIONS)  # dd: the solver on fresh seeded deals, worst case included
SECTIONS.update(bench_training.SECTIONS)  # training: PPO, learner included
SECTIONS.update(bench_agents.SECTIONS)  # agents: whole agents' decision latency
SECTIONS.update(bench_web.SECTIONS)  # web: spades serve's page load, round trips, tables held
SECTIONS.update(bench_llm.SECTIONS)  # llm: the prompt's tokens per decision, the answer reader


def run_bench(
    sections: list[str] | None, seconds: float, deals: int = bench_dd.DEFAULT_DEALS
) -> list[Row]:
    """The rows of `sections` (default: all); `deals` sets the work of the `dd` section."""
    rows: list[Row] = []
    for name in sections or list(SECTIONS):
        if name == "dd":
            rows.extend(bench_dd.dd_section(seconds, deals=deals))
        else:
            rows.extend(SECTIONS[name](seconds))
    return rows


def format_rows(rows: list[Row]) -> str:
    lines = [f"{'benchmark':<40} {'batch':>6} {'rate':>14} {'reference':>14} {'ratio':>8}"]
    for r in rows:
        ref = f"{r['reference_rate']:,.0f}" if r.get("reference_rate") else "n/a"
        ratio = f"{r['ratio']:.2f}x" if r.get("ratio") else "n/a"
        lines.append(f"{r['name']:<40} {r['batch']:>6} {r['rate']:>14,.0f} {ref:>14} {ratio:>8}")
        if "worst_seed" in r:
            lines.append(bench_dd.detail(r))
        if r["name"].startswith("web: "):
            lines.append(bench_web.detail(r))
        if r["name"].startswith("llm: "):
            lines.append(bench_llm.detail(r))
    refs = sorted({r["reference"] for r in rows if r.get("reference")})
    for ref in refs:
        lines.append(f"reference: {ref}")
    if any(r.get("ratio") is None for r in rows):
        lines.append("(ratios need the reference packages: pip install -e '.[bench]')")
    return "\n".join(lines)


def to_json(rows: list[Row]) -> str:
    return json.dumps(rows, indent=2)
