"""Drive `spades play` over pipes the way a person would (tests/test_play*.py).

`Driver` runs `python -m experiments.cli play` with stdin not a terminal (scripted mode:
one answer per line) and reads its output up to each prompt; `play_out` answers every
prompt with one of the choices it lists; `assert_loaded_as_saved` compares a game with
the one loaded from its save file.
"""

from __future__ import annotations

import dataclasses
import os
import queue
import random
import re
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from cli_helpers import ctrl_c_reaches_it

if TYPE_CHECKING:
    from experiments.play.session import PlaySession

ROOT = Path(__file__).resolve().parents[1]
PROMPT = re.compile(r" — legal: (.*)$")
HAND = re.compile(r"^Your hand: (.*)$")
WAIT = 120  # seconds a read may block before the test fails instead of hanging


class Driver:
    """`spades play` over pipes: read up to the next prompt, answer it."""

    def __init__(self, *args: str, cwd: Path = ROOT) -> None:
        env = {**os.environ, "PYTHONIOENCODING": "utf-8", "PYTHONPATH": str(ROOT)}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "experiments.cli", "play", *args],
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            encoding="utf-8",
            bufsize=1,
            preexec_fn=ctrl_c_reaches_it,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.transcript: list[str] = []
        self.ended = False
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put(None)

    def next_prompt(self) -> tuple[list[str], list[str]] | None:
        """(lines before the prompt, legal choices), or None when the output ends."""
        before: list[str] = []
        while True:
            line = None if self.ended else self.lines.get(timeout=WAIT)
            if line is None:
                self.ended = True
                return None
            self.transcript.append(line)
            m = PROMPT.search(line)
            if m:
                return before, m.group(1).split(", ")
            before.append(line)

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text + "\n")
        self.proc.stdin.flush()

    def finish(self) -> int:
        """Close stdin, read the rest, return the exit status."""
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        while not self.ended and (line := self.lines.get(timeout=WAIT)) is not None:
            self.transcript.append(line)
        self.ended = True
        return self.proc.wait(timeout=WAIT)


def hand_on_screen(lines: list[str]) -> list[str]:
    shown = [m.group(1) for line in lines if (m := HAND.match(line))]
    return re.findall(r"\d+:(\S+)", shown[-1]) if shown else []


Check = Callable[[list[str], list[str]], None]
Extra = Callable[[str, list[str], list[str]], tuple[str, Check] | None]


def play_out(
    drv: Driver, rng: random.Random, stop_after: int | None = None, extra: Extra | None = None
) -> int:
    """Answer each prompt with a random choice it lists. `extra(prompt, hand, legal)` may
    first type something else, with a check of the lines and prompt that answer it.
    Returns the moves made."""
    moves, check = 0, None
    while (got := drv.next_prompt()) is not None:
        lines, legal = got
        if check is not None:
            check(lines, legal)
            check = None
        if stop_after is not None and moves == stop_after:
            return moves
        step = extra(drv.transcript[-1], hand_on_screen(drv.transcript), legal) if extra else None
        if step is not None:
            text, check = step
            drv.send(text)
            continue
        drv.send(rng.choice(legal))
        moves += 1
    return moves


def assert_loaded_as_saved(a: PlaySession, b: PlaySession) -> None:
    """`b`, loaded from `a`'s save file, is `a`'s game exactly: every field of the state
    (the rules too), the last trick, and the bots' next move."""
    sa, sb = a.game.state, b.game.state
    for f in dataclasses.fields(sa):
        va, vb = getattr(sa, f.name), getattr(sb, f.name)
        assert np.array_equal(va, vb) if isinstance(va, np.ndarray) else va == vb, f.name
    assert b.last_trick == a.last_trick
    if not a.human_to_act:  # the bots go on as they would have
        assert b.bot_action() == a.bot_action()
