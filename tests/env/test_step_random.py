"""`engine.step_random`: the random agent's choice made inside the compiled step. It is
the engine's step with the actions it drew, state for state, on every preset; a seeded
generator replays it; its draws are uniform over the legal actions."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.engine import (
    HISTORY_SEAT_SHIFT,
    PHASE_BASE,
    NoLegalActionError,
    reset_done,
    step,
    step_random,
)
from spades_env.rules import PRESETS, Rules
from spades_env.state import DONE, PLAY, init

_ACTION = (1 << HISTORY_SEAT_SHIFT) - 1


def taken_actions(state, info) -> np.ndarray:
    """The action each game took in the step that gave `info`, read from the history (the
    finished hand's record where the hand ended in that step)."""
    acts = state.history[np.arange(state.batch_size), state.history_len - 1] & _ACTION
    if info.finished is not None:
        fin = info.finished
        acts[fin.games] = fin.history[np.arange(fin.games.size), fin.history_len - 1] & _ACTION
    return acts.astype(np.int64)


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_step_random_is_step_with_the_actions_it_drew(name: str) -> None:
    rules = Rules.preset(name)
    drawn = init(rules, 24, np.random.default_rng(5))
    stepped = drawn.copy()
    rng, reset_a, reset_b = (np.random.default_rng(k) for k in (6, 7, 7))
    for _ in range(3 * max(60, rules.num_players * (rules.hand_size + 4))):
        live = drawn.phase != DONE
        info = step_random(drawn, rng)
        acts = np.where(live, taken_actions(drawn, info), 0)
        ref = step(stepped, acts)
        assert np.array_equal(drawn.buffer, stepped.buffer)
        assert np.array_equal(info.hand_over, ref.hand_over)
        assert np.array_equal(info.hand_points, ref.hand_points)
        assert not info.illegal.any()
        if info.finished is not None:
            assert np.array_equal(info.finished.games, ref.finished.games)
            assert np.array_equal(info.finished.history, ref.finished.history)
        reset_done(drawn, reset_a)
        reset_done(stepped, reset_b)


def test_a_seeded_generator_replays_the_same_games() -> None:
    states = [init(Rules(), 16, np.random.default_rng(1)) for _ in range(2)]
    for state in states:
        rng = np.random.default_rng(2)
        for _ in range(120):
            step_random(state, rng)
    assert np.array_equal(states[0].buffer, states[1].buffer)


def test_draws_are_uniform_over_the_legal_actions() -> None:
    one = init(Rules(), 1, seeds=np.array([11], dtype=np.uint64))
    while one.phase[0] != PLAY or one.trick_size[0] != 0:
        step(one, np.array([PHASE_BASE[one.phase[0]] + int(one.legal[0]).bit_length() - 1]))
    n = 20_000
    state = one.take(np.zeros(n, dtype=np.int64))
    legal = [c for c in range(64) if int(one.legal[0]) >> c & 1]
    step_random(state, np.random.default_rng(3))
    counts = np.bincount(state.trick[np.arange(n), one.to_act[0]], minlength=64)
    assert set(np.flatnonzero(counts)) == set(legal)
    expected = n / len(legal)
    assert np.all(np.abs(counts[legal] - expected) < 5 * np.sqrt(expected))


def test_a_game_with_no_legal_action_is_named_and_the_others_step() -> None:
    state = init(Rules(), 4, np.random.default_rng(0))
    state.legal[2] = 0
    before = state.buffer.copy()
    with pytest.raises(NoLegalActionError, match=r"games \[2\]") as err:
        step_random(state, np.random.default_rng(1))
    assert np.array_equal(state.buffer[2], before[2])
    assert (state.history_len[[0, 1, 3]] == 1).all()
    assert err.value.info.hand_over.shape == (4,)


def _hands_of(state, rng, hands: int) -> list:
    """The records of the next `hands` steps in which hands ended."""
    out = []
    while len(out) < hands:
        info = step_random(state, rng)
        if info.finished is not None:
            out.append(info.finished)
    return out


@pytest.mark.parametrize("games", [1, 9])
def test_a_kept_record_outlives_the_next_hands(games: int) -> None:
    # Games dealt together end their hands in the same step (no blind-nil decision to
    # put them out of step), whose saved rows are then handed over whole: a record still
    # held must not be written over by the later hands.
    fields = ("games", "deal", "history", "bids", "tricks", "points", "scores", "bags")
    rules = Rules(blind_nil="never")
    read_now, read_later = (init(rules, games, seeds=np.arange(games)) for _ in range(2))
    first = _hands_of(read_now, np.random.default_rng(3), 1)[0]
    expected = {f: getattr(first, f).copy() for f in fields}
    kept, *later = _hands_of(read_later, np.random.default_rng(3), 3)
    assert all(r.games.size == games for r in later)
    for f in fields:
        assert (getattr(kept, f) == expected[f]).all(), f
    assert not (later[-1].deal == kept.deal).all()
