"""Properties of many random hands played in batches, checked against a small plain-Python
reference written here from RULES.md (it imports no engine table).

Every finished hand is replayed action by action by `check_hand`, which knows only the
deal, the dealer and the position before the hand, and asserts: the bidding order and
blind-nil offers (§2), the exchange (§2), whose turn it is, follow suit, the spade lead
rule and the first lead (§3), every trick winner (§3: the winner leads next), 13 tricks
and every card played exactly once (§1), and the hand's points, bags, bag penalty, new
scores and the end of the game (§4, §5).

The default run plays at least 100,000 hands in all (`DEFAULT_HANDS` per rules
configuration); the `slow` one (`pytest -m slow`) ten times as many.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, fields

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spades_env.engine import HandResult, random_legal_actions, reset_done, step
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, game_result, score_hand
from spades_env.state import init

# ----------------------------------------------------------------------------- reference
# Plain Python, written from RULES.md: cards are suit * 13 + rank, suits S H D C, ranks
# 2..A as 0..12 (the documented card ids); actions 0..51 cards, 54 + b bid b, 72 blind
# nil, 73 see hand (the documented action layout).
SPADES = 0
BID0, BLIND_NIL, SEE_HAND = 54, 72, 73
TWO_OF_CLUBS = 3 * 13 + 0


def suit(card: int) -> int:
    return card // 13


def rank(card: int) -> int:
    return card % 13


def trick_winner(plays: list[tuple[int, int]]) -> int:
    """RULES.md §3: the highest spade wins; with no spade, the highest card of the led
    suit. `plays` are (seat, card) in the order played."""
    led = suit(plays[0][1])
    spades = [(rank(c), s) for s, c in plays if suit(c) == SPADES]
    if spades:
        return max(spades)[1]
    return max((rank(c), s) for s, c in plays if suit(c) == led)[1]


def team_points(rules: Rules, bids, blind, tricks, team: int) -> tuple[int, int]:
    """RULES.md §4: (points, bags) of one team for one hand, before the bag penalty."""
    members = [team, team + 2]
    contract = sum(bids[m] for m in members if bids[m] > 0)
    nil_members = [m for m in members if bids[m] == 0]
    if rules.nil_tricks == "bags":
        judged = sum(tricks[m] for m in members if bids[m] > 0)
        nil_bags = sum(tricks[m] for m in nil_members)
    else:
        judged = sum(tricks[m] for m in members)
        nil_bags = 0
    points = bags = 0
    if judged >= contract:
        points += 10 * contract + (judged - contract)
        bags += judged - contract
    else:
        points -= 10 * contract
    for m in nil_members:
        value = rules.blind_nil_value if blind[m] else rules.nil_value
        points += value if tricks[m] == 0 else -value
    return points + nil_bags, bags + nil_bags


def blind_offered(rules: Rules, scores: list[int], seat: int) -> bool:
    """RULES.md §2 option blind_nil."""
    if rules.blind_nil == "never":
        return False
    if rules.blind_nil == "always":
        return True
    team = seat % 2
    return scores[1 - team] - scores[team] >= 100


@dataclass
class Hand:
    """One finished hand as plain Python values."""

    hand_no: int
    dealer: int
    deal: list[int]
    actions: list[tuple[int, int]]
    bids: list[int]
    blind: list[bool]
    tricks: list[int]
    scores_before: list[int]
    bags_before: list[int]
    points: list[int]
    bags_gained: list[int]
    penalty: list[int]
    scores: list[int]
    bags: list[int]
    game_over: bool
    winner: int


def hands_of(result: HandResult) -> Iterator[Hand]:
    hist = result.history.tolist()
    lens = result.history_len.tolist()
    cols = {f.name: getattr(result, f.name).tolist() for f in fields(Hand) if f.name != "actions"}
    for i in range(len(lens)):
        actions = [(h >> 7, h & 127) for h in hist[i][: lens[i]]]
        yield Hand(actions=actions, **{f: v[i] for f, v in cols.items()})


def check_hand(rules: Rules, h: Hand) -> None:
    """Replay one hand by the rules; assert the engine's record agrees."""
    held = [{c for c in range(52) if m >> c & 1} for m in h.deal]
    assert sorted(len(x) for x in held) == [13] * 4
    assert set().union(*held) == set(range(52))
    acts = iter(h.actions)

    # RULES.md §2: one round of bids from left of the dealer, blind decision first.
    bids, blind = [-1] * 4, [False] * 4
    for i in range(4):
        seat = (h.dealer + 1 + i) % 4
        s, a = next(acts)
        assert s == seat
        if blind_offered(rules, h.scores_before, seat):
            assert a in (BLIND_NIL, SEE_HAND)
            if a == BLIND_NIL:
                bids[seat], blind[seat] = 0, True
                continue
            s, a = next(acts)
            assert s == seat
        assert BID0 <= a <= BID0 + 13
        bids[seat] = a - BID0
        if rules.max_total_bid is not None:
            assert sum(b for b in bids if b > 0) <= rules.max_total_bid
    assert (bids, blind) == (h.bids, h.blind)

    # RULES.md §2 blind_nil_exchange: blind-nil bidders and partners pass 2 cards each.
    if rules.blind_nil_exchange:
        passers = [s for s in range(4) if blind[s] or blind[(s + 2) % 4]]
        order = sorted(passers, key=lambda s: (s - h.dealer - 1) % 4)
        passed: dict[int, list[int]] = {}
        for seat in order:
            for _ in range(2):
                s, a = next(acts)
                assert s == seat and a in held[seat] and a not in passed.get(seat, [])
                passed.setdefault(seat, []).append(a)
        for seat in order:
            held[seat] = (held[seat] - set(passed[seat])) | set(passed[(seat + 2) % 4])

    # RULES.md §3: 13 tricks.
    if rules.first_lead == "two_of_clubs":
        leader = next(s for s in range(4) if TWO_OF_CLUBS in held[s])
    else:
        leader = (h.dealer + 1) % 4
    broken = False
    tricks = [0] * 4
    seen: set[int] = set()
    for t in range(13):
        plays: list[tuple[int, int]] = []
        for i in range(4):
            seat = (leader + i) % 4
            s, card = next(acts)
            assert s == seat, "out of turn (or a wrong trick winner led)"
            hand = held[seat]
            assert card in hand and card not in seen
            if i == 0:
                if t == 0 and rules.first_lead == "two_of_clubs":
                    assert card == TWO_OF_CLUBS
                if suit(card) == SPADES and not broken:
                    assert all(suit(c) == SPADES for c in hand), "spade led unbroken"
            else:
                led = suit(plays[0][1])
                if any(suit(c) == led for c in hand):
                    assert suit(card) == led, "did not follow suit"
            hand.remove(card)
            seen.add(card)
            plays.append((seat, card))
            broken |= suit(card) == SPADES
        leader = trick_winner(plays)
        tricks[leader] += 1
    assert next(acts, None) is None
    assert len(seen) == 52 and not any(held)
    assert tricks == h.tricks

    # RULES.md §4: points and bags per team, then the bag counter.
    for team in range(2):
        points, bags = team_points(rules, bids, blind, tricks, team)
        total_bags = h.bags_before[team] + bags
        penalties = total_bags // rules.bag_limit
        assert h.points[team] == points
        assert h.bags_gained[team] == bags
        assert h.penalty[team] == penalties * rules.bag_penalty
        assert h.bags[team] == total_bags - penalties * rules.bag_limit
        assert h.scores[team] == h.scores_before[team] + points - h.penalty[team]

    # RULES.md §5: the end of the game.
    s0, s1 = h.scores
    trigger = max(s0, s1) >= rules.target
    trigger |= rules.lose_at is not None and min(s0, s1) <= rules.lose_at
    trigger |= rules.max_hands is not None and h.hand_no + 1 >= rules.max_hands
    over = trigger and s0 != s1
    assert h.game_over == over
    assert h.winner == ((0 if s0 > s1 else 1) if over else -1)


