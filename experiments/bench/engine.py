"""The engine's own throughput, the reference rates of `spades bench`'s sections.

`engine_run` (the batched engine, the random choice inside its step or made by the
agent's numpy function) and `single_run` (`SingleGame`) play random legal moves of full
hands and count the decisions; `timed` turns such a run into a rate
(`engine_rate`, `single_rate`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable

import numpy as np

from agents.random_agent import random_legal_actions
from spades_env.engine import reset_done, step, step_random
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import DONE, init

DECISIONS_PER_HAND = 56  # 4 bids + 52 cards (RULES.md §1-§3)


def timed(
    run: Callable[[], int], seconds: float, clock: Callable[[], float] = time.perf_counter
) -> float:
    """Call `run` (returns a count) until `seconds` pass on `clock`; return count per second
    (wall-clock by default, `time.process_time` for the process's CPU time)."""
    run()  # warm-up: first-call costs (tables, caches) are not throughput
    count, start = 0, clock()
    while True:
        count += run()
        elapsed = clock() - start
        if elapsed >= seconds:
            return count / elapsed


def engine_run(
    rules: Rules, batch: int, seed: int = 0, *, agent: bool = False, num_threads: int = 1
) -> Callable[[], int]:
    """A run of random legal play of about one hand in `batch` games (scoring included);
    returns the decisions made. The random choice is made inside the compiled step
    (`step_random`), as OpenSpiel's C++ bots make theirs; with `agent`, it is made in
    numpy (`random_legal_actions`) and passed to `step`, the path of any other agent.
    `num_threads`: the step's threads (`engine.step`)."""
    rng = np.random.default_rng(seed)
    state = init(rules, batch, rng)

    def run() -> int:
        decided = 0
        # Games in play only change when one ends, which the step's record says.
        active = batch - int(np.count_nonzero(state.phase == DONE))
        for _ in range(rules.num_players * (rules.hand_size + 1)):  # about one hand
            if agent:
                acts = random_legal_actions(state.legal, state.phase, rng)
                info = step(state, acts, num_threads=num_threads)
            else:
                info = step_random(state, rng, num_threads)
            decided += active
            if info.finished is not None:
                active -= int(np.count_nonzero(info.finished.game_over))
        reset_done(state, rng)
        return decided

    return run


def engine_rate(
    rules: Rules, batch: int, seconds: float, seed: int = 0, *, agent: bool = True
) -> float:
    """Decisions per second of random legal play of full hands, scoring included; by
    default with the actions made outside the step (`engine_run`), as every agent but the
    random one plays."""
    return timed(engine_run(rules, batch, seed, agent=agent), seconds)


def single_run(rules: Rules, seed: int = 0) -> Callable[[], int]:
    """A run of one hand's worth of random legal play through `SingleGame`, one game at a
    time (the path the PettingZoo env and tree search use)."""
    pick = random.Random(seed)
    game = SingleGame(rules, seed=seed)
    games = iter(range(1, 10**12))

    def run() -> int:
        for _ in range(DECISIONS_PER_HAND):
            game.step(pick.choice(game.legal_list()))
            if game.done:
                game.restart(next(games))
        return DECISIONS_PER_HAND

    return run


def single_rate(rules: Rules, seconds: float, seed: int = 0) -> float:
    """Decisions per second through `SingleGame` (`single_run`)."""
    return timed(single_run(rules, seed), seconds)
