"""Hostile agents (tests/faults/hostile_agents.py) through every place that calls an
agent: `spades tournament` and `spades evaluate` with one and two workers, `spades demo`,
`spades play`, and the environments' `opponents=`.

Every misbehaviour must end in one line naming the agent, where it was (deal and side,
hand, or sub-environment) and the seat, and what it did, with exit status 2 and no
traceback; a tournament keeps its finished units, and once the agent is fixed its resume
gives the rows of an undisturbed run; no process is left behind and no partial file. A
harmless oddity (printing, forking) changes nothing. The default run tries every fault
on the environments (in this process, fast) and a few on the command line; `-m slow`
tries the whole matrix.

The families of `hostile_agents` (`ESCAPES`: an agent that keeps the time limit's alarm
from stopping it; `LEFTOVERS`: one that leaves a process or a thread running; `STATE`:
one that changes its process or raises what Ctrl-C raises) run through the same places,
with one and two workers: an escape is ended from outside and named, a leftover changes
no row and nothing of it outlives the command, and a change to the process is named as
the agent's own fault.
"""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from pathlib import Path

import hostile_agents  # beside this file (pytest puts a test's folder on sys.path)
import numpy as np
import pytest
from cli_helpers import default_and_slow, group_ended, outcome_report, start, without_timing

from experiments.tournament.results_log import read_rows
from spades_env.agent_calls import AgentError, limits
from spades_env.gym_env import SpadesEnv
from spades_env.vector_env import SpadesVectorEnv

HOSTILE = Path(__file__).with_name("hostile_agents.py")
OUTCOMES, _report = outcome_report(__file__)

FAULTS = hostile_agents.FAULTS
TOURNAMENT = ["--deals", "6", "--chunk", "2", "--no-progress", "--decision-timeout", "3"]


def spec(fault: str) -> str:
    return f"h={HOSTILE}:{fault}"


def env_for(**extra: str) -> dict[str, str]:
    return {**os.environ, **extra}


def matrix(default: list[tuple], slow: list[tuple]) -> list:
    """(fault, workers or kind) cases: `default` in every run, the rest of `slow` under -m slow."""
    many = [
        pytest.param(f, w, marks=pytest.mark.slow, id=f"many-{f}-{w}")
        for f, w in slow
        if (f, w) not in default
    ]
    return [*default, *many]


def run(*args: str, stdin: str | None = None, **env: str) -> tuple[int, str, str]:
    """`spades ARGS` in its own process group; (status, stdout, stderr), after checking
    that no process of the group is left, nor any process that inherited the run's
    environment (a daemon an agent started in a session of its own). A command that is
    kept alive by what an agent left running fails here (the time is a guard against
    hanging, far beyond what any of these runs takes)."""
    mark = uuid.uuid4().hex
    proc = start(*args, env=env_for(HOSTILE_RUN=mark, **env), stdin=None if stdin is None else -1)
    try:
        out, err = proc.communicate(stdin, timeout=hostile_agents.LINGER // 2)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        raise AssertionError(f"spades {args[0]} was still running (kept alive)") from None
    assert group_ended(proc.pid, 10), f"spades {args[0]} left a process behind"
    assert not _marked(mark), f"spades {args[0]} left a process behind: {_marked(mark)}"
    return proc.returncode, out, err


def _marked(mark: str) -> list[int]:
    """The processes whose environment holds HOSTILE_RUN=`mark` (zombies, ended, aside)."""
    needle = f"HOSTILE_RUN={mark}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
            if stat[stat.rfind(b")") + 2 :].split()[0] == b"Z":
                continue
            if needle in (entry / "environ").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


def the_error(code: int, err: str, command: str) -> str:
    """The one line of error a fault ends in (informational lines may come before it)."""
    assert code == 2, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1]
    assert last.startswith(f"spades {command}: error: agent 'h'"), err
    return last


def stopped_tournament(fault: str, workers: int, out: Path) -> tuple[str, list[dict]]:
    """`spades tournament` of `random` against the hostile `fault` (misbehaving from its
    second decision on), into `out`: the one line of error it ends in, and the rows it
    kept (there must be some: the units finished before the fault)."""
    args = ["--agents", f"random,{spec(fault)}", *TOURNAMENT, "--out", str(out)]
    code, _, err = run("tournament", *args, "--workers", str(workers), HOSTILE_AFTER="1")
    line = the_error(code, err, "tournament")
    kept = read_rows(out / "log.jsonl")
    assert kept, "the units finished before the fault were not kept"
    return line, kept


