"""experiments.bid_analysis on hand-made log rows with known answers."""

from __future__ import annotations

import json
import math

import pandas as pd
import pytest
from matplotlib.figure import Figure

from agents.dd.cache import DDCache
from experiments.bid_analysis import FIGURE_FILES, analyze, figures, save_figures
from experiments.bid_analysis import double_dummy as dd
from experiments.bid_analysis.intervals import mean_interval, rate_interval, wilson
from experiments.bid_analysis.log_frames import check_rows, load_log
from experiments.bid_analysis.report import cell, confusion_view, report_tables
from experiments.tournament.bid_stats import bid_position, score_diffs, seat_table, situation
from experiments.tournament.results_log import LogError
from experiments.tournament.summary import t975
from spades_env.cards import card_to_str
from spades_env.rules import Rules

RULES = Rules().to_dict()


def hand_row(
    deal: int,
    side: int,
    bids: list[int],
    tricks: list[int],
    made: list[bool],
    *,
    dealer: int = 0,
    seats: tuple[str, str] = ("X", "Y"),
    bags: tuple[int, int] = (0, 0),
    before: tuple[int, int] = (0, 0),
    blind: tuple[bool, ...] = (False,) * 4,
) -> dict:
    """One log row; team k holds seats k and k + 2. Scores: a stand-in 10 a hand."""
    a, b = seats
    contract = [sum(x for x in bids[k::2] if x > 0) for k in range(2)]
    score = [10, 10]
    return {
        "deal": deal,
        "side": side,
        "hand": 0,
        "dealer": dealer,
        "rules": RULES,
        "seats": [a, b, a, b],
        "teams": [a, b],
        "bids": bids,
        "blind": list(blind),
        "tricks": tricks,
        "contract": contract,
        "made": made,
        "bags_gained": list(bags),
        "hand_score": score,
        "scores": [before[k] + score[k] for k in range(2)],
    }


# Team X (seats 0, 2) bids 3 + 4 and takes 3 + 6 (made, 2 bags); Y bids 2 + nil, takes
# 2 + 2: contract 2 made, the nil failed.
ROW0 = hand_row(0, 0, [3, 2, 4, 0], [3, 2, 6, 2], [True, True], bags=(2, 0))
# X bids 5 + nil, takes 4 + 0 (set; the nil made); Y bids 2 + 2, takes 6 + 3 (5 bags).
ROW1 = hand_row(1, 0, [5, 2, 0, 2], [4, 6, 0, 3], [False, True], dealer=1, bags=(0, 5))
ROWS = [ROW0, ROW1]


@pytest.mark.parametrize(
    ("dealer", "seat", "position"),
    [(0, 1, 1), (0, 2, 2), (0, 3, 3), (0, 0, 4), (3, 0, 1), (3, 3, 4), (1, 2, 1)],
)
def test_bidding_position_starts_left_of_the_dealer(dealer, seat, position):
    assert bid_position(seat, dealer, 4) == position


@pytest.mark.parametrize(
    ("diff", "expected"),
    [(0, "level"), (99, "level"), (100, "ahead"), (250, "ahead"), (-99, "level"), (-100, "behind")],
)
def test_situation_is_ahead_or_behind_by_at_least_100(diff, expected):
    assert situation(diff) == expected


def test_score_diffs_use_the_scores_before_the_hand():
    row = hand_row(0, 0, [3, 3, 3, 3], [3, 3, 3, 4], [True, True], before=(250, 100))
    assert score_diffs(row) == [150, -150]
    seats = seat_table([row])
    assert [s["situation"] for s in seats] == ["ahead", "behind", "ahead", "behind"]


@pytest.mark.parametrize(
    ("hits", "n", "lo", "hi"),
    [(0, 10, 0.0, 0.277533), (8, 10, 0.490162, 0.943318), (10, 10, 0.722467, 1.0)],
)
def test_wilson_interval_matches_the_textbook_values(hits, n, lo, hi):
    got = wilson(hits, n)
    assert got == pytest.approx((lo, hi), abs=1e-6)


@pytest.mark.parametrize(("hits", "n"), [(2.5, 10), (-1, 10), (11, 10)])
def test_wilson_refuses_a_count_that_is_not_hits_of_n(hits, n):
    with pytest.raises(ValueError, match="whole number of hits"):
        wilson(hits, n)


