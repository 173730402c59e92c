"""`spades evaluate SPEC`: the fixed, versioned evaluation ladder of
`experiments.tournament.ladder_protocol`, one table and one JSON result.

The candidate plays a duplicate tournament against each opponent of the ladder, each in
its own run folder under `--dir` (`1-random/`, `2-heuristic/`, ...), so `--resume`
finishes an interrupted evaluation the way `spades tournament --resume` finishes a
tournament: the rows already logged are kept, the rest is played. The work is
`ladder_protocol.run_evaluation`, which Python callers use directly.
"""

from __future__ import annotations

import argparse
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import Progress
from rich.table import Table

from agents.processes import check_workers
from experiments.cli.checks import add_overwrite_input, output_file, spec_files
from experiments.cli.progress import counting_bar
from experiments.cli.values import add_decision_timeout, agent_limits, whole_number
from experiments.tournament import ladder_protocol
from experiments.tournament.config import TournamentError
from experiments.tournament.runner import BACKENDS
from spades_env.tooling.files import LOCK_FILE, atomic_write, new_folder

RUNS_DIR = Path("runs")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "evaluate",
        help="the fixed evaluation ladder (protocol "
        f"{ladder_protocol.VERSION}) of one agent: a table and a JSON result",
        description=f"Protocol {ladder_protocol.VERSION}: duplicate deals of one published deal "
        "set (its SHA-256 printed) against "
        + ", ".join(r.opponent for r in ladder_protocol.LADDER)
        + ", with deal counts for a 95% CI of about ±2.5 points per deal "
        "(experiments/tournament/ladder_protocol.py). Resumable like a tournament.",
    )
    p.add_argument("spec", metavar="SPEC", help="the agent to evaluate (an agent spec)")
    p.add_argument("--out", metavar="FILE", help="also write the result JSON here")
    add_overwrite_input(p)
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
    add_decision_timeout(p)
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.add_argument(
        "--ladder",
        choices=("protocol", "llm"),
        default="protocol",
        help="protocol: the evaluation protocol (default); llm: the short ladder for "
        "language models (experiments/tournament/llm_ladder.py: 8 deals per opponent, wide "
        "intervals, said in the result)",
    )
    p.add_argument(
        "--partner",
        metavar="SPEC",
        help="play the candidate as one seat of a partnership, this agent (a bot) its "
        "partner: the team team(SPEC, PARTNER) on every rung; a language model then makes "
        "half the requests (a candidate written as team(A, B) plays as written)",
    )
    p.add_argument(
        "--dry-run",
        action="store_true",
        help="say how many requests the llm: agent will make, and stop (plays nothing)",
    )
    p.set_defaults(run=run)


def _folder(args: argparse.Namespace) -> Path:
    if args.dir:
        return Path(args.dir)
    if args.resume:
        found = sorted(
            RUNS_DIR.glob(f"evaluate-*/{ladder_protocol.HEADER_FILE}"),
            key=lambda p: p.stat().st_mtime,
        )
        if not found:
            raise TournamentError(f"--resume: no evaluation under {str(RUNS_DIR)!r}; give --dir")
        return found[-1].parent
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    # made here, so that two evaluations started in the same second get folders of their own
    return new_folder(RUNS_DIR, f"evaluate-{ladder_protocol.slug(args.spec)}-{stamp}")


@contextmanager
def _removed_if_unused(folder: Path | None) -> Iterator[None]:
    """A folder made for a new evaluation is removed again when the evaluation fails
    before writing anything in it (a bad spec), so a refused run leaves nothing."""
    try:
        yield
    except BaseException:
        if folder is not None and all(p.name == LOCK_FILE for p in folder.iterdir()):
            shutil.rmtree(folder, ignore_errors=True)
        raise


def _spec_inputs(spec: str) -> dict[str, str | Path | None]:
    """The files the candidate's spec reads (a checkpoint, an agent's file); none for a
    spec that does not parse (the evaluation names that error itself)."""
    from agents.registry import AgentSpecError, parse_agent

    try:
        return dict(spec_files([parse_agent(spec)]))
    except (AgentSpecError, ValueError, OSError):
        return {}


