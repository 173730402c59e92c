"""The one play loop (`agents.play_loop.play`): grouping by owner, hooks, labels, one hand."""

from __future__ import annotations

import numpy as np
import pytest

from agents.play_loop import Turn, play
from agents.random_agent import RandomAgent
from spades_env.rules import Rules
from spades_env.state import DONE, init


class Counting(RandomAgent):
    """A random agent that records the batch sizes it is called with."""

    def __init__(self, seed: int) -> None:
        super().__init__(seed)
        self.calls: list[int] = []

    def act(self, view, obs, mask):
        self.calls.append(len(mask))
        return super().act(view, obs, mask)


def test_every_decision_of_a_hand_is_played_once_and_seen_by_the_hooks():
    rules = Rules()
    state = init(rules, 6, np.random.default_rng(0))
    owner = np.tile([0, 1, 0, 1], (6, 1))
    a, b = Counting(1), Counting(2)
    turns: list[Turn] = []
    hands = []
    decisions = play(state, owner, [a, b], on_turn=turns.append, on_hand=hands.append)
    # RULES.md §2: 4 bids and 52 cards a hand, one hand per game
    assert decisions == 6 * 56 == sum(a.calls) + sum(b.calls)
    assert sum((t.who >= 0).sum() for t in turns) == decisions
    assert sorted(np.concatenate([h.games for h in hands]).tolist()) == list(range(6))
    assert (state.phase == DONE).all()


@pytest.mark.parametrize("one_hand", [True, False])
def test_one_hand_stops_each_game_after_its_first_hand(one_hand):
    rules = Rules.build("standard", ["max_hands=3"])
    state = init(rules, 4, np.random.default_rng(1))
    hands = []
    play(state, np.zeros((4, 4), dtype=np.int64), [RandomAgent(0)], one_hand=one_hand,
         on_hand=hands.append)  # fmt: skip
    played = sum(len(h.games) for h in hands)
    assert played == (4 if one_hand else 12)


def test_the_labeller_labels_every_decision_and_plays_its_own_seats_without_a_second_call():
    rules = Rules()
    state = init(rules, 5, np.random.default_rng(2))
    owner = np.tile([0, 0, 1, 1], (5, 1))  # seats 0-1 the labeller, 2-3 another agent
    teacher, other = Counting(3), Counting(4)
    turns: list[Turn] = []
    play(state, owner, [teacher, other], on_turn=turns.append, labeller=teacher)
    assert sum(teacher.calls) == 5 * 56  # once per decision, its own seats included
    for t in turns:
        own = t.who == 0
        assert (t.actions[own] == t.labels[own]).all()
        assert t.mask[t.who >= 0, t.labels[t.who >= 0]].all()


def test_the_encoding_is_computed_only_when_read():
    rules = Rules()
    seen = []
    play(init(rules, 2, np.random.default_rng(3)), np.zeros((2, 4), dtype=np.int64),
         [RandomAgent(0)], on_turn=lambda t: seen.append(t.obs))  # fmt: skip
    assert all(o is None for o in seen)
    seen.clear()
    play(init(rules, 2, np.random.default_rng(3)), np.zeros((2, 4), dtype=np.int64),
         [RandomAgent(0)], on_turn=lambda t: seen.append(t.obs), obs_always=True)  # fmt: skip
    assert all(o is not None and o.shape[0] == 2 for o in seen)


class Viewing(RandomAgent):
    """A random agent that checks the view it is given against the whole batch's."""

    def __init__(self, seed: int, state) -> None:
        super().__init__(seed)
        self.state, self.checked = state, 0

    def act(self, view, obs, mask):
        from spades_env.observation import seat_view

        idx = np.flatnonzero(self.state.phase != DONE)[: len(mask)]
        whole = seat_view(self.state).take(idx)
        for name in whole.__dataclass_fields__:
            if name != "rules":
                assert np.array_equal(getattr(view, name), getattr(whole, name)), name
        self.checked += 1
        return super().act(view, obs, mask)


@pytest.mark.parametrize(
    "preset, options",
    [
        ("standard", {"blind_nil": "always", "blind_nil_exchange": True}),
        ("two_player", {}),
        ("auction", {}),
        ("jokers", {}),
    ],
)
def test_a_players_view_is_the_whole_batchs_view_of_its_games(preset, options):
    """The loop builds a player's seat view from its games' rows only: every field equals
    the whole batch's view taken at those games (blind nil and the exchange, the draw, the
    auction included)."""
    rules = Rules.preset(preset, **options)
    state = init(rules, 40, np.random.default_rng(3))
    agent = Viewing(4, state)
    play(state, np.zeros((40, rules.num_players), dtype=np.int64), [agent])
    assert agent.checked > 20
