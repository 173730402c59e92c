"""The single-seat Gymnasium env `spades_env/Spades-v0`: `check_env`, masks, illegal actions."""

from __future__ import annotations

import json

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import spades_env  # noqa: F401 (registers the envs)
from spades_env.cards import BID_BASE, NUM_ACTIONS
from spades_env.engine import legal_action_mask, random_legal_actions, step
from spades_env.env_common import (
    DEFAULT_ILLEGAL_REWARD,
    keyed_uniform,
    keyed_uniform_one,
    new_single_game,
    random_opponent_action_one,
    random_opponent_actions,
)
from spades_env.gym_env import SpadesEnv
from spades_env.observation import encode
from spades_env.records import replay
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import State, init


class FirstLegal:
    """A deterministic opponent: the lowest legal action. Counts its calls."""

    name = "first"
    needs_obs = False

    def __init__(self) -> None:
        self.calls = 0

    def act(self, view, obs, mask):
        self.calls += 1
        return mask.argmax(axis=1)


def play(env: SpadesEnv, seed: int, rng: np.random.Generator):
    """Masked random play of one episode; return (return, last info, steps)."""
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        assert env.observation_space.contains(obs)
        action = int(rng.choice(np.flatnonzero(info["action_mask"])))
        obs, reward, terminated, truncated, info = env.step(action)
        total += reward
        steps += 1
        if terminated or truncated:
            return total, info, steps


@pytest.mark.parametrize(
    "kwargs",
    [{}, {"seats": (1, 3)}, {"episode": "game", "hand_limit": 2}, {"render_mode": "ansi"}],
    ids=["default", "partnership", "game", "ansi"],
)
def test_check_env_passes(kwargs):
    check_env(SpadesEnv(**kwargs), skip_render_check=True)


def test_check_env_passes_through_gymnasium_make_with_every_render_mode():
    pytest.importorskip("pygame")  # the render extra: render_mode="human" is checked too
    env = gym.make("spades_env/Spades-v0")
    assert env.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    check_env(env.unwrapped)  # the spec is there: an env per render mode is checked too


def test_action_masks_match_the_info_and_the_engine():
    env = SpadesEnv()
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(20):
        mask = env.action_masks()
        assert mask.dtype == bool and mask.shape == (NUM_ACTIONS,)  # sb3-contrib's bool
        assert info["action_mask"].dtype == np.int8  # as PettingZoo's and Gymnasium's masks
        np.testing.assert_array_equal(mask, info["action_mask"])
        assert env.action_space.sample(info["action_mask"]) in np.flatnonzero(mask)
        state = env.game.state
        np.testing.assert_array_equal(mask, legal_action_mask(state)[0])
        np.testing.assert_array_equal(obs, encode(state, np.array([info["seat"]]))[0])
        obs, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if term or trunc:
            break


def test_an_illegal_action_is_penalised_and_ends_the_episode():
    env = SpadesEnv()
    obs, info = env.reset(seed=1)
    illegal = int(np.flatnonzero(info["action_mask"] == 0)[0])
    before = env.game.state
    obs2, reward, terminated, truncated, info2 = env.step(illegal)
    assert reward == DEFAULT_ILLEGAL_REWARD and terminated and not truncated
    assert info2["illegal"] and not info2["action_mask"].any()
    np.testing.assert_array_equal(obs, obs2)  # the game did not move
    np.testing.assert_array_equal(before.history, env.game.state.history)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


@pytest.mark.parametrize("action", [-1, NUM_ACTIONS, 10**6])
def test_an_action_outside_the_space_counts_as_illegal(action):
    env = SpadesEnv(illegal_reward=-5.0)
    env.reset(seed=0)
    _, reward, terminated, _, info = env.step(action)
    assert reward == -5.0 and terminated and info["illegal"]


@pytest.mark.parametrize("seats", [0, 3, (0, 2), (3, 1)])
def test_the_learner_acts_only_in_its_seats(seats):
    env = SpadesEnv(seats=seats)
    mine = {seats} if isinstance(seats, int) else set(seats)
    _, info = env.reset(seed=2)
    rng = np.random.default_rng(2)
    seen = set()
    while True:
        assert env.game.to_act == info["seat"] and info["seat"] in mine
        seen.add(info["seat"])
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        if term or trunc:
            break
    assert seen == mine


@pytest.mark.parametrize("seats", [(0, 1), (0, 2, 1), (4,), ()])
def test_seats_must_be_one_seat_or_one_partnership(seats):
    with pytest.raises(ValueError, match=r"seat|partner"):
        SpadesEnv(seats=seats)


def test_hand_rewards_are_the_learner_teams_hand_score():
    env = SpadesEnv(seats=1)
    rng = np.random.default_rng(3)
    for seed in range(30):
        total, info, _ = play(env, seed, rng)
        assert total == info["hand_score"][1]
        assert info["record"]["tricks"] == info["tricks"]


def test_zero_sum_subtracts_the_other_team():
    env = SpadesEnv(zero_sum=True)
    rng = np.random.default_rng(4)
    for seed in range(10):
        total, info, _ = play(env, seed, rng)
        assert total == info["hand_score"][0] - info["hand_score"][1]


