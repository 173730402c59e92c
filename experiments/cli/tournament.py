"""`spades tournament`: a duplicate round-robin between agents, with its summary.

With no arguments: random against heuristic on 300 duplicate deals of the standard
rules, two worker processes, a progress bar, the summary as tables, and the log and
summary JSON under `runs/tournament-<timestamp>/`.
"""

from __future__ import annotations

import argparse
import dataclasses
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress

from agents.processes import check_workers
from experiments.cli.progress import counting_bar
from experiments.cli.values import (
    add_decision_timeout,
    add_rules_arguments,
    agent_limits,
    agent_specs,
    build_rules,
    deal_count,
    seed_number,
    whole_number,
)
from experiments.tournament import deals as deals_mod
from experiments.tournament.config import MODES, RunContext, TournamentConfig, TournamentError
from experiments.tournament.deals import DealSet
from experiments.tournament.report import print_summary
from experiments.tournament.runner import (
    BACKENDS,
    CONFIG_FILE,
    LOG_FILE,
    SUMMARY_FILE,
    Hooks,
    OnUnit,
    drive,
)
from spades_env.tooling.files import new_folder

DEFAULTS: dict[str, Any] = {
    "agents": "random,heuristic",
    "deals": 300,
    "mode": "hand",
    "rules": "standard",
    "option": [],
    "seed": 0,
    "chunk": 50,
    "hand_cap": 100,
    "deal_file": None,
}
RUNS_DIR = Path("runs")


_positive = whole_number(1)


def add_parser(sub) -> None:
    p = sub.add_parser(
        "tournament",
        help="duplicate round-robin tournament between agents (the main job)",
        description="Duplicate round-robin between agents: each deal is played twice per "
        "pair with the partnerships swapped. Writes log.jsonl and summary.json to the run "
        "folder.",
    )
    d = DEFAULTS
    p.add_argument(
        "--agents",
        metavar="[NAME=]SPEC,...",
        help="agents separated by , or ; (after a comma, key=value continues the agent "
        "before it: pimc:worlds=16,policy=greedy,heuristic). SPEC: a registered agent "
        "(random, heuristic, pimc, learned, checkpoint:PATH, sb3:PATH.zip, ...), an installed "
        "plugin's, path/to/file.py:Class or package.module:Class (options after a colon: "
        "file.py:Class:depth=2); NAME= names it in the tables and log: "
        f"mine=checkpoint:runs/ppo/final.pt (default {d['agents']})",
    )
    p.add_argument("--deals", type=deal_count, help=f"duplicate deals (default {d['deals']})")
    p.add_argument("--mode", choices=MODES, help="hand: one hand per deal; game: whole games")
    add_rules_arguments(p)
    p.add_argument(
        "--seed", type=seed_number, help="seed of the deals and agents, 0..2**64-1 (default 0)"
    )
    p.add_argument("--deal-file", metavar="PATH", help="play a saved deal set (deals.json)")
    p.add_argument("--out", metavar="DIR", help="run folder (default runs/tournament-<time>)")
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish the tournament in --out (default: the latest run folder)",
    )
    p.add_argument(
        "--workers",
        type=_positive,
        help="local: processes (default 2); ray: CPUs of a Ray started here (default all), "
        "or the most tasks in flight on a cluster",
    )
    p.add_argument(
        "--backend",
        choices=BACKENDS,
        default="local",
        help="local: processes on this machine; ray: Ray tasks (the ray extra)",
    )
    p.add_argument(
        "--address",
        metavar="auto|HOST:PORT",
        help="ray: join this running cluster (default: start a local Ray)",
    )
    p.add_argument("--chunk", type=_positive, help="deals per work unit (default 50)")
    p.add_argument(
        "--hand-cap",
        type=_positive,
        help="game mode: max_hands when the rules set no end but the target (default 100)",
    )
    add_decision_timeout(p)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say how many requests the llm: agents will make, and stop (plays nothing)",
    )
    p.set_defaults(run=run)


# ----------------------------------------------------------------------------- setup
def _given(args: argparse.Namespace) -> dict[str, Any]:
    """The tournament-defining flags the user gave explicitly."""
    return {k: getattr(args, k) for k in DEFAULTS if getattr(args, k) is not None}


def build_config(args: argparse.Namespace) -> TournamentConfig:
    v = {**DEFAULTS, **_given(args)}
    return TournamentConfig(
        agents=agent_specs(v["agents"], "--agents", teams=True),  # the one reading of each spec
        mode=v["mode"],
        rules=build_rules(v["rules"], v["option"]),
        seed=v["seed"],
        deals=v["deals"],
        chunk=v["chunk"],
        hand_cap=v["hand_cap"],
    )


