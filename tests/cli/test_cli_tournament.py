"""`spades tournament` and `spades show`: the run folder, resume after kill -9, errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import kill_9, spades, start, wait_for_rows, without_timing

from experiments.cli.app import main
from experiments.tournament.results_log import read_rows

SMALL = ["--agents", "random,heuristic", "--deals", "4", "--chunk", "2", "--no-progress"]


def rows_without_timing(run_dir: Path) -> list[dict]:
    return without_timing(read_rows(run_dir / "log.jsonl"))


def test_tournament_writes_the_run_folder_and_prints_the_tables(tmp_path, capsys):
    assert main(["tournament", *SMALL, "--workers", "1", "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    for title in ("Duplicate results", "Ratings", "Bid accuracy", "heuristic", "random"):
        assert title in out
    files = {p.name for p in (tmp_path / "r").iterdir()}
    assert {"config.json", "deals.json", "log.jsonl", "summary.json"} <= files
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["pairs"][0]["deals"] == 4
    assert len(read_rows(tmp_path / "r")) == 8


def test_rules_options_reach_the_log(tmp_path, capsys):
    args = [*SMALL, "--option", "target=300", "--option", "nil_tricks=count"]
    assert main(["tournament", *args, "--workers", "1", "--out", str(tmp_path / "r")]) == 0
    capsys.readouterr()
    row = read_rows(tmp_path / "r")[0]
    assert row["rules"]["target"] == 300 and row["rules"]["nil_tricks"] == "count"


def test_resume_after_kill_9_ends_with_the_rows_of_an_uninterrupted_run(tmp_path, capsys):
    args = ["--agents", "random,random", "--deals", "160", "--chunk", "1", "--no-progress"]
    killed = tmp_path / "killed"
    proc = start("tournament", *args, "--out", str(killed), quiet=True)
    wait_for_rows(proc, killed / "log.jsonl", 20_001)
    kill_9(proc)  # the run's process group: the workers too
    assert len(read_rows(killed)) < 320, "the kill came too late to test resume"

    resumed = spades("tournament", "--resume", "--out", str(killed), "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    ref = tmp_path / "ref"
    assert main(["tournament", *args, "--workers", "1", "--out", str(ref)]) == 0
    capsys.readouterr()
    assert rows_without_timing(killed) == rows_without_timing(ref)
    assert len(rows_without_timing(ref)) == 320


def test_resume_refuses_a_flag_that_changes_the_tournament(tmp_path, capsys):
    run_dir = str(tmp_path / "r")
    assert main(["tournament", *SMALL, "--workers", "1", "--out", run_dir]) == 0
    capsys.readouterr()
    assert main(["tournament", "--resume", "--out", run_dir, "--deals", "9"]) == 2
    err = capsys.readouterr().err
    assert "--deals differs" in err and err.count("\n") == 1


@pytest.mark.parametrize(
    "args, named",
    [
        (["--agents", "random,nosuch"], "nosuch"),
        (["--agents", "random"], "--agents"),
        (["--deals", "0"], "--deals"),
        (["--deals", "many"], "--deals"),
        (["--option", "nosuch=1"], "nosuch"),
        (["--option", "target=abc"], "target"),
        (["--rules", "nosuch"], "--rules"),
        (["--mode", "match"], "--mode"),
        (["--workers", "0"], "--workers"),
        (["--deal-file", "/no/such/deals.json"], "/no/such/deals.json"),
    ],
)
def test_bad_flag_is_one_line_naming_it(tmp_path, capsys, args, named):
    with pytest.raises(SystemExit) as exit_info:
        raise SystemExit(main(["tournament", *args, "--out", str(tmp_path / "r")]))
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1 and "Traceback" not in err
    assert not (tmp_path / "r").exists()


def test_bad_flag_in_a_real_process_has_no_traceback(tmp_path):
    result = spades("tournament", "--agents", "random,nosuch", "--out", str(tmp_path / "r"))
    assert result.returncode == 2
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "known agents" in result.stderr


def test_show_renders_both_sides_of_a_logged_deal(tmp_path, capsys):
    run_dir = str(tmp_path / "r")
    assert main(["tournament", *SMALL, "--workers", "1", "--out", run_dir]) == 0
    capsys.readouterr()
    assert main(["show", run_dir + "/log.jsonl", "--deal", "1"]) == 0
    out = capsys.readouterr().out
    assert "log deal=1 hand=0 side=0: North/South random, East/West heuristic" in out
    assert "side=1: North/South heuristic, East/West random" in out
    assert out.count("trick 13:") == 2
    assert "duplicate: random - heuristic" in out


@pytest.mark.parametrize("args", [["--deal", "99"], ["--deal", "0", "--pair", "x"]])
def test_show_errors_are_one_line(tmp_path, capsys, args):
    run_dir = str(tmp_path / "r")
    assert main(["tournament", *SMALL, "--workers", "1", "--out", run_dir]) == 0
    capsys.readouterr()
    assert main(["show", run_dir, *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--" in err


def test_resume_without_out_takes_the_latest_run_folder(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["tournament", *SMALL, "--workers", "1"]) == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert run_dir.name.startswith("tournament-")
    capsys.readouterr()
    assert main(["tournament", "--resume", "--no-progress"]) == 0
    assert f"{run_dir.name}/log.jsonl" in capsys.readouterr().out


def test_agents_with_several_parameters_in_the_comma_list(tmp_path):
    """`pimc:worlds=2,policy=greedy,heuristic` is two agents: the key=value after a comma
    belongs to the agent before it (agents.registry.split_specs)."""
    out = tmp_path / "r"
    spec = "heuristic:aggression=0.2,nil_risk=0.1,random"
    proc = spades("tournament", *SMALL[2:], "--agents", spec, "--workers", "1", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    config = json.loads((out / "config.json").read_text())["config"]
    assert config["agents"] == ["heuristic:aggression=0.2,nil_risk=0.1", "random"]


@pytest.mark.parametrize(
    "text, specs",
    [
        ("random,heuristic", ("random", "heuristic")),
        ("pimc:worlds=16,policy=greedy,heuristic", ("pimc:worlds=16,policy=greedy", "heuristic")),
        (
            "pimc:worlds=64;ismcts:iterations=1000;heuristic",
            ("pimc:worlds=64", "ismcts:iterations=1000", "heuristic"),
        ),
        ("checkpoint:a.pt,sample=true, random ,", ("checkpoint:a.pt,sample=true", "random")),
    ],
)
def test_split_specs(text, specs):
    from agents.registry import split_specs

    assert split_specs(text) == specs
