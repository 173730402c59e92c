"""Determinization: sampled worlds never contradict the view, and are exactly uniform
(or exactly bid-weighted) over the consistent worlds, checked against enumeration."""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np
import pytest

from agents.montecarlo.sampling import (
    WorldSampler,
    knowledge,
    sample_worlds,
    sample_worlds_batch,
    world_violations,
)
from agents.montecarlo.world_weights import bid_probability, hand_tricks, world_bid_weights
from spades_env.cards import (
    BID_BASE,
    SPADE_MASK,
    TWO_OF_CLUBS,
    cards_to_mask,
    mask_to_cards,
    str_to_card,
)
from spades_env.engine import random_legal_actions, step
from spades_env.observation import SeatView, seat_view
from spades_env.rules import Rules
from spades_env.state import BID, DRAW, PLAY, State, init

stats = pytest.importorskip("scipy.stats")

RULES = {
    "standard": Rules(),
    "exchange": Rules(blind_nil="always", blind_nil_exchange=True),
    "two_of_clubs": Rules(first_lead="two_of_clubs"),
    "jokers": Rules.preset("jokers"),
    "mirror": Rules.preset("mirror"),
    "whiz": Rules.preset("whiz", blind_nil="always", blind_nil_exchange=True),
    "three_player": Rules.preset("three_player"),
    "cutthroat_5": Rules.preset("cutthroat_5"),
}


# ----------------------------------------------------------------------------- helpers
def random_views(rules: Rules, seed: int, batch: int, every: int = 1):
    """(state copy, view) pairs at every `every`-th step of random games, random seats."""
    rng = np.random.default_rng(seed)
    state = init(rules, batch, rng)
    for t in range(2 * rules.num_players + 2 * 4 + 52 + (52 if rules.draw else 0)):
        if t % every == 0:
            yield state.copy(), seat_view(state, rng.integers(0, rules.num_players, size=batch))
        step(state, random_legal_actions(state.legal, state.phase, rng))


def enumerate_worlds(view: SeatView, game: int = 0) -> list[tuple[int, ...]]:
    """Every world that agrees with the view, by brute force over all deals of the free
    cards (filtered by `world_violations`, independently of the sampler's counting)."""
    know = knowledge(view, game)
    free = mask_to_cards(know.free)
    seats = [s for s, n in enumerate(know.need) if n > 0]
    out = []

    def deal(i: int, rest: list[int], hands: list[int]) -> None:
        if i == len(seats):
            world = tuple(hands)
            if not world_violations(view, np.array(world, dtype=np.uint64), game):
                out.append(world)
            return
        for chosen in itertools.combinations(rest, know.need[seats[i]]):
            h = list(hands)
            h[seats[i]] |= int(cards_to_mask(list(chosen)))
            deal(i + 1, [c for c in rest if c not in chosen], h)

    deal(0, free, list(know.known))
    return out


def small_endings(seed: int, count: int, max_worlds: int = 300):
    """Views of one game each, late in a hand, where voids constrain the hidden hands."""
    found = []
    for _, view in random_views(Rules(blind_nil="never"), seed, 64):
        for g in range(64):
            if len(found) >= count or view.phase[g] != PLAY or view.tricks_played[g] < 9:
                continue
            one = view.take([g])
            others = [s for s in range(4) if s != int(one.seat[0])]
            if not any(one.voids[0, s] for s in others):
                continue
            n = WorldSampler(knowledge(one)).count
            if 3 <= n <= max_worlds:
                found.append(one)
    return found


@functools.cache
def endings() -> list[tuple[SeatView, list[tuple[int, ...]]]]:
    """Eight constrained small endings with every world that agrees with each."""
    views = small_endings(30, 4, max_worlds=600) + small_endings(31, 4, max_worlds=600)
    return [(v, enumerate_worlds(v)) for v in views]


def chi_square_p(observed: dict, expected: dict) -> float:
    keys = list(expected)
    obs = np.array([observed.get(k, 0) for k in keys], dtype=float)
    exp = np.array([expected[k] for k in keys], dtype=float)
    assert set(observed) <= set(expected), "a sampled world is not among the enumerated"
    small = exp < 5  # pool the rare worlds into one bin
    if small.any():
        obs = np.append(obs[~small], obs[small].sum())
        exp = np.append(exp[~small], exp[small].sum())
    return float(stats.chisquare(obs, exp * obs.sum() / exp.sum()).pvalue)


# ----------------------------------------------------------------------------- soundness
def _after_bidding(rules: Rules, rng: np.random.Generator) -> tuple[State, int, int, int]:
    """A hand at its first lead, the seat to act, a hidden seat with a non-nil bid holding
    the ace of spades, and another hidden seat (searched over deals)."""
    ace = str_to_card("AS")
    while True:
        state = init(rules, 1, rng)
        while state.phase[0] != PLAY:
            step(state, random_legal_actions(state.legal, state.phase, rng))
        seat = int(state.to_act[0])
        owner = next(s for s in range(4) if int(state.hands[0, s]) >> ace & 1)
        if owner != seat and state.bids[0, owner] > 0:
            return state, seat, owner, next(s for s in range(4) if s not in (seat, owner))