def test_intervals_of_empty_and_single_samples_are_missing():
    assert wilson(0, 0) is None
    assert rate_interval([]) == (0, None, None, None)
    assert mean_interval([4.0]) == (1, 4.0, None, None)


def test_mean_interval_is_the_t_interval():
    n, m, lo, hi = mean_interval([1.0, 2.0, 3.0])
    half = t975(2) * 1.0 / math.sqrt(3)
    assert (n, m) == (3, 2.0)
    assert (lo, hi) == pytest.approx((2 - half, 2 + half))


def test_accuracy_by_agent_has_the_hand_counted_rates():
    a = analyze(ROWS)
    x = a.accuracy.set_index("agent").loc["X"]
    # X's non-nil bids: 3 (took 3), 4 (took 6), 5 (took 4); nil: took 0.
    assert (x["seat_hands"], x["bids"], x["nil_attempts"]) == (4, 3, 1)
    assert x["signed_error"] == pytest.approx((0 + 2 - 1) / 3)
    assert x["mae"] == pytest.approx((0 + 2 + 1) / 3)
    assert x["exact_rate"] == pytest.approx(1 / 3)
    assert (x["exact_rate_lo"], x["exact_rate_hi"]) == pytest.approx(wilson(1, 3))
    assert (x["contracts"], x["make_rate"], x["set_rate"]) == (2, 0.5, 0.5)
    assert (x["set_rate_lo"], x["set_rate_hi"]) == pytest.approx(wilson(1, 2))
    assert x["bags_per_hand"] == 1.0
    assert x["nil_success"] == 1.0
    y = a.accuracy.set_index("agent").loc["Y"]
    assert (y["nil_attempts"], y["nil_success"]) == (1, 0.0)
    assert (y["make_rate"], y["bags_per_hand"]) == (1.0, 2.5)
    assert y["blind_nil_attempts"] == 0 and pd.isna(y["blind_nil_success"])


def test_accuracy_by_seat_splits_seats_and_shares_team_hands():
    a = analyze(ROWS, by="seat")
    x = a.accuracy[a.accuracy["agent"] == "X"].set_index("position")
    # ROW0 (dealer 0): seat 0 bids 4th, seat 2 2nd. ROW1 (dealer 1): seat 0 3rd, seat 2 1st.
    assert list(x.index) == [1, 2, 3, 4]
    assert x.loc[4, "mean_bid"] == 3 and x.loc[2, "mean_bid"] == 4
    assert x.loc[3, "mean_bid"] == 5 and x.loc[1, "nil_attempts"] == 1
    # A team-hand counts under both of its members' positions.
    assert x.loc[2, "contracts"] == 1 and x.loc[4, "contracts"] == 1
    assert x.loc[1, "set_rate"] == 1.0 and x.loc[3, "set_rate"] == 1.0
    assert x.loc[2, "set_rate"] == 0.0


def test_accuracy_by_situation_groups_by_the_score_before_the_hand():
    rows = [
        hand_row(0, 0, [3, 3, 3, 3], [3, 3, 3, 4], [True, True], before=(200, 0)),
        hand_row(1, 0, [3, 3, 3, 3], [4, 3, 3, 3], [True, True]),
    ]
    acc = analyze(rows, by="situation").accuracy
    got = {(r.agent, r.situation): r.seat_hands for r in acc.itertuples()}
    assert got == {("X", "ahead"): 2, ("X", "level"): 2, ("Y", "level"): 2, ("Y", "behind"): 2}


def test_accuracy_by_bid_groups_seat_hands_by_their_bid():
    acc = analyze(ROWS, by="bid").accuracy
    y = acc[acc["agent"] == "Y"].set_index("bid")
    assert list(y.index) == [0, 2]
    # Y's bids of 2 took 2, 6 and 3 tricks; its nil took 2.
    assert y.loc[2, "seat_hands"] == 3 and y.loc[2, "signed_error"] == pytest.approx(5 / 3)
    assert (y.loc[0, "nil_attempts"], y.loc[0, "nil_success"]) == (1, 0.0)
    # A team-hand counts once under each bid of its members: both of Y's contracts had a 2.
    assert (y.loc[2, "contracts"], y.loc[2, "set_rate"]) == (2, 0.0)
    x = acc[acc["agent"] == "X"].set_index("bid")
    assert list(x.index) == [0, 3, 4, 5]
    assert x.loc[5, "set_rate"] == 1.0 and x.loc[3, "set_rate"] == 0.0
    assert (x.loc[0, "nil_success"], x.loc[0, "set_rate"]) == (1.0, 1.0)


