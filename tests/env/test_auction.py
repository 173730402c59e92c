"""RULES.md §6 `auction` in the engine: who names trump, what the named suit does in play
(RULES.md §3 with the named suit in the place of spades), and random-play properties
checked against plain-Python rules written here, independently of the engine's tables."""

from __future__ import annotations

import numpy as np
import pytest
from engine_helpers import act, bid_all, cards, fill_deal, start

from spades_env.cards import (
    BID_BASE,
    CARD_SUIT,
    HEARTS,
    NAME_TRUMP,
    NUM_CARDS,
    SPADES,
    SUIT_NAMES,
    mask_to_cards,
)
from spades_env.engine import (
    IllegalActionError,
    explain_illegal,
    legal_action_mask,
    random_legal_actions,
    step,
)
from spades_env.observation import encode, obs_slices, seat_view
from spades_env.records import hand_records, replay
from spades_env.render import render_record, render_state
from spades_env.rules import Rules, RulesError
from spades_env.single import SingleGame
from spades_env.state import DONE, PLAY, TRUMP, init

AUCTION = Rules.auction(blind_nil="never")


def _legal_cards(state) -> list[int]:
    return [a for a in np.flatnonzero(legal_action_mask(state)[0]) if a < NUM_CARDS]


def _name(state, suit: int) -> None:
    act(state, NAME_TRUMP + suit)


# ----------------------------------------------------------------------------- rules
def test_auction_preset_is_standard_with_a_named_trump() -> None:
    assert Rules.preset("auction") == Rules(name="auction", trump="named")
    assert Rules.from_options("trump=named") == Rules(trump="named")
    assert Rules.from_dict(Rules.auction(target=300).to_dict()) == Rules.auction(target=300)


@pytest.mark.parametrize(
    ("options", "words"),
    [
        ({"deck": "jokers"}, "jokers"),
        ({"bid_constraint": "mirror", "blind_nil": "never"}, "mirror"),
        ({"bid_constraint": "whiz"}, "whiz"),
        ({"trump": "hearts"}, "allowed: spades, named"),
    ],
)
def test_named_trump_refuses_options_that_count_spades(options, words) -> None:
    with pytest.raises(RulesError, match=words) as err:
        Rules.auction(**options)
    assert "\n" not in str(err.value)


# ----------------------------------------------------------------------------- naming
@pytest.mark.parametrize(
    ("dealer", "bids", "namer"),
    [
        (3, (3, 5, 5, 2), 1),  # North, East, South, West bid: East is first of the 5s
        (0, (4, 4, 4, 4), 1),  # East bids first (left of the dealer North): all equal
        (1, (2, 0, 6, 6), 0),  # South, West, North, East: North is first of the 6s
        (2, (0, 0, 0, 0), 3),  # four nils: the first bidder, West, names
        (3, (0, 1, 0, 0), 1),  # a nil counts 0
    ],
)
def test_highest_bidder_names_trump_first_bidder_among_equals(dealer, bids, namer) -> None:
    state = start(AUCTION, dealer=dealer)
    bid_all(state, *bids)
    assert state.phase[0] == TRUMP and state.to_act[0] == namer
    legal = np.flatnonzero(legal_action_mask(state)[0]).tolist()
    assert legal == [NAME_TRUMP + s for s in range(4)]
    assert "name the trump suit" in explain_illegal(state, 0, 0)
    game = SingleGame(AUCTION, deal=fill_deal({}).reshape(4, 13), dealer=dealer)
    for b in bids:
        game.step(BID_BASE + b)
    assert (game.phase, game.to_act) == (TRUMP, namer)


def test_blind_nil_counts_zero_and_play_starts_left_of_the_dealer() -> None:
    state = start(Rules.auction(blind_nil="always"), dealer=3)
    bid_all(state, "blind nil", 2, 2, 1)
    assert state.to_act[0] == 1 and state.trump[0] == -1  # East: first of the 2s
    _name(state, HEARTS)
    assert state.phase[0] == PLAY and state.to_act[0] == 0 and state.trump[0] == HEARTS


# ----------------------------------------------------------------------------- play
def _hearts_trump(fixed: dict[int, str], voids: dict[int, str] | None = None):
    """North bids highest and names hearts; North leads the first trick."""
    state = start(AUCTION, fill_deal(fixed, voids), dealer=3)
    bid_all(state, 5, 1, 1, 1)
    _name(state, HEARTS)
    return state


def test_a_low_heart_trumps_the_ace_of_spades_when_hearts_are_trump() -> None:
    state = _hearts_trump({0: "AS 3C", 1: "2H", 2: "KS", 3: "QS"}, voids={1: "S"})
    for card in ("AS", "2H", "KS", "QS"):
        act(state, card)
    assert state.tricks_won[0].tolist() == [0, 1, 0, 0]
    assert state.to_act[0] == 1 and bool(state.broken[0])  # a trump was played
    assert state.voids[0, 1] >> SPADES & 1  # East showed out of spades


def test_spades_are_led_freely_but_trump_waits_until_broken() -> None:
    state = _hearts_trump({0: "AS 2S AH KH 4D 5C"})
    legal = _legal_cards(state)
    hand = mask_to_cards(int(state.hands[0, 0]))
    assert legal == [c for c in hand if CARD_SUIT[c] != HEARTS]
    assert cards("AS")[0] in legal
    reason = "hearts are trump and not broken yet (RULES.md §3, §6 auction)"
    assert explain_illegal(state, 0, cards("AH")[0]) == reason
    with pytest.raises(IllegalActionError, match="hearts are trump and not broken"):
        act(state, "AH")


