"""Small statistics shared by training-time evaluation and tournament summaries (here, in
the lowest package, so both reach it without an upward import).

The unit of pairing in a duplicate match is the deal: both sides of one deal give one
value, so the luck of the cards cancels before the variance is taken. `mean_ci` gives the
95% Student-t interval of the mean of those per-deal values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom: scipy's inverse of
    the t distribution function, the one `scipy.stats.t.ppf` calls (the same number to the
    last bit), without importing `scipy.stats` (over a second on a fresh install)."""
    if df < 1:
        raise ValueError("t975 needs df >= 1")
    from scipy.special import stdtrit

    return float(stdtrit(df, 0.975))


def mean_ci(values: Sequence[float]) -> dict[str, Any]:
    """Mean, sample sd and the 95% t-interval of the mean (None where undefined)."""
    n = len(values)
    if n == 0:
        return {"n": 0, "mean": None, "sd": None, "ci": None}
    mean = sum(values) / n
    if n == 1:
        return {"n": 1, "mean": mean, "sd": None, "ci": None}
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    half = t975(n - 1) * sd / math.sqrt(n)
    return {"n": n, "mean": mean, "sd": sd, "ci": [mean - half, mean + half]}