# ----------------------------------------------------------------------------- batches
def random_hands(rules: Rules, n_hands: int, batch: int, seed: int) -> Iterator[HandResult]:
    """Random legal play of whole games in one batch, restarting finished games, until
    `n_hands` hands have finished."""
    rng = np.random.default_rng(seed)
    state = init(rules, batch, rng)
    done = 0
    while done < n_hands:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            done += len(info.finished.games)
            yield info.finished
            reset_done(state, rng)


CONFIGS = [
    pytest.param(Rules(), id="standard"),
    pytest.param(
        Rules(nil_tricks="count", first_lead="two_of_clubs", max_total_bid=13, target=300),
        id="count-2c-max13",
    ),
    pytest.param(
        Rules(blind_nil="always", blind_nil_exchange=True, bag_limit=5, bag_penalty=50),
        id="blind-exchange-bags5",
    ),
    pytest.param(Rules(blind_nil="always", max_hands=3, lose_at=-200), id="max-hands-lose-at"),
]
DEFAULT_HANDS = 25_000  # per configuration: 100,000 hands in all
SLOW_HANDS = 250_000


def check_many(rules: Rules, n_hands: int, seed: int) -> int:
    count = 0
    for result in random_hands(rules, n_hands, batch=1024, seed=seed):
        for hand in hands_of(result):
            check_hand(rules, hand)
            count += 1
    return count


