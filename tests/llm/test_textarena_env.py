"""Spades-v0 in TextArena: a whole game through TextArena's own loop (where installed)."""

from __future__ import annotations

import re

import pytest

ta = pytest.importorskip("textarena")

import spades_env.textarena_env  # noqa: F401  (registers Spades-v0)
from spades_env.text import parse_text


def _agent(turns: list[tuple[int, str]]):
    """A player that answers the first legal action of the last view it was shown, and
    once (its first answer) nonsense, to see the refusal and the second chance."""

    def act(player_id: int, observation: str) -> str:
        turns.append((player_id, observation))
        if len(turns) == 1:
            return "I would rather not say"
        legal = re.findall(r"^Legal actions: (.+)\.$", observation, flags=re.M)[-1]
        return f"[{legal.split('; ')[0]}]"

    return act


@pytest.mark.parametrize("preset", ["standard", "three_player"])
def test_a_whole_hand_through_textarenas_loop(preset):
    env = ta.make("Spades-v0", preset=preset)
    p = env.rules.num_players
    env.reset(num_players=p, seed=3)
    turns: list[tuple[int, str]] = []
    act = _agent(turns)
    done, steps = False, 0
    while not done:
        player_id, observation = env.get_observation()
        done, _ = env.step(action=act(player_id, observation))
        steps += 1
    rewards, game_info = env.close()
    assert steps >= p * (1 + env.rules.hand_size) + 1  # every bid and card, one refusal
    assert "attempted an invalid move" in turns[1][1]
    assert set(rewards) == set(range(p)) and sorted(set(rewards.values())) in ([-1, 1], [0])
    assert all("points" in game_info[k] for k in range(p))
    seats = ["North", "East", "South", "West"]
    for player_id, observation in turns:  # each view is the acting player's own
        views = observation.split("Spades, text view version")
        last = parse_text("Spades, text view version" + views[-1])
        assert last["seat"] == seats[player_id]


def _first_view(env) -> str:
    _, observation = env.get_observation()
    return observation


def test_reset_without_a_seed_deals_anew_and_with_one_repeats():
    env = ta.make("Spades-v0")
    hands = []
    for _ in range(4):
        env.reset(num_players=4)
        view = "Spades, text view" + _first_view(env).split("Spades, text view")[-1]
        hands.append(parse_text(view)["hand"])
    assert len({tuple(h) for h in hands}) == 4  # four resets, four deals
    seeded = []
    for _ in range(2):
        env.reset(num_players=4, seed=11)
        seeded.append(env.seed)
        seeded.append(_first_view(env).split("Spades, text view")[-1])
    assert seeded[0] == seeded[2] == 11 and seeded[1] == seeded[3]


def test_turn_count_counts_each_players_valid_moves():
    env = ta.make("Spades-v0")
    env.reset(num_players=4, seed=5)
    raw = env.unwrapped if hasattr(env, "unwrapped") else env
    moves = {k: 0 for k in range(4)}
    for _ in range(8):  # the bids and the first trick's first cards
        player_id, observation = env.get_observation()
        legal = re.findall(r"^Legal actions: (.+)\.$", observation, flags=re.M)[-1]
        env.step(action=f"[{legal.split('; ')[0]}]")
        moves[player_id] += 1
    counts = {k: raw.state.game_info[k]["turn_count"] for k in range(4)}
    assert counts == moves and sum(counts.values()) == 8


@pytest.mark.parametrize(
    "answer",
    ["bid " + "9" * 5000, "<answer>" * 2000, "", "[]", "[" * 100, "I'll pass on this one.", "\x00"],
)
def test_an_unreadable_answer_never_raises_out_of_step(answer):
    env = ta.make("Spades-v0")
    env.reset(num_players=4, seed=2)
    player_id, _ = env.get_observation()
    done, _ = env.step(action=answer)
    assert not done  # the first refusal: a second chance
    again, observation = env.get_observation()
    assert again == player_id and "attempted an invalid move" in observation
    done, _ = env.step(action=answer)
    assert done  # the second refusal ends the game, lost by that team
    rewards, _ = env.close()
    assert rewards[player_id] == -1
