"""The native vector env: the same games as N single envs, step for step, without a Python loop."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.vector import AutoresetMode
from observation_reference import encode_reference

import spades_env  # noqa: F401 (registers the envs)
from spades_env.cards import NUM_ACTIONS
from spades_env.engine import random_legal_actions, step
from spades_env.gym_env import SpadesEnv
from spades_env.observation import encode, obs_slices
from spades_env.rules import PRESETS, Rules
from spades_env.state import DONE, init
from spades_env.vector_env import SpadesVectorEnv


class FirstLegal:
    """A deterministic, batched opponent that records the batch sizes it is given."""

    name = "first"
    needs_obs = True

    def __init__(self) -> None:
        self.batches: list[int] = []

    def act(self, view, obs, mask):
        assert obs.shape[0] == mask.shape[0] == view.batch_size
        self.batches.append(mask.shape[0])
        return mask.argmax(axis=1)


def check_same_as_singles(
    n: int, steps: int, seed: int, illegal_every: int = 0, opponents_factory=None, **kwargs
) -> int:
    """Step a vector env and n single envs with the same actions; return episodes ended."""
    opp = opponents_factory() if opponents_factory else None
    venv = SpadesVectorEnv(n, opponents=opp, **kwargs)
    singles = [
        SpadesEnv(opponents=opponents_factory() if opponents_factory else None, **kwargs)
        for _ in range(n)
    ]
    obs, infos = venv.reset(seed=seed)
    for i, env in enumerate(singles):
        o, info = env.reset(seed=seed + i)
        np.testing.assert_array_equal(obs[i], o)
        np.testing.assert_array_equal(infos["action_mask"][i], info["action_mask"])
    rng = np.random.default_rng(seed)
    ended = np.zeros(n, dtype=bool)
    episodes = 0
    for t in range(steps):
        mask = infos["action_mask"]
        # an ended sub-env's mask is all 0 (its action is ignored): action 0 there
        actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in mask])
        if illegal_every and t % illegal_every == illegal_every - 1:
            actions[t % n] = rng.integers(NUM_ACTIONS)  # often illegal
        obs, rewards, terms, truncs, infos = venv.step(actions)
        for i, env in enumerate(singles):
            if ended[i]:  # NEXT_STEP autoreset: this step starts the next episode
                o, info = env.reset()
                r, term, trunc = 0.0, False, False
            else:
                o, r, term, trunc, info = env.step(actions[i])
            where = f"step {t}, env {i}"
            np.testing.assert_array_equal(obs[i], o, err_msg=where)
            assert (rewards[i], terms[i], truncs[i]) == (r, term, trunc), where
            assert infos["seat"][i] == info["seat"], where
            # the masks agree on every step, the last of an episode included (all 0)
            np.testing.assert_array_equal(infos["action_mask"][i], info["action_mask"], where)
            assert bool(infos.get("_bids", np.zeros(n, bool))[i]) == ("bids" in info), where
            if "bids" in info:
                for key in ("bids", "tricks", "hand_score", "scores", "bags", "hand_no"):
                    assert np.asarray(infos[key][i]).tolist() == info[key], (where, key)
            assert bool(infos.get("_illegal", np.zeros(n, bool))[i]) == ("illegal" in info)
        ended = terms | truncs
        episodes += int(ended.sum())
    return episodes


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"seats": 2, "zero_sum": True},
        {"seats": (1, 3)},
        {"episode": "game", "hand_limit": 2, "rules": Rules(target=150)},
        {"rules": Rules(blind_nil="always", blind_nil_exchange=True)},
    ],
    ids=["default", "seat2-zero-sum", "partnership", "game", "blind-exchange"],
)
def test_vector_env_matches_single_envs_step_for_step(kwargs):
    episodes = check_same_as_singles(6, 160, seed=3, illegal_every=23, **kwargs)
    assert episodes >= 6


@pytest.mark.parametrize("preset", PRESETS)
def test_compiled_step_matches_single_envs_on_every_preset(preset):
    # With default opponents a vector step is one compiled call (core/vector.py); the
    # single env steps SingleGame and the keyed opponent in Python.
    rules = Rules.preset(preset)
    venv = SpadesVectorEnv(3, rules=rules)
    assert venv._compiled
    episodes = check_same_as_singles(3, 70, seed=11, illegal_every=17, rules=rules)
    assert episodes >= 3


def test_vector_env_matches_single_envs_with_agent_opponents():
    episodes = check_same_as_singles(4, 80, seed=5, opponents_factory=FirstLegal)
    assert episodes >= 4


@pytest.mark.parametrize("opponents", ["default", "agents"])
def test_a_hand_episode_ends_on_its_hand_and_deals_once(opponents):
    # No next hand is dealt when a hand episode ends (the engine's last_hand): the final
    # observation shows the finished hand, done; the next step deals the next episode.
    venv = SpadesVectorEnv(8, opponents=FirstLegal() if opponents == "agents" else None)
    assert venv._compiled == (opponents == "default")
    obs, infos = venv.reset(seed=4)
    state = venv.state
    dealt = state.deal.copy()
    done = obs_slices(venv.rules)["phase"].start + DONE
    terms = np.zeros(8, dtype=bool)
    while not terms.any():
        obs, _, terms, _, infos = venv.step(infos["action_mask"].argmax(axis=1))
    assert terms.all()  # every hand has the same number of decisions
    assert (state.phase == DONE).all() and (state.winner == -1).all()
    np.testing.assert_array_equal(state.deal, dealt)
    assert (state.hand_no == 1).all() and (obs[:, done] == 1).all()
    obs, *_ = venv.step(np.zeros(8, dtype=np.int64))  # the next episodes start
    assert (state.phase != DONE).all() and (state.hand_no == 0).all()
    assert (obs[:, done] == 0).all()


def test_opponent_agents_are_called_on_batches():
    first = FirstLegal()
    venv = SpadesVectorEnv(16, opponents=first)
    venv.reset(seed=0)
    assert max(first.batches) > 1


def test_make_vec_builds_the_native_vector_env():
    envs = gym.make_vec(
        "spades_env/Spades-v0", num_envs=8, vectorization_mode="vector_entry_point", seats=1
    )
    assert isinstance(envs.unwrapped, SpadesVectorEnv)
    assert envs.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    obs, infos = envs.reset(seed=0)
    assert obs.shape == (8, *envs.single_observation_space.shape) and obs.dtype == np.int16
    assert envs.observation_space.contains(obs)
    assert infos["action_mask"].shape == (8, NUM_ACTIONS) and infos["_action_mask"].all()
    assert (infos["seat"] == 1).all()
    actions = np.array([np.flatnonzero(m)[0] for m in infos["action_mask"]])
    assert envs.action_space.contains(actions)
    obs, rewards, terms, truncs, infos = envs.step(actions)
    assert rewards.shape == terms.shape == truncs.shape == (8,)
    envs.close()


def test_ended_sub_envs_restart_on_the_next_step_and_ignore_its_action():
    venv = SpadesVectorEnv(4)
    _, infos = venv.reset(seed=1)
    rng = np.random.default_rng(1)
    for _ in range(200):
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in infos["action_mask"]])
        _, rewards, terms, _, infos = venv.step(actions)
        if terms.any():
            break
    done = np.flatnonzero(terms)
    # no legal action, as a SpadesEnv whose episode is over: the next action is ignored
    assert not infos["action_mask"][done].any()
    assert not venv.action_masks()[done].any()
    assert "hand_score" in infos and infos["_hand_score"][done].all()
    _, rewards, terms, _, infos = venv.step(np.full(4, NUM_ACTIONS + 5))  # illegal elsewhere
    assert (rewards[done] == 0).all() and not terms[done].any()
    assert "illegal" not in infos or not infos["_illegal"][done].any()


def test_seeds_can_be_given_per_sub_env():
    a = SpadesVectorEnv(3)
    b = SpadesVectorEnv(3)
    oa, _ = a.reset(seed=[10, 11, 12])
    ob, _ = b.reset(seed=10)
    np.testing.assert_array_equal(oa, ob)
    with pytest.raises(ValueError, match="seeds"):
        a.reset(seed=[1, 2])


@pytest.mark.parametrize(
    "rules",
    [
        Rules(),
        Rules(blind_nil="always", blind_nil_exchange=True),
        Rules(first_lead="two_of_clubs"),
        Rules.auction(blind_nil="always", blind_nil_exchange=True),  # RULES.md §6 auction
    ],
    ids=["standard", "blind-exchange", "two-of-clubs", "auction"],
)
def test_fast_encoder_equals_the_one_hot_reference(rules):
    rng = np.random.default_rng(7)
    state = init(rules, 128, rng, scores=rng.integers(-300, 400, size=(128, 2)))
    for _ in range(130):  # two hands and more, every phase
        for seats in (None, rng.integers(0, 4, size=128)):
            np.testing.assert_array_equal(encode(state, seats), encode_reference(state, seats))
        step(state, random_legal_actions(state.legal, state.phase, rng))


@pytest.mark.parametrize("obs_format", ["int16", "bits"])
def test_what_a_step_hands_out_never_changes_and_released_arrays_are_reused(obs_format):
    import weakref

    env = SpadesVectorEnv(6, obs_format=obs_format)
    obs, infos = env.reset(seed=1)
    rng = np.random.default_rng(2)
    held = []  # (array, its copy) of every step's outputs, kept by the caller
    for _ in range(40):
        mask = infos["action_mask"]
        obs, _, _, _, infos = env.step((rng.random(mask.shape) * mask).argmax(axis=1))
        held += [(obs, obs.copy()), (infos["action_mask"], infos["action_mask"].copy())]
        held += [(infos[k], infos[k].copy()) for k in ("bids", "scores") if k in infos]
    assert all(np.array_equal(a, copy) for a, copy in held)
    # A caller that lets go of the outputs gets the same few arrays back, written again.
    refs = []
    for _ in range(20):
        mask = infos["action_mask"]
        obs, _, _, _, infos = env.step((rng.random(mask.shape) * mask).argmax(axis=1))
        refs.append(weakref.ref(obs))
    alive = {id(r()) for r in refs if r() is not None}
    assert len(alive) <= 4 and all(r() is not None for r in refs)


@pytest.mark.parametrize("obs_format", ["int16", "bits"])
def test_threads_step_the_same_games(obs_format):
    import threading

    kwargs = {"obs_format": obs_format, "rules": Rules.preset("cutthroat")}
    one = SpadesVectorEnv(600, **kwargs)
    two = SpadesVectorEnv(600, num_threads=2, **kwargs)
    out1, out2 = one.reset(seed=9), two.reset(seed=9)
    rng = np.random.default_rng(4)
    for t in range(60):
        for a, b in zip(out1, out2, strict=True):
            if isinstance(a, dict):
                assert a.keys() == b.keys(), t
                for key in a:
                    np.testing.assert_array_equal(a[key], b[key], err_msg=f"{t} {key}")
            else:
                np.testing.assert_array_equal(a, b, err_msg=str(t))
        mask = out1[-1]["action_mask"]
        actions = (rng.random(mask.shape) * mask).argmax(axis=1)
        actions[t % 37 :: 97] = rng.integers(NUM_ACTIONS)  # some illegal
        out1, out2 = one.step(actions), two.step(actions)
    assert any(th.name.startswith("spades-vector") for th in threading.enumerate())
    two.close()
    assert not any(th.name.startswith("spades-vector") for th in threading.enumerate())


@pytest.mark.parametrize(
    ("value", "message"),
    [(0, "at least 1"), (1.5, "whole number"), (True, "whole number")],
)
def test_a_bad_thread_count_is_refused(value, message):
    with pytest.raises(ValueError, match=message):
        SpadesVectorEnv(4, num_threads=value)


def test_threads_need_the_compiled_opponents():
    with pytest.raises(ValueError, match="default opponents"):
        SpadesVectorEnv(4, opponents=FirstLegal(), num_threads=2)
