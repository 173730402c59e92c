"""`spades train ppo|dmc|bc [flags]`: run a training script with a progress bar.

`bc` distils any registry agent into a network (`training.bc`); `ppo` and `dmc` train by
self-play, from new weights or from a checkpoint (`--init`). `spades train recipe NAME`
runs the recipe of a shipped network end to end, with its wall time (`experiments.recipe`).

The flags are the script's `Args` fields (`spades train ppo --help` lists them with their
docstrings); they are parsed only once the algorithm is known, so `spades --help` does
not import torch. A run folder, TensorBoard logs and checkpoints are written under
`runs/`; `--resume RUN_DIR` continues a stopped run.
"""

from __future__ import annotations

import argparse
import importlib

from rich.console import Console
from rich.progress import (
    BarColumn,
    Progress,
    TaskProgressColumn,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

SCRIPTS = {"ppo": "training.ppo_selfplay", "dmc": "training.dmc", "bc": "training.bc"}


def add_parser(sub) -> None:
    p = sub.add_parser(
        "train",
        help="train an agent: self-play (PPO, Deep Monte Carlo) or distillation (bc)",
        description="Train an agent by self-play: `spades train ppo --help` lists the flags.",
    )
    p.add_argument(
        "algo",
        choices=[*sorted(SCRIPTS), "recipe"],
        help="ppo, dmc or bc; recipe NAME runs a shipped network's recipe (experiments.recipe)",
    )
    p.add_argument(
        "flags", nargs=argparse.REMAINDER, help="the script's flags (spades train ALGO --help)"
    )
    p.add_argument("--no-progress", action="store_true", help="hide the progress bar")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    if args.algo == "recipe":  # the steps run as their own commands, with their own bars
        from experiments.recipe import main

        main([f for f in args.flags if f != "--quiet"], prog="spades train recipe")
        return 0
    from spades_env.tooling.flags import given_flags, parse_args  # torch is imported from here on
    from training.session import pick_device, prepare_args

    module = importlib.import_module(SCRIPTS[args.algo])
    flags = [f for f in args.flags if f != "--quiet"]  # `spades`'s own flag (app.quiet_notices)
    quiet = args.no_progress or "--no-progress" in flags
    flags = [f for f in flags if f != "--no-progress"]
    train_args = parse_args(module.Args, flags, prog=f"spades train {args.algo}")
    # every check once, before the progress bar: a bad run folder, a conflicting flag, a
    # bad value; the session trusts what this prepared
    prepared = prepare_args(
        train_args,
        args.algo,
        given_flags(module.Args, flags),
        Console(stderr=True, soft_wrap=True).print,
    )
    hand_over = {"prepared": prepared} if args.algo in ("ppo", "dmc") else {}
    if prepared.ckpt is None and args.algo == "bc":
        # bc's own checks (teacher, datasets), its specs read once, on the run's rules
        hand_over = {"checked": module.check_args(train_args, prepared.rules)}
    pick_device(train_args.device)
    err = Console(stderr=True)
    with Progress(
        TextColumn(f"[progress.description]{args.algo}"),
        BarColumn(),
        TaskProgressColumn(),
        TextColumn("{task.completed:,.0f} " + ("steps" if args.algo == "bc" else "decisions")),
        TimeElapsedColumn(),
        TimeRemainingColumn(),
        console=err,
        disable=quiet,
    ) as progress:
        task = progress.add_task(args.algo, total=getattr(train_args, "total_timesteps", None))

        def on_update(step: int, total: int) -> None:
            progress.update(task, completed=min(step, total), total=total)

        path = module.train(train_args, progress=on_update, **hand_over)
    run_dir = path.parent if path.name == "final.pt" else path.parent.parent
    err.print(f"checkpoint: {path}\nrun folder: {run_dir} (tensorboard --logdir {run_dir})")
    return 0
