"""The argparse pieces every `spades` command shares, in one module that the commands
import (no command imports another): the shared flags (`--rules`/`--option`,
`--decision-timeout`), the readers of their text into values (`build_rules` -> `Rules`,
`agent_specs` -> `AgentSpec`s, read once), and value types that refuse what they
cannot take (a seed past 64 bits, a NaN number of seconds, a deal count no machine could
hold) in one line. (The action that refuses a single-valued flag given twice,
`StoreOnce`, is `spades_env.tooling.flags`', which every `spades` parser shares.)

argparse adds the flag to a type's error: `--seed: must be 0..2**64-1, got 2**64`."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from agents.registry import (
    AgentSpec,
    AgentSpecError,
    TeamSpec,
    parse_agent,
    parse_entry,
    split_specs,
)
from experiments.tournament.config import MAX_DEALS, MAX_SEED
from spades_env.agent_calls import Limits, limits
from spades_env.rules import Rules


def whole_number(minimum: int | None = None, maximum: int | None = None) -> Callable[[str], int]:
    """An argparse `type` that takes a whole number in `minimum..maximum` (either end
    open when None); the error names the value, and argparse adds the flag."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"needs a whole number, got {text!r}") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if maximum is not None and value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:,}, got {value}")
        return value

    return parse


def seed_number(text: str) -> int:
    """A seed: a whole number 0..2**64-1 (never reduced modulo 2**64: `--seed 2**64`
    must not play the deals of `--seed 0`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a whole number, got {text!r}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be 0..2**64-1 (a 64-bit seed), got {value}")
    return value


def positive_seconds(text: str) -> float:
    """A duration in seconds: a finite number above 0 (NaN and infinity would never end)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number above 0, got {text!r}")
    return value


def seconds_between(minimum: float, maximum: float) -> Callable[[str], float]:
    """An argparse `type` that takes a number of seconds in `minimum..maximum`, both ends
    included: finite (NaN passes no comparison and infinity would never end)."""

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"needs a number of seconds, got {text!r}") from None
        if not (math.isfinite(value) and minimum <= value <= maximum):
            raise argparse.ArgumentTypeError(
                f"must be a finite number {minimum:g} to {maximum:g}, got {text!r}"
            )
        return value

    return parse


deal_count = whole_number(1, MAX_DEALS)


#: Seconds one agent may take for one call (a batch of games) in a tournament or an
#: evaluation: generous for every shipped agent at the default chunk, short enough that a
#: hung agent is reported within the minute.
DECISION_TIMEOUT = 60.0


def timeout_seconds(text: str) -> float:
    """A time limit in seconds: 0 (none) or a finite number above 0."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a number of seconds, got {text!r}") from None
    if not math.isfinite(value) or value < 0:
        raise argparse.ArgumentTypeError(
            f"must be 0 (no limit) or a finite number above 0, got {text!r}"
        )
    return value


def add_decision_timeout(p: argparse.ArgumentParser) -> None:
    """`--decision-timeout SECONDS` (read with `agent_limits`)."""
    p.add_argument(
        "--decision-timeout",
        type=timeout_seconds,
        default=DECISION_TIMEOUT,
        metavar="SECONDS",
        help="stop the run with an error naming the agent when one call of an agent (a "
        f"batch of games) takes longer (default {DECISION_TIMEOUT:g}; 0: no limit)",
    )


@contextmanager
def agent_limits(args: argparse.Namespace) -> Iterator[Limits]:
    """The command's limits on agent calls (`spades_env.agent_calls`): its decision time
    limit, and an agent's prints sent to stderr, away from the command's results."""
    with limits(
        timeout=getattr(args, "decision_timeout", DECISION_TIMEOUT),
        stdout_to_stderr=True,
        timeout_hint="raise --decision-timeout, or 0 for none",
    ) as now:
        yield now


def add_rules_arguments(p: argparse.ArgumentParser) -> None:
    """`--rules PRESET` and repeatable `--option NAME=VALUE` (read with `build_rules`)."""
    p.add_argument("--rules", metavar="PRESET", help="rules preset (default standard)")
    p.add_argument(
        "--option",
        action="append",
        metavar="NAME=VALUE",
        help="rules option on top of the preset, e.g. target=300 (repeatable)",
    )


def build_rules(preset: str, options: list[str]) -> Rules:
    """The preset with each `--option name=value[,name=value]` applied in order."""
    return Rules.build(preset, options)


def agent_specs(
    text: str, flag: str | None = None, teams: bool = False
) -> tuple[AgentSpec | TeamSpec, ...]:
    """A list of agent specs (`--agents`, as `split_specs` cuts it) -> their values, each
    read once (`parse_agent`; with `teams`, a team of two agents too, `parse_entry`); with
    `flag`, an error names it: `--agents: unknown ...`."""
    specs: list[AgentSpec | TeamSpec] = []
    for spec in split_specs(text):
        try:
            specs.append(parse_entry(spec) if teams else parse_agent(spec))
        except AgentSpecError as exc:
            if flag is None:
                raise
            raise AgentSpecError(f"{flag}: {exc}") from None
    return tuple(specs)
