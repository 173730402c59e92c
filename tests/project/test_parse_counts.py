"""Said once, read once, on every path: how many times an agent spec's text is parsed and
how many `Rules` are built, per run of `spades play`, a web table, `spades train`,
`spades train bc`, `spades tournament` and `spades evaluate`, each run in this process.

The target: each spec's text parsed once per run (every distinct text parsed exactly
once; an `AgentSpec` passed around is trusted, never read again) and one `Rules` built
per run (`Rules.build`, `Rules.preset` or `Rules.from_dict`, counted where called from
outside them: a `build` that calls `preset` is one build).

The spy on parsing does not name a private function: it finds the function that
`parse_agent(text)` hands the text to (the callee of `parse_agent` that returns the
`AgentSpec`, found by tracing one call), wherever it lives, and counts calls to it
through every module that holds it. Work done in another process (a web table's agents'
child, a tournament's workers with more than one) is not counted; every path here runs
in one process where it can.

Paths not at the target yet are marked xfail (not strict) with their counts at the time
of writing, so that the refactor that brings them to it shows as XPASS.
"""

from __future__ import annotations

import io
import random
import re
import sys
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FunctionType, ModuleType
from typing import Any

import pytest

import agents.registry as registry
from spades_env.rules import Rules

PACKAGES = ("agents", "experiments", "training", "spades_env")
RULES_ENTRIES = ("build", "preset", "from_dict")


# ----------------------------------------------------------------------------- the spies
def grammar_code() -> tuple[Any, type]:
    """The code object of the function that turns a spec's TEXT into an `AgentSpec` (what
    `parse_agent(str)` calls and gets the value from), and the `AgentSpec` class. When
    `parse_agent` reads the text itself, its own code."""
    spec_class = type(registry.parse_agent("random"))
    outer = registry.parse_agent.__code__
    found: list[Any] = []

    def profile(frame, event, arg):
        if (
            event == "return"
            and isinstance(arg, spec_class)
            and frame.f_back is not None
            and frame.f_back.f_code is outer
        ):
            found.append(frame.f_code)

    sys.setprofile(profile)
    try:
        registry.parse_agent("random")
    finally:
        sys.setprofile(None)
    return (found[0] if found else outer), spec_class


def _holders(code: Any) -> list[tuple[Any, str, Any]]:
    """(module or class, attribute name, value) of every reference to the function with
    `code` in the project's loaded modules (a module's global, a class's method)."""
    out = []
    for name, module in list(sys.modules.items()):
        if not isinstance(module, ModuleType) or name.split(".")[0] not in PACKAGES:
            continue
        for attr, value in list(vars(module).items()):
            if isinstance(value, FunctionType) and value.__code__ is code:
                out.append((module, attr, value))
            elif isinstance(value, type) and value.__module__ == name:
                for cattr, cvalue in list(vars(value).items()):
                    func = getattr(cvalue, "__func__", cvalue)
                    if isinstance(func, FunctionType) and func.__code__ is code:
                        out.append((value, cattr, cvalue))
    return out


@dataclass
class Counts:
    parses: Counter = field(default_factory=Counter)  # spec text -> times read
    rules: Counter = field(default_factory=Counter)  # entry -> outermost calls
    rules_made: int = 0  # every Rules value made (__post_init__): info only

    def clear(self) -> None:
        self.parses.clear()
        self.rules.clear()
        self.rules_made = 0

    @property
    def rules_built(self) -> int:
        return sum(self.rules.values())

    def report(self) -> str:
        return (
            f"parses {dict(self.parses)} (total {sum(self.parses.values())}); rules "
            f"{dict(self.rules)} (total {self.rules_built}; Rules values made {self.rules_made})"
        )