# ----------------------------------------------------------------------------- environments
ENV_CASES = [(f, "vector") for f in sorted(FAULTS)] + [
    (f, "gym") for f in ("Fraction", "OsExit", "Illegal", "Hang", "LegalizesMask", "Interrupts")
]


@pytest.mark.parametrize(
    ("fault", "kind"),
    matrix(ENV_CASES, [(f, k) for f in sorted(FAULTS) for k in ("gym", "vector")]),
)
def test_an_env_opponent_that_misbehaves_is_one_error_naming_it(fault, kind, monkeypatch):
    monkeypatch.setenv("HOSTILE_AFTER", "0")
    opponent = f"{HOSTILE}:{fault}"
    children = set(_children())
    with limits(timeout=1), pytest.raises(AgentError) as caught:
        if kind == "gym":
            env = SpadesEnv(opponents=opponent)
            env.reset(seed=1)
            for _ in range(60):
                env.step(int(np.flatnonzero(env.action_masks())[0]))
        else:
            env = SpadesVectorEnv(3, opponents=opponent)
            env.reset(seed=1)
            for _ in range(60):
                env.step(env.action_masks().argmax(axis=1))
    text = str(caught.value)
    assert "\n" not in text
    assert fault in text and FAULTS[fault] in text, text
    if fault != "RaiseInInit":
        assert "seat" in text, text
        if kind == "vector":
            assert "sub-environment" in text, text
    assert set(_children()) <= children  # nothing forked or left running
    OUTCOMES[f"env {fault}: one line"] += 1


@pytest.mark.parametrize("fault", hostile_agents.HARMLESS)
def test_an_env_opponent_that_prints_or_forks_plays_as_if_it_did_not(fault, monkeypatch, capfd):
    def play(cls: str) -> list:
        env = SpadesVectorEnv(2, opponents=f"{HOSTILE}:{cls}")
        obs, _ = env.reset(seed=4)
        out = [obs]
        for _ in range(30):
            obs, *_ = env.step(env.action_masks().argmax(axis=1))
            out.append(obs)
        return out

    monkeypatch.setenv("HOSTILE_AFTER", "0")
    children = set(_children())
    odd, plain = play(fault), play("Hostile")
    assert all(np.array_equal(a, b) for a, b in zip(odd, plain, strict=True))
    assert set(_children()) <= children
    OUTCOMES[f"env {fault}: unchanged"] += 1


def _children() -> list[int]:
    """This process's children, from /proc."""
    me, out = os.getpid(), []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == me:
                out.append(int(entry.name))
    return out


# ----------------------------------------------------------------------------- tournament
TOURNAMENT_CASES = [("Raise", 2)]  # ("OsExit", 1) and the rest: -m slow
EVERY_CASE = [(f, w) for f in sorted(FAULTS) for w in (1, 2)]


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory) -> list[dict]:
    """The rows of the tournament with the agent fixed, played once, undisturbed."""
    out = tmp_path_factory.mktemp("undisturbed") / "run"
    code, _, err = run(
        "tournament", "--agents", f"random,{spec('Raise')}", *TOURNAMENT, "--workers", "1",
        "--out", str(out), HOSTILE_OFF="1",
    )  # fmt: skip
    assert code == 0, err
    return _comparable(read_rows(out / "log.jsonl"))


def _comparable(rows: list[dict]) -> list[dict]:
    """Rows without their timing and their tournament id (which the agent's spec, one
    class or another of the same play, changes)."""
    return [{k: v for k, v in r.items() if k != "tournament"} for r in without_timing(rows)]


@pytest.mark.cli
@pytest.mark.parametrize(("fault", "workers"), matrix(TOURNAMENT_CASES, EVERY_CASE))
def test_a_tournament_with_a_hostile_agent_stops_on_one_line_and_resumes_once_fixed(
    fault, workers, tmp_path, undisturbed
):
    out = tmp_path / "run"
    line, kept = stopped_tournament(fault, workers, out)
    assert FAULTS[fault] in line, line
    if fault != "RaiseInInit":
        assert "deal " in line and "side " in line and "seat " in line, line
    assert _comparable(kept) == undisturbed[: len(kept)]
    assert not list(out.glob("*.tmp")), "a partial file was left"
    code, _, err = run("tournament", "--resume", "--out", str(out), HOSTILE_OFF="1")
    assert code == 0, err
    assert _comparable(read_rows(out / "log.jsonl")) == undisturbed
    OUTCOMES[f"tournament {fault}: one line, kept, resumed"] += 1