def test_a_leader_holding_only_trumps_may_lead_one_and_shows_it() -> None:
    hearts = "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H"
    state = _hearts_trump({0: hearts})
    assert sorted(_legal_cards(state)) == sorted(cards(hearts))
    act(state, "2H")
    assert bool(state.broken[0])
    assert int(state.voids[0, 0]) == 0b1101  # every suit but hearts


def _winner(trick: list[int], leader: int, trump: int) -> int:
    """RULES.md §3 on plain ints: the highest trump, else the highest of the led suit."""
    led = trick[leader] // 13

    def key(s: int) -> tuple[int, int]:
        suit, rank = divmod(trick[s], 13)
        return (2 if suit == trump else 1 if suit == led else 0, rank)

    return max(range(len(trick)), key=key)


def test_trump_spades_plays_exactly_like_standard() -> None:
    """Named ♠, every state of the play equals the standard game's (same deals, cards)."""
    rng = np.random.default_rng(11)
    seeds = np.arange(100, 132, dtype=np.uint64)
    standard = init(Rules(blind_nil="never"), 32, seeds=seeds)
    auction = init(AUCTION, 32, seeds=seeds)
    for _ in range(2 * 56):
        acts = random_legal_actions(standard.legal, standard.phase, rng)
        step(standard, acts)
        step(auction, acts)
        if (auction.phase == TRUMP).any():
            assert (auction.phase == TRUMP).all()
            step(auction, np.full(32, NAME_TRUMP + SPADES))
        for field in ("phase", "to_act", "legal", "trick", "tricks_won", "voids", "broken"):
            np.testing.assert_array_equal(getattr(auction, field), getattr(standard, field))
        np.testing.assert_array_equal(auction.scores, standard.scores)


# ----------------------------------------------------------------------------- properties
def _namer(dealer: int, bids: list[int]) -> int:
    order = [(dealer + 1 + k) % 4 for k in range(4)]
    return min(order, key=lambda s: (-bids[s], order.index(s)))


def test_random_auction_hands_follow_the_rules_written_out() -> None:
    rules = Rules.auction(max_hands=3, blind_nil="always")
    rng = np.random.default_rng(5)
    state = init(rules, 64, rng)
    hands = 0
    while not (state.phase == DONE).all():
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is None:
            continue
        res = info.finished
        for k, record in enumerate(hand_records(rules, res)):
            hist = res.history[k, : res.history_len[k]].astype(np.int64)
            seats, acts = (hist >> 7).tolist(), (hist & 0x7F).tolist()
            named = [(s, a - NAME_TRUMP) for s, a in zip(seats, acts, strict=True) if a >= 76]
            assert len(named) == 1
            namer, trump = named[0]
            assert namer == _namer(int(res.dealer[k]), res.bids[k].tolist())
            assert record["trump"] == SUIT_NAMES[trump] and res.trump[k] == trump
            plays = [(s, a) for s, a in zip(seats, acts, strict=True) if a < NUM_CARDS]
            assert sorted(a for _, a in plays) == list(range(52))  # each card once
            tricks = [0] * 4
            broken = False
            for t in range(13):
                trick = [-1] * 4
                lead_seat, lead = plays[4 * t]
                # RULES.md §3: no trump lead before broken unless only trumps are held
                if lead // 13 == trump and not broken:
                    left = [a for s, a in plays[4 * t :] if s == lead_seat]
                    assert all(c // 13 == trump for c in left)
                for s, a in plays[4 * t : 4 * t + 4]:
                    trick[s] = a
                    broken |= a // 13 == trump
                tricks[_winner(trick, lead_seat, trump)] += 1
            assert tricks == res.tricks[k].tolist()
            assert replay(record) == record
            hands += 1
    assert hands >= 3 * 64


# ----------------------------------------------------------------------------- what seats see
def test_trump_block_is_zero_until_named_then_one_hot_for_every_seat() -> None:
    state = start(AUCTION, dealer=3)
    sl = obs_slices(AUCTION)
    assert sl["trump"].stop - sl["trump"].start == 4 and "trump" in obs_slices(Rules())
    assert obs_slices(Rules())["trump"].stop == obs_slices(Rules())["trump"].start
    bid_all(state, 3, 4, 2, 1)
    assert not encode(state)[0, sl["trump"]].any()
    assert encode(state)[0, sl["phase"]].tolist() == [0, 0, 0, 0, 0, 0, 1]
    _name(state, HEARTS)
    for seat in range(4):
        assert encode(state, [seat])[0, sl["trump"]].tolist() == [0, 1, 0, 0]
    assert seat_view(state).trump.tolist() == [HEARTS]
    assert "trump ♥ hearts (not broken)" in render_state(state)


def test_record_and_render_name_the_trump_and_who_named_it() -> None:
    state = start(AUCTION, dealer=3)
    bid_all(state, 3, 4, 2, 1)
    _name(state, HEARTS)
    rng = np.random.default_rng(0)
    records = []
    while not records:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            records = hand_records(AUCTION, info.finished)
    assert records[0]["trump"] == "hearts" and [1, "trump hearts"] in records[0]["actions"]
    assert "trump ♥ hearts (named by East)" in render_record(records[0])
    assert "trump" not in hand_records(Rules(), _one_standard_hand())[0]


def _one_standard_hand():
    state = start(Rules(blind_nil="never"), dealer=3)
    rng = np.random.default_rng(1)
    while True:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            return info.finished
