"""A shipped network's recipe, end to end as one command, with its wall time.

    spades train recipe learned                 # or: python -m experiments.recipe learned
    spades train recipe learned --smoke         # the same steps on tiny budgets (minutes)

Each shipped network keeps its recipe beside it (`agents/learned/checkpoints/NAME.json`):
the commands of its steps in order (`recipe`, or one `command`), with the wall time each
took when the shipped file was made. This runs those commands, in a work folder
(`--dir`, default `runs/recipe_NAME`), one after the other:

- a step's `runs/EXP__SEED__<time>/...` names the run folder an earlier step made: the
  newest folder of that experiment in the work folder;
- `--smoke` shrinks the budgets (`SMOKE`: hands, decisions, epochs, deals, updates) so
  that the chain can be checked in minutes; the network it makes is not the shipped one;
- every step's wall time, and the total, are written to `recipe.json` in the work folder
  (after each step, so a killed chain shows how far it came), beside the recorded ones.

A step that fails stops the chain with its exit status; its run folder stays for
`--resume` (`spades train ppo --resume RUN_DIR`).

What a recipe needs is read from its commands before the first step starts (`needs`):
the `train` extra (torch) for `spades train` and a `checkpoint:` agent, the `ray` extra
for `--backend ray`. A missing one stops the recipe there, with the install line, rather
than minutes into it.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agents.processes import child_exits_with_parent
from spades_env.tooling.files import atomic_write

CHECKPOINTS = Path(__file__).resolve().parents[1] / "agents" / "learned" / "checkpoints"
#: --smoke: the budget flags of the recipes' commands, and their tiny values
SMOKE = {
    "--hands": "120",
    "--hands-per-shard": "60",
    "--epochs": "1",
    "--total-timesteps": "8192",
    "--num-games": "64",
    "--eval-deals": "4",
    "--eval-every": "1",
    "--save-every": "1",
    "--stop-after": "2",
    "--deals": "4",
    "--chunk": "2",
    "--num-minibatches": "4",
}
_RUN = re.compile(r"runs/([A-Za-z0-9_.-]+?)__(\d+)__<time>")


#: the extras a recipe's commands may need: (the module each brings, what in a command needs it)
EXTRAS = {
    "train": ("torch", re.compile(r"\bspades train\b|checkpoint:")),
    "ray": ("ray", re.compile(r"--backend[ =]ray\b")),
}


def shipped() -> list[str]:
    """The shipped networks that have a recipe: the files beside them that record commands."""
    out = []
    for path in sorted(CHECKPOINTS.glob("*.json")):
        record = json.loads(path.read_text())
        if record.get("recipe") or record.get("command"):
            out.append(path.stem)
    return out


def needs(name: str) -> dict[str, str]:
    """{extra: the first step that needs it} for the recipe of `name` (`EXTRAS`)."""
    out: dict[str, str] = {}
    for step in recipe_steps(name)[0]:
        for extra, (_, pattern) in EXTRAS.items():
            if extra not in out and pattern.search(step["command"]):
                out[extra] = step["step"]
    return out


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


def missing(name: str) -> str | None:
    """None when every extra the recipe of `name` needs is installed, else one line that
    names them, the steps that need them, and the install command."""
    wanted = needs(name)
    lacking = [e for e in wanted if not _importable(EXTRAS[e][0])]
    if not lacking:
        return None
    which = ", ".join(f"{e} (from step {wanted[e]!r})" for e in lacking)
    return (
        f"the recipe of {name} needs the {which} extra{'s' if len(lacking) > 1 else ''}: "
        f"pip install -e '.[{','.join(wanted)}]'"
    )


def recipe_steps(name: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """(the steps: {step, command, wall_minutes}, the whole record) of shipped `name`."""
    path = CHECKPOINTS / f"{name}.json"
    if not path.is_file():
        raise ValueError(f"no shipped network {name!r}: choose one of {', '.join(shipped())}")
    record = json.loads(path.read_text())
    if record.get("recipe"):
        steps = [s for s in record["recipe"] if s.get("command")]
    elif record.get("command"):
        steps = [{"step": "1. training", "command": record["command"],
                  "wall_minutes": record.get("wall_minutes")}]  # fmt: skip
    else:
        raise ValueError(f"{path.name} records no command")
    return steps, record


def split_commands(command: str) -> list[list[str]]:
    """A step's shell line (commands joined by `;` outside quotes) as argument lists."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";")
    lexer.whitespace_split = True
    out: list[list[str]] = [[]]
    for token in lexer:
        if token == ";":
            out.append([])
        else:
            out[-1].append(token)
    return [argv for argv in out if argv]