@pytest.fixture
def counts(monkeypatch) -> Counts:
    found = Counts()
    code, spec_class = grammar_code()
    reads_itself = code is registry.parse_agent.__code__
    holders = _holders(code)
    assert holders, f"no module holds {code.co_name}, the function that reads a spec's text"

    def counted(original, offset):
        def spy(*args, **kwargs):
            text = args[offset] if len(args) > offset else next(iter(kwargs.values()), None)
            if isinstance(text, str):
                found.parses[text.strip()] += 1
            return original(*args, **kwargs)

        spy.__wrapped__ = original
        return spy

    for owner, attr, value in holders:
        if isinstance(value, classmethod):
            monkeypatch.setattr(owner, attr, classmethod(counted(value.__func__, 1)))
        elif isinstance(value, staticmethod):
            monkeypatch.setattr(owner, attr, staticmethod(counted(value.__func__, 0)))
        else:
            monkeypatch.setattr(owner, attr, counted(value, 0))

    depth = threading.local()

    def outermost(name):
        original = vars(Rules)[name].__func__

        def entry(cls, *args, **kwargs):
            level = getattr(depth, "level", 0)
            if level == 0:
                found.rules[name] += 1
            depth.level = level + 1
            try:
                return original(cls, *args, **kwargs)
            finally:
                depth.level = level

        return classmethod(entry)

    for name in RULES_ENTRIES:
        monkeypatch.setattr(Rules, name, outermost(name))
    post_init = Rules.__post_init__

    def made(self):
        post_init(self)
        found.rules_made += 1

    monkeypatch.setattr(Rules, "__post_init__", made)

    # the spies see what they should: one read of a text, none of a value
    value = registry.parse_agent("heuristic:aggression=0.2")
    assert found.parses == Counter({"heuristic:aggression=0.2": 1}), (code, holders)
    registry.parse_agent(value)
    assert sum(found.parses.values()) == 1 or reads_itself
    Rules.build("standard", ["target=300"])
    assert found.rules == Counter({"build": 1})
    assert isinstance(value, spec_class)
    found.clear()
    return found


def on_target(counts: Counts, given: list[str]) -> None:
    """Each spec text given parsed, every text parsed once, one Rules built. (The counts
    are printed: `pytest -rA` shows them for every path, passed or not.)"""
    print(counts.report())
    assert set(given) <= set(counts.parses), counts.report()
    assert all(n == 1 for n in counts.parses.values()), counts.report()
    assert counts.rules_built == 1, counts.report()


def spades(*argv: str) -> int:
    from experiments.cli.app import main

    return main(list(argv))


# ----------------------------------------------------------------------------- the paths
#: the counts on the tree these tests were written on (the refactor's "before"); a path
#: not at the target is xfail with its counts as the reason
BEFORE = {
    "play": "parses heuristic 3, random 4, heuristic:aggression=0.1 3 (10 for 3 specs); "
    "Rules: build 1 + preset 14 = 15 (a one-hand game)",
    "web": "parses heuristic 3 (two seats and the hint), random 1; Rules: build 3 + "
    "preset 1 = 4 (a one-hand table)",
    "train": "parses none (the default opponent is built without its text); Rules: build 1 "
    "+ from_dict 1 = 2",
    "bc": "parses heuristic 5 (the teacher); Rules: build 12",
    "tournament": None,  # parses random 1, h2=heuristic:aggression=0.2 1; Rules: build 1
    "evaluate": "parses heuristic 2, random 1, pimc:worlds=64 1, learned 1; Rules: "
    "from_dict 2 (no build)",
}


def xfail_before(path: str):
    reason = BEFORE[path]
    if reason is None:
        return []
    return [pytest.mark.xfail(strict=False, reason=f"before the refactor: {reason}")]


class Screen(io.StringIO):
    """sys.stdout of an in-process `spades play`: what it printed, never a terminal."""

    def isatty(self) -> bool:
        return False


class Answers:
    """sys.stdin of an in-process `spades play`: each read answers the last prompt on the
    screen with the first choice it lists (the end of input after too many reads)."""

    PROMPT = re.compile(r" — legal: (.*)$", re.MULTILINE)

    def __init__(self, screen: Screen, limit: int = 2000) -> None:
        self.screen, self.left, self.closed = screen, limit, False

    def isatty(self) -> bool:
        return False

    def readline(self) -> str:
        prompts = self.PROMPT.findall(self.screen.getvalue())
        self.left -= 1
        if not prompts or self.left < 0:
            return ""
        return prompts[-1].split(", ")[0] + "\n"


@pytest.mark.parametrize("path", [pytest.param("play", marks=xfail_before("play"))])
def test_play_reads_each_spec_and_builds_its_rules_once(path, counts, tmp_path, monkeypatch):
    screen = Screen()
    monkeypatch.setattr(sys, "stdout", screen)
    monkeypatch.setattr(sys, "stdin", Answers(screen))
    given = ["heuristic", "random", "heuristic:aggression=0.1"]
    code = spades(
        "play", "--seed", "11", "--option", "target=150", "--option", "max_hands=1",
        "--partner", given[0], "--opponents", given[1], "--hint-agent", given[2],
        "--save", str(tmp_path / "game.json"),
    )  # fmt: skip
    assert code == 0, screen.getvalue()[-2000:]
    assert (tmp_path / "game.json").exists()
    on_target(counts, given)


