"""The packed observation (`obs_format="bits"`): it unpacks to the default encoding exactly."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import spades_env  # noqa: F401 (registers the envs)
from spades_env.engine import random_legal_actions, step
from spades_env.gym_env import SpadesEnv
from spades_env.obs_bits import bits_layout, bits_size, encode_bits, unpack_bits
from spades_env.observation import encode, obs_size
from spades_env.rules import PRESETS, Rules
from spades_env.state import init
from spades_env.vector_env import SpadesVectorEnv

RULES = {name: Rules.preset(name) for name in PRESETS} | {
    "open_hands": Rules(open_hands=True, blind_nil="never"),
    "blind_exchange_two_clubs": Rules(
        blind_nil="always", blind_nil_exchange=True, first_lead="two_of_clubs"
    ),
    "auction_exchange": Rules.auction(blind_nil="always", blind_nil_exchange=True),
}


def random_states(rules: Rules, games: int, steps: int, seed: int):
    """States of random play from scores far apart (blind nil offered, int16 clipping)."""
    rng = np.random.default_rng(seed)
    t = rules.num_teams
    scores = rng.integers(-40_000, 40_000, size=(games, t))
    scores[: games // 2] = rng.integers(-300, 400, size=(games // 2, t))
    bags = rng.integers(0, 12, size=(games, t))
    state = init(rules, games, rng, scores=scores, bags=bags)
    for _ in range(steps):
        yield state, rng
        step(state, random_legal_actions(state.legal, state.phase, rng))


@pytest.mark.parametrize("name", list(RULES))
def test_unpacked_bits_equal_the_default_encoding_on_every_preset(name):
    rules = RULES[name]
    n = 0
    for state, rng in random_states(rules, 48, 2 * rules.num_players * (rules.hand_size + 3), 5):
        for seats in (None, rng.integers(0, rules.num_players, size=state.batch_size)):
            bits = encode_bits(state, seats)
            assert bits.dtype == np.uint8 and bits.shape == (state.batch_size, bits_size(rules))
            np.testing.assert_array_equal(unpack_bits(bits, rules), encode(state, seats))
            n += 1
    assert n > 100


def test_the_standard_row_is_a_tenth_of_the_int16_encoding():
    rules = Rules()
    assert bits_size(rules) == 160 and obs_size(rules) * 2 == 1550
    assert bits_layout(rules).planes == 4  # tricks 1..13


@pytest.mark.parametrize("name", ["standard", "cutthroat_5", "two_player", "auction_exchange"])
def test_torch_unpacking_gives_the_encoding_as_floats(name):
    torch = pytest.importorskip("torch")
    from spades_env.obs_bits import unpack_bits_torch

    rules = RULES[name]
    for k, (state, _) in enumerate(random_states(rules, 16, 60, 9)):
        if k % 7:
            continue
        bits = encode_bits(state)
        out = unpack_bits_torch(torch.from_numpy(bits), rules)
        assert out.dtype == torch.float32
        np.testing.assert_array_equal(out.numpy(), encode(state).astype(np.float32))
        as_int = unpack_bits_torch(bits, rules, dtype=torch.int16)
        np.testing.assert_array_equal(as_int.numpy(), encode(state))


def test_unpacking_refuses_rows_of_other_rules():
    bits = encode_bits(init(Rules.preset("two_player"), 2, np.random.default_rng(0)))
    with pytest.raises(ValueError, match=r"\(N, 160\) uint8"):
        unpack_bits(bits, Rules())


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"seats": (1, 3), "episode": "game", "rules": Rules(target=200)},
     {"rules": Rules.preset("cutthroat_5")}, {"rules": Rules.preset("two_player")}],
    ids=["standard", "partnership-game", "cutthroat_5", "two_player"],
)  # fmt: skip
def test_packed_vector_env_steps_unpack_to_the_int16_vector_env(kwargs):
    # Same games, same actions: the packed env's observations unpack to the default
    # env's, step for step, and an observation handed out never changes afterwards.
    a = SpadesVectorEnv(8, **kwargs)
    b = SpadesVectorEnv(8, obs_format="bits", **kwargs)
    assert b.single_observation_space.shape == (bits_size(a.rules),)
    assert b.single_observation_space.dtype == np.uint8
    oa, ia = a.reset(seed=4)
    ob, ib = b.reset(seed=4)
    rng = np.random.default_rng(0)
    kept = []
    for t in range(200):
        np.testing.assert_array_equal(unpack_bits(ob, a.rules), oa, err_msg=f"step {t}")
        np.testing.assert_array_equal(ia["action_mask"], ib["action_mask"])
        kept.append((ob, ob.copy()))
        mask = ia["action_mask"]
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)
        if t % 37 == 36:
            actions[t % 8] = 0  # often illegal: the episode ends there
        oa, ra, ta, ua, ia = a.step(actions)
        ob, rb, tb, ub, ib = b.step(actions)
        np.testing.assert_array_equal(ra, rb)
        np.testing.assert_array_equal(ta | ua, tb | ub)
    assert all(np.array_equal(obs, copy) for obs, copy in kept)


def test_the_single_env_and_make_vec_take_obs_format():
    env = gym.make("spades_env/Spades-v0", obs_format="bits")
    plain = SpadesEnv()
    obs, info = env.reset(seed=2)
    ref, _ = plain.reset(seed=2)
    rng = np.random.default_rng(1)
    for _ in range(20):
        assert env.observation_space.contains(obs)
        np.testing.assert_array_equal(unpack_bits(obs[None], plain.rules)[0], ref)
        action = rng.choice(np.flatnonzero(info["action_mask"]))
        obs, _, term, trunc, info = env.step(action)
        ref, *_ = plain.step(action)
        if term or trunc:
            break
    venv = gym.make_vec(
        "spades_env/Spades-v0", num_envs=3, vectorization_mode="vector_entry_point",
        obs_format="bits",
    )  # fmt: skip
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (3, 160) and obs.dtype == np.uint8


@pytest.mark.parametrize("env_class", [SpadesEnv, SpadesVectorEnv])
def test_an_unknown_obs_format_is_refused(env_class):
    with pytest.raises(ValueError, match="obs_format must be one of int16, bits; got 'float'"):
        env_class(obs_format="float")