def _bar(progress: Progress, opponent: str, total: int, done: int) -> Callable[[int, int], None]:
    task = progress.add_task(f"vs {opponent}", total=total, completed=done)
    return lambda _unit, deals: progress.advance(task, deals)


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
    llm = any("llm" in r for r in result["rungs"])  # an llm: candidate: its requests too
    cols = ["opponent", "deals", "margin", "95% CI", "±"]
    cols += (
        ["fallback", "not understood", "re-asks/dec", "illegal/dec", "tokens/dec", "s/dec"]
        if llm
        else []
    )
    for col in cols:
        table.add_column(col, justify="left" if col == "opponent" else "right")
    for r in result["rungs"]:
        ci = r["ci"]
        row = [
            r["opponent"],
            str(r["deals"]),
            "-" if r["margin"] is None else f"{r['margin']:+.1f}",
            "-" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]",
            "-" if ci is None else f"{(ci[1] - ci[0]) / 2:.1f}",
        ]
        if llm:
            s = r.get("llm")
            row += (
                ["-"] * 6
                if s is None
                else [
                    _share(s.get("fallback_share", s.get("fallbacks_per_decision")))
                    + (" INVALID" if s.get("invalid") else ""),
                    _share(s.get("not_understood_share")),
                    f"{s['reasks_per_decision']:.3f}",
                    f"{s['illegal_per_decision']:.3f}",
                    f"{s['tokens_in_per_decision'] + s['tokens_out_per_decision']:.0f}",
                    f"{s['seconds_per_decision']:.2f}",
                ]
            )
        table.add_row(*row)
    return table


def run(args: argparse.Namespace) -> int:
    if args.address is not None and args.backend != "ray":
        raise TournamentError("--address needs --backend ray")
    if args.backend == "ray":
        from experiments.tournament.ray_backend import require_ray

        require_ray()
    if args.backend == "local" and args.workers is not None:
        check_workers(args.workers)  # before any folder is made
    if args.dry_run or args.ladder == "llm":
        return _llm_ladder(args)
    if args.partner is not None:
        from experiments.tournament.llm_ladder import with_partner

        args.spec = with_partner(args.spec, args.partner)
    out_file = Path(args.out) if args.out else None
    if out_file is not None and out_file.is_dir():
        raise TournamentError(f"--out {str(out_file)!r} is a folder; give a .json file")
    if out_file is not None:  # before the ladder is played, not after
        output_file(out_file, inputs=_spec_inputs(args.spec), allow=args.overwrite_input)
    made_here = not args.dir and not args.resume
    root = _folder(args)
    if out_file is not None:  # never inside the evaluation's own run folders
        output_file(
            out_file, run_folders={"the evaluation folder": root}, allow=args.overwrite_input
        )
    err = Console(stderr=True)
    progress = counting_bar(err, disable=args.no_progress)
    try:
        with progress, agent_limits(args), _removed_if_unused(root if made_here else None):
            result = ladder_protocol.run_evaluation(
                args.spec,
                root,
                resume=args.resume,
                test_deals=args.test_deals,
                workers=args.workers,
                backend=args.backend,
                address=args.address,
                on_rung=lambda opponent, total, done: _bar(progress, opponent, total, done),
                on_start=lambda: err.print(
                    f"evaluation of {args.spec}, protocol {ladder_protocol.VERSION}; folder {root}"
                ),
                on_note=err.print,
            )
    except KeyboardInterrupt:
        err.print(
            "interrupted; every finished unit is kept: spades evaluate "
            f"{args.spec!r} --resume --dir {root} finishes it"
        )
        return 130
    text = json.dumps(result, indent=2) + "\n"
    if out_file is not None:
        out_file.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out_file, text)
    out = Console()
    if not out.is_terminal:
        out = Console(width=120)
    out.print(result_table(result))
    out.print(f"result: {out_file or root / ladder_protocol.RESULT_FILE}")
    return 0


def _llm_folder(args: argparse.Namespace, candidate: str) -> Path:
    """The folder of the llm ladder: --dir, else runs/llm-ladder-<agent>."""
    return (
        Path(args.dir) if args.dir else RUNS_DIR / f"llm-ladder-{ladder_protocol.slug(candidate)}"
    )


def _add_estimate(total: dict, more: dict) -> None:
    """Two rungs' cost estimates as one (`experiments.tournament.llm_estimate`)."""
    for key in ("tokens_in", "tokens_out_max", "dollars_in", "dollars_max"):
        total[key] = None if total[key] is None or more[key] is None else total[key] + more[key]
    total["prompt_tokens_max"] = max(total["prompt_tokens_max"], more["prompt_tokens_max"])


