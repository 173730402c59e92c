"""The compiled rules core (spades_env/core/) against statements of the rules written
here and against the plain-Python reference (tests/spades_reference.py), for every trump
suit, table size and bid option; and the packed `State` it runs on."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import spades_reference as ref

from spades_env.cards import CARD_SUIT, DECKS, NUM_CARDS, SUIT_MASK, TWO_OF_CLUBS
from spades_env.core import deal as core_deal
from spades_env.core import rule_functions as core
from spades_env.core import scoring as core_scoring
from spades_env.core.rules_vector import (
    BID_FREE,
    BID_MIRROR,
    BID_SUICIDE,
    BID_WHIZ,
    BLIND_ALWAYS,
    BLIND_BEHIND,
    BLIND_NEVER,
    rules_vector,
)
from spades_env.engine import random_legal_actions, step, stop_games
from spades_env.rules import PRESETS, Rules
from spades_env.state import DONE, State, deal_hands, init

RNG_SEED = 20261201


def _random_hands(rng: np.random.Generator, n: int) -> list[int]:
    """Random subsets of the 54 card slots (0..13 cards, jokers included)."""
    out = []
    for _ in range(n):
        k = int(rng.integers(0, 14))
        cards = rng.choice(NUM_CARDS, size=k, replace=False)
        out.append(sum(1 << int(c) for c in cards))
    return out


def _suit_cards(suit: int) -> int:
    return int(SUIT_MASK[suit])


def _legal_by_statement(held, trick_size, lead, broken, trump, two_clubs) -> int:
    """RULES.md §3 in words: follow suit if you can; do not lead trump unbroken unless
    you hold only trumps; the first lead is the 2C under first_lead=two_of_clubs."""
    if trick_size > 0:
        follow = held & _suit_cards(lead)
        return follow or held
    if two_clubs:
        return held & (1 << TWO_OF_CLUBS)
    others = held & ~_suit_cards(trump)
    return held if broken or not others else others


@pytest.mark.parametrize(
    "kth_bit", [core._kth_bit_halving, core._kth_bit_deposit, core._kth_bit_deposit.py_func]
)
def test_kth_bit_finds_the_kth_set_bit(kth_bit) -> None:
    # kth_bit is the deposit (BMI2 pdep) version on x86 with BMI2, the halving elsewhere;
    # both, and the deposit's plain-Python form, give the k-th set bit.
    if kth_bit is core._kth_bit_deposit and core.kth_bit is not core._kth_bit_deposit:
        pytest.skip("the compiled deposit needs x86 BMI2")
    rng = np.random.default_rng(7)
    words = [1, 1 << 63, 2**64 - 1] + [int(w) for w in rng.integers(0, 2**64, 200, np.uint64)]
    for w in words:
        bits = [i for i in range(64) if w >> i & 1]
        for k, expected in enumerate(bits):
            assert kth_bit(np.uint64(w), k) == expected, (hex(w), k)


@pytest.mark.parametrize("trump", [0, 1, 2, 3])
def test_legal_cards_follow_the_statement_of_the_rules(trump: int) -> None:
    rng = np.random.default_rng(RNG_SEED + trump)
    for held in _random_hands(rng, 3000):
        size = int(rng.integers(0, 4))
        lead = int(rng.integers(0, 4))
        broken = bool(rng.integers(0, 2))
        two = bool(rng.integers(0, 2)) and size == 0
        got = int(core.legal_cards(np.uint64(held), size, lead, broken, trump, two))
        assert got == _legal_by_statement(held, size, lead, broken, trump, two)


def test_legal_cards_match_the_reference_in_a_standard_hand() -> None:
    # The reference's own legality, from a real position after some tricks.
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(200):
        deal = np.random.default_rng(int(rng.integers(1 << 30))).permutation(52)
        masks = [sum(1 << int(c) for c in deal[13 * s : 13 * s + 13]) for s in range(4)]
        hand = ref.RefHand(Rules(blind_nil="never"), masks, 0, [0, 0], [0, 0])
        for _ in range(4):
            hand.apply(ref.BID0 + 3)
        for _ in range(int(rng.integers(0, 40))):
            hand.apply(sorted(hand.legal())[int(rng.integers(len(hand.legal())))])
        seat = hand.turn
        held = sum(1 << c for c in hand.hand(seat))
        lead = ref.suit(hand.trick[0][1]) if hand.trick else -1
        got = int(core.legal_cards(np.uint64(held), len(hand.trick), lead, hand.broken, 0, False))
        assert {c for c in range(52) if got >> c & 1} == hand.legal()


def _strength_by_statement(card: int, lead: int, trump: int) -> tuple[int, int]:
    s = int(CARD_SUIT[card])
    rank = card % 13 if card < 52 else 13 + card - 52
    return (2, rank) if s == trump else (1, rank) if s == lead else (0, 0)


@pytest.mark.parametrize("trump", [0, 1, 2, 3])
@pytest.mark.parametrize("players", [2, 3, 4, 5])
def test_trick_winner_is_the_highest_trump_else_the_highest_card_led(trump, players) -> None:
    rng = np.random.default_rng(RNG_SEED + 10 * players + trump)
    for _ in range(2000):
        cards = rng.choice(NUM_CARDS, size=players, replace=False).astype(np.int8)
        leader = int(rng.integers(players))
        lead = int(CARD_SUIT[cards[leader]])
        got = core.trick_winner(cards, leader, players, lead, trump)
        best = max(range(players), key=lambda s: _strength_by_statement(int(cards[s]), lead, trump))
        assert got == best
        if trump == 0 and players == 4 and (cards < 52).all():
            order = [(leader + k) % 4 for k in range(4)]
            assert got == ref.trick_winner([(s, int(cards[s])) for s in order])


@pytest.mark.parametrize("trump", [0, 1, 2, 3])
def test_voids_shown_by_a_play(trump: int) -> None:
    for card in range(NUM_CARDS):
        suit = int(CARD_SUIT[card])
        for lead in range(4):
            # following: a card off the led suit shows the led suit void
            want = 0 if suit == lead else 1 << lead
            assert core.shown_voids(card, 2, lead, False, trump) == want
        # leading an unbroken trump shows only trumps were held; anything else, nothing
        want = (0b1111 ^ (1 << trump)) if suit == trump else 0
        assert core.shown_voids(card, 0, -1, False, trump) == want
        assert core.shown_voids(card, 0, -1, True, trump) == 0
        assert core.breaks_trump(card, trump) == (suit == trump)


def _bids_by_statement(min_bid, top, rule, spades, partner) -> set[int]:
    if rule == BID_MIRROR:
        return {spades}
    if rule == BID_WHIZ:
        return {0, spades}
    allowed = set(range(min_bid, top + 1))
    if rule == BID_SUICIDE and partner >= 0:
        return {0} if partner > 0 else allowed - {0}
    return allowed


@pytest.mark.parametrize("rule", [BID_FREE, BID_SUICIDE, BID_MIRROR, BID_WHIZ])
def test_legal_bids_follow_the_bid_options(rule: int) -> None:
    rng = np.random.default_rng(RNG_SEED + rule)
    for held in _random_hands(rng, 1000):
        min_bid, top = int(rng.integers(0, 2)), int(rng.integers(1, 18))
        partner = int(rng.integers(-1, 6))
        got = int(core.legal_bids(min_bid, top, rule, np.uint64(held), partner))
        spades = (held & _suit_cards(0)).bit_count()
        want = _bids_by_statement(min_bid, top, rule, spades, partner)
        assert {b for b in range(20) if got >> b & 1} == want


def test_bid_top_caps_the_total_of_the_bids() -> None:
    bids = np.array([3, 0, -1, 4], dtype=np.int8)
    assert core.bid_top(13, -1, bids, 4) == 13
    assert core.bid_top(13, 13, bids, 4) == 6
    assert core.bid_top(13, 20, bids, 4) == 13


@pytest.mark.parametrize("mode", [BLIND_NEVER, BLIND_BEHIND, BLIND_ALWAYS])
def test_blind_nil_offered_as_the_reference_says(mode: int) -> None:
    name = ("never", "when_behind_100", "always")[mode]
    rules = Rules(blind_nil=name)
    rng = np.random.default_rng(RNG_SEED + mode)
    for _ in range(500):
        scores = rng.integers(-300, 400, size=2).astype(np.int32)
        seat = int(rng.integers(4))
        got = core.blind_allowed(mode, BID_FREE, -1, scores, 2, seat % 2)
        assert got == ref.blind_offered(rules, scores.tolist(), seat)
    # RULES.md §6 suicide: never once the partner bid nil
    assert not core.blind_allowed(BLIND_ALWAYS, BID_SUICIDE, 0, np.zeros(2, np.int32), 2, 0)
    # one-player teams: behind the best other player
    scores = np.array([0, 150, 40], dtype=np.int32)
    assert core.blind_allowed(BLIND_BEHIND, BID_FREE, -1, scores, 3, 2)
    assert not core.blind_allowed(BLIND_BEHIND, BID_FREE, -1, scores, 3, 1)


@pytest.mark.parametrize(
    ("dealer", "bids", "namer"),
    [(0, [3, 4, 4, 2], 1), (1, [3, 4, 4, 2], 2), (3, [0, 0, 0, 0], 0), (2, [5, 0, 5, 1], 0)],
)
def test_trump_namer_is_the_first_highest_bidder(dealer, bids, namer) -> None:
    assert core.trump_namer(dealer, np.array(bids, dtype=np.int8), 4) == namer


def test_exchange_order_and_first_lead() -> None:
    blind = np.array([0, 1, 0, 0], dtype=np.int8)  # seat 1 blind nil: seats 1 and 3 pass
    passing = np.zeros(4, dtype=np.uint64)
    assert core.next_passer(blind, passing, 0, 4) == 1
    passing[1] = 0b11
    assert core.next_passer(blind, passing, 0, 4) == 3
    passing[3] = 0b1100
    assert core.next_passer(blind, passing, 0, 4) == -1
    hands = np.array([1, 1 << TWO_OF_CLUBS, 2, 4], dtype=np.uint64)
    assert core.first_leader(True, hands, 3, 4) == 1
    assert core.first_leader(False, hands, 3, 4) == 0


@pytest.mark.parametrize("mode", ["bags", "count"])
def test_score_hand_matches_the_reference(mode: str) -> None:
    rules = Rules(nil_tricks=mode)
    r = rules_vector(rules)
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(2000):
        tricks = rng.multinomial(13, [0.25] * 4).astype(np.int8)
        bids = rng.integers(0, 8, size=4).astype(np.int8)
        blind = (rng.random(4) < 0.3) & (bids == 0)
        pts, bags = np.zeros(2, np.int32), np.zeros(2, np.int32)
        contract, made = np.zeros(2, np.int32), np.zeros(2, bool)
        core_scoring.score_hand(r, bids, blind.astype(np.int8), tricks, pts, bags, contract, made)
        for team in range(2):
            want = ref.team_points(rules, bids.tolist(), blind.tolist(), tricks.tolist(), team)
            assert (int(pts[team]), int(bags[team])) == want


def test_game_winner_matches_the_reference() -> None:
    rules = Rules(lose_at=-200, max_hands=6)
    r = rules_vector(rules)
    rng = np.random.default_rng(RNG_SEED)
    for _ in range(2000):
        scores = rng.integers(-300, 600, size=2).astype(np.int32)
        hands = int(rng.integers(1, 8))
        want = ref.game_end(rules, scores.tolist(), hands)
        assert core_scoring.game_winner(r, scores, hands) == (-1 if want is None else want)


def _argsort_deal(rules: Rules, seed: int, hand_no: int) -> list[int]:
    """The deal as documented in core/deal.py, with numpy's stable argsort."""
    mask = (1 << 64) - 1

    def mix(x: int) -> int:
        x = (x + 0x9E3779B97F4A7C15) & mask
        x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & mask
        x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & mask
        return x ^ (x >> 31)

    cards = [c for c in range(NUM_CARDS) if int(DECKS[rules.deck]) >> c & 1]
    base = mix(seed ^ (hand_no * 0x9E3779B97F4A7C15 & mask))
    words = [mix((base + (i + 1) * 0xD1B54A32D192ED03) & mask) for i in range(len(cards))]
    order = np.argsort(np.array(words, dtype=np.uint64), kind="stable")
    k = rules.hand_size
    return [
        sum(1 << cards[i] for i in order[s * k : (s + 1) * k]) for s in range(rules.num_players)
    ]