def _new_run_dir() -> Path:
    """A new folder `runs/tournament-<time>` (`-2`, `-3`, ... for runs started in the same
    second), made here so that no other run gets it."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return new_folder(RUNS_DIR, f"tournament-{stamp}")


def _latest_run_dir() -> Path:
    runs = sorted(RUNS_DIR.glob("tournament-*/" + CONFIG_FILE), key=lambda p: p.stat().st_mtime)
    if not runs:
        raise TournamentError(f"--resume: no run folder under {str(RUNS_DIR)!r}; give --out DIR")
    return runs[-1].parent


def _check_resume_flags(args: argparse.Namespace, run_dir: Path, saved: TournamentConfig) -> None:
    """--resume takes the tournament from the run folder (`saved`); a conflicting flag is
    an error."""
    given = _given(args)
    if not given:
        return
    if "deal_file" in given:
        raise TournamentError("--resume uses the run folder's own deals; drop --deal-file")
    wanted = build_config(args)
    for key in given:
        attr = "rules" if key in ("rules", "option") else key
        if getattr(wanted, attr) != getattr(saved, attr):
            flag = "--" + key.replace("_", "-")
            raise TournamentError(
                f"{flag} differs from the tournament in {str(run_dir)!r}; "
                "drop it to resume, or start a new run with another --out"
            )


# ----------------------------------------------------------------------------- run
def _new_tournament(args: argparse.Namespace) -> tuple[TournamentConfig, DealSet]:
    """The config and its deals (the deal file's, or generated), checked before any
    folder is made."""
    config = build_config(args)
    if not args.deal_file:
        return config, deals_mod.generate(config.play_rules(), config.seed, config.deals)
    deal_set = deals_mod.load(config.play_rules(), args.deal_file)
    if args.deals is None:  # a deal file without --deals plays all its deals
        config = dataclasses.replace(config, deals=len(deal_set))
    return config, deal_set.head(config.deals)


def _hooks(args: argparse.Namespace, run_dir: Path, err: Console, progress: Progress) -> Hooks:
    """What the command line says along the driver's way: the log's repairs, a resume's
    flag check, the tournament's line and the progress bar."""

    def start(ctx: RunContext, done: int, total: int) -> OnUnit:
        cfg = ctx.config
        err.print(
            f"tournament {ctx.tournament}: {', '.join(cfg.labels)}; {cfg.deals} duplicate "
            f"deals, {cfg.mode} mode, {len(cfg.pairs)} pair(s); run folder {run_dir}"
        )
        progress.start()  # the bar shows while units play (refusals before: one line)
        task = progress.add_task("deals x pairs", total=total, completed=done)
        return lambda _u, n: progress.advance(task, n)

    def opened(ctx: RunContext) -> None:
        if args.resume:
            _check_resume_flags(args, run_dir, ctx.config)

    return Hooks(note=err.print, opened=opened, progress=start)


def run(args: argparse.Namespace) -> int:
    if args.address is not None and args.backend != "ray":
        raise TournamentError("--address needs --backend ray")
    if args.backend == "ray":  # before the run folder is made
        from experiments.tournament.ray_backend import require_ray
        from spades_env.tooling.ray_address import check_address

        if args.address is not None:
            check_address(args.address)
        require_ray()
    if args.backend == "local" and args.workers is not None:
        check_workers(args.workers)  # before any folder is made
    config, deal_set = (None, None) if args.resume else _new_tournament(args)
    if args.dry_run:
        from experiments.tournament.llm_ladder import dry_run_lines, planned_requests

        if config is None:
            raise TournamentError("--dry-run counts a new tournament's requests; drop --resume")
        from experiments.tournament.llm_estimate import estimate, estimate_lines

        plans = planned_requests(config)
        lines = dry_run_lines(plans, config.mode)
        lines[-1:-1] = estimate_lines(estimate(config, deal_set, plans))  # rendered prompts
        for line in lines:
            print(line)
        return 0
    fresh = not args.resume and not args.out
    if args.resume:
        run_dir = Path(args.out) if args.out else _latest_run_dir()
    else:
        run_dir = Path(args.out) if args.out else _new_run_dir()
    err = Console(stderr=True)
    progress = counting_bar(err, disable=args.no_progress)
    try:
        try:
            with agent_limits(args):  # the decision time limit, in the workers too
                summary = drive(
                    run_dir,
                    config,
                    deal_set,
                    resume=args.resume,
                    workers=args.workers,
                    backend=args.backend,
                    address=args.address,
                    hooks=_hooks(args, run_dir, err, progress),
                    fresh=fresh,
                )
        finally:
            if progress.live.is_started:  # (stop writes a line, even for a bar never shown)
                progress.stop()
    except KeyboardInterrupt:
        err.print(
            f"interrupted; the log keeps every finished unit: spades tournament --resume "
            f"--out {run_dir} finishes the tournament"
        )
        return 130
    out = Console()
    if not out.is_terminal:
        out = Console(width=120)  # a pipe or file: do not squeeze the tables into 80
    print_summary(summary, out)
    out.print(f"log: {run_dir / LOG_FILE}\nsummary: {run_dir / SUMMARY_FILE}")
    return 0


# ----------------------------------------------------------------------------- output
# The tables are drawn by experiments.tournament.report, the renderer the Python API's
# TournamentResult shares (import print_summary from there).
__all__ = ["add_parser", "build_config", "run"]
