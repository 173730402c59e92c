"""The progress bar of the commands that count units of work (deals, rungs, solves)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


def counting_bar(console: Console, label: str | None = None, disable: bool = False) -> Progress:
    """A rich bar on `console`: the label (default: each task's description), the bar,
    done / total and the time elapsed. `disable` hides it (`--no-progress`)."""
    return Progress(
        TextColumn(label or "[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=disable,
    )
