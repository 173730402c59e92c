"""The RULES.md §6 presets in the engine: hand-built deals for the rule that makes each
preset different, and random-play properties of whole games for every preset."""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.cards import (
    BID_BASE,
    BIG_JOKER,
    BLIND_NIL,
    CARD_BIT,
    DECKS,
    DRAW_DISCARD,
    DRAW_KEEP,
    LITTLE_JOKER,
    SPADE_MASK,
    mask_to_cards,
    str_to_card,
)
from spades_env.engine import legal_action_mask, random_legal_actions, step
from spades_env.observation import encode, obs_slices, seat_view
from spades_env.rules import PLANNED_PRESETS, PRESETS, Rules, RulesError
from spades_env.scoring import game_result, score_hand
from spades_env.state import BID, BLIND, DONE, DRAW, init

VARIANTS = [name for name in PRESETS if name != "standard"]


def _cards(text: str) -> list[int]:
    return [str_to_card(c) for c in text.split()]


def _suit_deal(rules: Rules) -> np.ndarray:
    """Seat 0 all clubs, seat 1 all hearts, seat 2 all diamonds, seat 3 all spades."""
    deck = mask_to_cards(DECKS[rules.deck])
    by_suit = {s: [c for c in deck if c < 52 and c // 13 == s] for s in range(4)}
    hands = [by_suit[3], by_suit[1], by_suit[2], by_suit[0]]
    return np.array([hands])


def _legal_bids(state) -> list[int]:
    mask = legal_action_mask(state)[0]
    return [a - BID_BASE for a in np.flatnonzero(mask) if BID_BASE <= a < BLIND_NIL]


# ----------------------------------------------------------------------------- presets
@pytest.mark.parametrize(
    ("name", "players", "hand", "teams", "target"),
    [
        ("family", 4, 13, 4, 25),
        ("jokers", 4, 13, 2, 500),
        ("three_player", 3, 17, 3, 300),
        ("cutthroat", 4, 13, 4, 500),
        ("cutthroat_3", 3, 17, 3, 300),
        ("cutthroat_5", 5, 10, 5, 500),
    ],
)
def test_preset_table_shape(name, players, hand, teams, target) -> None:
    r = Rules.preset(name)
    assert (r.num_players, r.hand_size, r.num_teams, r.target) == (players, hand, teams, target)
    assert int(DECKS[r.deck]).bit_count() == players * hand


@pytest.mark.parametrize(
    ("name", "missing"),
    [("jokers", "2H 2D"), ("three_player", "2C"), ("cutthroat_5", "2C 2D")],
)
def test_preset_decks_remove_the_named_twos(name, missing) -> None:
    deck = int(DECKS[Rules.preset(name).deck])
    for card in _cards(missing):
        assert not deck >> card & 1
    assert bool(deck >> LITTLE_JOKER & 1) == (name == "jokers")


def test_every_preset_of_rules_md_is_implemented() -> None:
    """RULES.md §6: auction, the last one, is built; none is left refused as planned."""
    assert PLANNED_PRESETS == () and "auction" in PRESETS
    assert Rules.preset("auction") == Rules(name="auction", trump="named")


def test_cutthroat_players_option_picks_the_table() -> None:
    assert Rules.from_options("num_players=5", preset="cutthroat") == Rules.preset("cutthroat_5")
    with pytest.raises(RulesError, match="3, 4 or 5"):
        Rules.cutthroat(6)
    with pytest.raises(RulesError, match="partnerships"):
        Rules(num_players=3, hand_size=17, deck="no_2c")


@pytest.mark.parametrize("name", PRESETS)
def test_presets_round_trip_through_dict(name) -> None:
    r = Rules.preset(name)
    assert Rules.from_dict(r.to_dict()) == r


# ----------------------------------------------------------------------------- family
@pytest.mark.parametrize(("bid", "took", "points"), [(3, 3, 8), (3, 5, 5), (4, 2, 2), (1, 1, 6)])
def test_family_scores_seed_000_table(bid, took, points) -> None:
    rest = 13 - took
    hs = score_hand(Rules.family(), [[bid, 1, 1, 1]], [[False] * 4], [[took, rest, 0, 0]])
    assert hs.points[0, 0] == points
    assert (hs.bags == 0).all()


def test_family_has_no_nil_and_first_to_25_wins() -> None:
    state = init(Rules.family(), 1, seeds=[3])
    assert state.phase[0] == BID
    assert _legal_bids(state) == list(range(1, 14))
    over, winner = game_result(Rules.family(), [[24, 26, 3, 10]], [4])
    assert over[0] and winner[0] == 1


def test_family_open_hands_shows_every_hand() -> None:
    from spades_env.observation import encode, obs_slices

    rules = Rules.family(open_hands=True)
    state = init(rules, 1, seeds=[5])
    sl = obs_slices(rules)["open_hands"]
    obs = encode(state, [0])[0, sl].reshape(3, -1)
    for r in range(1, 4):
        assert mask_to_cards(state.hands[0, r]) == np.flatnonzero(obs[r - 1]).tolist()


# ----------------------------------------------------------------------------- jokers
def test_jokers_big_beats_little_beats_ace_of_spades() -> None:
    rules = Rules.jokers()
    deck = mask_to_cards(DECKS["jokers"])
    clubs = [c for c in deck if 39 <= c < 52]
    hearts = [c for c in deck if 13 <= c < 26]
    diamonds = [c for c in deck if 26 <= c < 39]
    spades = [c for c in deck if c < 13]
    deal = [clubs, [*hearts, BIG_JOKER], [*diamonds, LITTLE_JOKER], spades]
    state = init(rules, 1, seeds=[0], deals=np.array([deal]), dealer=[3])
    for _ in range(4):
        step(state, [BID_BASE + 1])
    for card in (str_to_card("2C"), BIG_JOKER, LITTLE_JOKER, str_to_card("AS")):
        step(state, [card])
    assert state.tricks_won[0].tolist() == [0, 1, 0, 0]
    assert state.broken[0]


# ----------------------------------------------------------------------------- bids
def test_mirror_forces_the_spade_count() -> None:
    rules = Rules.mirror()
    state = init(rules, 1, seeds=[0], deals=_suit_deal(rules), dealer=[3])
    assert _legal_bids(state) == [0]  # seat 0: no spades, so nil
    for _ in range(3):
        step(state, [BID_BASE])
    assert _legal_bids(state) == [13]  # seat 3: thirteen spades


def test_whiz_offers_nil_or_the_spade_count() -> None:
    rules = Rules.whiz(blind_nil="never")
    state = init(rules, 1, seeds=[0], deals=_suit_deal(rules), dealer=[3])
    for _ in range(3):
        step(state, [BID_BASE])
    assert _legal_bids(state) == [0, 13]


def test_suicide_second_partner_completes_exactly_one_nil() -> None:
    state = init(Rules.suicide(blind_nil="always"), 1, seeds=[9], dealer=[3])
    assert state.phase[0] == BLIND
    step(state, [BLIND_NIL + 1])  # seat 0 sees the hand
    step(state, [BID_BASE + 3])  # seat 0 bids 3
    step(state, [BLIND_NIL + 1])  # seat 1 sees
    step(state, [BID_BASE])  # seat 1 bids nil
    step(state, [BLIND_NIL + 1])  # seat 2 sees: its partner bid 3, so it must bid nil
    assert _legal_bids(state) == [0]
    step(state, [BID_BASE])
    # seat 3: the partner's nil is the team's nil: no blind nil, and no nil.
    assert state.phase[0] == BID
    assert _legal_bids(state) == list(range(1, 14))


# ----------------------------------------------------------------------------- random play
def _check_hand(rules: Rules, res, k: int) -> None:
    p = rules.num_players
    acts = res.history[k, : res.history_len[k]] & 0x7F
    plays = acts[acts < BID_BASE]
    dealt = int(np.bitwise_or.reduce(res.deal[k]))
    assert sorted(plays.tolist()) == mask_to_cards(dealt)  # each card once
    assert (np.bitwise_count(res.deal[k]) == rules.hand_size).all()
    if rules.draw:  # RULES.md §6 two_player: 26 draw decisions, half the stock discarded
        assert int(((acts == DRAW_KEEP) | (acts == DRAW_DISCARD)).sum()) == 2 * rules.hand_size
        assert dealt & ~int(DECKS[rules.deck]) == 0
    else:
        assert dealt == int(DECKS[rules.deck])
    assert int(res.tricks[k].sum()) == rules.hand_size
    bids = res.bids[k]
    spades = [int(np.bitwise_count(res.deal[k, s] & SPADE_MASK)) for s in range(p)]
    if rules.bid_constraint == "mirror":
        assert bids.tolist() == spades
    if rules.bid_constraint == "whiz":
        assert all(b in (0, n) for b, n in zip(bids, spades, strict=True))
    if rules.bid_constraint == "suicide":
        assert [int((bids[[t, t + 2]] == 0).sum()) for t in (0, 1)] == [1, 1]
    assert (bids >= rules.min_bid).all()
    np.testing.assert_array_equal(
        res.scores[k], res.scores_before[k] + res.points[k] - res.penalty[k]
    )


@pytest.mark.parametrize("name", VARIANTS)
def test_random_play_properties(name) -> None:
    rules = Rules.preset(name, max_hands=3)
    rng = np.random.default_rng(0)
    state = init(rules, 16, rng)
    hands = 0
    # RULES.md §5: a tie at the top after max_hands plays on, so allow a few more hands.
    for _ in range(8 * rules.num_players * (2 * rules.hand_size + 2)):
        if (state.phase == DONE).all():
            break
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            for k in range(info.finished.games.size):
                _check_hand(rules, info.finished, k)
                hands += 1
    assert (state.phase == DONE).all()
    assert hands >= 3 * 16


def test_three_player_deals_seventeen_without_the_two_of_clubs() -> None:
    state = init(Rules.three_player(), 8, seeds=np.arange(8))
    assert (np.bitwise_count(state.hands) == 17).all()
    assert not (state.hands & CARD_BIT[str_to_card("2C")]).any()


# ----------------------------------------------------------------------------- two_player
def test_two_player_draw_keep_and_discard_sequencing() -> None:
    """RULES.md §6 two_player: keep the top card (the next is discarded unseen), or
    discard it (and keep the next); players alternate from the left of the dealer."""
    rules = Rules.two_player()
    state = init(rules, 1, seeds=[5], dealer=[1])
    stock = state.stock[0, :52].tolist()
    assert sorted(stock) == list(range(52)) and state.phase[0] == DRAW
    assert state.to_act[0] == 0  # left of dealer 1 in a two-seat table
    assert legal_action_mask(state)[0].nonzero()[0].tolist() == [DRAW_KEEP, DRAW_DISCARD]
    step(state, [DRAW_KEEP])  # seat 0 keeps stock[0]; stock[1] is discarded unseen
    assert int(state.hands[0, 0]) == 1 << stock[0] and int(state.seen[0, 0]) == 0
    assert state.to_act[0] == 1 and state.stock_pos[0] == 2
    step(state, [DRAW_DISCARD])  # seat 1 discards stock[2] (seen) and keeps stock[3]
    assert int(state.hands[0, 1]) == 1 << stock[3] and int(state.seen[0, 1]) == 1 << stock[2]
    view0, view1 = seat_view(state, [0]), seat_view(state, [1])
    assert view0.looking[0] == stock[4] and view1.looking[0] == -1  # only the drawer looks
    assert int(view0.seen[0]) == 0  # seat 1's discard is face down
    obs = encode(state, [0])[0]
    sl = obs_slices(rules)
    assert obs[sl["looking"]].nonzero()[0].tolist() == [stock[4]]
    assert obs[sl["stock"]][0] == 48
    for k in range(24):
        step(state, [DRAW_KEEP if k % 2 else DRAW_DISCARD])
    # The stock is empty: 13 cards each, half the deck unseen, bidding from seat 0.
    assert (np.bitwise_count(state.hands[0]) == 13).all()
    assert int(state.hands[0, 0] & state.hands[0, 1]) == 0
    np.testing.assert_array_equal(state.deal, state.hands)
    assert state.phase[0] == BID and state.to_act[0] == 0
    # Seat 0 discarded on every turn after the first: it holds every second card it kept.
    kept0 = [stock[0]] + [stock[4 * t + 1] for t in range(1, 13)]
    assert sorted(mask_to_cards(state.hands[0, 0])) == sorted(kept0)
    unseen = int(DECKS["standard"]) & ~int(state.hands[0].sum()) & ~int(state.seen[0].sum())
    obs0, obs1 = encode(state, [0])[0], encode(state, [1])[0]
    for card in mask_to_cards(unseen):  # unseen discards are in nobody's encoding
        assert obs0[sl["seen"]][card] == 0 and obs1[sl["seen"]][card] == 0


def test_two_player_plays_thirteen_tricks_with_one_player_teams() -> None:
    rules = Rules.two_player(max_hands=1)
    rng = np.random.default_rng(4)
    state = init(rules, 8, rng)
    results = []
    while not (state.phase == DONE).all():
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            results.append(info.finished)
    res = results[0]
    assert (res.tricks.sum(axis=1) == 13).all()
    assert res.points.shape == (8, 2)  # one team per player
    expected = score_hand(rules, res.bids, res.blind, res.tricks)
    np.testing.assert_array_equal(res.points, expected.points)


def test_two_player_is_refused_without_the_draw_and_with_blind_nil() -> None:
    with pytest.raises(RulesError, match="draw"):
        Rules(num_players=2, hand_size=26, partnerships=False)
    with pytest.raises(RulesError, match="blind_nil=never"):
        Rules.two_player(blind_nil="always")


def test_two_player_hand_built_deal_skips_the_draw() -> None:
    rules = Rules.two_player()
    deal = np.array(
        [
            [
                _cards("AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"),
                _cards("AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H"),
            ]
        ]
    )
    state = init(rules, 1, seeds=[0], deals=deal, dealer=[1])
    assert state.phase[0] == BID and state.to_act[0] == 0


def test_two_player_records_replay_through_the_draw() -> None:
    from spades_env.records import hand_records, replay

    rules = Rules.two_player(max_hands=2)
    rng = np.random.default_rng(2)
    state = init(rules, 4, rng)
    replayed = 0
    while not (state.phase == DONE).all():
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            for record in hand_records(rules, info.finished):
                assert replay(record) == record
                replayed += 1
    assert replayed >= 8
