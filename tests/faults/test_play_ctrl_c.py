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


@pytest.mark.parametrize("presses", [2, 6])
def test_repeated_ctrl_c_at_the_prompt_saves_and_ends(presses, tmp_path):
    save = tmp_path / "game.json"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "experiments.cli", "play", "--seed", "5", "--save", str(save)],
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
