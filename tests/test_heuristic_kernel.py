"""The numba card play of the heuristic (agents/heuristic_kernel.py) is the heuristic's
own: the same card as `heuristic_play.choose_card` on every position of heuristic and
random play, and the same tricks when it plays whole hands out, replayed through the
engine."""

from __future__ import annotations

import numpy as np
import pytest

from agents.card_tracking import rows_from_view
from agents.card_tracking_kernel import NT, NT_GIVEN
from agents.heuristic import HeuristicAgent
from agents.heuristic_kernel import choose_card_kernel, play_out_state
from agents.heuristic_play import choose_card
from spades_env.engine import random_legal_actions, step
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.state import PLAY, init

RULES = [
    Rules(),
    Rules(first_lead="two_of_clubs", blind_nil="always", nil_tricks="count"),
    Rules.preset("jokers"),
    Rules.preset("three_player"),
    Rules.preset("cutthroat_5"),
]


def table_array(t) -> tuple:
    arr = np.zeros(NT, dtype=np.int64)
    arr[:NT_GIVEN] = np.array(
        [
            t.seat, t.hand, t.legal, t.unseen, t.leader, t.trick_size, t.lead_suit,
            t.tricks_played, t.rules.num_players, t.rules.num_teams, t.rules.partnerships,
            t.rules.hand_size, t.rules.nil_tricks == "count",
        ],
        dtype=np.int64,
    )  # fmt: skip
    as64 = [np.asarray(x, dtype=np.int64) for x in (t.bids, t.tricks_won, t.trick, t.voids)]
    return (arr, *as64)


def _games(rules, seed, batch=48):
    """States of play, bid by the heuristic (nils included), cards half by the heuristic,
    half at random."""
    rng = np.random.default_rng(seed)
    heuristic = HeuristicAgent(nil_risk=0.6)
    state = init(rules, batch, rng)
    rand = np.arange(batch) % 2 == 1
    for _ in range(rules.num_players * rules.hand_size + 12):
        acts = heuristic.act_state(state)
        play = (state.phase == PLAY) & rand
        acts[play] = random_legal_actions(state.legal, state.phase, rng)[play]
        yield state
        step(state, acts)


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.name}-{r.first_lead}")
def test_kernel_chooses_the_heuristics_card(rules):
    seen = nils = 0
    for state in _games(rules, 3):
        for t in rows_from_view(seat_view(state)):
            if t.phase != PLAY:
                continue
            assert choose_card_kernel(*table_array(t)) == choose_card(t)[0]
            seen += 1
            nils += 0 in t.bids
    assert seen > 1000 and nils > 100  # the nil rules are exercised too


@pytest.mark.parametrize("rules", RULES, ids=lambda r: f"{r.name}-{r.first_lead}")
def test_play_out_is_the_heuristic_agent_on_the_engine(rules):
    """From positions all through the hand: the kernel's tricks are those of stepping the
    engine with HeuristicAgent to the end of the hand."""
    checked = 0
    for k, state in enumerate(_games(rules, 5, batch=16)):
        if k % 7 or not (state.phase == PLAY).all():
            continue
        checked += 1
        won = play_out_state(state)
        ref = state.take(np.arange(state.batch_size))
        agent = HeuristicAgent()
        over = np.zeros(ref.batch_size, dtype=bool)
        tricks = np.zeros_like(won)
        while not over.all():
            info = step(ref, agent.act_state(ref))
            new = info.hand_over & ~over
            if new.any():  # finished: the rows of the games whose hand ended
                rows = np.asarray(info.finished.games)
                tricks[rows[new[rows]]] = np.asarray(info.finished.tricks)[new[rows]]
            over |= new
        assert np.array_equal(won, tricks)
    assert checked >= 4
