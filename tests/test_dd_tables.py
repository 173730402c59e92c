"""Double-dummy tables at scale (agents/dd/tables.py): the same answers as `tricks_table`,
on worker processes, from an on-disk cache that makes a rerun free."""

from __future__ import annotations

import numpy as np
import pytest

from agents.dd import PositionError, tricks_table
from agents.dd import tables as dd_tables
from agents.dd.tables import DDCache, dd_key, default_cache_path, tricks_tables
from spades_env.rules import Rules
from spades_env.state import deal_hands

SEEDS = [35, 36, 20]  # deals the solver answers in milliseconds


def deals() -> np.ndarray:
    return deal_hands(Rules(), np.array(SEEDS, dtype=np.uint64), np.zeros(len(SEEDS)))


@pytest.mark.parametrize("workers", [1, 2])
def test_tables_equal_tricks_table_and_fill_the_cache(tmp_path, workers) -> None:
    cache = DDCache(tmp_path / "dd.sqlite")
    out = tricks_tables(deals(), cache=cache, workers=workers)
    assert out.shape == (3, 4, 2) and out.dtype == np.int8
    for d, table in zip(deals(), out, strict=True):
        assert (tricks_table(d) == table).all()
    assert len(cache) == 12  # one row per deal and leader


def test_a_rerun_reads_the_cache_and_solves_nothing(tmp_path, monkeypatch) -> None:
    path = tmp_path / "dd.sqlite"
    first = tricks_tables(deals(), cache=path, workers=1)

    def no_solving(*args, **kwargs):
        raise AssertionError("a cached deal was solved again")

    monkeypatch.setattr(dd_tables, "_solve_chunk", no_solving)
    assert (tricks_tables(deals(), cache=path, workers=2) == first).all()


def test_the_key_holds_the_rules_the_answer_depends_on() -> None:
    hands = [int(h) for h in deals()[0]]
    keys = {
        dd_key(hands, 0, Rules()),
        dd_key(hands, 1, Rules()),
        dd_key(hands, 0, Rules(), broken=True),
        dd_key(hands, 0, Rules(first_lead="two_of_clubs")),
    }
    assert len(keys) == 4


def test_two_of_clubs_rows_are_one_lead(tmp_path) -> None:
    rules = Rules(first_lead="two_of_clubs")
    out = tricks_tables(deals()[:1], rules, cache=tmp_path / "dd.sqlite", workers=1)
    assert (out[0] == out[0, 0]).all() and (out[0, 0] == tricks_table(deals()[0], rules)[0]).all()


def test_unsupported_rules_are_refused_before_solving(tmp_path) -> None:
    with pytest.raises(PositionError, match="double-dummy"):
        tricks_tables(deals(), Rules.preset("cutthroat"), cache=tmp_path / "dd.sqlite")


def test_the_default_cache_path_follows_the_environment(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("SPADES_DD_CACHE", str(tmp_path / "x.sqlite"))
    assert default_cache_path() == tmp_path / "x.sqlite"
    monkeypatch.delenv("SPADES_DD_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert default_cache_path() == tmp_path / "spades-env" / "dd_tricks.sqlite"
