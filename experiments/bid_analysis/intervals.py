"""95% intervals for the analysis tables: Wilson for rates, Student t for means.

Every hand counts as one independent sample. Hands are not quite independent in a
duplicate tournament (both sides of a deal share the cards, and an agent holding both
seats of a team gives two correlated seat-hands), so read the intervals as slightly
narrow where that matters.
"""

from __future__ import annotations

from collections.abc import Sequence

from experiments.tournament.summary import mean_ci


def wilson(hits: float, n: int, confidence: float = 0.95) -> tuple[float, float] | None:
    """The Wilson score interval of a rate `hits / n` (None for n = 0), scipy's.

    Unlike the normal approximation it stays inside [0, 1] and is sound at 0 or n hits,
    which small groups (nil bids, one bidding position) often have.
    """
    return None if n == 0 else _wilson(hits, n, confidence)


def _wilson(hits: float, n: int, confidence: float = 0.95) -> tuple[float, float]:
    k = round(hits)
    if k != hits or not 0 <= k <= n:
        raise ValueError(f"a rate needs a whole number of hits in 0..{n}, got {hits}")
    from scipy.stats import binomtest  # here: scipy.stats takes a second to import

    ci = binomtest(k, n).proportion_ci(confidence_level=confidence, method="wilson")
    return float(ci.low), float(ci.high)


def rate_interval(samples: Sequence[float]) -> tuple[int, float | None, float | None, float | None]:
    """(n, rate, lo, hi) of 0/1 samples, Wilson interval."""
    n = len(samples)
    if n == 0:
        return 0, None, None, None
    hits = sum(samples)
    lo, hi = _wilson(hits, n)
    return n, hits / n, lo, hi


def mean_interval(samples: Sequence[float]) -> tuple[int, float | None, float | None, float | None]:
    """(n, mean, lo, hi) of value samples, Student-t interval (no interval for n < 2)."""
    m = mean_ci(samples)
    lo, hi = m["ci"] if m["ci"] is not None else (None, None)
    return m["n"], m["mean"], lo, hi
