"""The search agents (`search` included) play every preset of RULES.md §6 (tiny budgets):
a duplicate tournament against the heuristic, every decision legal (the engine raises otherwise),
RULES.md §6 auction's named trump and two_player after the heuristic's draw included."""

from __future__ import annotations

import pytest

from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import run_tournament
from spades_env.rules import PRESETS, Rules

pytestmark = pytest.mark.torch

SPECS = ("pimc:worlds=3", "ismcts:iterations=20")
#: `search` by default on one preset of each of its paths (standard: the network and the
#: solver; suicide: the solver, the network being trained on other rules; jokers and
#: cutthroat: PIMC alone, where the solver cannot play), every preset under `-m slow`
SEARCH = "search:worlds=3,solve_worlds=2"
SEARCH_DEFAULT = ("standard", "suicide", "jokers", "cutthroat")
CASES = [(spec, preset) for spec in SPECS for preset in PRESETS] + [
    pytest.param(SEARCH, p, marks=() if p in SEARCH_DEFAULT else pytest.mark.slow) for p in PRESETS
]


@pytest.mark.parametrize(("spec", "preset"), CASES)
def test_search_agent_plays_a_tournament(spec, preset, tmp_path):
    config = TournamentConfig(
        agents=(spec, "heuristic"), deals=1, chunk=1, rules=Rules.preset(preset).to_dict()
    )
    summary = run_tournament(tmp_path / "t", config, workers=1)
    (pair,) = summary["pairs"]
    assert pair["deals"] == 1
