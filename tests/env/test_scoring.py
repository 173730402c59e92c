"""The pure scoring functions against every worked example of the rule texts and RULES.md §4-§5.

Seats 0 and 2 are team 0, seats 1 and 3 team 1 (RULES.md §1). A bid of 0 is nil.
"""

from __future__ import annotations

import numpy as np
import pytest

from spades_env.rules import Rules
from spades_env.scoring import apply_bags, game_result, score_hand

STANDARD = Rules()
COUNT = Rules(nil_tricks="count")
BOTH_MODES = pytest.mark.parametrize("rules", [STANDARD, COUNT], ids=["bags", "count"])


def team_score(rules: Rules, bids, tricks, blind=(False,) * 4) -> tuple[list[int], list[int]]:
    """(points, bags) per team of one hand."""
    hs = score_hand(rules, [bids], [blind], [tricks])
    return hs.points[0].tolist(), hs.bags[0].tolist()


def split(n: int) -> tuple[int, int]:
    """A team total split over two seats (both parts >= 1 when n >= 2)."""
    return (n + 1) // 2, n // 2


# RULES.md §4 and the rule texts: (team bid, team tricks, points, bags).
CONTRACT_EXAMPLES = [
    pytest.param(7, 7, 70, 0, id="seed001-7-bid-7-taken"),
    pytest.param(5, 8, 53, 3, id="seed001-5-bid-8-taken"),
    pytest.param(5, 5, 50, 0, id="seed000-5-5"),
    pytest.param(5, 6, 51, 1, id="seed000-5-6"),
    pytest.param(5, 8, 53, 3, id="seed000-5-8"),
    pytest.param(5, 4, -50, 0, id="seed000-5-4"),
    pytest.param(7, 6, -70, 0, id="seed000-7-bid-6-taken"),
    pytest.param(7, 2, -70, 0, id="seed000-7-bid-2-taken"),
    pytest.param(4, 13, 49, 9, id="all-overtricks-are-bags"),
]


@BOTH_MODES
@pytest.mark.parametrize(("bid", "taken", "points", "bags"), CONTRACT_EXAMPLES)
def test_contract_scores_ten_a_trick_plus_one_per_overtrick(rules, bid, taken, points, bags):
    b0, b2 = split(bid)
    t0, t2 = split(taken)
    rest = 13 - taken
    pts, bg = team_score(rules, [b0, 1, b2, 1], [t0, rest, t2, 0])
    assert (pts[0], bg[0]) == (points, bags)


@BOTH_MODES
def test_set_contract_scores_no_bags_however_many_tricks_over(rules):
    # Team 1 bids 4 + 4 and takes 7: set, -80, no bags (RULES.md §4; rule text 000's FAQ).
    pts, bg = team_score(rules, [3, 4, 3, 4], [3, 4, 3, 3])
    assert (pts[1], bg[1]) == (-80, 0)


@BOTH_MODES
def test_both_teams_score_in_the_same_hand(rules):
    # Rule text 001: "Väst 3, nord 1, öst 4 och syd 4 ger målen 5 och 7".
    pts, _ = team_score(rules, [1, 4, 4, 3], [2, 4, 4, 3])
    assert pts == [51, 70]


def test_seed_000_three_hand_table_through_score_hand_and_apply_bags():
    # Rule text 000 "Ett räkneexempel med tre givar". Hand 3 shows 4 + 4 = 8 tricks, so it is
    # used for scoring only (RULES.md §4). Columns: team 0 = Nord-Syd, team 1 = Öst-Väst.
    hands = [  # bids per seat, tricks per seat, points, cumulative bags, running total
        ([4, 3, 3, 2], [5, 3, 3, 2], [71, 50], [1, 0], [71, 50]),
        ([3, 3, 3, 3], [2, 5, 2, 4], [-60, 63], [1, 3], [11, 113]),
        ([2, 2, 2, 1], [2, 2, 2, 2], [40, 31], [1, 4], [51, 144]),
    ]
    scores, bags = np.zeros(2, dtype=np.int32), np.zeros(2, dtype=np.int32)
    for bids, tricks, points, bags_after, total in hands:
        hs = score_hand(STANDARD, [bids], [[False] * 4], [tricks])
        assert hs.points[0].tolist() == points
        scores, bags, penalty = apply_bags(STANDARD, scores + hs.points[0], bags + hs.bags[0])
        assert bags.tolist() == bags_after
        assert scores.tolist() == total
        assert penalty.tolist() == [0, 0]


