"""The edge sweep's shared pieces: the fixture run folder its commands read, and the
closing report of every value tried (by command and parameter, and how each ended),
written at the end of the session."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from edge_sweep import REPO, REPORT


@pytest.fixture(scope="session")
def fixture_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A finished two-deal tournament's run folder (log, config, deals, summary)."""
    root = tmp_path_factory.mktemp("edge-run")
    argv = "tournament --agents a=random,b=random --decision-timeout 0 --deals 2 --chunk 1"
    argv += " --workers 1 --no-progress --out run"
    done = subprocess.run(
        [sys.executable, "-m", "experiments.cli", *argv.split()],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 0, done.stderr
    return root / "run"


def pytest_terminal_summary(terminalreporter) -> None:
    """The sweep's closing report: the values tried, by command and parameter, and how
    each ended (worked, a one-line error, FAILED)."""
    for line in REPORT.lines() if REPORT.counts else ():
        terminalreporter.write_line(line)
