"""The PettingZoo env `spades_v0`: PettingZoo's own checks, then its documented behaviour."""

from __future__ import annotations

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import aec_to_parallel, turn_based_aec_to_parallel

from spades_env import spades_v0
from spades_env.cards import BID_BASE, NUM_ACTIONS, str_to_card
from spades_env.engine import IllegalActionError
from spades_env.env_common import DEFAULT_ILLEGAL_REWARD
from spades_env.observation import encode, obs_size, obs_slices
from spades_env.records import replay
from spades_env.rules import Rules

RULES = {
    "standard": Rules(),
    "blind_always_exchange": Rules(blind_nil="always", blind_nil_exchange=True),
    "count_two_of_clubs": Rules(nil_tricks="count", first_lead="two_of_clubs", target=200),
}
NORTH_SPADES = [
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
    "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
    "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
]


def deal_of(hands: list[str]) -> np.ndarray:
    return np.array([[str_to_card(c) for c in h.split()] for h in hands])


def play_random(env, rng: np.random.Generator, max_steps: int = 100_000) -> dict:
    """Play masked random actions to the end; return per-agent totals and the infos seen."""
    returns = dict.fromkeys(env.possible_agents, 0.0)
    infos: dict[str, list[dict]] = {a: [] for a in env.possible_agents}
    for steps, agent in enumerate(env.agent_iter()):
        assert steps < max_steps
        obs, reward, term, trunc, info = env.last()
        returns[agent] += reward
        if info:
            infos[agent].append(info)
        if term or trunc:
            env.step(None)
            continue
        env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    return {"returns": returns, "infos": infos}


# ----------------------------------------------------------------------------- PettingZoo checks
@pytest.mark.parametrize("rules", RULES.values(), ids=RULES.keys())
@pytest.mark.parametrize("episode", ["hand", "game"])
def test_api_test_passes_on_the_wrapped_env(rules, episode):
    api_test(spades_v0.env(rules=rules, episode=episode, hand_limit=3), num_cycles=300)


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_api_test_passes_on_the_raw_env(episode):
    api_test(spades_v0.raw_env(episode=episode, hand_limit=2), num_cycles=300)


def test_seed_test_passes():
    seed_test(spades_v0.env, num_cycles=100)


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_parallel_api_test_passes(episode):
    env = turn_based_aec_to_parallel(spades_v0.env(episode=episode, hand_limit=2))
    parallel_api_test(env, num_cycles=300)


def test_the_turn_based_env_is_not_parallelizable_by_aec_to_parallel():
    for env in (spades_v0.raw_env(), spades_v0.env()):
        assert env.metadata["is_parallelizable"] is False
    with pytest.raises(AssertionError, match="is_parallelizable"):
        aec_to_parallel(spades_v0.env())
    par = spades_v0.parallel_env()  # the turn-based conversion: one agent acts per step
    observations, _ = par.reset(seed=3)
    acting = [a for a, o in observations.items() if o["action_mask"].any()]
    assert len(acting) == 1
    mask = observations[acting[0]]["action_mask"]
    actions = {a: int(np.flatnonzero(mask)[0]) if a in acting else 0 for a in par.agents}
    observations, *_ = par.step(actions)
    assert sum(o["action_mask"].any() for o in observations.values()) == 1


def test_render_test_passes():
    pytest.importorskip("pygame")  # the render extra: the "human" mode opens a window
    assert spades_v0.raw_env.metadata["render_modes"] == ["ansi", "human", "rgb_array"]
    render_test(spades_v0.env)  # every mode: text, a (H, W, 3) uint8 image, a window


# ----------------------------------------------------------------------------- random play
@pytest.mark.parametrize("rules", RULES.values(), ids=RULES.keys())
def test_random_play_over_many_seeds_ends_every_episode_consistently(rules):
    env = spades_v0.env(rules=rules)
    rng = np.random.default_rng(0)
    for seed in range(40):
        env.reset(seed=seed)
        out = play_random(env, rng)
        for agent, seen in out["infos"].items():
            assert len(seen) == 1, "every agent sees the end-of-hand info once"
            team = int(agent[-1]) % 2
            assert out["returns"][agent] == seen[0]["hand_score"][team]
        record = out["infos"]["player_0"][0]["record"]
        assert replay(record) == record


