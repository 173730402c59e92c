"""Run the `spades` command line as a subprocess, as a user would, and read its errors."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

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
