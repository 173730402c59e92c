"""The `spades` command line, run as a subprocess: `demo`, `bench`, and bad input."""

from __future__ import annotations

import json

import pytest
from cli_helpers import spades
from slow_cases import first_by_default


def test_demo_prints_seeded_hands_with_their_scores():
    out = spades("demo", "--hands", "2", "--seed", "3")
    assert out.returncode == 0, out.stderr
    assert out.stdout.count("trick 13:") == 2
    assert "team 0:" in out.stdout and "team 1:" in out.stdout
    assert "♠" in out.stdout
    assert spades("demo", "--hands", "2", "--seed", "3").stdout == out.stdout  # seeded


def test_bench_engine_json():
    out = spades("bench", "--seconds", "0.2", "--only", "engine", "--json")
    assert out.returncode == 0, out.stderr
    rows = json.loads(out.stdout)
    assert {1, 64, 1024, 8192} <= {row["batch"] for row in rows}
    for row in rows:
        assert row["rate"] > 0
        assert row["unit"] == "decisions/s"


def test_bench_dd_json_reports_the_worst_deal():
    out = spades("bench", "--only", "dd", "--deals", "2", "--json")
    assert out.returncode == 0, out.stderr
    (row,) = json.loads(out.stdout)
    assert row["solves"] == 2 and row["worst_seed"] in (0, 1)
    assert row["max_ms"] >= row["median_ms"] > 0


@pytest.mark.parametrize(
    ("args", "words"),
    first_by_default(
        [
            pytest.param(("demo", "--bogus"), ["--bogus"], id="unknown-flag"),
            pytest.param(("demo", "--hands", "two"), ["--hands"], id="bad-int"),
            pytest.param(("demo", "--hands", "0"), ["--hands"], id="zero-hands"),
            pytest.param(("demo", "--option", "colour=red"), ["colour"], id="unknown-rule"),
            pytest.param(("demo", "--option", "nil_tricks=all"), ["bags", "count"], id="bad-rule"),
            pytest.param(
                ("demo", "--rules", "target=300"), ["--rules", "preset"], id="not-a-preset"
            ),
            pytest.param(("bench", "--seconds", "-1"), ["--seconds"], id="negative-seconds"),
            pytest.param(("bench", "--only", "nothing"), ["--only"], id="bad-choice"),
            pytest.param(("bench", "--only", "dd", "--deals", "0"), ["--deals"], id="zero-deals"),
            pytest.param(("frobnicate",), ["frobnicate"], id="unknown-command"),
        ],
        keep=4,
    ),
)
def test_bad_input_exits_2_with_a_one_line_error(args, words):
    out = spades(*args)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "error" in lines[0]
    for word in words:
        assert word in lines[0]