def smoke_args(argv: list[str]) -> list[str]:
    """`argv` with every budget flag of `SMOKE` set to its tiny value."""
    out = list(argv)
    for i, arg in enumerate(out[:-1]):
        if arg in SMOKE:
            out[i + 1] = SMOKE[arg]
    return out


def resolve(argv: list[str], work: Path, smoke: bool = False) -> list[str]:
    """Each `runs/EXP__SEED__<time>` replaced by the newest such folder under `work`; with
    `smoke`, a checkpoint of an update the tiny run did not reach by its newest one."""

    def newest(m: re.Match) -> str:
        found = sorted((work / "runs").glob(f"{m.group(1)}__{m.group(2)}__*"))
        if not found:
            raise FileNotFoundError(f"no run folder runs/{m.group(1)}__{m.group(2)}__* yet")
        return str(found[-1].relative_to(work))

    out = []
    for arg in argv:
        new = _RUN.sub(newest, arg)
        path = work / new
        if smoke and new != arg and path.suffix == ".pt" and not path.exists():
            saved = sorted(path.parent.glob("update_*.pt"))
            new = str(saved[-1].relative_to(work)) if saved else new
        out.append(new)
    return out


def executable(argv: list[str]) -> list[str]:
    """`spades ...` and `python ...` (after a `nice -n N`) run with this interpreter."""
    prefix, argv = (argv[:3], argv[3:]) if argv[0] == "nice" else ([], argv)
    if Path(argv[0]).name == "spades":
        argv = [sys.executable, "-m", "experiments.cli", *argv[1:]]
    elif Path(argv[0]).name in ("python", "python3"):
        argv = [sys.executable, *argv[1:]]
    return prefix + argv


def run(name: str, work: Path, smoke: bool = False) -> dict[str, Any]:
    """Run the recipe of `name` in `work`; return (and write) the wall-time record."""
    steps, record = recipe_steps(name)
    work.mkdir(parents=True, exist_ok=True)
    report: dict[str, Any] = {
        "network": name,
        "smoke": smoke,
        "recorded_wall_minutes": record.get("recipe_wall_minutes", record.get("wall_minutes")),
        "steps": [],
    }
    start = time.perf_counter()
    for step in steps:
        t0 = time.perf_counter()
        for argv in split_commands(step["command"]):
            argv = smoke_args(argv) if smoke else argv
            argv = executable(resolve(argv, work, smoke))
            print(f"[{step['step']}] {shlex.join(argv)}", flush=True)
            # the step ends with the recipe, even one killed with SIGKILL or SIGTERM
            done = subprocess.run(argv, cwd=work, preexec_fn=child_exits_with_parent)
            if done.returncode:
                raise SystemExit(done.returncode)
        report["steps"].append({
            "step": step["step"],
            "wall_minutes": round((time.perf_counter() - t0) / 60, 2),
            "recorded_wall_minutes": step.get("wall_minutes"),
        })  # fmt: skip
        report["wall_minutes"] = round((time.perf_counter() - start) / 60, 2)
        atomic_write(work / "recipe.json", json.dumps(report, indent=1))
    return report


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> dict[str, Any]:
    from spades_env.tooling.flags import FlagParser  # a bad name or a missing extra: one line

    p = FlagParser(prog=prog, description=__doc__.split("\n")[0])
    names = shipped()
    p.add_argument(
        "name",
        help="a shipped network, and the extras its recipe needs: "
        + ", ".join(f"{n} ({' + '.join(needs(n))})" for n in names),
    )
    p.add_argument("--dir", default="", help="work folder (default runs/recipe_NAME)")
    p.add_argument("--smoke", action="store_true", help="tiny budgets: check the chain")
    args = p.parse_args(argv)
    try:
        recipe_steps(args.name)
    except ValueError as err:
        p.error(str(err))
    lacking = missing(args.name)
    if lacking:
        p.error(lacking)
    work = Path(args.dir or f"runs/recipe_{args.name}").resolve()
    report = run(args.name, work, args.smoke)
    print(json.dumps(report, indent=1))
    return report


if __name__ == "__main__":
    main()