@pytest.mark.cli
@pytest.mark.parametrize("workers", [1, 2])
def test_a_tournament_agent_that_keeps_state_on_its_class_is_refused(workers, tmp_path):
    line, _ = stopped_tournament("ClassState", workers, tmp_path / "run")
    assert hostile_agents.TOURNAMENT_ONLY["ClassState"] in line and "unit " in line, line
    OUTCOMES[f"tournament ClassState, {workers} worker(s): one line"] += 1


@pytest.mark.cli
@pytest.mark.parametrize("fault", default_and_slow(["Forks"], ["Prints"]))
def test_a_tournament_agent_that_prints_or_forks_changes_no_row(fault, tmp_path, undisturbed):
    out = tmp_path / "run"
    args = ["--agents", f"random,{spec(fault)}", *TOURNAMENT, "--out", str(out)]
    code, stdout, err = run("tournament", *args, "--workers", "2", HOSTILE_AFTER="0")
    assert code == 0, err
    assert "hostile agent was here" not in stdout  # an agent's prints go to stderr
    assert _comparable(read_rows(out / "log.jsonl")) == undisturbed
    OUTCOMES[f"tournament {fault}: unchanged"] += 1


# ----------------------------------------------------------------------------- evaluate
@pytest.mark.cli
@pytest.mark.torch  # the evaluation ladder's rungs include the learned agents
@pytest.mark.parametrize(("fault", "workers"), matrix([("Unpicklable", 2)], EVERY_CASE))
def test_an_evaluation_of_a_hostile_agent_stops_on_one_line(fault, workers, tmp_path):
    args = [spec(fault), "--test-deals", "2", "--dir", str(tmp_path / "ev"), "--no-progress"]
    args += ["--workers", str(workers), "--decision-timeout", "3"]
    code, _, err = run("evaluate", *args, HOSTILE_AFTER="0")
    line = the_error(code, err, "evaluate")
    assert FAULTS[fault] in line, line
    OUTCOMES[f"evaluate {fault}: one line"] += 1


@pytest.mark.cli
# ----------------------------------------------------------------------------- demo, play
@pytest.mark.parametrize("fault", default_and_slow(["NotANumber"], sorted(FAULTS)))
def test_demo_with_a_hostile_agent_stops_on_one_line(fault):
    code, _, err = run(
        "demo", "--agents", f"random,{spec(fault)}", "--hands", "1", "--decision-timeout", "3",
        HOSTILE_AFTER="0",
    )  # fmt: skip
    line = the_error(code, err, "demo")
    assert FAULTS[fault] in line, line
    OUTCOMES[f"demo {fault}: one line"] += 1


@pytest.mark.cli
@pytest.mark.parametrize("fault", default_and_slow(["Fraction"], sorted(set(FAULTS) - {"Hang"})))
def test_play_with_a_hostile_bot_saves_the_game_then_stops_on_one_line(fault, tmp_path):
    save = tmp_path / "game.json"
    args = ["play", "--seed", "3", "--opponents", spec(fault), "--save", str(save)]
    code, out, err = run(*args, stdin="3\n", HOSTILE_AFTER="0")
    line = the_error(code, err, "play")
    assert FAULTS[fault] in line, line
    if fault != "RaiseInInit":  # a bot that cannot be built: no game to save
        assert "saved to" in out and save.exists()
        code, _, err = run("play", "--load", str(save), stdin="", HOSTILE_OFF="1")
        assert code == 0, err  # the fixed bot plays on; the end of input saves again
    OUTCOMES[f"play {fault}: one line, saved"] += 1


@pytest.mark.cli
def test_a_hung_agent_is_stopped_by_the_decision_time_limit():
    code, _, err = run(
        "demo", "--agents", f"random,{spec('Hang')}", "--hands", "1", "--decision-timeout",
        "1", HOSTILE_AFTER="0",
    )  # fmt: skip
    line = the_error(code, err, "demo")
    assert "took more than 1 s" in line and "--decision-timeout" in line, line
    OUTCOMES["demo Hang: stopped by the limit"] += 1


# ----------------------------------------------------------------------------- the families
ESCAPES = sorted(hostile_agents.ESCAPES)
LEFTOVERS = list(hostile_agents.LEFTOVERS)
STATE = sorted(hostile_agents.STATE)


def stopped_by_the_limit(line: str) -> None:
    assert "took more than 3 s to act" in line and "--decision-timeout" in line, line


