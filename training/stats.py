"""Small statistics shared by training-time evaluation and tournament summaries.

The unit of pairing in a duplicate match is the deal: both sides of one deal give one
value, so the luck of the cards cancels before the variance is taken. `mean_ci` gives the
95% Student-t interval of the mean of those per-deal values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

_Z975 = 1.959963984540054
_T975_SMALL = {
    1: 12.706204736,
    2: 4.302652730,
    3: 3.182446305,
    4: 2.776445105,
    5: 2.570581836,
    6: 2.446911851,
    7: 2.364624252,
    8: 2.306004135,
    9: 2.262157163,
}


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with `df` degrees of freedom.

    Tabulated for df < 10; above, the Cornish-Fisher expansion in 1/df (error < 1e-5).
    """
    if df < 1:
        raise ValueError("t975 needs df >= 1")
    if df in _T975_SMALL:
        return _T975_SMALL[df]
    z = _Z975
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


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
