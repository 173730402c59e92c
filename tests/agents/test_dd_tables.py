"""Double-dummy tables at scale (agents/dd/cache.py): the same answers as `tricks_table`,
on worker processes, from an on-disk cache that makes a rerun free."""

from __future__ import annotations

import numpy as np
import pytest

from agents.dd import PositionError, tricks_table
from agents.dd import cache as dd_cache
from agents.dd.cache import DDCache, dd_key, default_cache_path, tricks_tables
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

    monkeypatch.setattr(dd_cache, "_solve_chunk", no_solving)
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


def test_seeded_deals_are_the_benchs_deals() -> None:
    from experiments.bench.dd import seeded_positions

    positions, _ = seeded_positions(3, seed=7)
    deals = dd_cache.seeded_deals(3, seed=7)
    assert [tuple(int(h) for h in d) for d in deals] == [p.hands for p in positions]


@pytest.mark.cli
def test_dd_table_command_builds_then_reads_the_cache(tmp_path) -> None:
    """`spades dd-table` as a user runs it: the tables of seeds 35..36, then a rerun that
    solves nothing, and the .npz holding the same tables as `tricks_table`."""
    from tests.cli_helpers import spades

    cache, out = tmp_path / "dd.sqlite", tmp_path / "t.npz"
    args = ("dd-table", "--deals", "2", "--seed", "35", "--workers", "1", "--cache", str(cache))
    first = spades(*args, "--out", str(out))
    assert first.returncode == 0, first.stderr
    assert "2 deals (seeds 35..36): 2 solved, 0 from the cache" in first.stdout
    again = spades(*args, "--no-progress")
    assert again.returncode == 0, again.stderr
    assert "2 solved, 0 from the cache" not in again.stdout
    assert "0 solved, 2 from the cache" in again.stdout
    saved = np.load(out)
    assert list(saved["seeds"]) == [35, 36]
    for d, t in zip(saved["deals"], saved["tables"], strict=True):
        assert (tricks_table(d) == t).all()


@pytest.mark.cli
def test_dd_table_command_refuses_bad_input_in_one_line(tmp_path) -> None:
    from tests.cli_helpers import one_line_error, spades

    err = one_line_error(spades("dd-table", "--deals", "0"))
    assert "--deals" in err and "at least 1" in err
    cache = ("--cache", str(tmp_path / "dd.sqlite"))
    err = one_line_error(
        spades("dd-table", "--deals", "1", "--out", str(tmp_path / "t.csv"), *cache)
    )
    assert ".npz" in err
    err = one_line_error(spades("dd-table", "--deals", "1", "--rules", "cutthroat", *cache))
    assert "double-dummy" in err
    assert not (tmp_path / "dd.sqlite").exists()  # refused before anything was written