def _llm_ladder(args: argparse.Namespace) -> int:
    """`--dry-run` (either ladder): the requests it would make; `--ladder llm`: play the
    short ladder for language models and print its table."""
    from experiments.tournament import llm_ladder

    candidate = llm_ladder.with_partner(args.spec, args.partner)
    if args.ladder == "llm":
        configs = [llm_ladder.config(candidate, o) for o in llm_ladder.OPPONENTS]
    else:
        configs = [
            ladder_protocol.rung_config(
                candidate, r, ladder_protocol.rung_deals(r, args.test_deals)
            )
            for r in ladder_protocol.LADDER
        ]
    if args.out and not args.dry_run:  # checked before the ladder is played
        folder = _llm_folder(args, candidate)
        output_file(
            args.out,
            inputs=_spec_inputs(args.spec),
            run_folders={"the evaluation folder": folder},
            allow=args.overwrite_input,
        )
    if args.dry_run:
        from experiments.tournament import deals as deals_mod
        from experiments.tournament.llm_estimate import estimate, estimate_lines

        total: dict[str, dict] = {}
        costs: dict[str, dict] = {}
        for cfg in configs:
            plans = llm_ladder.planned_requests(cfg)
            for label, plan in plans.items():
                entry = total.setdefault(label, {**plan, "decisions": 0, "max_requests": 0})
                entry["decisions"] += plan["decisions"]
                entry["max_requests"] += plan["max_requests"]
            deal_set = deals_mod.generate(cfg.play_rules(), cfg.seed, cfg.deals)
            for label, e in estimate(cfg, deal_set, plans).items():  # rendered prompts
                kept = costs.setdefault(label, e)
                if kept is not e:
                    _add_estimate(kept, e)
        lines = llm_ladder.dry_run_lines(total, "hand")
        lines[-1:-1] = estimate_lines(costs)
        for line in lines:
            print(line)
        return 0
    root = _llm_folder(args, candidate)
    result = llm_ladder.run_ladder(args.spec, root, workers=args.workers or 1, partner=args.partner)
    text = json.dumps(result, indent=2) + "\n"
    atomic_write(root / ladder_protocol.RESULT_FILE, text)  # whole, or not at all
    if args.out:
        atomic_write(Path(args.out), text)
    out = Console()
    if not out.is_terminal:
        out = Console(width=120)
    out.print(llm_ladder_table(result, args.spec))
    for r in result["rungs"]:
        if r.get("model") and r["model"]["invalid"]:
            out.print(f"INVALID vs {r['opponent']}: {r['model']['invalid_reason']}")
    out.print(f"result: {root / ladder_protocol.RESULT_FILE}")
    return 0


def llm_ladder_table(result: dict[str, Any], spec: str) -> Table:
    """The short ladder's table: each margin beside the candidate's fallback share and
    share of answers not understood (INVALID where the rung's run is), its re-asks, the
    tokens it paid and their price."""
    from experiments.tournament import llm_ladder

    partner = result.get("partner")
    with_partner = f" --partner {partner}" if partner else ""
    table = Table(
        title=f"spades evaluate {spec} --ladder llm{with_partner} (version {result['version']})",
        caption=f"{llm_ladder.DEALS} duplicate deals per opponent: the intervals are wide "
        "(see experiments/tournament/llm_ladder.py); fallback: share of the candidate's "
        "decisions the fallback played; not understood: share of its answers the reader "
        "could not read; tokens: paid, in + out; $: at the prices given (- where none)",
    )
    cols = ("opponent", "deals", "margin", "95% CI", "±", "fallback", "not understood",
            "re-asks/dec", "tokens", "$", "valid")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="left" if col == "opponent" else "right")
    for r in result["rungs"]:
        ci = r["ci"]
        m = r.get("model")
        stats = (r.get("llm") or {}).get(m["agent"]) if m else None
        cells = [
            r["opponent"],
            str(r["deals"]),
            "-" if r["margin"] is None else f"{r['margin']:+.1f}",
            "-" if ci is None else f"[{ci[0]:+.1f}, {ci[1]:+.1f}]",
            "-" if ci is None else f"{(ci[1] - ci[0]) / 2:.1f}",
        ]
        if m is None:
            cells += ["-"] * 6
        else:
            dollars = m.get("dollars")
            cells += [
                _share(m.get("fallback_share")),
                _share(m.get("not_understood_share")),
                "-" if stats is None else f"{stats.get('reasks_per_decision', 0.0):.3f}",
                f"{(m.get('tokens_in') or 0) + (m.get('tokens_out') or 0):,}",
                "-" if dollars is None else f"{dollars:.4f}",
                "INVALID" if m["invalid"] else "yes",
            ]
        table.add_row(*cells)
    return table


def _share(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"
