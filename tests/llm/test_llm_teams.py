"""A language model in a partnership, against the fake server of tests/llm: the short
ladder with a bot partner (`spades evaluate --ladder llm --partner BOT`), a model
partnering itself in `spades tournament`, and the leaderboard's language-model table."""

from __future__ import annotations

import json

import pytest
from cli_helpers import one_line_error, spades

from experiments.tournament import llm_ladder

#: decisions of one seat in a standard hand: a bid and 13 cards
PER_SEAT = 14


def test_a_ladder_with_a_bot_partner_halves_the_requests_and_reaches_the_leaderboard(
    make_server, llm_key, tmp_path
):
    server = make_server(faults=False)
    spec = server.spec("gpt", price_in=2.5, price_out=10)
    out = spades(
        "evaluate", spec, "--ladder", "llm", "--partner", "heuristic",
        "--dir", str(tmp_path / "lad"), "--out", str(tmp_path / "gpt.json"),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "gpt.json").read_text())
    assert result["partner"] == "heuristic" and result["invalid"] is False
    seats = llm_ladder.DEALS * 2  # one seat of its partnership on each side of each deal
    for rung in result["rungs"]:
        config = json.loads(
            (tmp_path / "lad" / rung["run"].split("/")[-1] / "config.json").read_text()
        )
        assert config["config"]["agents"][0] == {"team": [spec, "heuristic"]}
        m = rung["model"]
        assert m["agent"] == "gpt" and m["decisions"] == seats * PER_SEAT
        assert m["fallback_share"] == 0.0 and m["invalid"] is False
        assert m["tokens_in"] > 0 and m["dollars"] > 0
    # every request the server saw is one of these decisions: half the plain ladder's
    served = server.stats()["requests"]
    assert served == len(llm_ladder.OPPONENTS) * seats * PER_SEAT
    plan = spades("evaluate", spec, "--ladder", "llm", "--dry-run")
    assert f"{2 * served} decisions" in plan.stdout
    for col in ("fallback", "not understood", "tokens", "$", "valid", "--partner heuristic"):
        assert col in out.stdout

    board = spades("leaderboard", str(tmp_path / "gpt.json"))
    assert board.returncode == 0, board.stderr
    row = next(line for line in board.stdout.splitlines() if line.startswith("| `gpt`"))
    tokens = sum(r["model"]["tokens_in"] + r["model"]["tokens_out"] for r in result["rungs"])
    dollars = sum(r["model"]["dollars"] for r in result["rungs"])
    assert "`heuristic`" in row and f"{tokens:,}" in row and f"{dollars:.2f}" in row
    assert "| 0.0% |" in row


@pytest.mark.slow
def test_an_invalid_ladder_is_marked_and_refused_by_the_leaderboard(make_server, llm_key, tmp_path):
    server = make_server(faults=False)
    spec = server.spec("r1", mode="reasoning-only", on_invalid="mark")
    out = spades(
        "evaluate", spec, "--ladder", "llm", "--partner", "random",
        "--dir", str(tmp_path / "lad"), "--out", str(tmp_path / "r1.json"),
    )  # fmt: skip
    result = json.loads((tmp_path / "r1.json").read_text())
    assert result["invalid"] is True and all(r["model"]["invalid"] for r in result["rungs"])
    assert "INVALID" in out.stdout
    board = spades("leaderboard", str(tmp_path / "r1.json"))
    assert "rungs[0].model.invalid is true" in one_line_error(board)


def test_a_model_partnering_itself_plays_both_seats_of_its_partnership(
    make_server, llm_key, tmp_path
):
    server = make_server(faults=False)
    spec = server.spec("gpt")
    out = spades(
        "tournament", "--agents", f"team({spec}; {spec}); heuristic", "--deals", "1",
        "--chunk", "1", "--workers", "1", "--out", str(tmp_path / "run"), "--no-progress",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["teams"]["gpt+gpt"] == ["gpt", "gpt"]
    assert summary["llm"]["gpt"]["decisions"] == 2 * 2 * PER_SEAT  # 2 seats x 2 sides
    assert server.stats()["requests"] == 2 * 2 * PER_SEAT
    # the margin's row says what share of the model's decisions the fallback played
    row = next(line for line in out.stdout.splitlines() if "gpt+gpt" in line and "│" in line)
    assert [c.strip() for c in row.split("│") if "%" in c] == ["0.0% / 0.0%"]
