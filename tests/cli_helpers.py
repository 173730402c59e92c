"""Run the `spades` command line as a subprocess, as a user would, and read its errors;
start, kill and finish tournaments, and compare their run folders before and after."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import pytest

from experiments.tournament.results_log import TIMING_FIELDS

REPO = Path(__file__).resolve().parents[1]


def ctrl_c_reaches_it() -> None:
    """`preexec_fn` for a child a test interrupts: SIGINT at its default and unblocked, as in
    a terminal, whatever the test process inherited or set (children keep an ignored or
    blocked signal across exec, and a test process may run with SIGINT ignored or blocked)."""
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def run_module(
    module: str, *args: str, timeout: float = 300, **kw
) -> subprocess.CompletedProcess[str]:
    """`python -m MODULE ARGS` from the repository root, its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", module, *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=timeout,
        **kw,
    )


def spades(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    """`spades ARGS` from the repository root, its output captured as text."""
    return run_module("experiments.cli", *args, **kw)


def one_line_error(out: subprocess.CompletedProcess[str] | tuple[int, str]) -> str:
    """The one line a refused command prints: exit status 2, no traceback. `out` is a
    finished process or (exit status, stderr)."""
    code, err = (out.returncode, out.stderr) if hasattr(out, "returncode") else out
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    return lines[0]


# ----------------------------------------------------------------------------- run folders
def finished_run(out: Path, *args: str, **kw) -> Path:
    """`spades tournament ARGS --out OUT`, which must succeed; returns OUT."""
    done = spades("tournament", *args, "--out", str(out), **kw)
    assert done.returncode == 0, done.stderr
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file below `folder` by its path there: what a refused command must leave as it was."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in folder.rglob("*") if p.is_file()}


def without_timing(rows: list[dict]) -> list[dict]:
    """Log rows without their timing fields: what an interrupted and an uninterrupted run of
    the same tournament must agree on."""
    return [{k: v for k, v in r.items() if k not in TIMING_FIELDS} for r in rows]


def dd_answers(run_dir: Path, path: Path, tricks: int) -> Path:
    """A double-dummy cache at `path` holding `tricks` for North-South in every hand of the
    run's log, so that nothing is left to solve."""
    from agents.dd.cache import DDCache, dd_key
    from experiments.bid_analysis.double_dummy import played_hands
    from experiments.tournament.results_log import read_rows
    from spades_env.rules import Rules

    answers = {}
    for row in read_rows(run_dir):
        hands, leader = played_hands(row["record"])
        answers[dd_key(hands, leader, Rules.from_dict(row["rules"]))] = tricks
    cache = DDCache(path)
    cache.put(answers)
    cache.close()
    return path


# ----------------------------------------------------------------------------- processes
def start(*args: str, quiet: bool = False, **kw) -> subprocess.Popen[str]:
    """`spades ARGS` from the repository root in a process group of its own, as a terminal
    starts it (a Ctrl-C or a kill -9 of the group reaches its workers too), SIGINT at its
    default; stdout and stderr piped as text, or dropped when `quiet`, unless `kw` says
    otherwise."""
    out = subprocess.DEVNULL if quiet else subprocess.PIPE
    kw = {"stdout": out, "stderr": out, **kw}
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", *args],
        cwd=REPO,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_reaches_it,
        **kw,
    )


def wait_for_rows(proc: subprocess.Popen, log: Path, size: int = 1) -> None:
    """Wait until `log` holds `size` bytes or more (0: until it exists), the run still going."""
    deadline = time.monotonic() + 120  # a guard against hanging, not a speed check
    while not (log.exists() and log.stat().st_size >= size):
        assert proc.poll() is None, f"the tournament ended before {log} held {size} bytes"
        assert time.monotonic() < deadline, "the tournament wrote no rows"
        time.sleep(0.002)


def kill_9(proc: subprocess.Popen) -> None:
    """SIGKILL a `start`ed command's whole process group (driver and workers), then reap it."""
    os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)


def group_ended(pid: int, seconds: float) -> bool:
    """Whether every process of group `pid` (a `start`ed command, its workers) has exited
    within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            os.killpg(pid, 0)  # any process of the group left?
        except ProcessLookupError:
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)


# ----------------------------------------------------------------------------- fault cases
def default_and_slow(default: Iterable, slow: Iterable) -> list:
    """Parameters of a fault-injection test: `default` in every run, `slow` only with
    `-m slow` (their ids `many-VALUE`)."""
    many = [pytest.param(v, marks=pytest.mark.slow, id=f"many-{v}") for v in slow]
    return [*default, *many]


def report_outcomes(request: pytest.FixtureRequest, outcomes: Counter[str], module: str) -> None:
    """Write a fault-injection module's count of each outcome at the end of its tests."""
    if outcomes:
        line = ", ".join(f"{k} {v}" for k, v in sorted(outcomes.items()))
        rep = request.config.pluginmanager.get_plugin("terminalreporter")
        if rep is not None:
            rep.write_line(f"\n{Path(module).name}: {sum(outcomes.values())} cases: {line}")


def outcome_report(module: str):
    """A fault-injection module's count of each outcome, and the autouse fixture that
    writes it at the end of the module's tests (`report_outcomes`). In the module:
    `OUTCOMES, report = outcome_report(__file__)`."""
    outcomes: Counter[str] = Counter()

    @pytest.fixture(scope="module", autouse=True)
    def report(request):
        yield
        report_outcomes(request, outcomes, module)

    return outcomes, report
