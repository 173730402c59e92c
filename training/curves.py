"""Learning curves as PNG, read from a run's TensorBoard events.

    python -m training.curves runs/ppo_main__1__... --out curve.png

Top: the duplicate margin against the heuristic (points per deal) with its 95% interval;
middle: bid error and set rate; bottom: end-to-end throughput (environment decisions per
second, learner included). The x axis is environment decisions (TensorBoard's step).
Needs matplotlib (the `train` extra).
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from pathlib import Path

from tensorboard.backend.event_processing.event_accumulator import EventAccumulator


def read_scalars(run_dir: str | Path) -> dict[str, tuple[list[int], list[float]]]:
    """{tag: (steps, values)} of every scalar in the run's event files."""
    ea = EventAccumulator(str(run_dir), size_guidance={"scalars": 0})
    ea.Reload()
    out = {}
    for tag in ea.Tags()["scalars"]:
        events = ea.Scalars(tag)
        out[tag] = ([e.step for e in events], [e.value for e in events])
    return out


def plot_learning_curve(run_dir: str | Path, out: str | Path, title: str | None = None) -> Path:
    """Draw the run's curves to `out` (PNG)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    s = read_scalars(run_dir)
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
