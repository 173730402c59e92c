"""Observations: the documented shape, what a seat sees, and that nothing leaks of the
cards it cannot see (RULES.md §2: own hand hidden before the blind-nil decision)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from engine_helpers import act, bid_all, fill_deal, lowest_legal, start

from spades_env.cards import CARD_BIT, CARD_SUIT, NUM_CARDS, mask_to_cards
from spades_env.engine import HISTORY_SEAT_SHIFT, random_legal_actions, step
from spades_env.observation import (
    OBS_VERSION,
    encode,
    obs_blocks,
    obs_size,
    obs_slices,
    seat_view,
)
from spades_env.rules import Rules
from spades_env.state import PLAY, State, init


def test_observation_has_a_version_and_blocks_that_add_up():
    assert OBS_VERSION >= 1
    rules = Rules()
    assert sum(n for _, n in obs_blocks(rules)) == obs_size(rules)
    sl = obs_slices(rules)
    assert sl["hand"] == slice(0, NUM_CARDS)
    assert max(s.stop for s in sl.values()) == obs_size(rules)


@pytest.mark.parametrize(
    "rules",
    [Rules(), Rules(blind_nil="always", blind_nil_exchange=True), Rules(blind_nil="never")],
    ids=["standard", "blind-exchange", "never"],
)
def test_encode_shape_is_obs_size_in_every_phase(rules):
    rng = np.random.default_rng(0)
    state = init(rules, 16, rng)
    for _ in range(70):
        for seats in (None, 0, 3):
            obs = encode(state, seats=seats)
            assert obs.shape == (16, obs_size(rules)) and obs.dtype == np.int16
        step(state, random_legal_actions(state.legal, state.phase, rng))


# ----------------------------------------------------------------------------- no leaks
def history(state: State) -> list[int]:
    n = int(state.history_len[0])
    return [int(h) & ((1 << HISTORY_SEAT_SHIFT) - 1) for h in state.history[0, :n]]


def swapped_deal(state: State, a: int, b: int) -> np.ndarray | None:
    """The deal with one unplayed card of each of seats a and b exchanged, same suit, so
    that every play so far stays legal; None if they share no unplayed suit."""
    unplayed = ~int(state.played[0])
    ha = mask_to_cards(int(state.hands[0, a]) & unplayed)
    hb = mask_to_cards(int(state.hands[0, b]) & unplayed)
    for ca in ha:
        cb = next((c for c in hb if CARD_SUIT[c] == CARD_SUIT[ca]), None)
        if cb is not None:
            deal = state.deal[0].copy()
            deal[a] ^= CARD_BIT[ca] | CARD_BIT[cb]
            deal[b] ^= CARD_BIT[ca] | CARD_BIT[cb]
            return deal[None]
    return None


def twin_states(seed: int, steps: int, observer: int) -> tuple[State, State, int]:
    """A game after `steps` actions, and the same game from a deal that differs only in
    unplayed cards of two seats other than `observer`; also one of those two seats."""
    rules = Rules(blind_nil="never")
    state = init(rules, 1, seeds=[seed], dealer=3)
    for _ in range(steps):
        step(state, lowest_legal(state))
    others = [(observer + i) % 4 for i in (1, 2, 3)]
    pairs = [(a, b) for a in others for b in others if a < b]
    a, b = next(p for p in pairs if swapped_deal(state, *p) is not None)
    twin = init(rules, 1, seeds=[seed], deals=swapped_deal(state, a, b), dealer=3)
    for action in history(state):
        step(twin, [action])
    assert (twin.hands != state.hands).any()
    return state, twin, a


def view_arrays(state: State, seat: int) -> dict[str, np.ndarray]:
    view = seat_view(state, seats=seat)
    return {f.name: getattr(view, f.name) for f in dataclasses.fields(view) if f.name != "rules"}


@pytest.mark.parametrize("steps", [0, 4, 9, 27, 40])
@pytest.mark.parametrize("observer", [0, 1, 2, 3])
def test_hidden_cards_of_other_seats_do_not_change_an_observation(steps, observer):
    state, twin, other = twin_states(seed=41 + observer, steps=steps, observer=observer)
    assert (encode(state, seats=observer) == encode(twin, seats=observer)).all()
    a, b = view_arrays(state, observer), view_arrays(twin, observer)
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
    # ...while a seat whose cards differ does see the difference.
    assert (encode(state, seats=other) != encode(twin, seats=other)).any()


def test_own_hand_is_hidden_while_the_blind_decision_is_open():
    rules = Rules(blind_nil="always")
    state = start(rules, seed=5)
    # Exchange North's hand with West's: North, yet to decide, cannot tell them apart.
    deal = state.deal.copy()
    deal[0, [0, 3]] = deal[0, [3, 0]]
    twin = init(rules, 1, seeds=[5], deals=deal, dealer=3)
    for seat in (0, 1, 2):
        assert (encode(state, seats=seat) == encode(twin, seats=seat)).all()
    assert not seat_view(state, seats=0).hand.any()
    assert seat_view(state, seats=0).hand_hidden.all()
    act(state, "see hand")
    act(twin, "see hand")
    assert (encode(state, seats=0) != encode(twin, seats=0)).any()


# ----------------------------------------------------------------------------- content
def test_encoding_is_relative_to_the_observer():
    state = start(Rules(blind_nil="never"), seed=9)  # dealer West: North bids first
    bid_all(state, 3, 5, "nil", 2)
    sl = obs_slices(state.rules)
    k = 17 + 2  # one-hot width per seat: not bid yet, then bids 0..17
    for observer in range(4):
        obs = encode(state, seats=observer)[0]
        bids = obs[sl["bids"]].reshape(4, k)
        # relative seat r is absolute seat observer + r
        expected = [[3, 5, 0, 2][(observer + r) % 4] for r in range(4)]
        assert [int(np.argmax(row)) - 1 for row in bids] == expected
        hand = obs[sl["hand"]]
        assert np.flatnonzero(hand).tolist() == mask_to_cards(int(state.hands[0, observer]))
        assert obs[sl["dealer"]].tolist() == [int(r == (3 - observer) % 4) for r in range(4)]


def test_cards_on_the_table_and_played_are_seen_by_everyone():
    state = start(Rules(blind_nil="never"), seed=9)
    bid_all(state, 3, 5, "nil", 2)
    assert state.phase[0] == PLAY
    card = int(lowest_legal(state)[0])
    step(state, [card])
    sl = obs_slices(state.rules)
    for observer in range(4):
        obs = encode(state, seats=observer)[0]
        rel = (0 - observer) % 4  # North played it
        table = obs[sl["table"]].reshape(4, NUM_CARDS)
        played_by = obs[sl["played_by"]].reshape(4, NUM_CARDS)
        assert table[rel, card] == 1 and table.sum() == 1
        assert played_by[rel, card] == 1 and played_by.sum() == 1
        assert obs[sl["played_trick"]][card] == 1
        view = seat_view(state, seats=observer)
        assert int(view.played_by[0, 0]) == 1 << card


def test_seat_view_shows_own_hand_and_legal_only_to_the_seat_to_act():
    state = start(Rules(blind_nil="never"), seed=9)
    bid_all(state, 3, 5, "nil", 2)
    to_act = int(state.to_act[0])
    for seat in range(4):
        view = seat_view(state, seats=seat)
        assert int(view.hand[0]) == int(state.hands[0, seat])
        assert int(view.legal[0]) == (int(state.legal[0]) if seat == to_act else 0)


def test_shown_voids_are_never_wrong():
    # `voids` is public inference (a seat that did not follow, or led a spade before
    # spades were broken); it must hold for the cards the seat really has left.
    rng = np.random.default_rng(2)
    state = init(Rules(blind_nil="always", blind_nil_exchange=True), 256, rng)
    shown = 0
    for _ in range(400):
        left = state.hands & ~state.played[:, None]  # (B, P)
        for s in range(4):
            suit_mask = np.uint64(((1 << 13) - 1) << (13 * s))
            void = (state.voids >> np.uint8(s)) & 1 == 1
            shown += int(void.sum())
            assert not ((left & suit_mask) != 0)[void].any()
        step(state, random_legal_actions(state.legal, state.phase, rng))
    assert shown > 0


def test_a_seat_that_does_not_follow_is_shown_void():
    deal = fill_deal({0: "AH", 1: "2C"}, voids={1: "H"})
    state = start(Rules(blind_nil="never"), deal)
    bid_all(state, 1, 1, 1, 1)
    act(state, "AH")
    assert int(state.voids[0, 1]) == 0
    act(state, "2C")
    assert int(state.voids[0, 1]) == 1 << 1  # hearts
    view = seat_view(state, seats=3)
    assert int(view.voids[0, 1]) == 1 << 1