def test_game_episodes_sum_the_hand_rewards_to_the_score_change():
    env = spades_v0.env(rules=Rules(target=150), episode="game", hand_limit=30)
    rng = np.random.default_rng(1)
    for seed in range(5):
        env.reset(seed=seed)
        out = play_random(env, rng)
        final = out["infos"]["player_0"][-1]
        for agent, total in out["returns"].items():
            assert total == final["scores"][int(agent[-1]) % 2]
        assert final["game_over"] or final["hand_no"] + 1 == 30


# ----------------------------------------------------------------------------- behaviour
def test_agents_are_one_per_seat_and_spaces_are_cached():
    env = spades_v0.env()
    env.reset(seed=0)
    assert env.possible_agents == [f"player_{s}" for s in range(4)]
    for agent in env.possible_agents:
        assert env.observation_space(agent) is env.observation_space(agent)
        assert env.action_space(agent) is env.action_space(agent)
        assert env.action_space(agent).n == NUM_ACTIONS
        assert env.observation_space(agent)["observation"].shape == (obs_size(Rules()),)


def test_observation_is_the_engine_encoding_of_that_seat():
    env = spades_v0.env()
    env.reset(seed=3)
    for _ in range(30):
        agent = env.agent_selection
        obs = env.observe(agent)
        state = env.unwrapped.game.state
        seat = int(agent[-1])
        assert obs["observation"].dtype == np.int16
        assert obs["action_mask"].dtype == np.int8
        np.testing.assert_array_equal(obs["observation"], encode(state, np.array([seat]))[0])
        other = env.observe(f"player_{(seat + 1) % 4}")
        assert not other["action_mask"].any()
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))


def test_same_seed_same_episode_and_reset_without_seed_deals_the_next_game():
    a, b = spades_v0.env(), spades_v0.env()
    a.reset(seed=7)
    b.reset(seed=7)
    first = a.observe(a.agent_selection)["observation"]
    np.testing.assert_array_equal(first, b.observe(b.agent_selection)["observation"])
    a.reset()
    assert not np.array_equal(first, a.observe(a.agent_selection)["observation"])


def test_reset_options_set_the_position():
    env = spades_v0.env(episode="game")
    env.reset(seed=0, options={"deal": deal_of(NORTH_SPADES), "dealer": 3, "scores": [480, 100]})
    sl = obs_slices(Rules())
    obs = env.observe("player_0")["observation"]
    assert obs[sl["hand"]][:13].all() and not obs[sl["hand"]][13:].any()
    assert obs[sl["scores"]].tolist() == [480, 100]
    assert env.agent_selection == "player_0"  # left of dealer West bids first
    assert env.unwrapped.game.dealer == 3


def test_reset_options_game_ends_after_one_winning_hand():
    env = spades_v0.env(episode="game")
    env.reset(seed=0, options={"deal": deal_of(NORTH_SPADES), "dealer": 3, "scores": [480, 100]})
    rng = np.random.default_rng(0)
    seen = None
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if info:
            seen = info
        if term or trunc:
            env.step(None)
            continue
        mask = obs["action_mask"]
        bid = {"player_0": BID_BASE + 13, "player_2": BID_BASE}.get(agent, -1)
        env.step(bid if bid >= 0 and mask[bid] else int(rng.choice(np.flatnonzero(mask))))
    # North bids 13 and takes all 13, South bids nil and takes none: 480 + 130 + 100.
    assert seen["game_over"] and seen["winner"] == 0
    assert seen["tricks"][0] == 13 and seen["scores"][0] == 710


