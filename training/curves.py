"""Learning curves as PNG, read from a run's TensorBoard events.

    python -m training.curves runs/ppo_main__1__... --out curve.png

Top: the duplicate margin against the heuristic (points per deal) with its 95% interval;
middle: bid error and set rate; bottom: end-to-end throughput (environment decisions per
second, learner included). The x axis is environment decisions (TensorBoard's step).
Needs matplotlib (the `train` extra).
"""

from __future__ import annotations

import argparse
import importlib.util
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

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


def _series(table: pd.DataFrame, tag: str) -> tuple[list[int], list[float]]:
    rows = table[table["tag"] == tag]
    return rows["step"].tolist(), rows["value"].tolist()


def plot_learning_curve(run_dir: str | Path, out: str | Path, title: str | None = None) -> Path:
    """Draw the run's curves to `out` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    table = read_scalars(run_dir)
    s = {tag: _series(table, tag) for tag in table["tag"].unique()}
    fig, axes = plt.subplots(3, 1, figsize=(8, 9), sharex=True)
    steps, margin = s["eval/margin"]
    _, lo = s["eval/margin_ci_low"]
    _, hi = s["eval/margin_ci_high"]
    ax = axes[0]
    ax.plot(steps, margin, marker="o", label="margin vs heuristic")
    ax.fill_between(steps, lo, hi, alpha=0.25, label="95% CI")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_ylabel("points per deal")
    ax.legend(loc="lower right")
    ax.set_title(title or f"{Path(run_dir).name}: duplicate evaluation against the heuristic")
    ax = axes[1]
    for tag, label in (
        ("eval/bid_error", "bid error |tricks - bid|"),
        ("eval/set_rate", "set rate"),
    ):
        if tag in s:
            ax.plot(*s[tag], marker=".", label=label)
    ax.legend(loc="upper right")
    ax.set_ylabel("bid accuracy")
    ax = axes[2]
    if "charts/SPS" in s:
        ax.plot(*s["charts/SPS"], linewidth=0.8)
    ax.set_ylabel("decisions / s")
    ax.set_xlabel("environment decisions")
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, dpi=100)
    plt.close(fig)
    return out


def main(argv: Sequence[str] | None = None) -> None:
    p = argparse.ArgumentParser(description="Plot a run's learning curve from TensorBoard.")
    p.add_argument("run_dir")
    p.add_argument("--out", default=None, help="PNG path (default RUN_DIR/learning_curve.png)")
    p.add_argument("--title", default=None)
    a = p.parse_args(argv)
    out = a.out or Path(a.run_dir) / "learning_curve.png"
    print(plot_learning_curve(a.run_dir, out, a.title))


if __name__ == "__main__":
    main()
