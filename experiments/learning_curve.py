"""Learning curves of a training run, read from its TensorBoard event files.

A training run folder (`runs/{exp}__{seed}__{time}/`, see `training.session`) holds
TensorBoard events with tags such as `charts/...`, `losses/...`, `eval/...`.
`read_scalars` (`training.curves`, the one reader of the project's TensorBoard events)
reads every scalar of every event file under the folder into one table;
`learning_curve_plot` draws chosen tags against the step. Reading needs the
`tensorboard` package; `tensorboard_available()` says whether it is installed, so a
notebook can skip the curves without it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from training.curves import LearningCurveError, read_scalars, tensorboard_available

__all__ = [
    "LearningCurveError",
    "learning_curve_plot",
    "read_scalars",
    "smooth",
    "tensorboard_available",
]


def smooth(values: Sequence[float], weight: float = 0.6) -> np.ndarray:
    """TensorBoard's exponential moving average, debiased so the first point is kept."""
    out = np.empty(len(values))
    last, norm = 0.0, 0.0
    for i, v in enumerate(values):
        last = weight * last + (1 - weight) * v
        norm = weight * norm + (1 - weight)
        out[i] = last / norm
    return out


def learning_curve_plot(
    scalars: pd.DataFrame, tags: Sequence[str] | None = None, weight: float = 0.6
) -> Figure:
    """One panel per tag (default: every `eval/` tag, else every tag): raw values and
    their moving average against the step, one line per run."""
    if tags is None:
        names = list(dict.fromkeys(scalars["tag"]))
        tags = [t for t in names if t.startswith("eval/")] or names
    tags = list(tags)
    if not tags:
        raise LearningCurveError("no scalars to plot")
    fig = Figure(figsize=(6, 3 * len(tags)), layout="constrained")
    axes = fig.subplots(len(tags), 1, squeeze=False)[:, 0]
    for ax, tag in zip(axes, tags, strict=True):
        for run, g in scalars[scalars["tag"] == tag].groupby("run", sort=False):
            label = None if run == "." else run
            (line,) = ax.plot(g["step"], g["value"], alpha=0.3)
            ax.plot(
                g["step"], smooth(g["value"].tolist(), weight), color=line.get_color(), label=label
            )
        ax.set(xlabel="step", ylabel=tag, title=tag)
        if ax.get_legend_handles_labels()[0]:
            ax.legend()
    return fig
