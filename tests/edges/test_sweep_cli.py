"""Every flag of every `spades` command through the values at its edges (tests/edge_sweep.py):
each works or is refused in one line naming the flag, in bounded time, with no traceback,
nothing left half-written and no input changed.

Every case passes through the parser in-process (argparse's converters, cheap); the
cases run as subprocesses are a deterministic sample by default (those that get past the
parser first) and all of them under `-m slow`."""

from __future__ import annotations

import argparse
import os

import pytest
from edge_sweep import (
    EDGES,
    REPORT,
    Case,
    build_parser,
    cli_cases,
    fork_case,
    parse_outcome,
    run_case,
    sample,
)

pytestmark = pytest.mark.cli

CASES = cli_cases()
#: the subprocess cases of a default run (SPADES_EDGE_SAMPLE changes the number)
SAMPLE_SIZE = int(os.environ.get("SPADES_EDGE_SAMPLE", "24"))
#: seconds a case may take (a refused value answers in about one)
TIMEOUT = 90.0
_PARSER = build_parser()
PARSED = {c.id for c in CASES if parse_outcome(_PARSER, c) == "parsed"}
DEFAULT = {c.id for c in sample(CASES, PARSED, SAMPLE_SIZE)}


def test_every_flag_is_swept() -> None:
    """The sweep reads the parsers: every command is in it, each with all its value classes."""
    commands = {c.command for c in CASES}
    assert commands >= {"tournament", "evaluate", "demo", "play", "analyze", "dd-table", "show"}
    tournament = {c.flag for c in CASES if c.command == "tournament"}
    assert {"--deals", "--decision-timeout", "--agents", "--out", "--seed"} <= tournament


def test_every_case_parses_or_names_its_flag() -> None:
    """argparse's converters, in-process, for every flag x edge value."""
    failed = []
    for case in CASES:
        outcome = parse_outcome(_PARSER, case)
        REPORT.add("parse", f"{case.command} {case.flag}", case.value_class, outcome)
        if outcome.startswith("FAILED"):
            failed.append(f"{case.id}: {outcome}")
    assert not failed, "\n".join(failed)


def _param(case: Case):
    marks = () if case.id in DEFAULT else (pytest.mark.slow,)
    return pytest.param(case, id=case.id[:80].replace(" ", "|"), marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_case_runs(case: Case, tmp_path, fixture_run, request) -> None:
    """The case run whole: by default in a forked child of this process (the commands
    already imported), under `-m slow` as its own `python -m experiments.cli`."""
    slow = "slow" in (request.config.getoption("-m") or "") and "not slow" not in (
        request.config.getoption("-m") or ""
    )
    run = run_case if slow else fork_case
    outcome = run(case, tmp_path, fixture_run, TIMEOUT)
    REPORT.add("run", f"{case.command} {case.flag}", case.value_class, outcome)
    assert not outcome.startswith("FAILED"), outcome


def _train_cases() -> list[tuple[str, argparse.ArgumentParser, Case]]:
    """`spades train ALGO`'s own flags (its script's `Args` fields, parsed once the
    algorithm is known) x the edge values."""
    import importlib

    from experiments.cli.train import SCRIPTS
    from spades_env.tooling.flags import _parser

    out = []
    for algo, module_name in SCRIPTS.items():
        parser = _parser(importlib.import_module(module_name).Args, f"spades train {algo}")
        for action in parser._actions:
            if not action.option_strings or "--help" in action.option_strings:
                continue
            flag = action.option_strings[-1]
            values = {"given": ""} if action.nargs == 0 else EDGES
            for value_class, value in values.items():
                argv = (flag,) if action.nargs == 0 else (f"{flag}={value}",)
                out.append((algo, parser, Case(f"train {algo}", flag, value_class, argv)))
    return out


def test_every_train_flag_parses_or_names_its_flag() -> None:
    """`spades train ppo|dmc|bc`'s script flags, in-process (argparse's converters)."""
    pytest.importorskip("torch")
    failed = []
    for _algo, parser, case in _train_cases():
        outcome = parse_outcome(parser, case)
        REPORT.add("parse", f"{case.command} {case.flag}", case.value_class, outcome)
        if outcome.startswith("FAILED"):
            failed.append(f"{case.id}: {outcome}")
    assert not failed, "\n".join(failed)
