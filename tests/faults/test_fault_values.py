"""Values a careless caller or a hand edit gives the file-writing commands and their Python
API: each is refused in one clear line (or one clear exception) before anything is
written, never a raw TypeError from deep inside, never a value silently ignored.

The hand-edited result files of `spades leaderboard` are generated: every field of a
real result, replaced by a value of each wrong kind, or removed.
"""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import REPO, one_line_error, outcome_report, spades
from fault_cases import command, tmp_files

from experiments.cli import leaderboard
from experiments.tournament.config import TournamentConfig, TournamentError

#: (commands run as a subprocess; a case that trains also needs torch)
pytestmark = pytest.mark.cli

OUTCOMES, report = outcome_report(__file__)


# ----------------------------------------------------------------------------- the Python API
@pytest.mark.parametrize(
    "kw, words",
    [
        ({"deals": 2.5}, "deals must be a whole number"),
        ({"deals": "3"}, "deals must be a whole number"),
        ({"seed": True}, "seed must be a whole number"),
        ({"chunk": None}, "chunk must be a whole number"),
        ({"agents": "random,heuristic"}, "agents must be a list"),
        ({"agents": ["random", 3]}, "each agent is a spec string or an AgentSpec"),
        ({"mode": 1}, "mode must be one of"),
        ({"rules": "standard"}, "rules must be a Rules"),
    ],
)
def test_tournament_config_refuses_values_of_the_wrong_type(kw, words):
    with pytest.raises(TournamentError, match=words):
        TournamentConfig(**kw)
    OUTCOMES["TournamentConfig bad type: refused"] += 1


def test_tournament_config_takes_numpy_integers_as_whole_numbers():
    import numpy as np

    config = TournamentConfig(deals=np.int64(3), seed=np.uint32(2))
    assert config.deals == 3 and type(config.deals) is int
    assert json.dumps(config.to_dict())  # still plain JSON


def test_resume_with_another_config_is_refused(small_run, tmp_path):
    import shutil

    from experiments.tournament.runner import load_context, run_tournament

    run_dir = tmp_path / "run"
    shutil.copytree(small_run, run_dir)
    config = load_context(run_dir).config
    other = TournamentConfig(**{**config.to_dict(), "agents": ("random", "random"), "seed": 9})
    with pytest.raises(TournamentError, match=r"config differs .*agents, seed"):
        run_tournament(run_dir, other, resume=True, workers=1)
    same = run_tournament(run_dir, config, resume=True, workers=1)  # the same: fine
    assert same["tournament"] == json.loads((small_run / "summary.json").read_text())["tournament"]
    OUTCOMES["run_tournament resume with another config: refused"] += 1


@pytest.mark.parametrize("bad", [-1, -5, 2.5, True])
def test_analyze_refuses_a_bad_max_solves(small_run, bad):
    from experiments.bid_analysis.analysis import analyze

    with pytest.raises(ValueError, match="max_solves"):
        analyze(small_run / "log.jsonl", dd=True, max_solves=bad)
    OUTCOMES["analyze bad max_solves: refused"] += 1


@pytest.mark.parametrize("options", ["x", ["deal"], 3])
@pytest.mark.parametrize("which", ["pettingzoo", "gymnasium"])
def test_reset_refuses_options_that_are_not_a_dict(which, options):
    if which == "pettingzoo":
        from spades_env import spades_v0

        env = spades_v0.env()
    else:
        import gymnasium as gym

        import spades_env  # noqa: F401  (registers the ids)

        env = gym.make("spades_env/Spades-v0")
    with pytest.raises(TypeError, match=r"reset\(options=\.\.\.\) takes a dict"):
        env.reset(seed=1, options=options)
    env.reset(seed=1, options={})  # an empty dict is fine
    OUTCOMES[f"{which} reset(options={type(options).__name__}): refused"] += 1


# ----------------------------------------------------------------------------- leaderboard
RESULT = REPO / "docs" / "results" / "heuristic.json"


def _paths(value: Any, path: tuple = ()) -> list[tuple]:
    """The path of every field below `value` (keys and list indexes)."""
    out = []
    if isinstance(value, dict):
        for k, v in value.items():
            out += [(*path, k), *_paths(v, (*path, k))]
    elif isinstance(value, list):
        for i, v in enumerate(value):
            out += [(*path, i), *_paths(v, (*path, i))]
    return out


