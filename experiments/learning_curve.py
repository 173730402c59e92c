"""Learning curves of a training run, read from its TensorBoard event files.

A training run folder (`runs/{exp}__{seed}__{time}/`, see `training.session`) holds
TensorBoard events with tags such as `charts/...`, `losses/...`, `eval/...`.
`read_scalars` reads every scalar of every event file under the folder into one table;
`learning_curve_plot` draws chosen tags against the step. Reading needs the
`tensorboard` package; `tensorboard_available()` says whether it is installed, so a
notebook can skip the curves without it.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

EVENT_GLOB = "events.out.tfevents.*"


class LearningCurveError(ValueError):
    """A run folder without TensorBoard events, or tags it does not have."""


def tensorboard_available() -> bool:
    return importlib.util.find_spec("tensorboard") is not None


def read_scalars(run_dir: str | Path, tags: Sequence[str] | None = None) -> pd.DataFrame:
    """Every scalar under `run_dir` (or only `tags`): columns run, tag, step, value,
    wall_time; `run` is the event file's folder relative to `run_dir` ("." for itself)."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        raise LearningCurveError(f"run folder {str(run_dir)!r} does not exist")
    folders = sorted({p.parent for p in run_dir.rglob(EVENT_GLOB)})
    if not folders:
        raise LearningCurveError(
            f"{str(run_dir)!r} holds no TensorBoard event files ({EVENT_GLOB}); "
            "give the folder of a training run"
        )
    out = []
    for folder in folders:
        acc = EventAccumulator(str(folder), size_guidance={"scalars": 0})
        acc.Reload()
        for tag in acc.Tags()["scalars"]:
            if tags is not None and tag not in tags:
                continue
            for e in acc.Scalars(tag):
                run = str(folder.relative_to(run_dir))
                out.append((run, tag, e.step, e.value, e.wall_time))
    table = pd.DataFrame(out, columns=["run", "tag", "step", "value", "wall_time"])
    if tags is not None:
        missing = sorted(set(tags) - set(table["tag"]))
        if missing:
            raise LearningCurveError(f"no scalars tagged {', '.join(missing)} in {str(run_dir)!r}")
    return table.sort_values(["run", "tag", "step"], ignore_index=True)


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