@pytest.mark.parametrize("name", ["mirror", "whiz"])
def test_checker_refuses_a_world_against_a_forced_bid(name: str) -> None:
    """RULES.md §6 mirror / whiz: moving a spade between two hidden hands after the bids
    makes a world whose bid is not legal for its spades (`core.rule_functions.legal_bids`)."""
    state, seat, owner, taker = _after_bidding(Rules.preset(name), np.random.default_rng(5))
    hands = [int(h) for h in state.hands[0]]
    spade = 1 << str_to_card("AS")
    other = next(c for c in mask_to_cards(hands[taker]) if not int(SPADE_MASK) >> c & 1)
    for s in (owner, taker):  # the ace and the other card change hands
        hands[s] ^= spade | (1 << other)
    found = world_violations(seat_view(state, [seat]), np.array(hands, dtype=np.uint64))
    assert any(f"seat {owner} bid" in v and f"under {name}" in v for v in found), found


@pytest.mark.parametrize("name", list(RULES))
def test_sampled_worlds_never_contradict_the_view(name: str) -> None:
    batch = 32 if name in ("standard", "exchange", "two_of_clubs") else 10
    rng = np.random.default_rng(1)
    views = exchanged = 0
    for state, view in random_views(RULES[name], 11, batch):
        for g in range(view.batch_size):
            truth = state.hands[g] & ~state.played[g]
            assert world_violations(view, truth, g) == []  # the checker accepts the truth
            for world in sample_worlds(view, 3, rng, game=g):
                assert world_violations(view, world, g) == [], (name, g)
            views += 1
            exchanged += bool(view.passed[g] and view.phase[g] == PLAY)
    assert views >= 60 * batch  # 2000+ views for the standard table
    if name == "exchange":
        assert exchanged > 50  # the exchange constraint was exercised


@pytest.mark.parametrize("name", [*RULES, "two_player"])
def test_compiled_dealing_draws_the_same_worlds_as_numpy(name: str) -> None:
    """The compiled deal (`use_kernel`) makes the numpy path's draws of the generator and
    returns its worlds, bit for bit, in every situation the rules create."""
    rules = RULES.get(name) or Rules.preset(name)
    kinds = set()
    for _, view in random_views(rules, 5, 4, every=5):
        for g in range(view.batch_size):
            if int(view.phase[g]) == DRAW:
                continue
            sampler = WorldSampler(knowledge(view, g))
            if len(sampler.seats) > 1 and not sampler.exact_ints:
                kinds.add(sampler.unconstrained)
            for n in (1, 37):
                got = sampler.sample(n, np.random.default_rng([g, n]))
                reference = WorldSampler(knowledge(view, g))
                reference.use_kernel = False
                rng = np.random.default_rng([g, n])
                want = reference.sample(n, rng)
                assert got.dtype == want.dtype and np.array_equal(got, want), (name, g, n)
                rng_after = np.random.default_rng([g, n])
                sampler.sample(n, rng_after)
                assert rng_after.random() == rng.random()  # the same number of draws
    assert kinds == {True, False}  # both the shuffle and the suit-by-suit deal ran


def test_two_player_worlds_after_the_draw_never_contradict_the_view() -> None:
    """RULES.md §6 two_player: the hidden hand comes from the cards the seat never saw
    (those it looked at and discarded are out), with the right count; sampling before
    the draw is over is refused."""
    rules = Rules.preset("two_player")
    rng = np.random.default_rng(3)
    views = 0
    for state, view in random_views(rules, 12, 8):
        for g in range(view.batch_size):
            if view.phase[g] == DRAW:
                with pytest.raises(NotImplementedError, match="after the"):
                    knowledge(view, g)
                continue
            truth = state.hands[g] & ~state.played[g]
            assert world_violations(view, truth, g) == []
            seen = int(view.seen[g])
            for world in sample_worlds(view, 3, rng, game=g):
                assert world.shape == (2,)
                assert world_violations(view, world, g) == []
                assert not int(world[1 - int(view.seat[g])]) & seen
            views += 1
    assert views >= 200


@pytest.mark.parametrize("seed", range(2))
def test_sampled_deals_replay_the_public_history_legally(seed: int) -> None:
    """Each world, with the cards played put back, is a deal on which the game's actual
    bids and plays are all legal (the engine raises on an illegal action)."""
    rules = Rules(blind_nil="never")
    rng = np.random.default_rng(seed)
    for state, view in random_views(rules, 20 + seed, 8, every=5):
        for g in range(view.batch_size):
            if view.phase[g] != PLAY:
                continue
            worlds = sample_worlds(view, 4, rng, game=g)
            deals = worlds | view.played_by[g][None, :]
            replay = init(rules, 4, seeds=[0], deals=deals, dealer=state.dealer[g])
            for a in state.history[g, : state.history_len[g]]:
                step(replay, np.full(4, int(a) & 0x7F))


