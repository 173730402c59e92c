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

#: The largest whole number a flag takes unless it says less: what numpy's int64 holds.
MAX_WHOLE = 2**63 - 1
#: The longest duration a flag takes (a day): a run, a pause or a time limit longer than
#: that is a typing error, and seconds past it overflow the clocks' timestamps.
MAX_SECONDS = 86_400.0
#: The shortest duration above 0 a flag takes (a millisecond, the clocks' resolution
#: that matters here): 5e-324 is "above 0" yet no time at all.
MIN_SECONDS = 0.001


def whole_number(minimum: int | None = None, maximum: int = MAX_WHOLE) -> Callable[[str], int]:
    """An argparse `type` that takes a whole number in `minimum..maximum` (`minimum` open
    when None; `maximum` at most what an int64 holds); the error names the value, and
    argparse adds the flag."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"needs a whole number, got {_shown(text)}") from None
        if minimum is not None and value < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {value}")
        if value > maximum:
            raise argparse.ArgumentTypeError(f"must be at most {maximum:,}, got {value}")
        return value

    return parse


def _shown(text: str) -> str:
    """A value as an error quotes it: repr, cut to 60 characters (a 10,000-character
    value stays one readable line)."""
    shown = repr(text)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def seed_number(text: str) -> int:
    """A seed: a whole number 0..2**64-1 (never reduced modulo 2**64: `--seed 2**64`
    must not play the deals of `--seed 0`)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"needs a whole number, got {_shown(text)}") from None
    if not 0 <= value <= MAX_SEED:
        raise argparse.ArgumentTypeError(f"must be 0..2**64-1 (a 64-bit seed), got {value}")
    return value


def seconds_between(
    minimum: float, maximum: float, zero: str | None = None
) -> Callable[[str], float]:
    """An argparse `type` that takes a number of seconds in `minimum..maximum`, both ends
    included, and (with `zero`, what 0 means, e.g. "no limit") exactly 0. Refused: NaN
    (it passes no comparison), infinity (it never ends), and a number that is not 0 as
    written but reads as 0 (`1e-400` underflows: it must not turn into "no limit")."""
    allowed = f"{minimum:g} to {maximum:g}"
    if zero is not None:
        allowed = f"0 ({zero}) or {allowed}"

    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"needs a number of seconds, got {_shown(text)}"
            ) from None
        if zero is not None and value == 0 and _written_zero(text):
            return 0.0
        if not (math.isfinite(value) and minimum <= value <= maximum) or (
            value == 0 and not _written_zero(text)
        ):
            raise argparse.ArgumentTypeError(f"must be {allowed} seconds, got {_shown(text)}")
        return value

    return parse


def _written_zero(text: str) -> bool:
    """Whether `text` is 0 as written (0, 0.0, -0, 0e5), not a number that underflows."""
    mantissa = text.strip().lower().lstrip("+-").split("e")[0]
    return mantissa.replace("0", "").replace(".", "").replace("_", "") == ""


#: A duration above 0 (`--seconds`, a server's decision time limit): NaN, infinity, a
#: subnormal and more than a day are refused.
positive_seconds = seconds_between(MIN_SECONDS, MAX_SECONDS)


deal_count = whole_number(1, MAX_DEALS)


#: Seconds one agent may take for one call (a batch of games) in a tournament or an
#: evaluation: generous for every shipped agent at the default chunk, short enough that a
#: hung agent is reported within the minute.
DECISION_TIMEOUT = 60.0


#: A decision time limit: 0 (none), or a millisecond to a day.
timeout_seconds = seconds_between(MIN_SECONDS, MAX_SECONDS, zero="no limit")


def add_decision_timeout(p: argparse.ArgumentParser) -> None:
    """`--decision-timeout SECONDS` (read with `agent_limits`)."""
    p.add_argument(
        "--decision-timeout",
        type=timeout_seconds,
        default=DECISION_TIMEOUT,
        metavar="SECONDS",
        help="stop the run with an error naming the agent when one call of an agent (a "
        f"batch of games) takes longer: {MIN_SECONDS:g} to {MAX_SECONDS:g}, or 0 for no "
        f"limit (default {DECISION_TIMEOUT:g})",
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
    try:
        items = split_specs(text)
    except AgentSpecError as exc:
        if flag is None:
            raise
        raise AgentSpecError(f"{flag}: {exc}") from None
    for spec in items:
        try:
            specs.append(parse_entry(spec) if teams else parse_agent(spec))
        except AgentSpecError as exc:
            if flag is None:
                raise
            raise AgentSpecError(f"{flag}: {exc}") from None
    return tuple(specs)
