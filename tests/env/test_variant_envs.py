"""RULES.md §6 presets through the environments and agents: PettingZoo's conformance
checks, one agent per seat, and the random and heuristic agents playing whole games."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from agents.heuristic.agent import HeuristicAgent
from agents.random_agent import RandomAgent
from experiments.tournament.match import play_batch
from spades_env import spades_v0
from spades_env.rules import PRESETS, Rules
from spades_env.state import deal_hands

VARIANTS = [name for name in PRESETS if name != "standard"]


@pytest.mark.parametrize("name", VARIANTS)
def test_api_test_passes_for_every_preset(name: str) -> None:
    rules = Rules.preset(name)
    env = spades_v0.env(rules=rules, episode="hand", hand_limit=2)
    api_test(env, num_cycles=200)
    assert env.possible_agents == [f"player_{i}" for i in range(rules.num_players)]


@pytest.mark.parametrize("name", VARIANTS)
def test_seed_test_passes_for_every_preset(name: str) -> None:
    seed_test(lambda: spades_v0.env(rules=Rules.preset(name)), num_cycles=60)


@pytest.mark.parametrize("name", VARIANTS)
@pytest.mark.parametrize("agent", [RandomAgent, HeuristicAgent])
def test_agents_play_every_preset_to_the_end(name: str, agent) -> None:
    rules = Rules.preset(name, max_hands=3)
    agents = [agent(seed=s) for s in range(rules.num_players)]
    p, g = rules.num_players, 4
    seeds = np.arange(1, g + 1, dtype=np.uint64)
    first = deal_hands(rules, seeds, np.zeros(g, dtype=np.int32))
    seat_agent = np.tile(np.arange(p), (g, 1))
    dealers = np.zeros(g, dtype=np.int8)
    out = play_batch(rules, agents, seat_agent, seeds, dealers, first, one_hand=False)
    assert len(out) >= g
    for _, record in out:
        assert sum(record["tricks"]) == rules.hand_size


@pytest.mark.parametrize("name", ["family", "cutthroat_5", "suicide", "auction"])
def test_tournament_runs_every_kind_of_preset(name: str, tmp_path, capsys) -> None:
    from experiments.cli.app import main
    from experiments.tournament.results_log import read_rows

    out = tmp_path / "r"
    args = ["tournament", "--rules", name, "--deals", "4", "--chunk", "2", "--workers", "1"]
    assert main([*args, "--no-progress", "--out", str(out)]) == 0
    rows = read_rows(out / "log.jsonl")
    assert {r["side"] for r in rows} == {0, 1}
    for r in rows:
        assert len(r["teams"]) == 2 and len(r["hand_score"]) == 2
        if name != "suicide":  # RULES.md §6 one-player teams: agents alternate by seat
            assert r["seats"][0] != r["seats"][1] and r["seats"][0] == r["seats"][2]


def test_two_player_tournament_rotates_the_two_seats(tmp_path) -> None:
    """RULES.md §6 two_player through `spades tournament`: two one-player teams whose
    agents swap seats over the same deals."""
    from experiments.cli.app import main
    from experiments.tournament.results_log import read_rows

    out = tmp_path / "r"
    args = ["tournament", "--rules", "two_player", "--deals", "4", "--chunk", "2"]
    assert main([*args, "--workers", "1", "--no-progress", "--out", str(out)]) == 0
    rows = read_rows(out / "log.jsonl")
    assert {r["side"] for r in rows} == {0, 1}
    for r in rows:
        assert len(r["seats"]) == 2 and r["seats"][0] != r["seats"][1]
        assert len(r["hand_score"]) == 2


def test_two_player_env_has_two_agents_and_the_draw_actions() -> None:
    env = spades_v0.env(rules=Rules.two_player())
    env.reset(seed=3)
    assert env.possible_agents == ["player_0", "player_1"]
    obs, *_ = env.last()
    assert obs["action_mask"].nonzero()[0].tolist() == [74, 75]  # keep, discard
