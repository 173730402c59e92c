"""`spades analyze`: tables on stdout, PNGs beside the log, one-line errors."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import dd_answers, spades

from experiments.bid_analysis import FIGURE_FILES
from experiments.bid_analysis.double_dummy import AUTO_SOLVES
from experiments.cli.app import main
from experiments.tournament.config import TournamentConfig
from experiments.tournament.results_log import read_rows
from experiments.tournament.runner import run_tournament


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("analyze") / "run"
    config = TournamentConfig(agents=("random", "heuristic"), deals=12, chunk=6, seed=3)
    run_tournament(folder, config, workers=1)
    return folder


def test_analyze_prints_the_tables_and_writes_the_plots(run_dir):
    for png in FIGURE_FILES.values():
        (run_dir / png).unlink(missing_ok=True)
    result = spades("analyze", str(run_dir), "--no-dd")
    assert result.returncode == 0, result.stderr
    for title in ("Bid error", "Contracts, bags and nil", "Calibration", "Nil outcomes"):
        assert title in result.stdout
    assert "heuristic" in result.stdout and "random" in result.stdout
    written = {p.name for p in run_dir.glob("*.png")}
    assert written == set(FIGURE_FILES.values()) - {FIGURE_FILES["double_dummy"]}


@pytest.mark.parametrize(
    ("by", "column"), [("seat", "position"), ("situation", "situation"), ("bid", "bid")]
)
def test_by_splits_the_tables(run_dir, tmp_path, capsys, by, column):
    assert main(["analyze", str(run_dir), "--by", by, "--out", str(tmp_path), "--no-dd"]) == 0
    out = capsys.readouterr().out
    assert column in out
    if by == "situation":  # a hand-mode tournament starts every hand from 0-0
        assert "level" in out and "ahead" not in out


def test_analyze_takes_the_log_file_and_an_output_folder(run_dir, tmp_path):
    result = spades(
        "analyze", str(run_dir / "log.jsonl"), "--out", str(tmp_path / "plots"), "--no-dd"
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "plots" / FIGURE_FILES["calibration"]).exists()


def test_a_missing_log_is_a_one_line_error(tmp_path):
    result = spades("analyze", str(tmp_path / "missing.jsonl"))
    assert result.returncode == 2
    assert result.stderr.startswith("spades analyze: error: log ")
    assert len(result.stderr.strip().splitlines()) == 1 and "does not exist" in result.stderr


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda d: d, "does not exist"),  # a folder without log.jsonl
        (lambda d: _write(d / "notes.txt", "hello\n"), "no tournament rows"),
        (lambda d: _write(d / "other.jsonl", '{"a": 1}\n'), "not a tournament log"),
    ],
)
def test_bad_input_is_a_one_line_error(tmp_path, capsys, make, message):
    assert main(["analyze", str(make(tmp_path))]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0]
    assert lines[0].startswith("spades analyze: error:")


def test_analyze_compares_with_double_dummy_by_default_from_the_cache(run_dir, tmp_path):
    # Answers planted in the cache: nothing to solve, so this checks the default path
    # without the solver's time per deal.
    dd_answers(run_dir, tmp_path / "dd.sqlite", 7)  # 7 tricks for North-South in every hand
    result = spades("analyze", str(run_dir), "--out", str(tmp_path), "--dd-cache",
                    str(tmp_path / "dd.sqlite"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "Against double dummy" in result.stdout and "unmakeable" in result.stdout
    assert "no answer yet" not in result.stdout
    assert (tmp_path / FIGURE_FILES["double_dummy"]).exists()


def test_dd_max_0_reads_only_the_cache_and_says_what_is_left_out(run_dir, tmp_path):
    result = spades("analyze", str(run_dir), "--out", str(tmp_path), "--dd-max", "0",
                    "--dd-cache", str(tmp_path / "empty.sqlite"))  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "have no answer yet" in result.stdout


def test_the_help_states_the_default_number_of_new_solves():
    result = spades("analyze", "--help")
    assert f"at most {AUTO_SOLVES} new hands" in " ".join(result.stdout.split())


def test_dd_and_no_dd_together_are_refused(run_dir):
    result = spades("analyze", str(run_dir), "--dd", "--no-dd")
    assert result.returncode == 2 and "--no-dd" in result.stderr


def test_unknown_grouping_is_refused(run_dir):
    result = spades("analyze", str(run_dir), "--by", "moon")
    assert result.returncode == 2 and "invalid choice" in result.stderr


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


@pytest.fixture(scope="module")
def round_robin(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("analyze") / "rr"
    agents = ("random", "heuristic", "heuristic:aggression=1")
    run_tournament(folder, TournamentConfig(agents=agents, deals=6, chunk=6, seed=4), workers=1)
    return folder


def test_by_opponent_gives_each_agents_figures_against_each_opponent(round_robin, tmp_path):
    import pandas as pd

    result = spades(
        "analyze", str(round_robin), "--by", "opponent", "--no-dd", "--format", "csv",
        "--out", str(tmp_path),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "accuracy_by_opponent.csv")
    pairs = set(zip(table["agent"], table["opponent"], strict=True))
    agents = ["random", "heuristic", "heuristic:aggression=1"]
    assert pairs == {(a, b) for a in agents for b in agents if a != b}
    # each agent sat in 6 deals x 2 sides x 2 seats against each opponent
    assert (table["seat_hands"] == 24).all() and (table["team_hands"] == 12).all()
    # the split adds up to the agent's whole: bids over its two opponents
    from experiments.bid_analysis import analyze

    whole = analyze(round_robin).accuracy.set_index("agent")["bids"].to_dict()
    assert table.groupby("agent")["bids"].sum().to_dict() == whole
    assert "opponent" in result.stdout


def test_format_json_writes_every_table_with_its_intervals(run_dir, tmp_path):
    import json

    result = spades("analyze", str(run_dir), "--no-dd", "--format", "json", "--out", str(tmp_path))
    assert result.returncode == 0, result.stderr
    names = {p.stem for p in tmp_path.glob("*.json")}
    assert names == {
        "accuracy_by_agent", "calibration", "confusion", "bid_totals", "bid_total_counts",
        "nil_outcomes",
    }  # fmt: skip
    accuracy = json.loads((tmp_path / "accuracy_by_agent.json").read_text())
    assert {r["agent"] for r in accuracy} == {"random", "heuristic"}
    assert all(r["mean_bid_lo"] <= r["mean_bid"] <= r["mean_bid_hi"] for r in accuracy)
    confusion = json.loads((tmp_path / "confusion.json").read_text())
    hands = sum(r["hands"] for r in confusion)
    assert hands == len(read_rows(run_dir)) * 4  # every seat-hand once
    for line in result.stdout.splitlines():
        if line.startswith("table: "):
            assert Path(line.removeprefix("table: ")).exists()


def test_a_bad_format_is_a_one_line_error(run_dir):
    result = spades("analyze", str(run_dir), "--format", "xlsx")
    assert result.returncode == 2 and "--format" in result.stderr
