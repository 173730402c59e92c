"""Strength of agents against each other: duplicate tournaments, table written here.

    python -m experiments.tournament.strength run --out runs/strength --deals 1000 --workers 2
    python -m experiments.tournament.strength table --out runs/strength

`run` plays one duplicate round-robin (the runner of experiments.tournament.runner, hand
mode: one hand per deal, both sides of every deal) between PIMC, ISMCTS and the
heuristic, and `table` writes `strength.md` and `strength.json` from the run's log,
complete or not (the runner logs whole units of `--chunk` deals, spread evenly over the
pairs, so a run stopped early still gives every pair the deals it finished; `run`
resumes it). Each row: the mean duplicate margin per deal of A over B (A's team hand
score minus B's, the mean of the two sides of a deal) with its 95% interval
(experiments.tournament.summary), and the deal count.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agents.registry import split_specs
from experiments.tournament.config import TournamentConfig
from experiments.tournament.report import markdown_text
from experiments.tournament.results_log import read_rows
from experiments.tournament.runner import CONFIG_FILE, LOG_FILE, run_tournament
from experiments.tournament.summary import summarize
from spades_env.tooling.files import atomic_write

AGENTS = ("pimc:worlds=16,policy=greedy", "ismcts:iterations=200", "heuristic")


def run(out: Path, agents: tuple[str, ...], deals: int, workers: int, chunk: int) -> None:
    resume = (out / CONFIG_FILE).exists()
    config = None if resume else TournamentConfig(agents=agents, deals=deals, chunk=chunk)
    run_tournament(out, config, resume=resume, workers=workers)


def table(out: Path) -> dict[str, Any]:
    """Summarise the log of `out` (partial or complete); write strength.md/.json."""
    config = json.loads((out / CONFIG_FILE).read_text())["config"]
    labels = TournamentConfig.from_dict(dict(config)).labels
    rows = read_rows(out / LOG_FILE)
    summary = summarize(rows, labels)
    lines = [
        "| A | B | deals | A - B points per deal | 95% interval |",
        "|---|---|---:|---:|---|",
    ]
    for pair in summary["pairs"]:
        m = pair["margin"]
        lo, hi = m["ci"]
        lines.append(
            f"| {markdown_text(pair['a'])} | {markdown_text(pair['b'])} | {pair['deals']} "
            f"| {m['mean']:+.1f} "
            f"| [{lo:+.1f}, {hi:+.1f}] |"
        )
    text = "\n".join(lines) + "\n"
    atomic_write(out / "strength.md", text)
    result = {"config": config, "pairs": summary["pairs"], "bids": summary.get("bids")}
    atomic_write(out / "strength.json", json.dumps(result, indent=1, default=str))
    print(text)
    return result


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("command", choices=("run", "table"))
    parser.add_argument("--out", default="runs/strength", type=Path)
    parser.add_argument("--agents", help="agent specs separated by ; or , (default: AGENTS)")
    parser.add_argument("--deals", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--chunk", type=int, default=10)
    args = parser.parse_args(argv)
    if args.command == "run":
        agents = split_specs(args.agents) if args.agents else AGENTS
        run(args.out, agents, args.deals, args.workers, args.chunk)
    table(args.out)


if __name__ == "__main__":
    main()
