"""Which cases of a parametrized test run by default and which only with `-m slow`.

Where a test's cases all exercise one mechanism with different inputs (each case a
subprocess, a compile or a small run), the first few prove it on every run and the rest
widen it under `-m slow`, so the default run stays within its time (about ten minutes on
the CI machine) without dropping any case from the suite.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

_PARAM = type(pytest.param(None))


def first_by_default(values: Iterable, keep: int = 1, *, several: bool = False) -> list:
    """`values` of a parametrize: the first `keep` in every run, the others marked slow,
    each with the id it had. `several`: each value is a tuple of several arguments."""
    out = []
    for i, value in enumerate(values):
        if i < keep:
            out.append(value)
        elif isinstance(value, _PARAM):
            marks = [*value.marks, pytest.mark.slow]
            out.append(pytest.param(*value.values, marks=marks, id=value.id))
        elif several:
            out.append(pytest.param(*value, marks=pytest.mark.slow))
        else:
            out.append(pytest.param(value, marks=pytest.mark.slow))
    return out
