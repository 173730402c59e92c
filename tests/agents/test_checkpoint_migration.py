"""The shipped checkpoint survived the auction's action-space change unchanged in play.

`agents/learned/checkpoints/ppo_small.pt` was converted from observation version 3 with 76
actions to version 4 with 80 (RULES.md §6 auction's trump-naming actions; the standard
encoding did not change): its policy head was padded with four zero rows. `BEFORE` holds
the greedy actions the unconverted file chose on 720 standard positions (60 games of
seeded random play, observed at 12 points of the hand; agents/learned/checkpoints/ppo_small.json
records the conversion); the converted agent must choose exactly the same.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.registry import make_agent, parse_agent
from spades_env import Rules, init, step
from spades_env.cards import NAME_TRUMP, NUM_ACTIONS
from spades_env.engine import random_legal_actions

pytestmark = pytest.mark.torch

_BEFORE_TEXT = (
    "56,56,57,56,56,56,57,56,57,57,56,57,57,56,56,56,57,56,57,56,56,57,57,56,56,56,56,57,57,"
    "57,57,57,56,56,56,56,56,56,57,56,56,57,57,57,56,56,56,56,57,56,56,57,56,57,57,57,57,56,"
    "57,56,56,56,56,57,56,57,56,56,56,56,57,56,56,56,56,57,56,56,56,57,57,56,56,56,57,56,56,"
    "57,56,56,56,56,57,56,56,56,57,56,57,56,57,56,56,57,56,56,57,56,57,56,57,56,56,56,56,56,"
    "56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,"
    "57,57,56,56,57,56,56,56,56,57,56,56,56,56,56,57,56,57,56,57,56,57,56,56,56,57,56,56,56,"
    "56,56,56,56,56,57,56,56,56,56,57,56,56,56,56,56,56,56,56,56,57,56,56,56,56,56,56,56,56,"
    "56,56,56,57,56,57,56,56,57,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,56,"
    "57,56,57,56,56,57,56,57,26,51,32,25,16,29,30,25,14,32,51,38,29,38,38,32,51,32,38,25,16,"
    "25,32,32,45,38,42,38,32,32,25,25,32,38,25,25,19,38,32,38,44,38,38,38,42,25,30,25,38,42,"
    "32,31,25,16,38,26,30,14,38,42,14,16,32,42,28,38,25,51,25,14,29,25,38,51,29,29,16,30,38,"
    "51,29,14,31,18,45,18,25,27,38,19,33,33,38,25,38,30,38,25,25,25,25,38,18,42,51,44,14,32,"
    "25,51,25,30,38,51,14,38,38,38,38,25,26,5,51,30,3,25,2,29,38,25,5,42,44,37,25,25,51,3,30,"
    "11,14,43,38,38,14,38,14,50,38,19,18,51,27,5,22,4,27,38,30,5,38,38,29,25,5,16,30,42,29,"
    "42,42,30,14,37,39,25,16,2,38,29,33,2,14,0,8,0,2,50,22,10,38,5,44,37,50,37,24,10,44,6,29,"
    "4,27,50,3,32,18,29,2,0,22,48,37,8,45,4,0,8,19,0,25,0,15,25,9,2,5,5,22,50,42,25,0,0,38,"
    "37,29,6,2,30,29,25,37,37,37,5,3,4,17,10,5,5,37,50,20,0,3,11,0,5,3,4,44,25,44,0,20,0,2,9,"
    "32,50,3,14,36,4,25,18,3,5,25,18,45,44,5,3,2,9,0,25,2,11,33,0,3,50,18,39,2,9,0,3,37,1,35,"
    "14,50,4,51,44,3,0,46,4,4,3,3,42,0,33,3,12,10,0,44,0,5,3,11,4,50,8,4,10,2,22,0,48,48,29,"
    "25,44,0,12,5,5,44,8,0,25,14,8,2,18,3,50,8,11,0,9,5,15,22,38,8,37,11,25,7,14,3,26,3,37,3,"
    "4,2,25,9,24,8,23,18,6,44,22,1,5,41,16,4,8,0,18,0,8,25,48,0,2,10,33,11,0,29,44,3,8,3,29,"
    "14,3,18,4,3,0,24,2,4,10,56,72,56,56,57,57,57,56,56,72,57,56,56,56,57,56,57,56,72,72,56,"
    "57,57,56,56,72,57,57,72,56,57,56,57,56,56,56,56,56,57,56,56,56,57,57,56,57,57,56,56,57,"
    "72,72,56,56,56,56,56,56,57,56,"
)
BEFORE = [int(a) for a in _BEFORE_TEXT.split(",") if a]


def shipped_actions() -> list[int]:
    """The shipped agent's greedy actions on the 720 standard positions of `BEFORE`."""
    agent = make_agent(parse_agent("ppo"))
    rng = np.random.default_rng(2024)
    state = init(Rules(), 60, rng)
    out: list[int] = []
    for k in range(57):
        if k % 8 == 0 or k in (1, 2, 3, 4):
            out.extend(agent.act_state(state).tolist())
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return out


def test_converted_checkpoint_plays_exactly_as_before_on_standard_rules():
    assert len(BEFORE) == 720
    assert shipped_actions() == BEFORE


def test_converted_checkpoint_has_zero_rows_for_the_trump_actions():
    agent = make_agent(parse_agent("ppo"))
    weight = agent.net.policy.weight.detach()
    bias = agent.net.policy.bias.detach()
    assert weight.shape[0] == NUM_ACTIONS
    assert not weight[NAME_TRUMP:].any() and not bias[NAME_TRUMP:].any()
