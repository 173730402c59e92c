"""The heuristic's card play (agents/heuristic/play.py, compiled) chooses the card and
gives the reason recorded in tests/data/heuristic_cards.json on every preset
(`heuristic_cards`: the fixture and how it was made), and plays whole hands out as the
agent does on the engine."""

from __future__ import annotations

import numpy as np
import pytest
from heuristic_cards import RULES, load

from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.play import _WHOLE, WHYS, decide_card, play_out_state
from spades_env.engine import random_legal_actions, step
from spades_env.rules import Rules
from spades_env.state import PLAY, init

FIXTURE = load()
PLAY_OUT_RULES = [
    Rules(),
    Rules(first_lead="two_of_clubs", blind_nil="always", nil_tricks="count"),
    Rules.preset("jokers"),
    Rules.preset("three_player"),
    Rules.preset("cutthroat_5"),
    Rules.preset("auction"),
    Rules.preset("two_player"),
]


@pytest.mark.parametrize("name", sorted(RULES))
def test_card_and_reason_are_the_recorded_ones(name):
    """The fixture was recorded before `set_tricks` (its play is `set_tricks=2`)."""
    rows = FIXTURE[name]
    assert len(rows) >= 15
    for row in rows:
        got = decide_card(RULES[name], row["position"], set_tricks=2)
        assert got == (row["card"], row["reason"])


#: the reasons of the play that ducks (contract made) or feeds bags (lost), and of the
#: play that takes tricks to set the opponents (its whole reasons have no prefix)
DUCKING = ('rule text 000 "Säckar"', 'rule text 000 "Bet": contract lost')
SETTING = (
    "contract made: take tricks",
    'rule text 000 "Bet": our contract is lost',
    *WHYS[:_WHOLE],
)


def test_set_tricks_changes_only_the_play_after_the_contract_is_decided():
    """The default (3) plays every recorded position as `set_tricks=2` did, except where
    the team's contract is made or lost and three tricks set the opponents: there it
    takes the trick to set them."""
    changed = 0
    for name in sorted(RULES):
        for row in FIXTURE[name]:
            old = decide_card(RULES[name], row["position"], set_tricks=2)
            new = decide_card(RULES[name], row["position"])
            if new != old:
                changed += 1
                assert old[1].startswith(DUCKING), old[1]
                assert new[1].startswith(SETTING), new[1]
    assert changed > 0


def _games(rules, seed, batch=48):
    """States of play, bid by the heuristic (nils included), cards half by the heuristic,
    half at random."""
    rng = np.random.default_rng(seed)
    heuristic = HeuristicAgent(nil_risk=0.6)
    state = init(rules, batch, rng)
    rand = np.arange(batch) % 2 == 1
    draw = 26 if rules.draw else 0  # RULES.md §6 two_player: the draw's decisions first
    for _ in range(rules.num_players * rules.hand_size + 12 + draw):
        acts = heuristic.act_state(state)
        play = (state.phase == PLAY) & rand
        acts[play] = random_legal_actions(state.legal, state.phase, rng)[play]
        yield state
        step(state, acts)


@pytest.mark.parametrize("rules", PLAY_OUT_RULES, ids=lambda r: f"{r.name}-{r.first_lead}")
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