@BOTH_MODES
def test_seed_002_hand_scores_71_against_minus_59(rules):
    # Rule text 002: Cleo (seat 3) deals; you (0) bid 4, Ada (1) 4, Bo (2) 3, Cleo (3) nil.
    # You and Bo take 8, Ada 4, Cleo 1: 71 against 40 + 1 - 100 = -59 (RULES.md §4).
    pts, bg = team_score(rules, [4, 4, 3, 0], [5, 4, 3, 1])
    assert pts == [71, -59]
    assert bg == [1, 1]


# (bids, tricks, points of team 1, bags of team 1) under each nil_tricks mode.
# Team 1 is seats 1 and 3; seat 3 bids nil.
NIL_MODE_CASES = [
    # Partner makes 4 alone, nil takes 1: both modes -59, one bag (rule text 002).
    ([4, 4, 4, 0], [4, 4, 4, 1], "bags", -59, 1),
    ([4, 4, 4, 0], [4, 4, 4, 1], "count", -59, 1),
    # Partner takes 3 of 4, nil takes 1: `bags` judges the contract on the partner alone
    # (set, -40) and the nil trick is +1 and a bag; `count` counts it (made, 40).
    ([4, 4, 4, 0], [5, 3, 4, 1], "bags", -139, 1),
    ([4, 4, 4, 0], [5, 3, 4, 1], "count", -60, 0),
    # Nil made, partner over by 2: same in both modes.
    ([4, 4, 4, 0], [4, 6, 3, 0], "bags", 142, 2),
    ([4, 4, 4, 0], [4, 6, 3, 0], "count", 142, 2),
    # Nil takes 3, partner makes exactly: `bags` +3 and 3 bags, `count` 3 overtricks.
    ([4, 4, 4, 0], [3, 4, 3, 3], "bags", -57, 3),
    ([4, 4, 4, 0], [3, 4, 3, 3], "count", -57, 3),
]


@pytest.mark.parametrize(("bids", "tricks", "mode", "points", "bags"), NIL_MODE_CASES)
def test_nil_tricks_mode_judges_the_contract_as_specified(bids, tricks, mode, points, bags):
    pts, bg = team_score(Rules(nil_tricks=mode), bids, tricks)
    assert (pts[1], bg[1]) == (points, bags)


@BOTH_MODES
@pytest.mark.parametrize(
    ("tricks", "points", "bags"),
    [
        pytest.param([7, 0, 6, 0], 200, 0, id="both-made"),
        pytest.param([7, 1, 5, 0], 1, 1, id="one-made-one-failed"),
        pytest.param([6, 1, 5, 1], -198, 2, id="both-failed"),
        pytest.param([0, 10, 0, 3], -187, 13, id="both-failed-all-tricks"),
    ],
)
def test_two_nils_on_a_team_are_judged_separately_and_their_tricks_are_bags(
    rules, tricks, points, bags
):
    # RULES.md §4: contract 0, no contract score, each nil on its own, each trick a bag.
    pts, bg = team_score(rules, [5, 0, 5, 0], tricks)
    assert (pts[1], bg[1]) == (points, bags)


@BOTH_MODES
@pytest.mark.parametrize(
    ("nil_taken", "points"),
    [
        pytest.param(0, 30 + 200, id="made"),
        pytest.param(1, 30 + 1 - 200, id="failed"),
    ],
)
def test_blind_nil_is_worth_plus_or_minus_200(rules, nil_taken, points):
    # Seat 2 bids blind nil, seat 0 bids 3 and takes 3; the nil's trick is a bag (bags)
    # or an overtrick (count): +1 either way.
    tricks = [3, 5, nil_taken, 5 - nil_taken]
    pts, _ = team_score(rules, [3, 5, 0, 3], tricks, blind=[False, False, True, False])
    assert pts[0] == points


