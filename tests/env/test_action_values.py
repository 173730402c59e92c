"""Numbers that are not actions or positions are refused, never truncated or wrapped.

An action is an integer; a float holding a whole number is that integer (cards.py). A
starting position (`scores`, `bags`, `dealer`) must fit its integer type.
"""

from __future__ import annotations

import numpy as np
import pytest

from spades_env import engine, spades_v0
from spades_env.cards import ActionValueError, action_array, action_index, bid_action
from spades_env.gym_env import SpadesEnv
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import DealError, init
from spades_env.vector_env import SpadesVectorEnv

NOT_WHOLE = [54.7, float("nan"), float("inf"), -0.5]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(54, 54), (np.int8(54), 54), (np.uint64(54), 54), (54.0, 54), (np.float32(72.0), 72)],
)
def test_integers_and_whole_floats_are_actions(value, expected):
    assert action_index(value) == expected
    assert action_array(np.array([value, value])).tolist() == [expected, expected]


@pytest.mark.parametrize("value", [*NOT_WHOLE, "54", None])
def test_anything_else_is_refused(value):
    with pytest.raises(ActionValueError, match="integer"):
        action_index(value)


def test_a_float_bid_is_refused_by_the_engine_not_played_as_nil():
    state = init(Rules(), 2, seeds=[1, 2])
    before = state.history_len.copy()
    with pytest.raises(ActionValueError, match=r"54\.7 \(index 1\)"):
        engine.step(state, np.array([55.0, 54.7]))
    assert (state.history_len == before).all()  # nothing applied


def _first_bid_game() -> SingleGame:
    game = SingleGame(Rules(blind_nil="never"), seed=3)
    assert game.legal_mask()[bid_action(0)]
    return game


@pytest.mark.parametrize("value", NOT_WHOLE)
def test_single_game_refuses_a_float_that_is_not_whole(value):
    game = _first_bid_game()
    with pytest.raises(ActionValueError):
        game.step(value)
    assert game.history_len == 0


def test_single_game_takes_a_whole_float_as_its_integer():
    a, b = _first_bid_game(), _first_bid_game()
    a.step(float(bid_action(3)))
    b.step(bid_action(3))
    assert a.bids == b.bids and a.history_len == b.history_len == 1


def test_raw_env_refuses_a_float_action():
    env = spades_v0.raw_env(rules=Rules(blind_nil="never"))
    env.reset(seed=0)
    with pytest.raises(ActionValueError, match=r"54\.7"):
        env.step(54.7)


def test_gym_env_refuses_a_float_action():
    env = SpadesEnv(rules=Rules(blind_nil="never"))
    env.reset(seed=0)
    with pytest.raises(ActionValueError, match=r"54\.7"):
        env.step(54.7)


def test_vector_env_refuses_a_float_action():
    env = SpadesVectorEnv(2, rules=Rules(blind_nil="never"))
    env.reset(seed=0)
    with pytest.raises(ActionValueError, match=r"54\.7"):
        env.step(np.array([54.0, 54.7]))


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("scores", [1e20, 0]),
        ("scores", [float("nan"), 0]),
        ("bags", [2**40, 0]),
        ("scores", [10.5, 0]),
        ("dealer", 300),
        ("scores", ["a", "b"]),
    ],
)
def test_a_position_that_does_not_fit_is_refused(key, value):
    with pytest.raises(DealError, match=key):
        SingleGame(Rules(), seed=1, **{key: value})
    with pytest.raises(DealError, match=key):
        init(Rules(), 2, seeds=[1, 2], **{key: value})


def test_reset_options_with_a_huge_score_are_refused_by_the_envs():
    env = SpadesEnv()
    with pytest.raises(DealError, match="scores"):
        env.reset(seed=0, options={"scores": [1e20, 0]})
    vec = SpadesVectorEnv(2)
    with pytest.raises(DealError, match="scores"):
        vec.reset(seed=0, options={"scores": [float("nan"), 0]})


def test_whole_float_scores_are_taken_as_integers():
    game = SingleGame(Rules(), seed=1, scores=[120.0, -40.0])
    assert game.scores == [120, -40]