@pytest.mark.parametrize("name", ["standard", "jokers", "three_player", "cutthroat_5"])
def test_deals_are_the_documented_shuffle(name: str) -> None:
    rules = Rules.preset(name)
    seeds = np.random.default_rng(RNG_SEED).integers(0, 2**63, size=50, dtype=np.uint64)
    got = deal_hands(rules, seeds, np.arange(50) % 7)
    for i, seed in enumerate(seeds.tolist()):
        assert got[i].tolist() == _argsort_deal(rules, seed, i % 7)


@pytest.mark.parametrize("buckets", [1, 3, 40, 4096])
def test_places_are_a_stable_sorts_positions(buckets: int) -> None:
    # Words crowded into few buckets (by their top 12 bits), with exact ties: the
    # counted ranks are a stable sort's positions.
    rng = np.random.default_rng(RNG_SEED)
    for n in (1, 2, 13, 52, 54, 64):
        for _ in range(30):
            top = rng.integers(0, buckets, size=n, dtype=np.uint64) << np.uint64(52)
            low = rng.integers(0, 4, size=n, dtype=np.uint64)  # ties within a bucket
            words = np.zeros(64, dtype=np.uint64)
            words[:n] = top | low
            ranks, occ, below = (np.zeros(64, dtype=np.uint64) for _ in range(3))
            core_deal.places(words, n, ranks, occ, below)
            order = np.argsort(words[:n], kind="stable")
            assert ranks[order].tolist() == list(range(n))


