"""No view meant for one seat shows what that seat may not see, on every preset.

The Gymnasium single-seat env's ``ansi`` render shows the learner's own cards and hides
the other hands (every hand only under open_hands); the whole table is the named
`render_table()`. The JSON and English views are checked on every decision in
test_text_view.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.cards import card_to_str, mask_to_cards
from spades_env.gym_env import SpadesEnv
from spades_env.observation import hand_hidden
from spades_env.rules import PRESETS, Rules

CONFIGS = [(name, {}) for name in PRESETS] + [
    ("standard", {"open_hands": True, "blind_nil": "never"}),
    ("standard", {"blind_nil": "always"}),
]


def _hidden_cards(env: SpadesEnv) -> set[str]:
    """Cards the learner may not see: in other seats' hands now and never played."""
    state = env.game.state
    rules = env.rules
    held = set()
    unlooked = hand_hidden(state.take([0] * rules.num_players), np.arange(rules.num_players))
    for s in range(rules.num_players):
        if (s in env.seats and not unlooked[s]) or rules.open_hands:
            continue
        held |= set(mask_to_cards(int(state.hands[0, s]) & ~int(state.played[0])))
    return {card_to_str(c, unicode=True) for c in held}


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}{o}" for n, o in CONFIGS])
def test_ansi_render_shows_only_the_learner(name, options):
    rules = Rules.preset(name, **options)
    env = SpadesEnv(rules=rules, render_mode="ansi", episode="hand")
    rng = np.random.default_rng(0)
    env.reset(seed=3)
    steps = 0
    hidden_seen = 0
    for _ in range(60):
        text = env.render()
        hidden = _hidden_cards(env)
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("trick")]
        for card in hidden:
            assert not any(card in ln.split() for ln in lines), (name, card, text)
        hidden_seen += len(hidden)
        table = env.render_table()  # the whole table, by name: every hand shows
        state = env.game.state
        for s in range(rules.num_players):
            for c in mask_to_cards(int(state.hands[0, s]) & ~int(state.played[0])):
                assert card_to_str(c, unicode=True) in table
        mask = env.action_masks()
        _, _, term, trunc, _ = env.step(int(rng.choice(np.flatnonzero(mask))))
        steps += 1
        if term or trunc:
            break
    assert steps > 5
    if not rules.open_hands:
        assert hidden_seen > 0  # the check looked at hidden cards