@pytest.mark.parametrize(
    ("blind", "nil_taken", "points"),
    [
        pytest.param(False, 0, 100, id="nil-made"),
        pytest.param(False, 2, -100 + 2, id="nil-failed"),
        pytest.param(True, 0, 200, id="blind-nil-made"),
        pytest.param(True, 2, -200 + 2, id="blind-nil-failed"),
    ],
)
def test_nil_and_blind_nil_values(blind, nil_taken, points):
    # Seat 2 bids (blind) nil, seat 0 bids 3 and takes exactly 3.
    tricks = [3, 5, nil_taken, 13 - 8 - nil_taken]
    pts, _ = team_score(STANDARD, [3, 4, 0, 4], tricks, blind=[False, False, blind, False])
    assert pts[0] == 30 + points


@pytest.mark.parametrize(
    ("score", "bags", "after"),
    [
        pytest.param(253, 3, (253, 3, 0), id="seed000-253-points-3-bags"),
        pytest.param(259, 9, (259, 9, 0), id="nine-bags-no-penalty"),
        pytest.param(260, 10, (160, 0, 100), id="ten-bags-penalty"),
        pytest.param(103, 8 + 3, (3, 1, 100), id="eight-plus-three-carries-one"),
        pytest.param(300, 22, (100, 2, 200), id="two-penalties-at-once"),
        pytest.param(-59, 1, (-59, 1, 0), id="counter-not-last-digit"),
    ],
)
def test_bag_penalty_each_time_the_counter_reaches_ten(score, bags, after):
    s, b, p = apply_bags(STANDARD, np.array([[score, 0]]), np.array([[bags, 0]]))
    assert (int(s[0, 0]), int(b[0, 0]), int(p[0, 0])) == after


def test_bags_are_a_counter_independent_of_the_score():
    # Rule text 000: "253 points = 3 bags" describes a counter. Two teams on 253 with different
    # counters react differently to the same hand; the score's last digit plays no part.
    hs = score_hand(STANDARD, [[4, 4, 3, 3]], [[False] * 4], [[5, 4, 3, 1]])
    assert hs.points[0].tolist() == [71, -70] and hs.bags[0].tolist() == [1, 0]
    before, counters = np.array([253, 253]), np.array([3, 9])
    s, b, p = apply_bags(STANDARD, before + np.array([71, 0]), counters + np.array([1, 0]))
    assert (s.tolist(), b.tolist(), p.tolist()) == ([324, 253], [4, 9], [0, 0])
    s, b, p = apply_bags(STANDARD, before + np.array([71, 71]), counters + np.array([1, 1]))
    assert (s.tolist(), b.tolist(), p.tolist()) == ([324, 224], [4, 0], [0, 100])


@pytest.mark.parametrize(
    ("limit", "penalty", "bags", "after"),
    [
        pytest.param(5, 50, 7, (-50, 2, 50), id="limit-5-penalty-50"),
        pytest.param(5, 50, 4, (0, 4, 0), id="below-limit-5"),
        pytest.param(10, 0, 12, (0, 2, 0), id="penalty-0-still-resets"),
        pytest.param(3, 100, 13, (-400, 1, 400), id="limit-3-four-times"),
    ],
)
def test_bag_limit_and_bag_penalty_options(limit, penalty, bags, after):
    rules = Rules(bag_limit=limit, bag_penalty=penalty)
    s, b, p = apply_bags(rules, np.array([0]), np.array([bags]))
    assert (int(s[0]), int(b[0]), int(p[0])) == after


@pytest.mark.parametrize(
    ("option", "bids", "tricks", "points"),
    [
        pytest.param(False, [7, 0, 6, 0], [7, 0, 6, 0], [130, 200], id="off-13-made"),
        pytest.param(True, [7, 0, 6, 0], [7, 0, 6, 0], [260, 200], id="on-13-made-doubles"),
        pytest.param(True, [7, 1, 5, 0], [7, 0, 6, 0], [121, 100 - 10], id="on-12-no-double"),
        pytest.param(True, [7, 1, 6, 0], [7, 1, 5, 0], [-130, 10 + 100], id="on-13-set"),
    ],
)
def test_thirteen_bid_doubles(option, bids, tricks, points):
    pts, _ = team_score(Rules(thirteen_bid_doubles=option), bids, tricks)
    assert pts == points


