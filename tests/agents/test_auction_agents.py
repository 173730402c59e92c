"""RULES.md §6 `auction` above the engine: the heuristic bids, names and plays the named
trump (the search agents: tests/agents/test_search_presets.py); the Gymnasium envs, tournaments and
`spades play` handle the trump-naming decision."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from engine_helpers import act, bid_all, fill_deal, start
from gymnasium.utils.env_checker import check_env

from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.bidding import best_trump, choose_bid
from agents.heuristic.seat_table import rows_from_view
from experiments.play.session import InputError, PlaySession, make_setup, parse_move, prompt_line
from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import run_tournament
from spades_env.cards import BID_BASE, CLUBS, HEARTS, NAME_TRUMP, SPADES, str_to_card
from spades_env.gym_env import SpadesEnv
from spades_env.observation import obs_size, seat_view
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import TRUMP

AUCTION = Rules.auction(blind_nil="never")
LONG_HEARTS = "AH KH QH JH TH 9H 8H 4D 3D 2D 4C 3C 2C"


# ----------------------------------------------------------------------------- heuristic
def test_heuristic_beats_random_clearly_on_auction(tmp_path) -> None:
    cfg = TournamentConfig(
        agents=("heuristic", "random"), deals=100, chunk=50, rules=Rules.auction().to_dict()
    )
    summary = run_tournament(tmp_path / "t", cfg, workers=1)
    (pair,) = summary["pairs"]
    assert pair["a"] == "heuristic" and pair["deals"] == 100
    assert pair["margin"]["mean"] > 0 and pair["margin"]["ci"][0] > 0


def test_heuristic_names_the_suit_of_best_length_and_honours() -> None:
    state = start(AUCTION, fill_deal({0: LONG_HEARTS}), dealer=3)
    bid_all(state, 7, 1, 1, 1)
    assert state.phase[0] == TRUMP and state.to_act[0] == 0
    agent = HeuristicAgent()
    assert agent.act_state(state).tolist() == [NAME_TRUMP + HEARTS]
    assert "RULES.md §6 auction: name hearts trump" in agent.last_reasons[0]
    assert best_trump(int(state.hands[0, 0])) == HEARTS


def _first_bid(dealer_bids: tuple[int, ...]) -> int:
    """North's bid with LONG_HEARTS after the given bids (dealer chosen so North is next)."""
    dealer = (3 - len(dealer_bids)) % 4
    state = start(AUCTION, fill_deal({0: LONG_HEARTS}), dealer=dealer)
    bid_all(state, *dealer_bids)
    (t,) = rows_from_view(seat_view(state))
    return choose_bid(t, 0.0, 0.0)[0]


def test_heuristic_counts_its_trump_suit_when_it_can_win_the_auction() -> None:
    leading = _first_bid(())
    outbid = _first_bid((9, 1, 1))  # 9 already bid: someone else names, likely not hearts
    standard = start(Rules(blind_nil="never"), fill_deal({0: LONG_HEARTS}), dealer=3)
    (t,) = rows_from_view(seat_view(standard))
    spades_trump = choose_bid(t, 0.0, 0.0)[0]
    assert leading >= 6  # seven top hearts as trump
    assert outbid < leading and spades_trump < leading


def test_heuristic_ruffs_with_the_named_suit_not_with_spades() -> None:
    deal = fill_deal({0: "3C 2S", 1: "2H AS KS"}, voids={1: "C"})
    state = start(AUCTION, deal, dealer=3)
    bid_all(state, 5, 4, 1, 1)  # North names; East-West need 5 tricks
    act(state, NAME_TRUMP + HEARTS)
    act(state, "3C")
    agent = HeuristicAgent()
    assert agent.act_state(state).tolist() == [str_to_card("2H")]
    assert "trump with the lowest heart" in agent.last_reasons[0]


# ----------------------------------------------------------------------------- search agents
# ----------------------------------------------------------------------------- environments
def test_gym_env_passes_check_env_and_plays_auction_episodes() -> None:
    check_env(SpadesEnv(rules=AUCTION), skip_render_check=True)
    env = SpadesEnv(rules=Rules.auction(), seats=(0, 2), episode="game", hand_limit=2)
    rng = np.random.default_rng(0)
    obs, info = env.reset(seed=3)
    named = False
    for _ in range(300):
        assert obs.shape == (obs_size(env.rules),)
        mask = info["action_mask"]
        named |= bool(mask[NAME_TRUMP:].any())
        obs, _, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if terminated or truncated:
            obs, info = env.reset()
    assert named  # the learner's team named trump at least once


def test_vector_env_steps_auction_games() -> None:
    envs = gym.make_vec(
        "spades_env/Spades-v0",
        num_envs=16,
        vectorization_mode="vector_entry_point",
        rules=Rules.auction(),
    )
    obs, infos = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    assert obs.shape == (16, obs_size(Rules.auction()))
    for _ in range(120):
        masks = infos["action_mask"]
        acts = (rng.random(masks.shape) * masks).argmax(axis=1)
        obs, _, _, _, infos = envs.step(acts)
    envs.close()


# ----------------------------------------------------------------------------- spades play
def _naming_session() -> PlaySession:
    """`spades play` on auction, the person (South) to name trump."""
    session = PlaySession(make_setup(AUCTION, seed=4))
    game = SingleGame(AUCTION, deal=fill_deal({2: LONG_HEARTS})[0], dealer=1)
    for bid in (7, 1, 1, 1):  # South bids first (left of the dealer East) and highest
        game.step(BID_BASE + bid)
    session.game = game
    return session


@pytest.mark.parametrize(
    ("text", "suit"),
    [("trump hearts", HEARTS), ("h", HEARTS), ("♥", HEARTS), ("Spades", SPADES), ("c", CLUBS)],
)
def test_play_reads_the_trump_suit_in_every_form(text, suit) -> None:
    session = _naming_session()
    assert session.human_to_act and session.game.phase == TRUMP
    assert "name the trump suit" in prompt_line(session)
    assert parse_move(session, text) == NAME_TRUMP + suit


def test_play_refuses_a_word_that_names_no_suit() -> None:
    with pytest.raises(InputError, match="is not a suit"):
        parse_move(_naming_session(), "stars")
