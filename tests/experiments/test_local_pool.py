"""The local backend's worker processes (`experiments.tournament.local_pool`): results in
unit order, errors and dead workers reported, and no worker left alive after an early
stop."""

from __future__ import annotations

import multiprocessing as mp
import os
import time

import pytest

from experiments.tournament.config import TournamentError
from experiments.tournament.local_pool import ordered_results


def _setup(scale: float) -> float:
    return scale


def _slow_first(scale: float, unit: int) -> list[dict]:
    time.sleep((6 - unit) * scale)  # the early units finish last
    return [{"unit": unit, "pid": os.getpid()}]


def _fails_on_3(scale: float, unit: int) -> list[dict]:
    if unit == 3:
        raise TournamentError("unit 3: no such agent")
    return [{"unit": unit}]


def _dies_on_2(scale: float, unit: int) -> list[dict]:
    if unit == 2:
        os._exit(3)
    return [{"unit": unit}]


def test_results_come_in_unit_order_from_several_workers():
    out = list(ordered_results(range(6), 2, _setup, _slow_first, 0.05))
    assert [rows[0]["unit"] for rows in out] == list(range(6))
    assert len({rows[0]["pid"] for rows in out}) == 2
    assert mp.active_children() == []


def test_an_error_in_a_worker_is_raised_and_the_workers_are_gone():
    with pytest.raises(TournamentError, match="no such agent"):
        list(ordered_results(range(6), 2, _setup, _fails_on_3, 0.0))
    assert mp.active_children() == []


def test_a_worker_that_dies_is_reported_not_waited_for():
    with pytest.raises(TournamentError, match="exit code 3"):
        list(ordered_results(range(6), 2, _setup, _dies_on_2, 0.0))
    assert mp.active_children() == []


def test_stopping_early_kills_the_workers():
    results = ordered_results(range(6), 2, _setup, _slow_first, 0.2)
    next(results)
    results.close()
    assert mp.active_children() == []