def test_game_episodes_end_at_the_target_or_the_hand_limit():
    env = SpadesEnv(episode="game", hand_limit=3, rules=Rules(target=100))
    rng = np.random.default_rng(5)
    for seed in range(8):
        total, info, _ = play(env, seed, rng)
        assert info["game_over"] or info["hand_no"] == 2
        assert total == info["scores"][0]


def test_opponent_agents_play_the_other_seats():
    first = FirstLegal()
    env = SpadesEnv(opponents=first)
    _, info = env.reset(seed=6)
    env.step(int(np.flatnonzero(info["action_mask"])[0]))
    assert first.calls > 0
    bids = env.game.bids
    assert all(b in (-1, 0) for s, b in enumerate(bids) if s != 0)  # the lowest bid is nil


def test_opponents_by_seat_mapping_leaves_the_rest_random():
    first = FirstLegal()
    env = SpadesEnv(opponents={2: first})
    rng = np.random.default_rng(7)
    play(env, 0, rng)
    assert first.calls >= 13  # partner's bid and its 13 cards


def test_reset_options_start_from_the_given_position():
    env = SpadesEnv(episode="game")
    _, info = env.reset(seed=0, options={"scores": [0, 300], "dealer": 3})
    assert env.game.scores == [0, 300] and env.game.dealer == 3
    assert info["action_mask"][BID_BASE + 18 :].any()  # behind by 300: blind nil offered


def test_reset_seed_makes_the_episode_sequence_reproducible():
    a, b = SpadesEnv(), SpadesEnv()
    for env in (a, b):
        env.reset(seed=9)
    o1, _ = a.reset()
    o2, _ = b.reset()
    np.testing.assert_array_equal(o1, o2)


def test_keyed_random_opponent_is_the_same_in_python_and_numpy():
    rng = np.random.default_rng(0)
    seeds = rng.integers(0, 2**63, size=50, dtype=np.uint64)
    hands = rng.integers(0, 40, size=50)
    decisions = rng.integers(0, 60, size=50)
    batched = keyed_uniform(seeds, hands, decisions)
    one = [
        keyed_uniform_one(int(s), int(h), int(d))
        for s, h, d in zip(seeds, hands, decisions, strict=True)
    ]
    assert batched.tolist() == one
    state = init(Rules(blind_nil="always"), 64, rng)
    for _ in range(120):
        actions = random_opponent_actions(state)
        for g in (0, 17, 63):
            assert random_opponent_action_one(SingleGame.from_state(state, g)) == actions[g]
        step(state, random_legal_actions(state.legal, state.phase, rng))


def test_ansi_render_shows_the_finished_hand():
    env = SpadesEnv(render_mode="ansi")
    rng = np.random.default_rng(8)
    play(env, 0, rng)
    text = env.render()
    assert "trick 13" in text and "team 0" in text


@pytest.mark.parametrize("rules", [Rules(), Rules(blind_nil="always", first_lead="two_of_clubs")])
def test_new_single_game_equals_the_constructed_game(rules):
    for seed in (0, 1, 2**63 + 5, 123456789):
        fast, slow = new_single_game(rules, seed, {}), SingleGame(rules, seed=seed)
        a, b = fast.state, slow.state
        for name in State.__dataclass_fields__:
            if name != "rules":
                np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)
        np.testing.assert_array_equal(fast.obs, slow.obs)
        fast.step(fast.legal_list()[0])  # the template is not shared with the new game
        assert new_single_game(rules, seed, {}).history_len == 0


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_wrapper_modes_run_past_many_hand_ends(mode):
    """Gymnasium's own vector wrappers stack every info, the hand record included: its
    seed (a uint64 that may exceed 2**63 - 1) and its lists, hand after hand."""
    envs = gym.make_vec("spades_env/Spades-v0", num_envs=3, vectorization_mode=mode)
    obs, infos = envs.reset(seed=11)
    rng = np.random.default_rng(0)
    ends, high_seeds = 0, 0
    try:
        while ends < 12:
            masks = infos["action_mask"]
            assert masks.dtype == np.int8 and masks.shape == (3, NUM_ACTIONS)
            # A sub-env that just ended has an all-0 mask: its next action is ignored.
            actions = [rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks]
            obs, _, terms, truncs, infos = envs.step(np.array(actions))
            assert obs.shape == (3, *envs.single_observation_space.shape)
            if "record" in infos:
                done = infos["_record"]
                assert (done == (terms | truncs)).all()
                seeds = infos["record"]["seed"]
                assert seeds.dtype == np.uint64
                high_seeds += int((seeds[done] > 2**63 - 1).sum())
                for i in np.flatnonzero(done):
                    assert infos["record"]["tricks"][i] == infos["tricks"][i]
            ends += int((terms | truncs).sum())
    finally:
        envs.close()
    assert high_seeds > 0  # the case that overflowed Gymnasium's int64 info arrays


def test_a_gym_record_replays_and_its_seed_converts_to_json():
    env = SpadesEnv()
    _, info, _ = play(env, 5, np.random.default_rng(5))
    record = info["record"]
    assert isinstance(record["seed"], np.uint64)
    assert replay(record) == {**record, "seed": int(record["seed"])}
    assert json.loads(json.dumps({**record, "seed": int(record["seed"])}))["seed"] == record["seed"]