def _used(path: tuple) -> bool:
    """Fields the page reads (others, e.g. `run` or `seconds_this_run`, may be anything)."""
    read = {"candidate", "spades_version", "deal_set_sha256", "version", "deal_seed",
            "test_deals", "rungs", "opponent", "deals", "margin", "ci", "play"}  # fmt: skip
    head = path[0]
    if head != "rungs":
        return head in read
    if len(path) < 3:
        return True
    if path[2] == "play":
        return len(path) <= 5 and (
            len(path) < 5 or path[4] in leaderboard._COUNTS + leaderboard._SHARES
        )
    return path[2] in read and len(path) <= 4


WRONG = {"text": "x", "list": [1.0], "nan": math.nan, "missing": None}


def _damaged() -> list:
    data = json.loads(RESULT.read_text())
    cases = []
    for path in _paths(data):
        if not _used(path) or (path[0] == "rungs" and len(path) > 1 and path[1] > 0):
            continue  # rung 0 stands for every rung
        for kind in WRONG:
            if kind == "missing" and isinstance(path[-1], int):
                continue
            cases.append(pytest.param(path, kind, id="-".join(map(str, path)) + f"-{kind}"))
    return cases


def _set(data: dict, path: tuple, kind: str) -> Any:
    target = data
    for key in path[:-1]:
        target = target[key]
    old = target[path[-1]]
    if kind == "missing":
        del target[path[-1]]
    else:
        target[path[-1]] = copy.deepcopy(WRONG[kind])
    return old


@pytest.mark.parametrize("path, kind", _damaged())
def test_a_hand_edited_result_is_refused_naming_file_and_field(tmp_path, path, kind):
    data = json.loads(RESULT.read_text())
    old = _set(data, path, kind)
    fine = (
        (kind == "text" and isinstance(old, str))
        or (kind == "list" and isinstance(old, list) and len(old) == 1)
        or (kind == "missing" and path == ("rungs", 0, "play"))  # older results lack it
    )
    file = tmp_path / "edited.json"
    file.write_text(json.dumps(data))  # NaN written as JSON's NaN, as json.dumps does
    try:
        results = [leaderboard.load(str(file))]
        leaderboard.render(results, [str(file)])
    except ValueError as exc:
        msg = str(exc)
        assert str(file) in msg and "\n" not in msg, msg
        field = str(path[-1]) if not isinstance(path[-1], int) else str(path[-2])
        assert field in msg or "not a spades evaluate result" in msg, msg
        outcome = "refused"
    else:
        assert fine, f"{path} {kind} was accepted"
        outcome = "accepted (a valid value)"
    OUTCOMES[f"leaderboard {kind}: {outcome}"] += 1


def test_leaderboard_cli_says_one_line_for_a_nan_margin(tmp_path):
    data = json.loads(RESULT.read_text())
    data["rungs"][1]["margin"] = math.nan
    file = tmp_path / "nan.json"
    file.write_text(json.dumps(data))
    line = one_line_error(spades("leaderboard", str(file)))
    assert "rungs[1].margin" in line and str(file) in line


# ----------------------------------------------------------------------------- CLI paths
def test_evaluate_refuses_an_out_under_a_file_before_playing(tmp_path):
    """The issue's repro: it played the whole ladder, then failed."""
    (tmp_path / "afile").write_text("x")
    bad_out = str(tmp_path / "afile" / "res.json")
    out = spades("evaluate", "random", "--test-deals", "2", "--workers", "1", "--no-progress",
                 "--dir", str(tmp_path / "ev"), "--out", bad_out)  # fmt: skip
    assert "afile" in one_line_error(out)
    assert not (tmp_path / "ev").exists()


@pytest.mark.parametrize("target", ["a folder", "the file system's root"])
def test_a_failed_save_in_play_says_why_and_the_game_goes_on(tmp_path, target):
    """The issue's repro: `save adir` ended the game (rc 2), leaving adir.tmp; `save` of a
    system folder wrote <folder>.tmp beside it, at the root."""
    (tmp_path / "adir").mkdir()
    name = "adir" if target == "a folder" else "/usr"
    root_before = {p.name for p in Path("/").iterdir()}
    out = command(
        "play", "--seed", "3", cwd=tmp_path, stdin=f"3\nsave {name}\nsave ok.json\nquit\n"
    )
    assert out.returncode == 0, out.stderr
    assert f"not saved to {name}" in out.stdout and "the game goes on" in out.stdout
    assert "saved to ok.json" in out.stdout  # the game went on, and saves
    assert json.loads((tmp_path / "ok.json").read_text())["actions"]
    assert not tmp_files(tmp_path) and {p.name for p in Path("/").iterdir()} == root_before
    OUTCOMES[f"play save to {target}: game went on"] += 1
