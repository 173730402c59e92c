"""The argparse pieces every `spades` command shares: value types that refuse what they
cannot take (a seed past 64 bits, a NaN number of seconds, a deal count no machine could
hold) in one line. (The action that refuses a single-valued flag given twice,
`StoreOnce`, is `spades_env.flags`', which every `spades` parser shares.)

argparse adds the flag to a type's error: `--seed: must be 0..2**64-1, got 2**64`."""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from experiments.tournament.config import MAX_DEALS, MAX_SEED


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


deal_count = whole_number(1, MAX_DEALS)