def test_unknown_grouping_is_an_error():
    with pytest.raises(ValueError, match="--by"):
        analyze(ROWS, by="moon")


def test_confusion_matrix_counts_bid_and_tricks():
    m = analyze(ROWS).confusion["X"]
    assert m.shape == (14, 14)
    assert (m.loc[3, 3], m.loc[4, 6], m.loc[5, 4], m.loc[0, 0]) == (1, 1, 1, 1)
    assert m.to_numpy().sum() == 4
    assert list(confusion_view(m).index) == [0, 3, 4, 5]


def test_calibration_gives_mean_tricks_per_bid():
    rows = [
        hand_row(0, 0, [3, 2, 3, 2], [2, 2, 4, 5], [True, True]),
        hand_row(1, 0, [3, 2, 3, 2], [3, 2, 3, 5], [True, True]),
    ]
    cal = analyze(rows).calibration.set_index(["agent", "bid"])
    assert cal.loc[("X", 3), "n"] == 4
    assert cal.loc[("X", 3), "tricks"] == 3.0
    assert cal.loc[("Y", 2), "tricks"] == 3.5


def test_bid_totals_count_the_four_bids():
    a = analyze(ROWS)
    assert a.bid_total_counts.loc[9].sum() == 2  # 3+2+4+0 and 5+2+0+2
    t = a.bid_totals.iloc[0]
    assert (t["hands"], t["mean_total"], t["over_rate"], t["under_rate"]) == (2, 9.0, 0.0, 1.0)


def test_nil_table_separates_blind_nil():
    row = hand_row(
        0, 0, [0, 2, 4, 3], [0, 3, 7, 3], [True, True], blind=(True, False, False, False)
    )
    nils = analyze([row, ROW0]).nils.set_index(["agent", "kind"])
    assert nils.loc[("X", "blind nil"), ["attempts", "made"]].tolist() == [1, 1]
    assert nils.loc[("Y", "nil"), ["attempts", "failed"]].tolist() == [1, 1]
    assert nils.loc[("X", "nil"), "attempts"] == 0


@pytest.mark.parametrize(
    "rows",
    [[], [{"deal": 0}], [{"tournament": "t", "seats": ["a"] * 4}]],
)
def test_rows_that_are_not_a_tournament_log_are_refused(rows):
    with pytest.raises(LogError, match="tournament"):
        check_rows(rows)