@pytest.mark.parametrize("path", [pytest.param("web", marks=xfail_before("web"))])
def test_a_web_table_reads_each_spec_and_builds_its_rules_once(path, counts, tmp_path):
    """A table as the lobby asks for it (`parse_new_table`), made and played for a hand;
    the server's catalogue is made before (once per server, not per table)."""
    pytest.importorskip("starlette")
    from experiments.web.catalogue import Catalogue
    from experiments.web.game import create_table
    from experiments.web.protocol import parse_new_table
    from experiments.web.views import seat_state

    catalogue = Catalogue()
    counts.clear()
    form = {
        "rules": "standard",
        "options": ["target=300"],
        "seats": [
            {"kind": "agent", "name": "heuristic"},
            {"kind": "agent", "name": "random"},
            {"kind": "human", "name": "me"},
            {"kind": "agent", "name": "heuristic"},
        ],
        "hint": "heuristic",
    }
    rules, seats, hint = parse_new_table(form, catalogue)
    table = create_table(tmp_path / "g", rules, seats, seed=11, hint=hint)
    rng = random.Random(6)
    try:
        while True:
            if table.bot_to_act():
                record = table.bot_move()
            else:
                seat = table.game.to_act
                legal = seat_state(table, seat)["legal"]
                record = table.act(seat, rng.choice(legal)["action"], table.moves)
            if record is not None:
                break
    finally:
        table.close()
    assert (tmp_path / "g" / "log.jsonl").exists()
    on_target(counts, ["heuristic", "random"])


TRAIN = ["--total-timesteps", "700", "--num-games", "8", "--hidden", "16", "--eval-deals", "2",
         "--save-every", "1", "--no-progress"]  # fmt: skip


@pytest.mark.torch
@pytest.mark.parametrize("path", [pytest.param("train", marks=xfail_before("train"))])
def test_train_reads_each_spec_and_builds_its_rules_once(path, counts, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    assert spades("train", "dmc", *TRAIN, "--runs-dir", str(tmp_path)) == 0
    on_target(counts, [])  # no spec given: the default opponent is the heuristic


@pytest.mark.torch
@pytest.mark.parametrize("path", [pytest.param("bc", marks=xfail_before("bc"))])
def test_train_bc_reads_each_spec_and_builds_its_rules_once(path, counts, tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("tensorboard")
    flags = ["--hands", "20", "--hands-per-shard", "10", "--epochs", "1", "--hidden", "32",
             "--eval-deals", "2", "--no-progress"]  # fmt: skip
    assert spades("train", "bc", *flags, "--runs-dir", str(tmp_path)) == 0
    on_target(counts, ["heuristic"])  # --teacher's default, and the evaluation's


@pytest.mark.parametrize("path", [pytest.param("tournament", marks=xfail_before("tournament"))])
def test_a_tournament_reads_each_spec_and_builds_its_rules_once(path, counts, tmp_path):
    given = ["random", "h2=heuristic:aggression=0.2"]
    code = spades(
        "tournament", "--agents", ",".join(given), "--deals", "2", "--chunk", "1",
        "--seed", "3", "--option", "target=300", "--workers", "1", "--no-progress",
        "--out", str(tmp_path / "run"),
    )  # fmt: skip
    assert code == 0
    on_target(counts, given)


@pytest.mark.torch
@pytest.mark.parametrize("path", [pytest.param("evaluate", marks=xfail_before("evaluate"))])
def test_evaluate_reads_each_spec_and_builds_its_rules_once(path, counts, tmp_path):
    pytest.importorskip("torch")
    code = spades(
        "evaluate", "heuristic", "--test-deals", "1", "--workers", "1", "--no-progress",
        "--dir", str(tmp_path / "e"),
    )  # fmt: skip
    assert code == 0
    on_target(counts, ["heuristic", "random", "pimc:worlds=64", "learned"])


def test_the_spy_finds_the_function_that_reads_the_text():
    code, spec_class = grammar_code()
    assert _holders(code), code
    assert spec_class.__name__ == "AgentSpec"
    assert (
        Path(code.co_filename).resolve().parts[-2] == "agents"
        or "agents" in Path(code.co_filename).parts
    )