def test_thirteen_bid_with_a_nil_trick_is_set_and_not_doubled_in_bags_mode():
    # Team 0: seat 0 bids 13, seat 2 nil and takes 1 of the team's 13 tricks. Under
    # nil_tricks=bags the contract is judged on seat 0 alone: 12 < 13 is set, -130, and a
    # set contract is never doubled (RULES.md §4: only a team that bids 13 and takes 13).
    rules = Rules(thirteen_bid_doubles=True)
    pts, bg = team_score(rules, [13, 0, 0, 0], [12, 0, 1, 0])
    assert pts[0] == -130 - 100 + 1
    assert bg[0] == 1


@pytest.mark.parametrize(
    ("option", "bid", "taken", "points", "bags"),
    [
        pytest.param(True, 10, 10, 200, 0, id="on-10-made"),
        pytest.param(True, 11, 12, 201, 1, id="on-11-over-1"),
        pytest.param(True, 10, 9, -200, 0, id="on-10-set"),
        pytest.param(True, 9, 9, 90, 0, id="on-9-unaffected"),
        pytest.param(False, 10, 10, 100, 0, id="off-10-made"),
        pytest.param(False, 11, 12, 111, 1, id="off-11-over-1"),
    ],
)
def test_ten_for_two_hundred(option, bid, taken, points, bags):
    b0, b2 = split(bid)
    t0, t2 = split(taken)
    pts, bg = team_score(Rules(ten_for_two_hundred=option), [b0, 1, b2, 1], [t0, 13 - taken, t2, 0])
    assert (pts[0], bg[0]) == (points, bags)


# RULES.md §5: (rules, scores after the hand, hands played) -> (over, winner).
GAME_RESULT_CASES = [
    pytest.param(Rules(), [499, 0], 5, False, -1, id="below-target"),
    pytest.param(Rules(), [500, 120], 5, True, 0, id="team0-reaches-500"),
    pytest.param(Rules(), [120, 530], 5, True, 1, id="team1-reaches-500"),
    pytest.param(Rules(), [510, 530], 5, True, 1, id="both-over-higher-wins"),
    pytest.param(Rules(), [560, 530], 5, True, 0, id="both-over-team0-higher"),
    pytest.param(Rules(), [520, 520], 5, False, -1, id="exact-tie-plays-on"),
    pytest.param(Rules(target=300), [300, 10], 3, True, 0, id="target-300"),
    pytest.param(Rules(target=300), [299, 10], 3, False, -1, id="target-300-not-reached"),
    pytest.param(Rules(max_hands=6), [100, 50], 6, True, 0, id="max-hands-reached"),
    pytest.param(Rules(max_hands=6), [100, 50], 5, False, -1, id="max-hands-not-reached"),
    pytest.param(Rules(max_hands=6), [80, 80], 6, False, -1, id="max-hands-tie-plays-on"),
    pytest.param(Rules(max_hands=6), [-40, 80], 7, True, 1, id="max-hands-after-tie"),
    pytest.param(Rules(lose_at=-200), [-200, 50], 2, True, 1, id="lose-at-reached"),
    pytest.param(Rules(lose_at=-200), [60, -250], 2, True, 0, id="lose-at-below"),
    pytest.param(Rules(lose_at=-200), [-199, 50], 2, False, -1, id="lose-at-not-reached"),
    pytest.param(Rules(), [-900, 50], 2, False, -1, id="no-lose-at-by-default"),
]


@pytest.mark.parametrize(("rules", "scores", "hands", "over", "winner"), GAME_RESULT_CASES)
def test_game_result(rules, scores, hands, over, winner):
    o, w = game_result(rules, np.array([scores]), np.array([hands]))
    assert (bool(o[0]), int(w[0])) == (over, winner)


def test_score_hand_is_batched_row_by_row():
    bids = [[4, 4, 3, 0], [7, 0, 6, 0], [5, 1, 5, 1]]
    tricks = [[5, 4, 3, 1], [7, 0, 6, 0], [4, 2, 5, 2]]
    blind = [[False] * 4] * 3
    batch = score_hand(STANDARD, bids, blind, tricks)
    for i in range(3):
        one = score_hand(STANDARD, [bids[i]], [blind[i]], [tricks[i]])
        assert batch.points[i].tolist() == one.points[0].tolist()
        assert batch.bags[i].tolist() == one.bags[0].tolist()