@pytest.mark.cli
@pytest.mark.parametrize(
    ("fault", "workers"),
    matrix(
        [("IgnoresAlarm", 1), ("SwallowsTimeout", 2)],
        [(f, w) for f in ESCAPES for w in (1, 2)],
    ),
)
def test_a_tournament_agent_that_defeats_the_alarm_is_ended_from_outside(fault, workers, tmp_path):
    line, _ = stopped_tournament(fault, workers, tmp_path / "run")
    stopped_by_the_limit(line)
    assert "deal " in line and "side " in line and "seat " in line, line
    OUTCOMES[f"tournament {fault}, {workers} worker(s): ended from outside, one line"] += 1


@pytest.mark.cli
@pytest.mark.parametrize("fault", default_and_slow(["CancelsTimer"], ESCAPES))
def test_demo_with_an_agent_that_defeats_the_alarm_is_ended_from_outside(fault):
    args = ["--agents", f"random,{spec(fault)}", "--hands", "1", "--decision-timeout", "3"]
    code, _, err = run("demo", *args, HOSTILE_AFTER="0")
    stopped_by_the_limit(the_error(code, err, "demo"))
    OUTCOMES[f"demo {fault}: ended from outside, one line"] += 1


@pytest.mark.cli
@pytest.mark.torch
@pytest.mark.slow
@pytest.mark.parametrize(("fault", "workers"), [(f, w) for f in ESCAPES for w in (1, 2)])
def test_an_evaluation_of_an_agent_that_defeats_the_alarm_is_ended_from_outside(
    fault, workers, tmp_path
):
    args = [spec(fault), "--test-deals", "2", "--dir", str(tmp_path / "ev"), "--no-progress"]
    args += ["--workers", str(workers), "--decision-timeout", "3"]
    code, _, err = run("evaluate", *args, HOSTILE_AFTER="0")
    stopped_by_the_limit(the_error(code, err, "evaluate"))
    OUTCOMES[f"evaluate {fault}: ended from outside, one line"] += 1


ENV_SCRIPT = """
import sys
import numpy as np
from spades_env.agent_calls import limits
from spades_env.gym_env import SpadesEnv
from spades_env.vector_env import SpadesVectorEnv

from spades_env.agent_calls import AgentError

kind, opponent = sys.argv[1], sys.argv[2]
try:
    with limits(timeout=1):
        if kind == "gym":
            env = SpadesEnv(opponents=opponent)
            env.reset(seed=1)
            for _ in range(60):
                env.step(int(np.flatnonzero(env.action_masks())[0]))
        else:
            env = SpadesVectorEnv(3, opponents=opponent)
            env.reset(seed=1)
            for _ in range(60):
                env.step(env.action_masks().argmax(axis=1))
except AgentError as exc:  # the alarm got through after all: the caller gets the error
    sys.exit(f"{exc}; raised to the caller")
"""


@pytest.mark.cli
@pytest.mark.parametrize(
    ("fault", "kind"),
    matrix([("OwnAlarmHandler", "vector")], [(f, k) for f in ESCAPES for k in ("gym", "vector")]),
)
def test_an_env_opponent_that_defeats_the_alarm_ends_its_process_with_one_line(fault, kind):
    """In the caller's own process nothing can stop such a call: the watchdog names the
    agent in one line and ends the process (exit status 2), never hanging. (A blocked
    alarm may still reach the call through another thread of the process: then the
    caller gets the agent's error, as from any call the alarm stops.)"""
    proc = subprocess.run(
        [sys.executable, "-c", ENV_SCRIPT, kind, f"{HOSTILE}:{fault}"],
        capture_output=True,
        text=True,
        timeout=hostile_agents.LINGER // 2,
        env=env_for(HOSTILE_AFTER="0"),
    )
    assert proc.returncode in (1, 2), proc.stderr
    line = proc.stderr.strip().splitlines()[-1]
    assert line.startswith("agent '") and fault in line and "seat" in line, line
    assert "took more than 1 s to act" in line, line
    how = "ending the process" if proc.returncode == 2 else "raised to the caller"
    assert how in line, line
    OUTCOMES[f"env {fault}: process ended, one line"] += 1


