"""`spades evaluate SPEC` and `spades leaderboard`, run as a user would (subprocesses).

Every run here uses `--test-deals` (a few deals per opponent): it checks the machinery,
not the protocol's numbers (`experiments.tournament.ladder_protocol` fixes those)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import one_line_error, spades

from experiments.tournament import ladder_protocol
from experiments.tournament.results_log import TIMING_FIELDS, read_rows

TINY = ["--test-deals", "2", "--workers", "1", "--no-progress"]
OPPONENTS = [r.opponent for r in ladder_protocol.LADDER]


def evaluate(spec: str, folder: Path, *extra: str):
    return spades("evaluate", spec, *TINY, "--dir", str(folder), *extra)


def rows(folder: Path) -> dict[str, list[dict]]:
    return {
        d.name: [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in read_rows(d)]
        for d in sorted(folder.iterdir())
        if d.is_dir()
    }


@pytest.fixture(scope="module")
def heuristic_eval(tmp_path_factory):
    root = tmp_path_factory.mktemp("eval")
    out = evaluate("heuristic", root / "h", "--out", str(root / "h.json"))
    assert out.returncode == 0, out.stderr
    return root, out


def test_evaluate_prints_one_table_with_the_protocol_and_deal_set_and_writes_json(heuristic_eval):
    root, out = heuristic_eval
    result = json.loads((root / "h.json").read_text())
    assert (
        result["protocol"] == ladder_protocol.PROTOCOL
        and result["version"] == ladder_protocol.VERSION
    )
    assert result["deal_set_sha256"] == ladder_protocol.deal_set_hash()
    assert result["official"] is False and result["test_deals"] == 2
    assert [r["opponent"] for r in result["rungs"]] == OPPONENTS
    assert all(r["deals"] == 2 for r in result["rungs"])
    assert f"protocol {ladder_protocol.PROTOCOL} {ladder_protocol.VERSION}" in out.stdout
    assert result["deal_set_sha256"][:16] in out.stdout
    assert "NOT THE PROTOCOL" in out.stdout
    for name in OPPONENTS:
        assert name in out.stdout
    # a deterministic agent against itself on duplicate deals: exactly level
    (self_rung,) = [r for r in result["rungs"] if r["opponent"] == "heuristic"]
    assert self_rung["margin"] == 0.0
    (vs_random,) = [r for r in result["rungs"] if r["opponent"] == "random"]
    summary = json.loads((Path(vs_random["run"]) / "summary.json").read_text())
    assert summary["config"]["agents"] == ["heuristic", "random"]
    assert summary["config"]["seed"] == ladder_protocol.DEAL_SEED
    # each rung records both sides' nils and contracts; at a two-agent table the nils one
    # side faced are the other side's nils, and its sets are the other's failures
    for r in result["rungs"]:
        me, them = r["play"]["candidate"], r["play"]["opponent"]
        assert set(me) == set(ladder_protocol.PLAY_FIGURES)
        for a, b in ((me, them), (them, me)):
            assert a["opponent_nils"] == b["nil_attempts"]
            if b["nil_attempts"]:
                assert a["nils_set"] == pytest.approx(1 - b["nil_success"])


def test_resume_plays_only_what_is_missing_and_gives_the_same_rows(heuristic_eval, tmp_path):
    root, _ = heuristic_eval
    cut = tmp_path / "cut"
    shutil.copytree(root / "h", cut)
    (cut / "result.json").unlink()
    shutil.rmtree(cut / "4-learned")  # never started
    log = cut / "3-pimc_worlds=64" / "log.jsonl"
    log.write_text(log.read_text().splitlines(keepends=True)[0])  # one side of one deal
    again = evaluate("heuristic", cut)
    assert one_line_error(again).endswith("add --resume to finish it, or choose another --dir")
    other = evaluate("random", cut, "--resume")
    assert "another candidate" in one_line_error(other)
    done = evaluate("heuristic", cut, "--resume")
    assert done.returncode == 0, done.stderr
    assert rows(cut) == rows(root / "h")
    first = json.loads((root / "h" / "result.json").read_text())
    second = json.loads((cut / "result.json").read_text())
    strip = lambda r: [{k: v for k, v in x.items() if k != "run"} for x in r["rungs"]]  # noqa: E731
    assert strip(first) == strip(second)


def test_a_bad_spec_is_one_line_and_leaves_no_folder(tmp_path):
    out = evaluate("nosuchagent", tmp_path / "e")
    assert "nosuchagent" in one_line_error(out)
    assert not (tmp_path / "e").exists()


def test_leaderboard_renders_the_results_into_one_page(heuristic_eval, tmp_path):
    root, _ = heuristic_eval
    rnd = evaluate("random", tmp_path / "r", "--out", str(tmp_path / "r.json"))
    assert rnd.returncode == 0, rnd.stderr
    page = tmp_path / "docs" / "results" / "leaderboard.md"
    out = spades("leaderboard", str(root / "h.json"), str(tmp_path / "r.json"), "--out", str(page))
    assert out.returncode == 0, out.stderr
    text = page.read_text()
    assert ladder_protocol.deal_set_hash() in text and "NOT THE PROTOCOL" in text
    margins, play = text.split("## Nils, sets and bags")
    table = [line for line in margins.splitlines() if line.startswith("| `")]
    assert [line.split("`")[1] for line in table] == ["heuristic", "random"]  # best first
    own, by_match = play.split("By match")
    nil_rows = [line for line in own.splitlines() if line.startswith("| `")]
    assert [line.split("`")[1] for line in nil_rows] == ["heuristic", "random"]
    assert all(line.count("|") == 6 for line in nil_rows)
    # both sides of every rung, the candidate first: 2 agents x 4 rungs x 2 sides
    sides = [line.split("|")[2].strip() for line in by_match.splitlines() if line.count("|") == 7]
    assert sides[:2] == ["side", "---"] and len(sides) == 2 + 2 * 4 * 2
    assert sides[2:4] == ["`heuristic`", "`random`"]  # heuristic vs random: both sides
    for name in OPPONENTS:
        assert f"vs `{name}`" in text
    missing = text.split("Shipped agents without a result on this page: ")[1]
    assert "`learned`" in missing and "`heuristic`" not in missing

    other = json.loads((tmp_path / "r.json").read_text())
    other["version"] = ladder_protocol.VERSION + 1
    (tmp_path / "v2.json").write_text(json.dumps(other))
    mixed = spades("leaderboard", str(root / "h.json"), str(tmp_path / "v2.json"))
    assert f"version is {ladder_protocol.VERSION + 1}, not a protocol version" in one_line_error(
        mixed
    )
    other["version"] = ladder_protocol.VERSION
    other["test_deals"] = 1  # another scale: one page holds one
    for r in other["rungs"]:
        r["deals"] = 1
    (tmp_path / "t1.json").write_text(json.dumps(other))
    mixed = spades("leaderboard", str(root / "h.json"), str(tmp_path / "t1.json"))
    assert "one page holds one protocol" in one_line_error(mixed)
    missing = spades("leaderboard", str(tmp_path / "nope.json"))
    assert "does not exist" in one_line_error(missing)


def test_the_ladders_deal_counts_follow_from_its_sd_and_the_target_interval():
    for rung in ladder_protocol.LADDER:
        assert rung.deals == ladder_protocol.deals_for(rung.pilot_sd)
        half = 1.959963984540054 * rung.pilot_sd / rung.deals**0.5
        assert half <= ladder_protocol.TARGET_HALF_WIDTH < half + 0.1  # about ±2.5, not far under
    assert len(ladder_protocol.deal_set()) == max(r.deals for r in ladder_protocol.LADDER)


def test_the_shipped_leaderboard_is_what_the_command_makes_of_the_shipped_results():
    """docs/results/leaderboard.md is never typed: it is `spades leaderboard` of the JSON
    results beside it."""
    from experiments.cli import leaderboard

    folder = Path(__file__).resolve().parents[2] / "docs" / "results"
    files = [str(p) for p in sorted(folder.glob("*.json"))]
    page = leaderboard.render([leaderboard.load(f) for f in files], files, chart="leaderboard.png")
    assert page == (folder / "leaderboard.md").read_text()
