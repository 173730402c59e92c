"""The fast single-game path equals the batched engine, state for state and observation
for observation, over many random hands and every rules option that changes the flow."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from spades_env.engine import IllegalActionError, legal_action_mask, random_legal_actions, step
from spades_env.observation import encode
from spades_env.rules import PRESETS, Rules
from spades_env.single import SingleGame

RULES = [
    Rules(),
    Rules(blind_nil="always"),
    Rules(blind_nil="always", blind_nil_exchange=True, nil_tricks="count"),
    Rules(first_lead="two_of_clubs", max_total_bid=13, target=200),
    Rules(lose_at=-200, max_hands=3),
    # RULES.md §6: every implemented preset, and the family open_hands option.
    *(Rules.preset(name) for name in PRESETS if name != "standard"),
    Rules.family(open_hands=True),
    Rules.suicide(blind_nil="always"),
    Rules.whiz(blind_nil="always"),
    # RULES.md §6 auction: naming trump before the exchange, and with one-player teams.
    Rules.auction(blind_nil="always", blind_nil_exchange=True, first_lead="two_of_clubs"),
    Rules.cutthroat(trump="named", max_hands=3),
    Rules.two_player(trump="named", max_hands=2),
]


def _assert_same(a, b) -> None:
    for f in dataclasses.fields(a):
        if f.name == "rules":
            continue
        np.testing.assert_array_equal(getattr(a, f.name), getattr(b, f.name), err_msg=f.name)


def _rules_id(rules: Rules) -> str:
    return rules.name if rules.name != "standard" else repr(rules)[6:60]


@pytest.mark.parametrize("rules", RULES, ids=_rules_id)
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_single_game_matches_batched_engine(rules: Rules, seed: int) -> None:
    rng = np.random.default_rng(seed)
    game = SingleGame(rules, seed=1000 + seed)
    twin = game.state.copy()
    hands = 0
    p = rules.num_players
    for _ in range((2 * p + 52) * 6):
        if game.done:
            break
        action = int(random_legal_actions(game.state.legal, game.state.phase, rng)[0])
        info = game.step(action)
        twin_info = step(twin, [action])
        _assert_same(game.state, twin)
        np.testing.assert_array_equal(info.hand_over, twin_info.hand_over)
        if not game.done:
            assert game.legal_list() == np.flatnonzero(legal_action_mask(twin)[0]).tolist()
        np.testing.assert_array_equal(info.hand_points, twin_info.hand_points)
        expected = encode(twin.take(np.zeros(p, dtype=np.int64)), np.arange(p))
        np.testing.assert_array_equal(game.obs, expected)
        hands += int(info.hand_over[0])
    assert hands >= 1


def test_single_game_illegal_action_raises_and_changes_nothing() -> None:
    game = SingleGame(Rules(blind_nil="never"), seed=7)
    before = game.state.copy()
    with pytest.raises(IllegalActionError, match="a bid is expected"):
        game.step(0)
    _assert_same(game.state, before)
    info = game.step(0, on_illegal="report")
    assert info.illegal[0]
    _assert_same(game.state, before)


def test_legal_mask_matches_engine() -> None:
    from spades_env.engine import legal_action_mask

    rng = np.random.default_rng(3)
    game = SingleGame(Rules(blind_nil="always"), seed=3)
    for _ in range(120):
        np.testing.assert_array_equal(
            game.legal_mask().astype(bool), legal_action_mask(game.state)[0]
        )
        game.step(int(random_legal_actions(game.state.legal, game.state.phase, rng)[0]))
