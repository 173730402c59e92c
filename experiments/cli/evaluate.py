"""`spades evaluate SPEC`: the fixed, versioned evaluation ladder of
`experiments.tournament.protocol`, one table and one JSON result.

The candidate plays a duplicate tournament against each opponent of the ladder, each in
its own run folder under `--dir` (`1-random/`, `2-heuristic/`, ...), so `--resume`
finishes an interrupted evaluation the way `spades tournament --resume` finishes a
tournament: the rows already logged are kept, the rest is played.
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from experiments.cli.tournament import whole_number
from experiments.tournament import protocol
from experiments.tournament.config import TournamentError
from experiments.tournament.runner import (
    BACKENDS,
    CONFIG_FILE,
    finish,
    open_run,
    pending_units,
    play_units,
    run_folder,
    unit_deals,
)

RUNS_DIR = Path("runs")
HEADER_FILE, RESULT_FILE = "evaluation.json", "result.json"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "evaluate",
        help="the fixed evaluation ladder (protocol "
        f"{protocol.VERSION}) of one agent: a table and a JSON result",
        description=f"Protocol {protocol.VERSION}: duplicate deals of one published deal "
        "set (its SHA-256 printed) against "
        + ", ".join(r.opponent for r in protocol.LADDER)
        + ", with deal counts for a 95% CI of about ±2.5 points per deal "
        "(experiments/tournament/protocol.py). Resumable like a tournament.",
    )
    p.add_argument("spec", metavar="SPEC", help="the agent to evaluate (an agent spec)")
    p.add_argument("--out", metavar="FILE", help="also write the result JSON here")
    p.add_argument(
        "--dir",
        metavar="DIR",
        help="the evaluation's folder, one run folder per opponent "
        "(default runs/evaluate-<agent>-<time>)",
    )
    p.add_argument(
        "--resume",
        action="store_true",
        help="finish the evaluation in --dir (default: the latest runs/evaluate-*)",
    )
    p.add_argument("--workers", type=whole_number(1), help="processes (default 2), as tournament")
    p.add_argument("--backend", choices=BACKENDS, default="local", help="as tournament")
    p.add_argument("--address", metavar="auto|HOST:PORT", help="ray: join this cluster")
    p.add_argument(
        "--test-deals",
        type=whole_number(1),
        metavar="N",
        help="TESTS ONLY, NOT THE PROTOCOL: at most N deals per opponent; the result is "
        "marked as a test and its CIs are far wider than the protocol's",
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=run)


def _folder(args: argparse.Namespace) -> Path:
    if args.dir:
        return Path(args.dir)
    if args.resume:
        found = sorted(RUNS_DIR.glob(f"evaluate-*/{HEADER_FILE}"), key=lambda p: p.stat().st_mtime)
        if not found:
            raise TournamentError(f"--resume: no evaluation under {str(RUNS_DIR)!r}; give --dir")
        return found[-1].parent
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    return RUNS_DIR / f"evaluate-{protocol.slug(args.spec)}-{stamp}"


def _open(root: Path, header: dict[str, Any], resume: bool) -> None:
    path = root / HEADER_FILE
    if path.exists():
        if not resume:
            raise TournamentError(
                f"{str(root)!r} already holds an evaluation; add --resume to finish it, "
                "or choose another --dir"
            )
        protocol.check_header(json.loads(path.read_text()), header, root)
        return
    if resume:
        raise TournamentError(f"{str(root)!r} holds no evaluation ({HEADER_FILE} is missing)")
    if root.exists() and any(root.iterdir()):
        raise TournamentError(f"--dir {str(root)!r} is not empty; choose a new folder")
    root.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(header, indent=2) + "\n")


def evaluate(
    spec: str,
    root: Path,
    *,
    resume: bool = False,
    test_deals: int | None = None,
    workers: int | None = 2,
    backend: str = "local",
    address: str | None = None,
    progress: Progress | None = None,
    on_start: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """Play (or finish) the ladder for `spec` in `root`; return the result (JSON-ready)."""
    header = protocol.header(spec, test_deals)
    configs = [
        protocol.rung_config(spec, r, protocol.rung_deals(r, test_deals)) for r in protocol.LADDER
    ]  # checks the spec (and its rules) before any folder is made
    _open(root, header, resume)
    if on_start is not None:
        on_start()
    deal_set = protocol.deal_set()
    rungs, started = [], time.monotonic()
    for k, (rung, config) in enumerate(zip(protocol.LADDER, configs, strict=True)):
        run_dir = protocol.rung_dir(root, k, rung)
        with run_folder(run_dir, create=True):
            if (run_dir / CONFIG_FILE).exists():
                ctx = open_run(run_dir, resume=True)
                if ctx.config != config:
                    raise TournamentError(
                        f"{str(run_dir)!r} holds another tournament than this rung's; "
                        "start the evaluation in a new --dir"
                    )
            else:
                ctx = open_run(run_dir, config, deal_set.head(config.deals))
            todo = pending_units(run_dir, ctx)
            on_unit = None
            if progress is not None:
                left = sum(unit_deals(config, u) for u in todo)
                task = progress.add_task(f"vs {rung.opponent}", total=config.deals)
                progress.update(task, completed=config.deals - left)
                on_unit = lambda _u, n, task=task: progress.advance(task, n)  # noqa: E731
            play_units(run_dir, ctx, todo, workers, on_unit, backend=backend, address=address)
            summary = finish(run_dir, ctx)
        rungs.append({**protocol.rung_entry(rung, summary, config.labels[0]), "run": str(run_dir)})
    return {
        **header,
        "official": test_deals is None,
        "rules": "standard",
        "mode": "hand",
        "metric": "points per deal (candidate - opponent), 95% t-interval over duplicate deals",
        "spades_version": _version(),
        "rungs": rungs,
        "seconds_this_run": round(time.monotonic() - started, 1),
    }


def _version() -> str:
    """The installed spades-env version (what `spades --version` prints)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("spades-env")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def result_table(result: dict[str, Any]) -> Table:
    """The ladder as one table; the caption names the protocol and the deal set."""
    test = result["test_deals"]
    caption = [
        f"protocol {result['protocol']} {result['version']}; deal set sha256 "
        f"{result['deal_set_sha256'][:16]} (seed {result['deal_seed']})",
        "candidate - opponent, points per deal; standard rules, hand mode, duplicate",
    ]
    if test is not None:
        caption.append(f"TEST SCALE (--test-deals {test}): NOT THE PROTOCOL, do not report")
    table = Table(
        title=f"spades evaluate {result['candidate']} (protocol {result['version']})",
        caption="\n".join(caption),
        min_width=max(len(c) for c in caption) + 2,
    )
    for col in ("opponent", "deals", "margin", "95% CI", "±"):
        table.add_column(col, justify="left" if col == "opponent" else "right")
    for r in result["rungs"]:
        ci = r["ci"]
        table.add_row(
            r["opponent"],
            str(r["deals"]),
            "-" if r["margin"] is None else f"{r['margin']:+.1f}",
            "-" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]",
            "-" if ci is None else f"{(ci[1] - ci[0]) / 2:.1f}",
        )
    return table