@pytest.mark.parametrize("rules", CONFIGS)
def test_random_hands_follow_the_rules_and_score_right(rules):
    assert check_many(rules, DEFAULT_HANDS, seed=1) >= DEFAULT_HANDS


@pytest.mark.slow
@pytest.mark.parametrize("rules", CONFIGS)
def test_a_million_random_hands_follow_the_rules_and_score_right(rules):
    assert check_many(rules, SLOW_HANDS, seed=2) >= SLOW_HANDS


def test_reference_trick_winner_examples():
    # The reference itself, on the tricks of RULES.md §3 (cards as suit * 13 + rank).
    ah, kh, two_h = 13 + 12, 13 + 11, 13 + 0
    two_s, three_s, ace_d = 0, 1, 26 + 12
    assert trick_winner([(0, two_h), (1, kh), (2, ace_d), (3, ah)]) == 3
    assert trick_winner([(0, ah), (1, two_s), (2, kh), (3, three_s)]) == 3
    assert trick_winner([(2, ace_d), (3, two_h), (0, kh), (1, ah)]) == 2


# ----------------------------------------------------------------------------- scoring
@st.composite
def hand_outcomes(draw):
    bids = [draw(st.integers(0, 13)) for _ in range(4)]
    blind = [draw(st.booleans()) and b == 0 for b in bids]
    cuts = sorted(draw(st.lists(st.integers(0, 13), min_size=3, max_size=3)))
    bounds = [0, *cuts, 13]
    tricks = [bounds[i + 1] - bounds[i] for i in range(4)]
    return bids, blind, tricks


@settings(max_examples=500, deadline=None)
@given(
    outcome=hand_outcomes(),
    mode=st.sampled_from(["bags", "count"]),
    before=st.tuples(st.integers(-500, 499), st.integers(-500, 499)),
    bags_before=st.tuples(st.integers(0, 9), st.integers(0, 9)),
)
def test_score_hand_and_apply_bags_agree_with_the_reference(outcome, mode, before, bags_before):
    bids, blind, tricks = outcome
    rules = Rules(nil_tricks=mode)
    hs = score_hand(rules, [bids], [blind], [tricks])
    scores, bags, penalty = apply_bags(
        rules, np.array(before) + hs.points[0], np.array(bags_before) + hs.bags[0]
    )
    for team in range(2):
        points, gained = team_points(rules, bids, blind, tricks, team)
        assert (int(hs.points[0, team]), int(hs.bags[0, team])) == (points, gained)
        total = bags_before[team] + gained
        assert int(penalty[team]) == 100 * (total // 10)
        assert int(bags[team]) == total % 10
        assert int(scores[team]) == before[team] + points - 100 * (total // 10)
    over, winner = game_result(rules, scores[None], np.array([1]))
    s0, s1 = scores.tolist()
    expected_over = max(s0, s1) >= 500 and s0 != s1
    assert bool(over[0]) == expected_over
    assert int(winner[0]) == ((0 if s0 > s1 else 1) if expected_over else -1)