def test_partner_holds_the_passed_cards() -> None:
    rng = np.random.default_rng(3)
    checked = 0
    for _state, view in random_views(RULES["exchange"], 5, 32, every=4):
        for g in range(view.batch_size):
            passed = int(view.passed[g]) & ~int(view.played[g])
            if view.phase[g] != PLAY or not passed:
                continue
            partner = (int(view.seat[g]) + 2) % 4
            worlds = sample_worlds(view, 8, rng, game=g)
            assert ((worlds[:, partner] & np.uint64(passed)) == passed).all()
            checked += 1
    assert checked > 20


def test_first_leader_holds_two_of_clubs() -> None:
    rules = Rules(blind_nil="never", first_lead="two_of_clubs")
    rng = np.random.default_rng(4)
    state = init(rules, 16, rng)
    while (state.phase == BID).any():
        step(state, random_legal_actions(state.legal, state.phase, rng))
    view = seat_view(state, (state.to_act + 1) % 4)
    for g in range(16):
        worlds = sample_worlds(view, 16, rng, game=g)
        assert (worlds[:, state.to_act[g]] >> np.uint64(TWO_OF_CLUBS) & np.uint64(1)).all()


def test_hidden_own_hand_is_sampled_too() -> None:
    rules = Rules(blind_nil="always")
    state = init(rules, 1, np.random.default_rng(0))
    view = seat_view(state)
    assert view.hand_hidden[0]
    worlds = sample_worlds(view, 5, np.random.default_rng(1))
    assert (np.bitwise_count(worlds) == 13).all()
    assert WorldSampler(knowledge(view)).count == math.factorial(52) // math.factorial(13) ** 4


# ----------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("case", range(8))
def test_world_count_equals_enumeration(case: int) -> None:
    view, worlds = endings()[case]
    assert WorldSampler(knowledge(view)).count == len(worlds)


@pytest.mark.parametrize("case", range(8))
def test_uniform_sampling_is_exact_chi_square(case: int) -> None:
    view, worlds = endings()[case]
    n = 40 * len(worlds)
    drawn = sample_worlds(view, n, np.random.default_rng(100 + case))
    observed: dict = {}
    for w in map(tuple, drawn.tolist()):
        observed[w] = observed.get(w, 0) + 1
    p = chi_square_p(observed, {w: n / len(worlds) for w in worlds})
    assert p > 1e-3, (p, len(worlds))


def _view_with_model_bids(seed: int, tricks_played: int) -> SeatView:
    """A game whose seats bid round(t(hand)) (so the bids fit the model), then random
    play; seat 0's view after `tricks_played` tricks."""
    rules = Rules(blind_nil="never")
    rng = np.random.default_rng(seed)
    state = init(rules, 1, rng)
    while state.phase[0] == BID:
        t = hand_tricks(state.hands[0, state.to_act[0]])
        step(state, np.array([BID_BASE + round(float(t))]))
    while state.tricks_played[0] < tricks_played or state.trick_size[0]:
        step(state, random_legal_actions(state.legal, state.phase, rng))
    return seat_view(state, np.array([0]))


@pytest.mark.parametrize("seed", range(3))
def test_bid_weighted_sampling_matches_the_model_chi_square(seed: int) -> None:
    view = _view_with_model_bids(seed, 10)
    worlds = enumerate_worlds(view)
    weights = world_bid_weights(view, np.array(worlds, dtype=np.uint64))
    assert weights.max() > 3 * weights.min()  # the bids do tell worlds apart
    n = 20 * len(worlds)
    expected = {w: n * x / weights.sum() for w, x in zip(worlds, weights, strict=True)}
    drawn = sample_worlds(view, n, np.random.default_rng(seed), weight="bids")
    observed: dict = {}
    for w in map(tuple, drawn.tolist()):
        observed[w] = observed.get(w, 0) + 1
    assert chi_square_p(observed, expected) > 1e-3
    for w in drawn:
        assert world_violations(view, w) == []


def test_hand_tricks_counts_honours_and_long_spades() -> None:
    hand = "AS KS QS JS TS 2H AH KD 3D QC 4C 5C 6C"
    mask = cards_to_mask([str_to_card(c) for c in hand.split()])
    # spades A 1 + K 1 + Q .5 + 2 long; AH 1; KD (2 cards) 1; QC (4 cards) .5
    assert hand_tricks(mask) == 7.0


@pytest.mark.parametrize("t", [0.0, 2.5, 7.0, 13.0])
def test_bid_probabilities_sum_to_one_and_peak_at_the_count(t: float) -> None:
    p = bid_probability(np.arange(14), t)
    assert p.sum() == pytest.approx(1.0)
    assert abs(int(p.argmax()) - t) <= 0.5


def test_batch_sampling_gives_worlds_for_every_game() -> None:
    rng = np.random.default_rng(6)
    _, view = next(random_views(Rules(), 6, 5))
    worlds = sample_worlds_batch(view, 7, rng)
    assert worlds.shape == (5, 7, 4) and worlds.dtype == np.uint64
    for g in range(5):
        assert all(world_violations(view, w, g) == [] for w in worlds[g])
