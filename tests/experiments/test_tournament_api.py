"""The tournament's Python entry matches the command line: `run_tournament` returns a
`TournamentResult` that prints the tables `spades tournament` prints (one renderer,
`experiments.tournament.report`) and gives margins, ratings and bids as data frames."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from cli_helpers import spades

from experiments.tournament import TournamentConfig, TournamentResult, run_tournament
from experiments.tournament.runner import load_result

pytestmark = pytest.mark.cli

AGENTS = ("random", "heuristic")


def test_the_result_prints_the_command_lines_tables_and_gives_data_frames(tmp_path):
    cli = spades(
        "tournament",
        "--agents",
        ",".join(AGENTS),
        "--deals",
        "6",
        "--chunk",
        "3",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        str(tmp_path / "cli"),
    )
    assert cli.returncode == 0, cli.stderr
    result = run_tournament(
        tmp_path / "api", TournamentConfig(agents=AGENTS, deals=6, chunk=3), workers=1
    )
    assert isinstance(result, TournamentResult) and isinstance(result, dict)
    text = str(result)
    for title in ("Duplicate results", "Ratings (OpenSkill)", "Bid accuracy"):
        assert title in text
    assert text in cli.stdout  # the same tables, drawn by the same code, on the same deals

    # still the summary dict every caller reads, equal to summary.json
    saved = json.loads((tmp_path / "api" / "summary.json").read_text())
    assert dict(result) == saved and result.run_dir == tmp_path / "api"

    margins = result.margins
    assert isinstance(margins, pd.DataFrame) and len(margins) == 1
    pair = result["pairs"][0]
    sign = 1 if margins.loc[0, "a"] == pair["a"] else -1
    assert margins.loc[0, "margin"] == sign * pair["margin"]["mean"]
    assert margins.loc[0, "margin"] >= 0  # leader first, as the table shows it
    assert margins.loc[0, "lo"] <= margins.loc[0, "margin"] <= margins.loc[0, "hi"]
    assert margins.loc[0, "deals"] == 6
    assert list(result.ratings["agent"]) == [r["agent"] for r in result["ratings"]]
    assert set(result.bids["agent"]) == set(AGENTS)
    assert "make_rate" in result.bids.columns

    again = load_result(tmp_path / "api")
    assert str(again) == text


def test_the_one_driver_tells_its_hooks_what_happens_in_order(tmp_path):
    """`drive`'s hooks hear the opened run, the progress, each unit's rows as logged (the
    log's rows, in unit order), and a resume that has nothing left to play."""
    from experiments.tournament.results_log import read_rows
    from experiments.tournament.runner import LOG_FILE, Hooks, drive

    heard: list = []
    hooks = Hooks(
        opened=lambda ctx: heard.append(("opened", ctx.config.deals)),
        progress=lambda ctx, done, total: (
            heard.append(("progress", done, total)) or (lambda u, n: heard.append(("unit", u, n)))
        ),
        rows=lambda unit, rows: heard.append(("rows", unit, [r["deal"] for r in rows])),
    )
    config = TournamentConfig(agents=AGENTS, deals=3, chunk=2)
    summary = drive(tmp_path / "run", config, workers=1, hooks=hooks)
    assert heard == [
        ("opened", 3),
        ("progress", 0, 3),
        ("rows", 0, [0, 0, 1, 1]),
        ("unit", 0, 2),
        ("rows", 1, [2, 2]),
        ("unit", 1, 1),
    ]
    assert [r["deal"] for r in read_rows(tmp_path / "run" / LOG_FILE)] == [0, 0, 1, 1, 2, 2]
    heard.clear()
    assert drive(tmp_path / "run", resume=True, workers=1, hooks=hooks) == summary
    assert heard == [("opened", 3), ("progress", 3, 3)]
