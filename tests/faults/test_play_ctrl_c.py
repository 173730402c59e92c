"""Ctrl-C pressed again and again at a `spades play` prompt, in a real terminal (a pty):
the game is saved once, named in one line, and the command ends (status 130) rather than
waiting for another key."""

from __future__ import annotations

import json
import sys
import time

import pytest
from cli_helpers import REPO

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.cli

#: Runs the command given after it on the terminal and keeps the terminal open half a
#: second after the command ends, then exits with its status. Without it, the command's
#: last lines could be lost: on a loaded machine the kernel may drop what is left in a
#: pseudo-terminal when its last holder exits before the test has read it (seen once, the
#: exit status saying the line had been written). The holder ignores Ctrl-C; the command
#: gets it with the default handling a shell would give it.
HOLD_THE_TERMINAL = """
import signal, subprocess, sys, time
signal.signal(signal.SIGINT, signal.SIG_IGN)
reset = lambda: signal.signal(signal.SIGINT, signal.SIG_DFL)
status = subprocess.call(sys.argv[1:], preexec_fn=reset)
time.sleep(0.5)
sys.exit(status if status >= 0 else 128 - status)
"""


@pytest.mark.parametrize("presses", [2, 6])
def test_repeated_ctrl_c_at_the_prompt_saves_and_ends(presses, tmp_path):
    save = tmp_path / "game.json"
    command = [sys.executable, "-m", "experiments.cli", "play", "--seed", "5", "--save", str(save)]
    child = pexpect.spawn(
        sys.executable,
        ["-c", HOLD_THE_TERMINAL, *command],
        cwd=str(REPO),
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 110),
    )
    try:
        child.expect("Your bid")
        for k in range(presses):
            child.sendintr()
            time.sleep(0.02 * k)  # a burst, then slower presses
        child.expect("saved to")
        child.expect(pexpect.EOF, timeout=30)  # never waiting for Enter
    finally:
        child.close(force=True)
    assert child.exitstatus == 130 or child.signalstatus is not None
    assert json.loads(save.read_text())["actions"] is not None