def run(args: argparse.Namespace) -> int:
    if args.address is not None and args.backend != "ray":
        raise TournamentError("--address needs --backend ray")
    if args.backend == "ray":
        from experiments.tournament.ray_backend import require_ray

        require_ray()
    out_file = Path(args.out) if args.out else None
    if out_file is not None and out_file.is_dir():
        raise TournamentError(f"--out {str(out_file)!r} is a folder; give a .json file")
    root = _folder(args)
    err = Console(stderr=True)
    progress = Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        disable=args.no_progress,
    )
    try:
        with progress:
            result = evaluate(
                args.spec,
                root,
                resume=args.resume,
                test_deals=args.test_deals,
                workers=args.workers,
                backend=args.backend,
                address=args.address,
                progress=progress,
                on_start=lambda: err.print(
                    f"evaluation of {args.spec}, protocol {protocol.VERSION}; folder {root}"
                ),
            )
    except KeyboardInterrupt:
        err.print(
            "interrupted; every finished unit is kept: spades evaluate "
            f"{args.spec!r} --resume --dir {root} finishes it"
        )
        return 130
    text = json.dumps(result, indent=2) + "\n"
    (root / RESULT_FILE).write_text(text)
    if out_file is not None:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        out_file.write_text(text)
    out = Console()
    if not out.is_terminal:
        out = Console(width=120)
    out.print(result_table(result))
    out.print(f"result: {out_file or root / RESULT_FILE}")
    return 0
