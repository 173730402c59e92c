"""Batched play gives exactly the same hand records as the same games played one at a
time: the games of a batch advance independently, each in its own phase.

The action chooser is a deterministic function of each game's own state (its seed, hand
number and history length), never of a shared random stream, so a game makes the same
choices whatever batch it is in.
"""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.engine import PHASE_BASE, step
from spades_env.records import hand_records
from spades_env.rules import PRESETS, Rules
from spades_env.state import DONE, State, init

MASK64 = (1 << 64) - 1


def mix(x: int) -> int:
    """A 64-bit integer hash (SplitMix64's finaliser), in plain Python."""
    x = (x + 0x9E3779B97F4A7C15) & MASK64
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & MASK64
    return x ^ (x >> 31)


def own_state_chooser(state: State) -> np.ndarray:
    """Per game: the k-th legal action, k a hash of (seed, hand number, history length)."""
    actions = np.zeros(state.batch_size, dtype=np.int64)
    for g in range(state.batch_size):
        if state.phase[g] == DONE:
            continue
        legal = int(state.legal[g])
        bits = [i for i in range(64) if legal >> i & 1]
        key = mix(int(state.seed[g]) ^ mix(int(state.hand_no[g]) << 16 | int(state.history_len[g])))
        actions[g] = PHASE_BASE[state.phase[g]] + bits[key % len(bits)]
    return actions


def play_games(rules: Rules, seeds: list[int]) -> list[list[dict]]:
    """Play the seeded games in one batch to the end; records per game, in order."""
    state = init(rules, len(seeds), seeds=np.array(seeds, dtype=np.uint64))
    records: list[list[dict]] = [[] for _ in seeds]
    while (state.phase != DONE).any():
        info = step(state, own_state_chooser(state))
        if info.finished is not None:
            for g, record in zip(
                info.finished.games, hand_records(rules, info.finished), strict=True
            ):
                records[int(g)].append(record)
    return records


BLIND_EXCHANGE = Rules(
    blind_nil="always", blind_nil_exchange=True, first_lead="two_of_clubs", max_hands=3
)
RULES = [
    pytest.param(Rules(max_hands=4), id="standard-4-hands"),
    pytest.param(Rules(target=200, lose_at=-200), id="target-200-lose-at-minus-200"),
    pytest.param(BLIND_EXCHANGE, id="blind-exchange-2c"),
    pytest.param(Rules(nil_tricks="count", max_total_bid=13, max_hands=3), id="count-max13"),
    # RULES.md §6 auction: a trump-naming phase, games out of phase with each other
    pytest.param(Rules.auction(max_hands=3, blind_nil="always"), id="auction"),
    # RULES.md §6: every other preset, two hands each
    *(
        pytest.param(Rules.preset(name, max_hands=2), id=name)
        for name in PRESETS
        if name not in ("standard", "auction")
    ),
]
SEEDS = [1000 + 37 * i for i in range(12)]


@pytest.mark.parametrize("rules", RULES)
def test_one_batch_equals_games_played_one_at_a_time(rules):
    batched = play_games(rules, SEEDS)
    single = [play_games(rules, [seed])[0] for seed in SEEDS]
    assert all(len(r) >= 1 for r in batched)
    assert batched == single


@pytest.mark.parametrize("rules", RULES)
def test_order_of_games_in_the_batch_does_not_matter(rules):
    batched = play_games(rules, SEEDS)
    reversed_batch = play_games(rules, SEEDS[::-1])
    assert batched == reversed_batch[::-1]


def test_batch_runs_out_of_lockstep():
    # The blind decisions and exchanges put games of one batch in different phases; the
    # equality above covers that path only if it really happens.
    state = init(BLIND_EXCHANGE, len(SEEDS), seeds=np.array(SEEDS, dtype=np.uint64))
    mixed = False
    while (state.phase != DONE).any():
        mixed |= len(set(state.phase.tolist())) > 1
        step(state, own_state_chooser(state))
    assert mixed
