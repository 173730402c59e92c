"""The table as a picture: `render_mode="rgb_array"` and `"human"` of both envs."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.wrappers import RecordVideo

import spades_env  # noqa: F401 (registers the envs)
from spades_env import spades_v0
from spades_env.cards import NUM_CARDS
from spades_env.gym_env import SpadesEnv
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.table_image import HEIGHT, WIDTH, table_image


def _first_legal(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


@pytest.mark.parametrize("rules", [Rules(), Rules.preset("jokers"), Rules.preset("three_player")])
def test_the_pettingzoo_env_draws_an_image_that_changes_with_every_card(rules):
    env = spades_v0.env(rules=rules, render_mode="rgb_array")
    env.reset(seed=4)
    before = env.render()
    assert before.shape == (HEIGHT, WIDTH, 3) and before.dtype == np.uint8
    cards = 0
    for agent in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        if term or trunc:
            break
        action = _first_legal(obs["action_mask"])
        env.step(action)
        after = env.render()
        assert not np.array_equal(before, after), f"{agent} played {action}: no change"
        before = after
        cards += action < NUM_CARDS
        if cards == 6:
            break
    assert cards == 6
    env.close()


def test_hidden_hands_are_face_down_and_give_nothing_away():
    """Swapping East's and West's cards changes nothing North-South can see."""
    deal = np.random.default_rng(7).permutation(52).reshape(4, 13)
    swapped = deal[[0, 3, 2, 1]]
    a = SingleGame(Rules(), seed=1, deal=deal, dealer=3).state
    b = SingleGame(Rules(), seed=1, deal=swapped, dealer=3).state
    np.testing.assert_array_equal(table_image(a, visible=[0, 2]), table_image(b, visible=[0, 2]))
    assert not np.array_equal(table_image(a), table_image(b))  # face up, they differ


def test_the_gym_env_draws_the_learners_view_and_the_hand_that_ended():
    env = SpadesEnv(seats=(0, 2), render_mode="rgb_array")
    _, info = env.reset(seed=2)
    view = env.render()
    np.testing.assert_array_equal(view, table_image(env.game.state, visible=(0, 2)))
    while True:
        _, _, term, trunc, info = env.step(_first_legal(info["action_mask"]))
        if term or trunc:
            break
    ended = env.render()
    # The corner shows the hand just ended: the engine has already dealt the next one.
    assert not np.array_equal(ended, table_image(env.game.state, visible=(0, 2)))


def test_record_video_records_an_episode(tmp_path):
    VideoFileClip = pytest.importorskip("moviepy").VideoFileClip  # the render extra
    env = RecordVideo(
        gym.make("spades_env/Spades-v0", render_mode="rgb_array"),
        str(tmp_path),
        episode_trigger=lambda episode: True,
        disable_logger=True,
    )
    _, info = env.reset(seed=0)
    steps = 0
    while True:
        _, _, term, trunc, info = env.step(_first_legal(info["action_mask"]))
        steps += 1
        if term or trunc:
            break
    env.close()
    videos = list(tmp_path.glob("*.mp4"))
    assert len(videos) == 1
    with VideoFileClip(str(videos[0])) as clip:
        assert list(clip.size) == [WIDTH, HEIGHT]
        assert round(clip.duration * clip.fps) == steps + 1  # the reset's frame, one per step


def test_human_mode_shows_the_picture_in_a_window():
    pygame = pytest.importorskip("pygame")  # the render extra
    env = SpadesEnv(render_mode="human")
    _, info = env.reset(seed=3)
    env.step(_first_legal(info["action_mask"]))
    shown = pygame.surfarray.array3d(pygame.display.get_surface()).swapaxes(0, 1)
    np.testing.assert_array_equal(shown, table_image(env.game.state, visible=(0,)))
    env.close()
    assert not pygame.display.get_init()