def test_load_log_reads_a_run_folder_and_names_a_missing_one(tmp_path):
    (tmp_path / "log.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS))
    assert len(load_log(tmp_path)) == 2
    with pytest.raises(LogError, match="does not exist"):
        load_log(tmp_path / "nope")


def test_report_cells_show_value_and_interval():
    row = pd.Series({"r": 0.5, "r_lo": 0.25, "r_hi": 0.75, "m": 1.5, "m_lo": None, "m_hi": None})
    assert cell(row, "r", "rate") == "50.0% [25.0, 75.0]"
    assert cell(row, "m", "signed") == "+1.50"
    titles = list(report_tables(analyze(ROWS)))
    assert any(t.startswith("Bid error") for t in titles)
    assert not any("double dummy" in t for t in titles)


def test_figures_are_drawn_and_saved_as_png(tmp_path):
    a = analyze(ROWS, by="seat")
    figs = figures(a)
    assert set(figs) == set(FIGURE_FILES) - {"double_dummy"}
    assert all(isinstance(f, Figure) for f in figs.values())
    paths = save_figures(a, tmp_path)
    assert {p.name for p in paths} == {FIGURE_FILES[k] for k in figs}
    assert all(p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for p in paths)


# ----------------------------------------------------------------------------- double dummy
def suit_deal_record(dealer: int = 0) -> dict:
    """A record whose seat s held all of suit s, played out suit by suit from the lead."""
    leader = (dealer + 1) % 4
    actions = [[s, "3"] for s in range(4)]  # bids
    for rank in range(13):
        for j in range(4):
            s = (leader + j) % 4
            actions.append([s, card_to_str(13 * s + rank)])
    return {"rules": RULES, "dealer": dealer, "actions": actions}


def test_played_hands_come_from_the_play_actions():
    hands, leader = dd.played_hands(suit_deal_record(dealer=2))
    assert leader == 3
    assert hands == [0x1FFF << (13 * s) for s in range(4)]


def dd_row(deal: int, side: int, bids: list[int], tricks: list[int], made: list[bool]) -> dict:
    row = hand_row(deal, side, bids, tricks, made)
    row["record"] = suit_deal_record(deal % 4)
    return row


def test_dd_tricks_solve_each_position_once_and_cache_it(tmp_path):
    calls = []

    def solve(hands, leader, rules):
        calls.append(leader)
        return 9

    rows = [dd_row(0, 0, [4, 2, 4, 1], [5, 1, 4, 3], [True, True])]
    rows.append(dd_row(0, 1, [4, 2, 4, 1], [5, 1, 4, 3], [True, True]))
    rows.append(dd_row(1, 0, [4, 2, 4, 1], [5, 1, 4, 3], [True, True]))
    cache = DDCache(tmp_path / "dd.sqlite")
    got = dd.dd_tricks(rows, cache, solve=solve, max_solves=1)
    assert calls == [1] and got == [[9, 4], [9, 4], None]
    again = dd.dd_tricks(rows, DDCache(tmp_path / "dd.sqlite"), solve=solve)
    assert calls == [1, 2] and again[2] == [9, 4]


@pytest.mark.parametrize(
    "workers",
    # two fresh processes load (on a cold cache: compile) the solver, about 2 minutes
    [1, pytest.param(2, marks=pytest.mark.slow)],
)
def test_dd_tricks_solve_into_the_shared_cache(tmp_path, workers):
    rows = [dd_row(0, 0, [4, 2, 4, 1], [5, 1, 4, 3], [True, True])]
    rows.append(dd_row(1, 0, [4, 2, 4, 1], [5, 1, 4, 3], [True, True]))
    cache = DDCache(tmp_path / "dd.sqlite")
    # Seat s holds suit s: the spades hand ruffs everything, so team 0 takes all 13.
    assert dd.dd_tricks(rows, cache, workers=workers) == [[13, 0], [13, 0]]
    assert len(cache) == 2


def test_analyze_compares_with_double_dummy_only_when_asked(tmp_path):
    rows = [dd_row(0, 0, [4, 2, 4, 1], [5, 1, 4, 3], [True, True])]
    assert analyze(rows).dd is None
    a = analyze(rows, dd="auto", cache=tmp_path / "dd.sqlite", max_solves=0)
    assert a.dd is not None and a.dd_unsolved == 1  # nothing cached, nothing solved
    with pytest.raises(ValueError, match="dd="):
        analyze(rows, dd="sometimes")


@pytest.mark.parametrize(
    ("contract", "tricks", "dd_tricks", "verdict"),
    [(8, 9, 9, "made"), (8, 7, 7, "unmakeable bid"), (8, 7, 9, "set in play"), (8, 8, 6, "made")],
)
def test_a_set_is_a_bad_bid_or_bad_play(contract, tricks, dd_tricks, verdict):
    assert dd.verdict_of(contract, tricks, dd_tricks) == verdict


def test_dd_table_and_summary_split_bid_and_play():
    rows = [
        hand_row(0, 0, [4, 2, 4, 1], [4, 2, 3, 4], [False, True]),  # X 8 vs DD 9: play
        hand_row(1, 0, [5, 2, 4, 0], [5, 2, 3, 3], [False, True]),  # X 9 vs DD 8: the bid
    ]
    table = dd.dd_table(rows, [[9, 4], [8, 5]])
    assert len(table) == 3  # Y's nil team-hand is left out
    x = table[table["agent"] == "X"]
    assert x["verdict"].tolist() == ["set in play", "unmakeable bid"]
    assert x["bid_vs_dd"].tolist() == [-1, 1] and x["play_vs_dd"].tolist() == [-2, 0]
    s = dd.dd_summary(table).set_index("agent").loc["X"]
    assert (s["sets"], s["sets_unmakeable"], s["makeable_rate"]) == (2, 0.5, 0.5)
    assert s["bid_vs_dd"] == 0.0 and s["play_vs_dd"] == -1.0


def test_the_real_solver_on_a_deal_of_one_suit_per_seat():
    # Seat 0 holds every spade: it ruffs every trick and then leads spades.
    hands = [0x1FFF << (13 * s) for s in range(4)]
    assert dd.solver_tricks(hands, 1, Rules()) == 13
    assert dd.solver_tricks(hands, 1, Rules.preset("three_player")) is None
