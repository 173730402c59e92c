"""`spades bench` sections for the environments, each against a reference run here.

- `aec`: PettingZoo AEC env turns/s, one game at a time, with the standard wrappers, played
  the way PettingZoo's `performance_benchmark` plays (random masked actions, `agent_iter`,
  reset when all are done). References: PettingZoo's `leduc_holdem_v4` and
  `texas_holdem_v4` measured the same way (the `classic` extra); the ratio is against the
  faster of the two.
- `vector`: native vector env steps/s at N=4096: the time of `env.step(actions)`, which
  returns the learner's observations and masks (the opponents' moves run inside the
  step), the actions chosen from the last returned mask outside the timed call; with
  the default int16 observation and with `obs_format="bits"` (obs_bits.py), on one
  thread and on two (`num_threads=2`: half the sub-envs each; a machine whose cores are
  busy shows no gain). Reference: an OpenSpiel Python loop over `spades` that reads
  `observation_tensor` before every decision (the `bench` extra), on one thread.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np
import pettingzoo

Row = dict[str, Any]
VECTOR_ENVS = 4096


Run = Callable[[], int | tuple[int, float]]


def _rates(runs: dict[str, Run], seconds: float) -> dict[str, float]:
    """Count per second of each `run`, over `seconds` each. A run returns its count (the
    whole call is timed) or (count, seconds the measured part took), when it also does
    work that is not measured (choosing the next actions).

    The candidates take turns in short slices, so a load that comes and goes on a shared
    machine weighs on all of them alike and the ratios stay meaningful.
    """
    for run in runs.values():
        run()  # warm-up: first-call costs are not throughput
    counts = dict.fromkeys(runs, 0)
    spent = dict.fromkeys(runs, 0.0)
    slice_s = min(0.25, seconds)
    while min(spent.values()) < seconds:
        for name, run in runs.items():
            start = time.perf_counter()
            measured = 0.0
            while time.perf_counter() - start < slice_s:
                got = run()
                if isinstance(got, tuple):
                    counts[name] += got[0]
                    measured += got[1]
                else:
                    counts[name] += got
                    measured = -1.0  # the whole slice
            spent[name] += time.perf_counter() - start if measured < 0 else measured
    return {name: counts[name] / spent[name] for name in runs}


def aec_turns(make_env: Callable[[], Any], seed: int = 0) -> Callable[[], int]:
    """A run of random masked turns, played as PettingZoo's `performance_benchmark` plays."""
    env = make_env()
    env.reset(seed=seed)
    rng = random.Random(seed)

    def run() -> int:
        turns = 0
        for _ in range(10):
            for _agent in env.agent_iter(env.num_agents):
                obs, _, term, trunc, _ = env.last()
                if term or trunc:
                    action = None
                else:
                    action = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
                env.step(action)
                turns += 1
                if all(env.terminations.values()) or all(env.truncations.values()):
                    env.reset()
        return turns

    return run


def aec_section(seconds: float) -> list[Row]:
    from spades_env import spades_v0

    runs = {
        "PettingZoo AEC env, standard wrappers": aec_turns(spades_v0.env),
        "PettingZoo AEC env, raw (no wrappers)": aec_turns(spades_v0.raw_env),
    }
    references = []
    for ref_name in ("leduc_holdem_v4", "texas_holdem_v4"):
        try:  # the classic extra (rlcard); the same env() as pettingzoo.classic's module
            pettingzoo.make("aec", f"classic/{ref_name}").close()
        except Exception:
            continue
        references.append(f"  PettingZoo {ref_name}")
        runs[references[-1]] = aec_turns(partial(pettingzoo.make, "aec", f"classic/{ref_name}"))
    rates = _rates(runs, seconds)
    best = max(references, key=lambda k: rates[k]) if references else None
    ref_rate = rates[best] if best else None
    return [
        {
            "name": name,
            "batch": 1,
            "rate": rate,
            "unit": "turns/s",
            "reference": f"{best.strip()}, the faster classic env" if best else None,
            "reference_rate": ref_rate,
            "ratio": rate / ref_rate if ref_rate else None,
        }
        for name, rate in rates.items()
    ]


def vector_steps(
    num_envs: int, seed: int = 0, obs_format: str = "int16", num_threads: int = 1
) -> Callable[[], tuple[int, float]]:
    """A run of one native vector env step: the time of `env.step(actions)` alone, the
    call a user makes, which returns the observations and the masks. The actions are
    uniformly random among the legal ones of the mask the last step returned, chosen
    outside the timed call (the learner's choice, not the env's work)."""
    from spades_env.vector_env import SpadesVectorEnv

    env = SpadesVectorEnv(num_envs, obs_format=obs_format, num_threads=num_threads)
    _, info = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    mask = info["action_mask"]

    def run() -> tuple[int, float]:
        nonlocal mask
        # the k-th legal action, k uniform below the count (ended sub-envs: all-0 mask, 0)
        ranks = np.cumsum(mask, axis=1, dtype=np.int8)
        k = (rng.random(num_envs) * ranks[:, -1]).astype(np.int8)
        actions = (ranks > k[:, None]).argmax(axis=1)
        start = time.perf_counter()
        _, _, _, _, info = env.step(actions)
        spent = time.perf_counter() - start
        mask = info["action_mask"]
        return num_envs, spent

    return run


def openspiel_observed_hand() -> Callable[[], int] | None:
    """A run of one OpenSpiel `spades` hand in Python, reading `observation_tensor` at
    every decision; None without pyspiel (the `bench` extra)."""
    try:
        import pyspiel
    except ImportError:
        return None
    game = pyspiel.load_game("spades")
    rng = random.Random(0)

    def run() -> int:
        state = game.new_initial_state()
        decisions = 0
        while not state.is_terminal():
            if state.is_chance_node():
                action = rng.choice(state.chance_outcomes())[0]
            else:
                state.observation_tensor()
                action = rng.choice(state.legal_actions())
                decisions += 1
            state.apply_action(action)
        return decisions

    return run


VECTOR_ROWS = {  # name: obs_format, threads
    "vector env, obs + masks": ("int16", 1),
    "vector env, packed obs (bits) + masks": ("bits", 1),
    "vector env, obs + masks, 2 threads": ("int16", 2),
    "vector env, packed obs (bits) + masks, 2 threads": ("bits", 2),
}


def vector_section(seconds: float) -> list[Row]:
    runs = {
        name: vector_steps(VECTOR_ENVS, obs_format=fmt, num_threads=threads)
        for name, (fmt, threads) in VECTOR_ROWS.items()
    }
    reference = openspiel_observed_hand()
    if reference is not None:
        runs["openspiel"] = reference
    rates = _rates(runs, seconds)
    ref_rate = rates.get("openspiel")
    return [
        {
            "name": name,
            "batch": VECTOR_ENVS,
            "rate": rates[name],
            "unit": "env steps/s",
            "reference": (
                "OpenSpiel spades, Python loop reading observation_tensor every step"
                if ref_rate
                else None
            ),
            "reference_rate": ref_rate,
            "ratio": rates[name] / ref_rate if ref_rate else None,
        }
        for name in VECTOR_ROWS
    ]


SECTIONS: dict[str, Callable[[float], list[Row]]] = {"aec": aec_section, "vector": vector_section}