@pytest.mark.cli
@pytest.mark.parametrize(
    ("fault", "workers"),
    matrix(
        [("ForksLate", 2), ("LingeringThread", 1)],
        [(f, w) for f in LEFTOVERS for w in (1, 2)],
    ),
)
def test_a_tournament_agent_that_leaves_something_running_changes_no_row_and_leaves_nothing(
    fault, workers, tmp_path, undisturbed
):
    out = tmp_path / "run"
    args = ["--agents", f"random,{spec(fault)}", *TOURNAMENT, "--out", str(out)]
    code, _, err = run("tournament", *args, "--workers", str(workers), HOSTILE_AFTER="0")
    assert code == 0, err  # `run` checks that nothing is left, and that nothing kept it alive
    assert _comparable(read_rows(out / "log.jsonl")) == undisturbed
    OUTCOMES[f"tournament {fault}, {workers} worker(s): unchanged, nothing left"] += 1


@pytest.mark.cli
@pytest.mark.slow
@pytest.mark.parametrize("fault", LEFTOVERS)
def test_demo_and_play_with_an_agent_that_leaves_something_running_leave_nothing(fault, tmp_path):
    code, _, err = run("demo", "--agents", f"random,{spec(fault)}", "--hands", "1")
    assert code == 0, err
    save = tmp_path / "game.json"
    args = ["play", "--seed", "3", "--opponents", spec(fault), "--save", str(save)]
    code, _, err = run(*args, stdin="3\n")
    assert code == 0, err
    OUTCOMES[f"demo, play {fault}: nothing left"] += 1


@pytest.mark.parametrize("fault", ["ForksLate", "SleepSubprocess"])
def test_an_env_opponent_that_leaves_a_process_running_has_it_ended_with_its_call(
    fault, monkeypatch
):
    """(A daemon in a session of its own and a thread are the command's to end: in a
    caller's own process, nothing adopts the one or may end the other.)"""
    monkeypatch.setenv("HOSTILE_AFTER", "0")
    children = set(_children())
    env = SpadesVectorEnv(2, opponents=f"{HOSTILE}:{fault}")
    env.reset(seed=4)
    for _ in range(8):
        env.step(env.action_masks().argmax(axis=1))
        assert set(_children()) <= children  # ended as each call returned
    OUTCOMES[f"env {fault}: ended with its call"] += 1


@pytest.mark.cli
@pytest.mark.parametrize(
    ("fault", "workers"),
    matrix(
        [("Interrupts", 1), ("Interrupts", 2)],
        [(f, w) for f in STATE for w in (1, 2)],
    ),
)
def test_a_tournament_agent_that_changes_its_process_is_named(fault, workers, tmp_path):
    line, _ = stopped_tournament(fault, workers, tmp_path / "run")
    # named, never 'interrupted' nor another agent
    assert hostile_agents.STATE[fault] in line and "deal " in line, line
    OUTCOMES[f"tournament {fault}, {workers} worker(s): named"] += 1


@pytest.mark.cli
@pytest.mark.parametrize("workers", default_and_slow([1], [2]))
def test_an_agent_that_changes_folder_breaks_no_relative_out(workers, tmp_path, monkeypatch):
    """The run folder given relative to where the command started stays where it was: the
    agent is named, the log keeps its units, and the resume (the agent fixed) finishes."""
    from fault_cases import command

    args = ["--agents", f"random,{spec('ChangesFolder')}", *TOURNAMENT, "--out", "run"]
    monkeypatch.setenv("HOSTILE_AFTER", "1")
    done = command("tournament", *args, "--workers", str(workers), cwd=tmp_path)
    line = the_error(done.returncode, done.stderr, "tournament")
    assert "changed the working folder" in line, line
    assert read_rows(tmp_path / "run" / "log.jsonl")
    monkeypatch.setenv("HOSTILE_OFF", "1")
    done = command("tournament", "--resume", "--out", "run", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    OUTCOMES[f"tournament ChangesFolder, {workers} worker(s): relative --out kept"] += 1


@pytest.mark.cli
@pytest.mark.slow  # play's bots have the default limit (60 s), with no flag to lower it
def test_play_with_a_bot_that_defeats_the_alarm_saves_the_game_then_ends_on_one_line(tmp_path):
    save = tmp_path / "game.json"
    args = ["play", "--seed", "3", "--opponents", spec("CancelsTimer"), "--save", str(save)]
    code, out, err = run(*args, stdin="3\n", HOSTILE_AFTER="0")
    line = the_error(code, err, "play")
    assert "took more than 60 s to act" in line, line
    assert "saved to" in out and save.exists()
    code, _, err = run("play", "--load", str(save), stdin="", HOSTILE_OFF="1")
    assert code == 0, err
    OUTCOMES["play CancelsTimer: saved, ended from outside, one line"] += 1