def test_a_deal_with_tied_words_keeps_card_order() -> None:
    # A tie between two words never happens in practice; the sort is stable anyway.
    out = np.zeros(64, dtype=np.int8)
    n = core_deal.shuffle(np.uint64((1 << 52) - 1), np.uint64(5), 0, out)
    assert n == 52 and sorted(out[:52].tolist()) == list(range(52))


def test_plain_python_functions_agree_with_the_compiled_ones() -> None:
    rng = np.random.default_rng(RNG_SEED)
    for held in _random_hands(rng, 300):
        args = (np.uint64(held), int(rng.integers(0, 4)), int(rng.integers(0, 4)), False, 1, False)
        assert core.legal_cards(*args) == core.legal_cards.py_func(*args)
        assert core.popcount(np.uint64(held)) == held.bit_count()


# ----------------------------------------------------------------------------- the packed State
def test_state_fields_are_views_of_one_buffer() -> None:
    state = init(Rules(), 3, seeds=[1, 2, 3])
    state.scores[1] = [40, -20]
    assert State.wrap(state.rules, state.buffer).scores[1].tolist() == [40, -20]
    state.bags = np.array([[1, 2], [3, 4], [5, 6]])  # assigning a field writes the buffer
    assert State.wrap(state.rules, state.buffer).bags.tolist() == [[1, 2], [3, 4], [5, 6]]
    other = state.copy()
    other.scores[:] = 0
    assert state.scores[1].tolist() == [40, -20]
    back = pickle.loads(pickle.dumps(state))
    back.phase[0] = DONE
    assert back.phase[0] == DONE and state.phase[0] != DONE
    assert back.buffer is not state.buffer and np.shares_memory(back.phase, back.buffer)


@pytest.mark.parametrize("name", PRESETS)
def test_stop_games_ends_them_and_the_rest_play_on(name: str) -> None:
    rules = Rules.preset(name)
    rng = np.random.default_rng(0)
    state = init(rules, 4, rng)
    scores = state.scores.copy()
    stop_games(state, [1, 3])
    assert state.phase.tolist()[1::2] == [DONE, DONE] and state.legal[1] == 0
    assert (state.scores == scores).all() and (state.winner == -1).all()
    before = state.copy()
    for _ in range(5):
        step(state, random_legal_actions(state.legal, state.phase, rng))
    assert (state.buffer[1::2] == before.buffer[1::2]).all()
    assert (state.history_len[0::2] == before.history_len[0::2] + 5).all()