def test_every_agent_gets_the_hand_info_until_it_next_acts():
    env = spades_v0.env(episode="game", hand_limit=2)
    env.reset(seed=5)
    rng = np.random.default_rng(5)
    got: dict[str, int] = {}
    keys = {"bids", "tricks", "hand_score", "scores", "bags", "record", "game_over", "winner"}
    for agent in env.agent_iter():
        obs, _, term, trunc, info = env.last()
        if info:
            assert keys <= set(info)
            got[agent] = got.get(agent, 0) + 1
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
    assert got == dict.fromkeys(env.possible_agents, 2)


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_zero_sum_rewards_sum_to_zero_every_step(episode):
    env = spades_v0.raw_env(zero_sum=True, episode=episode, hand_limit=3)
    env.reset(seed=11)
    rng = np.random.default_rng(11)
    nonzero = 0
    for _agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        assert sum(env.rewards.values()) == 0
        nonzero += any(env.rewards.values())
    assert nonzero > 0


def test_raw_env_raises_on_an_illegal_action_naming_the_rule():
    env = spades_v0.raw_env()
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="illegal"):
        env.step(0)  # a card during the bidding


def test_wrapped_env_ends_the_episode_on_an_illegal_action(caplog):
    env = spades_v0.env()
    env.reset(seed=0)
    agent = env.agent_selection
    env.step(0)  # a card during the bidding
    assert "Illegal move" in caplog.text
    assert all(env.terminations.values())
    assert env._cumulative_rewards[agent] == DEFAULT_ILLEGAL_REWARD


def test_game_episode_is_truncated_after_the_hand_limit():
    env = spades_v0.env(episode="game", hand_limit=2)
    env.reset(seed=2)
    out = play_random(env, np.random.default_rng(2))
    assert out["infos"]["player_0"][-1]["hand_no"] == 1


def test_seat_view_is_the_structured_view_of_the_agent():
    env = spades_v0.env()
    env.reset(seed=4)
    view = env.unwrapped.seat_view("player_2")
    assert view.batch_size == 1 and int(view.seat[0]) == 2
    assert int(np.bitwise_count(view.hand)[0]) in (0, 13)  # 0 while hidden for blind nil


def test_ansi_render_returns_the_table_as_text():
    env = spades_v0.env(render_mode="ansi")
    env.reset(seed=0)
    text = env.render()
    assert isinstance(text, str) and "North" in text and "score" in text


def test_registered_with_pettingzoos_registry():
    aec = pettingzoo.make("aec", "spades_env/spades_v0", episode="game")
    aec.reset(seed=0)
    assert aec.unwrapped.episode == "game"
    par = pettingzoo.make("parallel", "spades_env/spades_v0")
    obs, _ = par.reset(seed=0)
    assert set(obs) == set(par.possible_agents)


SHARED = ("agents", "agent_selection", "rewards", "_cumulative_rewards", "terminations",
          "truncations", "infos")  # fmt: skip


def assert_wrappers_see_the_raw_env(env) -> None:
    raw, layer = env.unwrapped, env
    while layer is not raw:
        for name in SHARED:
            assert getattr(layer, name) is getattr(raw, name), (type(layer).__name__, name)
        layer = layer.env


@pytest.mark.parametrize("copy_how", ["none", "deepcopy", "pickle"])
def test_wrappers_read_the_raw_envs_attributes_through_play_and_copies(copy_how):
    # The raw env shares these attributes with the wrappers of env() (spades_v0._SHARED):
    # every layer must read the very objects of the raw env, after any write.
    import copy
    import pickle

    env = spades_v0.env()
    with pytest.raises(AttributeError, match="before reset"):
        env.agents  # noqa: B018 (the order-enforcing wrapper still refuses it)
    env.reset(seed=3)
    if copy_how == "deepcopy":
        env = copy.deepcopy(env)
    elif copy_how == "pickle":
        env = pickle.loads(pickle.dumps(env))
    rng = np.random.default_rng(0)
    for episode in range(3):
        env.reset(seed=episode)
        for t, _agent in enumerate(env.agent_iter()):
            assert_wrappers_see_the_raw_env(env)
            obs, _, term, trunc, _ = env.last()
            if term or trunc:
                action = None
            elif episode == 2 and t == 30:
                action = int(np.flatnonzero(obs["action_mask"] == 0)[0])  # illegal: ends it
            else:
                action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
            env.step(action)
        assert_wrappers_see_the_raw_env(env)
        assert env.agents == []
