"""`engine.step` and `engine.step_random` with `num_threads`: ranges of games stepped at
once on several threads give exactly the single-thread results (states, infos, records),
an illegal action still changes nothing, and a bad thread count is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.engine import (
    MIN_RANGE,
    IllegalActionError,
    random_legal_actions,
    reset_done,
    step,
    step_random,
)
from spades_env.rules import Rules
from spades_env.state import init

GAMES = 2 * MIN_RANGE + 37  # two threads' ranges, unequal


def _same_info(one, many) -> None:
    assert (one.hand_over == many.hand_over).all()
    assert (one.hand_points == many.hand_points).all()
    assert (one.illegal == many.illegal).all()
    assert (one.finished is None) == (many.finished is None)
    if one.finished is not None:
        for field in ("games", "history", "deal", "bids", "points", "winner", "scores"):
            assert (getattr(one.finished, field) == getattr(many.finished, field)).all()


@pytest.mark.parametrize("name", ["standard", "cutthroat_3", "auction"])
@pytest.mark.parametrize("threads", [2, 3])
def test_step_random_on_threads_is_the_single_thread_step(name: str, threads: int) -> None:
    rules = Rules.preset(name)
    one = init(rules, GAMES, np.random.default_rng(1))
    many = one.copy()
    rng_one, rng_many = np.random.default_rng(2), np.random.default_rng(2)
    for _ in range(4 * rules.num_players * (rules.hand_size + 2)):
        _same_info(step_random(one, rng_one), step_random(many, rng_many, threads))
        assert (one.buffer == many.buffer).all()
        reset_done(one, rng_one)
        reset_done(many, rng_many)


@pytest.mark.parametrize("on_illegal", ["raise", "report"])
def test_step_on_threads_is_the_single_thread_step(on_illegal: str) -> None:
    one = init(Rules(), GAMES, np.random.default_rng(3))
    many = one.copy()
    rng = np.random.default_rng(4)
    for _ in range(2 * 56):
        acts = random_legal_actions(one.legal, one.phase, rng)
        if on_illegal == "report":
            acts[::7] = 0  # some refused (the 2C is rarely legal), each left as it was
        _same_info(step(one, acts, on_illegal), step(many, acts, on_illegal, num_threads=2))
        assert (one.buffer == many.buffer).all()


def test_an_illegal_action_on_a_later_thread_changes_no_game() -> None:
    state = init(Rules(), GAMES, np.random.default_rng(5))
    acts = random_legal_actions(state.legal, state.phase, np.random.default_rng(6))
    bad = GAMES - 3  # in the second range
    acts[bad] = 200  # no action at all
    before = state.buffer.copy()
    with pytest.raises(IllegalActionError) as err:
        step(state, acts, num_threads=2)
    assert err.value.game == bad
    assert (state.buffer == before).all()


@pytest.mark.parametrize("bad", [0, -2, 1.5, "2", None])
def test_a_bad_thread_count_is_refused_in_one_line(bad) -> None:
    state = init(Rules(), GAMES, np.random.default_rng(7))
    before = state.buffer.copy()
    with pytest.raises(ValueError, match="num_threads") as err:
        step_random(state, np.random.default_rng(8), bad)
    assert "\n" not in str(err.value)
    assert (state.buffer == before).all()
