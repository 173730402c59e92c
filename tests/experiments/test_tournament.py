"""Duplicate tournaments: deal sets, seating, the log, resume, parallel play and the summary."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from experiments.tournament import deals as deals_mod
from experiments.tournament.bid_stats import bid_lines, nils_against
from experiments.tournament.config import TournamentConfig, TournamentError
from experiments.tournament.ratings import rate
from experiments.tournament.results_log import (
    TIMING_FIELDS,
    LogError,
    append_unit,
    encode_unit,
    read_rows,
    repair,
)
from experiments.tournament.runner import LOG_FILE, load_context, run_tournament
from experiments.tournament.summary import mean_ci, pair_results, t975
from experiments.tournament.units import unit_rows
from spades_env.rules import Rules
from spades_env.state import deal_hands, first_dealer

RULES = Rules()
RANDOMS = ("random", "random")


def strip_timing(rows: list[dict]) -> list[dict]:
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in rows]


def small(tmp_path: Path, name: str = "run", workers: int = 1, **kw) -> tuple[Path, dict]:
    cfg = TournamentConfig(**{"agents": RANDOMS, "deals": 6, "chunk": 4, **kw})
    run_dir = tmp_path / name
    return run_dir, run_tournament(run_dir, cfg, workers=workers)


# ----------------------------------------------------------------------------- deal sets
def test_deal_set_prefix_is_the_smaller_set():
    big, few = deals_mod.generate(RULES, 7, 50), deals_mod.generate(RULES, 7, 10)
    assert (big.game_seeds[:10] == few.game_seeds).all()
    assert (big.hands[:10] == few.hands).all()


def test_deal_set_is_the_engines_first_hand():
    ds = deals_mod.generate(RULES, 3, 20)
    assert (ds.hands == deal_hands(RULES, ds.game_seeds, np.zeros(20, np.int32))).all()
    assert (ds.dealers == first_dealer(RULES, ds.game_seeds)).all()


def test_deal_set_round_trips_through_a_file(tmp_path):
    ds = deals_mod.generate(RULES, 11, 15)
    deals_mod.save(ds, tmp_path / "d.json")
    back = deals_mod.load(RULES, tmp_path / "d.json")
    assert back.seed == 11
    assert (back.game_seeds == ds.game_seeds).all()
    assert (back.hands == ds.hands).all()
    assert (back.dealers == ds.dealers).all()


@pytest.mark.parametrize(
    "mangle, message",
    [
        (lambda d: {"format": "other"}, "not a deal-set file"),
        (lambda d: {**d, "deals": []}, "holds no deals"),
        (lambda d: d["deals"][0].update(hands=["AS"] * 4) or d, "bad deal"),
        (lambda d: d["deals"][0].update(dealer=9) or d, "dealers must be seats"),
    ],
)
def test_bad_deal_file_is_a_named_error(tmp_path, mangle, message):
    data = mangle(deals_mod.to_dict(deals_mod.generate(RULES, 0, 3)))
    (tmp_path / "d.json").write_text(json.dumps(data))
    with pytest.raises(deals_mod.DealSetError, match=message):
        deals_mod.load(RULES, tmp_path / "d.json")


def test_played_deals_come_from_the_deal_file(tmp_path):
    ds = deals_mod.generate(RULES, 99, 4)
    cfg = TournamentConfig(agents=RANDOMS, deals=4, chunk=4)
    run_tournament(tmp_path / "r", cfg, ds, workers=1)
    rows = read_rows(tmp_path / "r" / LOG_FILE)
    want = deals_mod.to_dict(ds)["deals"]
    for row in rows:
        hands = [" ".join(h) for h in row["record"]["deal"]]
        assert hands == want[row["deal"]]["hands"]
        assert row["dealer"] == want[row["deal"]]["dealer"]


# ----------------------------------------------------------------------------- duplicate
def test_both_sides_play_the_same_deal_with_partnerships_swapped(tmp_path):
    run_dir, _ = small(tmp_path, agents=("random", "heuristic"))
    rows = read_rows(run_dir / LOG_FILE)
    by_deal: dict[int, dict[int, dict]] = {}
    for r in rows:
        by_deal.setdefault(r["deal"], {})[r["side"]] = r
    assert sorted(by_deal) == list(range(6))
    for sides in by_deal.values():
        s0, s1 = sides[0], sides[1]
        assert s0["record"]["deal"] == s1["record"]["deal"]
        assert s0["dealer"] == s1["dealer"]
        assert s0["seats"] == ["random", "heuristic", "random", "heuristic"]
        assert s1["seats"] == ["heuristic", "random", "heuristic", "random"]
        assert s0["teams"] == s0["seats"][:2]


@pytest.mark.parametrize("agents, pairs", [(RANDOMS, 1), (("random",) * 3, 3)])
def test_one_row_per_deal_side_and_pair_in_hand_mode(tmp_path, agents, pairs):
    run_dir, summary = small(tmp_path, agents=agents, deals=5, chunk=2)
    rows = read_rows(run_dir / LOG_FILE)
    assert len(rows) == 5 * 2 * pairs
    keys = {(tuple(sorted(r["teams"])), r["deal"], r["side"]) for r in rows}
    assert len(keys) == len(rows)
    assert all(r["hand"] == 0 for r in rows)
    assert len(summary["pairs"]) == pairs


def test_log_rows_hold_what_the_issue_lists(tmp_path):
    run_dir, _ = small(tmp_path)
    row = read_rows(run_dir / LOG_FILE)[0]
    for key in ("tournament", "deal", "side", "seats", "rules", "bids", "tricks"):
        assert key in row
    for key in ("hand_score", "bags", "scores", "record"):
        assert key in row
    assert row["hand_score"] == [
        row["scores"][t] - row["record"]["scores_before"][t] for t in range(2)
    ]
    assert sum(row["tricks"]) == 13


def test_serial_and_parallel_runs_write_the_same_rows(tmp_path):
    serial, s1 = small(tmp_path, "serial", workers=1, deals=9, chunk=3)
    parallel, s2 = small(tmp_path, "parallel", workers=2, deals=9, chunk=3)
    assert strip_timing(read_rows(serial / LOG_FILE)) == strip_timing(
        read_rows(parallel / LOG_FILE)
    )
    assert s1 == s2


def test_a_unit_replays_identically_from_a_fresh_context(tmp_path):
    run_dir, _ = small(tmp_path, deals=8, chunk=4)
    rows = strip_timing(read_rows(run_dir / LOG_FILE))
    ctx = load_context(run_dir)
    again = [r for u in (0, 1) for r in unit_rows(ctx, u)]
    assert strip_timing(again) == rows


# ----------------------------------------------------------------------------- game mode
def test_game_mode_plays_whole_games_on_the_same_deal_sequence(tmp_path):
    run_dir, summary = small(tmp_path, mode="game", deals=4, chunk=2, hand_cap=4)
    rows = read_rows(run_dir / LOG_FILE)
    games: dict[tuple[int, int], list[dict]] = {}
    for r in rows:
        games.setdefault((r["deal"], r["side"]), []).append(r)
    assert len(games) == 8
    for hands in games.values():
        assert [r["hand"] for r in hands] == list(range(len(hands)))
        assert hands[-1]["game_over"] and not any(r["game_over"] for r in hands[:-1])
        assert hands[-1]["winner_agent"] in hands[-1]["teams"]
        assert all(r["rules"]["max_hands"] == 4 for r in hands)
    for d in range(4):
        for h0, h1 in zip(games[d, 0], games[d, 1], strict=False):
            assert h0["record"]["deal"] == h1["record"]["deal"]
    (pair,) = summary["pairs"]
    wins = [games[d, s][-1]["winner_agent"] == pair["a"] for d in range(4) for s in (0, 1)]
    assert pair["win_rate"]["mean"] == pytest.approx(sum(wins) / 8)


# ----------------------------------------------------------------------------- resume
def test_resume_after_a_partial_unit_and_a_torn_line_ends_with_the_same_rows(tmp_path):
    full, _ = small(tmp_path, "full", deals=9, chunk=3)
    want = strip_timing(read_rows(full / LOG_FILE))
    cut, _ = small(tmp_path, "cut", deals=9, chunk=3)
    lines = (cut / LOG_FILE).read_bytes().splitlines(keepends=True)
    # Keep unit 0 whole, 2 rows of unit 1, and half of the next line.
    (cut / LOG_FILE).write_bytes(b"".join(lines[:8]) + lines[8][:40])
    run_tournament(cut, resume=True, workers=1)
    assert strip_timing(read_rows(cut / LOG_FILE)) == want


def test_repair_keeps_complete_units_only(tmp_path):
    log = tmp_path / "log.jsonl"
    unit = [{"tournament": "t", "unit": u, "unit_rows": 2, "i": i} for u in (0, 1) for i in (0, 1)]
    append_unit(log, unit)
    partial = encode_unit([{"tournament": "t", "unit": 2, "unit_rows": 3, "i": 0}])
    with open(log, "ab") as f:
        f.write(partial + b'{"tournament": "t", "un')
    assert repair(log, "t").done == {0, 1}
    assert read_rows(log) == unit


def test_repair_refuses_another_tournaments_log(tmp_path):
    log = tmp_path / "log.jsonl"
    append_unit(log, [{"tournament": "a", "unit": 0, "unit_rows": 1}])
    with pytest.raises(LogError, match="another --out"):
        repair(log, "b")


def test_a_finished_run_folder_is_not_overwritten(tmp_path):
    run_dir, _ = small(tmp_path)
    with pytest.raises(TournamentError, match="--resume"):
        run_tournament(run_dir, TournamentConfig(agents=RANDOMS, deals=6), workers=1)


@pytest.mark.parametrize(
    "kw, message",
    [
        ({"agents": ("random",)}, "at least two agents"),
        ({"deals": 0}, "--deals"),
        ({"mode": "match"}, "--mode"),
        ({"agents": ("random", "nosuch")}, "unknown agent"),
    ],
)
def test_bad_config_is_a_named_error(kw, message):
    with pytest.raises(ValueError, match=message):
        TournamentConfig(**kw)


def test_repeated_agents_get_numbered_labels():
    assert TournamentConfig(agents=("random",) * 3).labels == ["random", "random#2", "random#3"]


# ----------------------------------------------------------------------------- summary
@pytest.mark.parametrize(
    "df, t", [(1, 12.7062), (3, 3.1824), (5, 2.5706), (10, 2.2281), (30, 2.0423), (1000, 1.9623)]
)
def test_t_quantile_matches_the_table(df, t):
    assert t975(df) == pytest.approx(t, abs=2e-4)


def test_mean_ci_on_a_hand_made_sample():
    stat = mean_ci([1.0, 2.0, 3.0, 4.0, 5.0])
    half = 2.776445 * math.sqrt(2.5) / math.sqrt(5)
    assert stat["mean"] == 3.0
    assert stat["sd"] == pytest.approx(math.sqrt(2.5))
    assert stat["ci"] == pytest.approx([3 - half, 3 + half])
    assert mean_ci([4.0])["ci"] is None


def hand_row(deal: int, side: int, a_score: int, b_score: int, **extra) -> dict:
    """A minimal log row of pair (A, B): A holds team `side`."""
    teams = ["A", "B"] if side == 0 else ["B", "A"]
    score = [a_score, b_score] if side == 0 else [b_score, a_score]
    return {
        "deal": deal,
        "side": side,
        "hand": 0,
        "teams": teams,
        "seats": teams * 2,
        "hand_score": score,
        "scores": score,
        "game_over": True,
        "winner_agent": teams[int(score[1] > score[0])],
        **extra,
    }


def test_pair_margin_is_the_mean_of_per_deal_duplicate_results():
    # Deal 0: A +50 -(-20) on side 0, +10 - 40 on side 1 -> (70 - 30) / 2 = 20.
    # Deal 1: (0 - 100) and (130 - 30) -> 0.   Deal 2: (60 - 0) and (40 - 40) -> 30.
    rows = [
        hand_row(0, 0, 50, -20),
        hand_row(0, 1, 10, 40),
        hand_row(1, 0, 0, 100),
        hand_row(1, 1, 130, 30),
        hand_row(2, 0, 60, 0),
        hand_row(2, 1, 40, 40),
    ]
    (pair,) = pair_results(rows, "hand")
    assert (pair["a"], pair["b"], pair["deals"]) == ("A", "B", 3)
    assert pair["margin"] == mean_ci([20.0, 0.0, 30.0])


def test_game_mode_win_rate_and_margin_per_hand():
    rows = [hand_row(0, 0, 520, 300), hand_row(0, 1, 200, 510)]
    (pair,) = pair_results(rows, "game")
    assert pair["win_rate"]["mean"] == 0.5
    assert pair["margin"]["mean"] == (220 - 310) / 2
    assert pair["final_margin"]["mean"] == (220 - 310) / 2


def test_bid_line_on_hand_made_rows():
    # Team 0 (X) bids 3 + nil, takes 4 + 0; team 1 (Y) bids 5 + 4, takes 6 + 3.
    row = {
        "deal": 0,
        "side": 0,
        "hand": 0,
        "seats": ["X", "Y", "X", "Y"],
        "teams": ["X", "Y"],
        "bids": [3, 5, 0, 4],
        "blind": [False] * 4,
        "tricks": [4, 6, 0, 3],
        "contract": [3, 9],
        "made": [True, True],
        "bags_gained": [1, 0],
        "hand_score": [131, 90],
    }
    x, y = bid_lines([row], ["X", "Y"])
    assert x["bid_error"] == 1 and x["signed_error"] == 1
    assert (x["nil_attempts"], x["nil_success"]) == (1, 1.0)
    assert (x["make_rate"], x["bags_per_hand"]) == (1.0, 1.0)
    assert y["bid_error"] == 1 and y["signed_error"] == 0
    assert y["nil_attempts"] == 0 and y["nil_success"] is None
    # X's nil was bid against Y and made: Y set none of the one nil it faced
    assert (y["opponent_nils"], y["nils_set"]) == (1, 0.0)
    assert (x["opponent_nils"], x["nils_set"]) == (0, None)


def test_nils_set_count_each_opponent_nil_once_per_agent():
    # Y bids two nils against X; one is set (seat 3 takes a trick). A three-team table
    # (cutthroat-style seats) counts the nil of C against both A and B.
    row = {"seats": ["X", "Y", "X", "Y"], "teams": ["X", "Y"], "bids": [4, 0, 5, 0],
           "tricks": [6, 0, 5, 2]}  # fmt: skip
    three = {"seats": ["A", "B", "C"], "teams": ["A", "B", "C"], "bids": [4, 5, 0],
             "tricks": [6, 5, 2]}  # fmt: skip
    against = nils_against([row, three])
    assert against["X"] == [0.0, 1.0]
    assert against["A"] == against["B"] == [1.0] and "C" not in against


def test_ratings_rank_the_agent_that_wins_duplicates_first():
    table = rate([("a", "b", 10.0)] * 20 + [("a", "b", 0.0)] * 5, ["a", "b"])
    assert [r["agent"] for r in table] == ["a", "b"]
    assert table[0]["mu"] > table[1]["mu"]
    assert all(r["sigma"] > 0 for r in table)
