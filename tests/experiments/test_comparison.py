"""experiments.tournament.comparison and .sample_log, experiments.learning_curve."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from matplotlib.figure import Figure

from experiments.learning_curve import (
    LearningCurveError,
    learning_curve_plot,
    read_scalars,
    smooth,
)
from experiments.tournament.comparison import (
    Z975,
    agents_of,
    margin_heatmap,
    margin_matrix,
    margin_table,
    margin_text,
    ratings_plot,
    ratings_table,
)
from experiments.tournament.results_log import read_rows
from experiments.tournament.sample_log import sample_log
from experiments.tournament.summary import t975


def duplicate_rows(deal: int, a: str, b: str, a_diff: tuple[int, int]) -> list[dict]:
    """Both sides of a hand-mode deal; A's team outscores B's by a_diff[side]."""
    rows = []
    for side in (0, 1):
        teams = [a, b] if side == 0 else [b, a]
        score = [a_diff[side], 0] if side == 0 else [0, a_diff[side]]
        rows.append(
            {
                "mode": "hand",
                "deal": deal,
                "side": side,
                "teams": teams,
                "hand_score": score,
                "scores": score,
                "game_over": False,
                "winner_agent": None,
            }
        )
    return rows


ROWS = (
    duplicate_rows(0, "A", "B", (30, 10))  # A +20 a deal
    + duplicate_rows(1, "A", "B", (0, 20))  # +10
    + duplicate_rows(2, "A", "B", (-10, 10))  # 0
    + duplicate_rows(0, "A", "C", (50, 50))
    + duplicate_rows(1, "A", "C", (40, 60))
)


def test_agents_come_in_pair_order():
    assert agents_of(ROWS) == ["A", "B", "C"]


def test_margin_table_holds_both_orientations_with_t_intervals():
    m = margin_table(ROWS).set_index(["a", "b"])
    half = t975(2) * 10 / math.sqrt(3)  # per-deal values 20, 10, 0: sd 10
    assert m.loc[("A", "B"), "mean"] == 10
    assert (m.loc[("A", "B"), "lo"], m.loc[("A", "B"), "hi"]) == pytest.approx(
        (10 - half, 10 + half)
    )
    assert m.loc[("B", "A"), "mean"] == -10
    assert (m.loc[("B", "A"), "lo"], m.loc[("B", "A"), "hi"]) == pytest.approx(
        (-10 - half, -10 + half)
    )
    assert m.loc[("A", "C"), "deals"] == 2 and m.loc[("C", "A"), "mean"] == -50


def test_margin_matrix_and_text_are_row_minus_column():
    margins = margin_table(ROWS)
    matrix = margin_matrix(margins, ["A", "B", "C"])
    assert matrix.loc["A", "B"] == 10 and matrix.loc["B", "A"] == -10
    assert pd.isna(matrix.loc["A", "A"]) and pd.isna(matrix.loc["B", "C"])
    text = margin_text(margins, ["A", "B", "C"])
    assert text.loc["A", "B"].startswith("+10.0 [") and text.loc["B", "C"] == "-"


def test_ratings_put_the_stronger_agent_first_with_an_interval():
    rows = [r for d in range(12) for r in duplicate_rows(d, "A", "B", (20, 10))]
    table = ratings_table(rows)
    assert table["agent"].tolist() == ["A", "B"]
    first = table.iloc[0]
    assert first["lo"] == pytest.approx(first["mu"] - Z975 * first["sigma"])
    assert first["hi"] == pytest.approx(first["mu"] + Z975 * first["sigma"])


def test_comparison_figures_are_drawn():
    margins = margin_table(ROWS)
    assert isinstance(margin_heatmap(margins, agents_of(ROWS)), Figure)
    assert isinstance(ratings_plot(ratings_table(ROWS)), Figure)


def test_sample_log_is_a_seeded_tournament(tmp_path):
    log = sample_log(deals=3, seed=5, folder=tmp_path / "a")
    again = sample_log(deals=3, seed=5, folder=tmp_path / "b")
    rows = read_rows(log)
    assert len(rows) == 6 and {r["deal"] for r in rows} == {0, 1, 2}
    strip = [{k: v for k, v in r.items() if k != "logged_at"} for r in rows]
    assert strip == [{k: v for k, v in r.items() if k != "logged_at"} for r in read_rows(again)]


# ----------------------------------------------------------------------------- learning curves
def test_smoothing_keeps_the_first_point_and_follows_a_constant():
    assert smooth([4.0, 4.0, 4.0]).tolist() == pytest.approx([4.0, 4.0, 4.0])
    assert smooth([0.0, 10.0], weight=0.5)[1] == pytest.approx(10 * 0.5 / 0.75)


def test_read_scalars_reads_a_tensorboard_run(tmp_path):
    pytest.importorskip("tensorboard")
    writer_mod = pytest.importorskip("torch.utils.tensorboard")
    writer = writer_mod.SummaryWriter(str(tmp_path / "run"))
    for step in range(5):
        writer.add_scalar("eval/points_per_deal", 10.0 * step, step)
        writer.add_scalar("losses/value", 1.0 / (step + 1), step)
    writer.close()
    table = read_scalars(tmp_path / "run")
    assert set(table["tag"]) == {"eval/points_per_deal", "losses/value"}
    curve = table[table["tag"] == "eval/points_per_deal"]
    assert curve["step"].tolist() == [0, 1, 2, 3, 4]
    assert curve["value"].tolist() == pytest.approx([0, 10, 20, 30, 40])
    fig = learning_curve_plot(table)
    assert len(fig.axes) == 1  # eval/ tags only, by default
    assert len(learning_curve_plot(table, ["losses/value", "eval/points_per_deal"]).axes) == 2
    with pytest.raises(LearningCurveError, match="no scalars tagged"):
        read_scalars(tmp_path / "run", ["charts/none"])


def test_read_scalars_names_a_folder_without_events(tmp_path):
    pytest.importorskip("tensorboard")
    with pytest.raises(LearningCurveError, match="no TensorBoard event files"):
        read_scalars(tmp_path)
    with pytest.raises(LearningCurveError, match="does not exist"):
        read_scalars(tmp_path / "missing")
