"""The one seating of a duplicate match (`spades_env.duplicate`), and that the tournament
and training's duplicate evaluation both seat their games with it."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the train extra

from agents.heuristic.agent import HeuristicAgent
from agents.learned.agent import NetworkAgent
from agents.learned.networks import build_network, network_config
from experiments.tournament.config import TournamentConfig
from experiments.tournament.deals import DealSet
from experiments.tournament.results_log import read_rows
from experiments.tournament.runner import LOG_FILE, run_tournament
from spades_env.duplicate import AGENT_A, AGENT_B, seat_agents
from spades_env.rules import Rules
from spades_env.state import deal_hands, first_dealer
from training.evaluation import duplicate_eval, eval_seeds, greedy_fn, learner_lead
from training.rollout import LEARNER, Hands, duplicate_owners

pytestmark = pytest.mark.torch

PRESETS = ["standard", "jokers", "cutthroat", "cutthroat_3", "cutthroat_5", "two_player"]


@pytest.mark.parametrize("preset", PRESETS)
def test_each_agent_plays_every_seat_once_per_deal(preset):
    rules = Rules.preset(preset)
    seats = seat_agents(rules, 3)
    assert seats.shape == (6, rules.num_players)
    assert set(np.unique(seats)) == {AGENT_A, AGENT_B}
    assert (seats[0::2] + seats[1::2] == 1).all()  # the two sides swap every seat
    assert (seats[0::2, 0::2] == AGENT_A).all() and (seats[0::2, 1::2] == AGENT_B).all()


def test_partners_sit_together_one_player_teams_alternate():
    # RULES.md §1: team 0 is seats 0 and 2; RULES.md §6: cutthroat_3 is three teams of one
    assert seat_agents(Rules(), 1).tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]]
    assert seat_agents(Rules.preset("cutthroat_3"), 1).tolist() == [[0, 1, 0], [1, 0, 1]]


@pytest.mark.parametrize("preset", ["standard", "cutthroat", "cutthroat_3"])
def test_training_and_the_tournament_seat_a_deal_alike(preset, tmp_path):
    """The tournament's logged seats and training's evaluation owners are the one layout."""
    rules = Rules.preset(preset)
    cfg = TournamentConfig(agents=("random", "heuristic"), deals=3, chunk=3, rules=rules.to_dict())
    run_tournament(tmp_path / "run", cfg, workers=1)
    rows = sorted(read_rows(tmp_path / "run" / LOG_FILE), key=lambda r: (r["deal"], r["side"]))
    logged = [[["random", "heuristic"].index(name) for name in r["seats"]] for r in rows]
    owners = duplicate_owners(3, rules)
    assert logged == seat_agents(rules, 3).tolist()
    assert (owners == np.where(seat_agents(rules, 3) == AGENT_A, LEARNER, 1)).all()


def scored(rules: Rules, points: list[list[int]]) -> Hands:
    """The two sides of one duplicate deal with the given hand points per team."""
    zeros = np.zeros((2, rules.num_players), dtype=np.int8)
    owner = duplicate_owners(1, rules)
    return Hands(owner, np.array(points, dtype=np.int32), zeros, zeros.astype(bool), zeros)


def test_the_learners_lead_sums_its_one_player_teams():
    rules = Rules.preset("cutthroat")
    hands = scored(rules, [[10, 20, 30, 40], [1, 2, 3, 4]])
    # side 0: the learner holds seats 0 and 2, side 1 seats 1 and 3
    assert learner_lead(rules, hands).tolist() == [10 + 30 - 20 - 40, 2 + 4 - 1 - 3]


def test_the_learners_lead_with_partnerships_is_its_team_minus_the_other():
    rules = Rules()
    hands = scored(rules, [[50, -30], [12, 80]])
    assert learner_lead(rules, hands).tolist() == [80, 68]


def test_duplicate_evaluation_of_a_one_player_preset_is_zero_sum_between_the_two_seats():
    """Against itself on cutthroat (same greedy network in every seat) the two sides of a
    deal cancel exactly: each side's lead is the other's negated."""
    rules = Rules.preset("cutthroat")
    torch.manual_seed(0)
    net = build_network(network_config("ppo", [16]), rules).eval()
    fn = greedy_fn(net, torch.device("cpu"))
    same = NetworkAgent(net, rules)
    result = duplicate_eval(fn, same, rules, deals=4, seed=3)
    assert result["margin"]["mean"] == 0.0
    heuristic = duplicate_eval(fn, HeuristicAgent(seed=0), rules, deals=4, seed=3)
    assert heuristic["margin"]["mean"] < 0  # an untrained network loses to the heuristic


#: a file agent the tournament builds: the same untrained greedy network as `_net`
BOT = """
import torch
from agents.learned.agent import NetworkAgent
from agents.learned.networks import build_network, network_config
from spades_env.rules import Rules


def make(seed=0, preset="standard"):
    rules = Rules.preset(preset)
    torch.manual_seed(0)
    return NetworkAgent(build_network(network_config("ppo", [16]), rules).eval(), rules)
"""


@pytest.mark.parametrize("preset", ["standard", "cutthroat"])
def test_training_and_the_tournament_score_the_same_games_alike(preset, tmp_path):
    """Training's duplicate evaluation and a tournament on the same deals, between the same
    greedy network and the heuristic, report the same margin and bid figures (one scoring,
    `spades_env.duplicate`): with a partnership and with one-player teams."""
    rules = Rules.preset(preset)
    torch.manual_seed(0)
    net = build_network(network_config("ppo", [16]), rules).eval()
    trained = duplicate_eval(greedy_fn(net, torch.device("cpu")), HeuristicAgent(0), rules, 4, 3)

    (tmp_path / "bot.py").write_text(BOT)
    seeds = eval_seeds(3, 4)
    deals = DealSet(None, seeds, first_dealer(rules, seeds), deal_hands(rules, seeds, seeds * 0))
    spec = f"net={tmp_path / 'bot.py'}:make:preset={preset}"
    cfg = TournamentConfig(agents=(spec, "heuristic"), deals=4, chunk=4, rules=rules.to_dict())
    summary = run_tournament(tmp_path / "run", cfg, deals, workers=1)
    (pair,) = summary["pairs"]
    assert (pair["a"], pair["b"]) == ("net", "heuristic")
    assert pair["margin"] == trained["margin"]
    assert trained["margin"]["mean"] != 0  # the two agents do differ on these deals
    (line,) = [b for b in summary["bids"] if b["agent"] == "net"]
    assert line["bid_error"] == pytest.approx(trained["bid_error"])
    assert line["set_rate"] == trained["set_rate"]
    assert line["nil_success"] == trained["nil_success"]
    assert line["nil_attempts"] / line["seat_hands"] == pytest.approx(trained["nil_rate"])
