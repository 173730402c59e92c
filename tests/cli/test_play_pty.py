"""`spades play` in a real terminal (a pty): the screen, a bid, a wrong input, quit and save."""

from __future__ import annotations

import json
import sys

import pytest

pexpect = pytest.importorskip("pexpect")


def test_play_in_a_terminal_bids_rejects_bad_input_and_saves(tmp_path) -> None:
    save = tmp_path / "game.json"
    child = pexpect.spawn(
        sys.executable,
        ["-m", "experiments.cli", "play", "--seed", "5", "--save", str(save)],
        encoding="utf-8",
        timeout=60,
        dimensions=(50, 110),
    )
    try:
        child.expect("Your bid")
        child.expect("legal:")
        child.sendline("3")
        child.expect("Your card")
        child.sendline("ZZ")  # not a card: one line of reason, same prompt again
        child.expect("not a card")
        child.expect("Your card")
        child.sendline("quit")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    saved = json.loads(save.read_text())
    bids = [a for s, a in saved["actions"] if s == 2 and a.isdigit()]
    assert bids == ["3"]
