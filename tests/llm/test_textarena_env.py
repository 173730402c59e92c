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
