"""Fingerprints of the files that the main paths write, for tests/project/test_same_outputs.py.

A refactor must leave what `spades tournament`, `spades evaluate`, `spades play --save`, a
web table (`experiments.web.game`), `spades train dmc|ppo` and `spades train bc` write
the same, timestamps and paths aside. This script runs each path on tiny budgets into a
temporary folder, normalizes every file it wrote and stores one JSON per path:

    {"path": NAME, "command": [...], "environment": {...},
     "files": {RELATIVE PATH: NORMALIZED CONTENT}}

Run it on the code BEFORE a refactor (a git worktree of the commit), with this venv:

    git -C /work/main worktree add /tmp/same-outputs-base HEAD
    cd /work/main && PYTHONPATH=/tmp/same-outputs-base .venv/bin/python \\
        tests/project/make_same_outputs.py --out tests/data/same_outputs
    git -C /work/main worktree remove --force /tmp/same-outputs-base

The code under test is the one Python imports (`spades_env.__file__` says which; with
PYTHONPATH=WORKTREE it is the worktree's); subprocesses run `python -m experiments.cli`
with that same folder first on PYTHONPATH. `--only NAME,...` runs some paths.

Normalization (what is masked, and why; every other field is kept):

- absolute paths: the run's temporary folder -> `<OUT>`, the repository -> `<REPO>`, the
  home folder -> `<HOME>` (they differ between runs and checkouts);
- timestamps: ISO date-times -> `<time>`, `YYYYmmdd-HHMMSS` stamps (run folder names, the
  web's table ids) -> `<stamp>`, the time and host in a TensorBoard file's name;
- fields holding a time or a duration (`MASKED_KEYS`: `logged_at`, `wall_seconds`, ...),
  TensorBoard's `wall_time` and the throughput scalars (`*/SPS`, steps per second), the
  hparams plugin's session start time;
- secrets made at random: a web seat's `token_sha256` (a hash of a fresh random token);
- binary files: a checkpoint (.pt) is loaded and kept as a tree whose tensors are
  {dtype, shape, sha256 of the bytes}; a dataset shard (.npz) as its arrays, each
  {dtype, shape, sha256} (small ones with their values; a JSON header decoded), not the
  zip's bytes (they hold the zip entries' modification times); a TensorBoard event file as
  its events (step, tag, value), wall times dropped.

A value whose JSON is longer than `LEAF_CHARS` is split into its fields (a dict) or items (a
list), down to leaves of at most that size or to a {"sha256", "chars"} digest, so that a
difference is reported at the field that differs (tests/project/test_same_outputs.py).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import os
import platform
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

#: fields whose value is a time, a duration or a rate per second, or a hash of a random
#: token: masked wherever they occur (`masked_key`)
MASKED_KEYS = frozenset(
    {
        "logged_at",
        "wall_time",
        "elapsed",
        "duration",
        "timestamp",
        "token_sha256",  # a hash of a random token (a web seat's)
        "startTimeSecs",  # TensorBoard hparams: the session's start
        "sps",
        "SPS",
    }
)
#: fields added on purpose since the fingerprints were taken, left out of the comparison:
#: `fingerprint`, config.json's hash per field (a hand-edited config is named on --resume)
ADDED_KEYS = frozenset({"fingerprint"})
#: ...and any field named like a time or duration: `*_at`, `*seconds*`, `*secs*`, `wall_*`
MASKED_KEY = re.compile(r"(_at$|seconds|secs|^wall_|_time$|^time$|elapsed|duration)")


def masked_key(key: str) -> bool:
    return key in MASKED_KEYS or bool(MASKED_KEY.search(key))


#: TensorBoard scalars measured in time (throughput): their values are masked
TIMED_TAG = re.compile(r"(^|/)(SPS|sps|seconds|time)($|/|_)")
#: a leaf of the fingerprint is at most this many characters of JSON; larger values split
LEAF_CHARS = 1200
#: a list longer than this is one digest (its items are too many to keep one by one)
MAX_ITEMS = 400
#: an array this small keeps its values (a readable difference); larger: a digest
SMALL_ARRAY = 16

ISO_TIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
STAMP = re.compile(r"(?<!\d)\d{8}-\d{6}(?!\d)")
TFEVENTS = re.compile(r"^(events\.out\.tfevents)\..*$")
PROMPT = re.compile(r" — legal: (.*)$")

MASK = "<masked>"


# ----------------------------------------------------------------------------- normalizing
@dataclass
class Masks:
    """The absolute paths to replace in strings, longest first."""

    paths: list[tuple[str, str]]

    @classmethod
    def of(cls, out: Path, repo: Path) -> Masks:
        pairs = [(str(out), "<OUT>"), (str(repo), "<REPO>")]
        for p, name in [(out, "<OUT>"), (repo, "<REPO>")]:
            real = str(Path(p).resolve())
            if real != str(p):
                pairs.append((real, name))
        home = os.path.expanduser("~")
        if home not in ("", "/"):
            pairs.append((home, "<HOME>"))
        pairs.append((tempfile.gettempdir().rstrip("/") + "/", "<TMP>/"))
        return cls(sorted(pairs, key=lambda p: -len(p[0])))

    def text(self, s: str) -> str:
        for path, name in self.paths:
            if path and path in s:
                s = s.replace(path, name)
        s = ISO_TIME.sub("<time>", s)
        return STAMP.sub("<stamp>", s)


def digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=True)


def array_print(a: Any, masks: Masks) -> Any:
    """An array (numpy, or a torch tensor as numpy): dtype, shape and a hash of its bytes;
    the values themselves when small; a byte array holding JSON, decoded."""
    import numpy as np

    a = np.ascontiguousarray(a)
    if a.dtype == np.uint8 and a.ndim == 1 and a.size:
        try:
            return {"json": tree(json.loads(bytes(a).decode()), masks)}
        except (UnicodeDecodeError, ValueError):
            pass
    out: dict[str, Any] = {"dtype": str(a.dtype), "shape": list(a.shape)}
    if a.dtype == object or a.size <= SMALL_ARRAY:
        out["values"] = tree(a.tolist(), masks)
    else:
        out["sha256"] = digest(a.tobytes())
    return out


def tree(value: Any, masks: Masks, key: str | None = None) -> Any:
    """A JSON value of `value`: paths and times masked, arrays and tensors as `array_print`."""
    if key is not None and masked_key(key):
        return MASK
    if isinstance(value, dict):
        return {str(k): tree(v, masks, str(k)) for k, v in value.items() if k not in ADDED_KEYS}
    if isinstance(value, (list, tuple)):
        return [tree(v, masks) for v in value]
    if isinstance(value, str):
        return masks.text(value)
    if isinstance(value, bool) or value is None or isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, bytes):
        return {"bytes": len(value), "sha256": digest(value)}
    mod = type(value).__module__
    if mod.startswith("torch"):
        import torch

        if isinstance(value, torch.Tensor):
            t = value.detach().cpu()
            if t.dtype == torch.bfloat16:
                t = t.float()
            return array_print(t.numpy(), masks)
        if isinstance(value, torch.Size):
            return list(value)
        return masks.text(str(value))  # a dtype, a device
    if mod == "numpy":
        import numpy as np

        if isinstance(value, np.ndarray):
            return array_print(value, masks)
        if isinstance(value, np.generic):
            return tree(value.item(), masks)
    if hasattr(value, "__dataclass_fields__"):
        import dataclasses

        return {"__class__": type(value).__name__, **tree(dataclasses.asdict(value), masks)}
    return {"__class__": type(value).__name__, "repr": masks.text(repr(value))}


def fold(value: Any) -> Any:
    """Split a large value into fields or items (see the module docstring)."""
    text = canonical(value)
    if len(text) <= LEAF_CHARS:
        return value
    if isinstance(value, dict):
        return {k: fold(v) for k, v in value.items()}
    if isinstance(value, list) and len(value) <= MAX_ITEMS:
        return [fold(v) for v in value]
    return {"sha256": digest(text.encode()), "chars": len(text)}


# ----------------------------------------------------------------------------- file readers
def sorted_keys(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: sorted_keys(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [sorted_keys(v) for v in value]
    return value


def read_events(path: Path, masks: Masks) -> list[Any]:
    """A TensorBoard event file as its events, wall times dropped."""
    from google.protobuf.json_format import MessageToDict
    from tensorboard.backend.event_processing.event_file_loader import EventFileLoader
    from tensorboard.util import tensor_util

    events = []
    for ev in EventFileLoader(str(path)).Load():
        item: dict[str, Any] = {"step": int(ev.step)}
        kind = ev.WhichOneof("what")
        item["what"] = kind
        if kind == "file_version":
            item["file_version"] = ev.file_version
        elif kind == "session_log":
            item["status"] = int(ev.session_log.status)
        elif kind == "summary":
            values = []
            for v in ev.summary.value:
                entry: dict[str, Any] = {"tag": v.tag}
                plugin = v.metadata.plugin_data.plugin_name
                entry["plugin"] = plugin
                if plugin == "hparams":
                    from tensorboard.plugins.hparams import plugin_data_pb2

                    data = plugin_data_pb2.HParamsPluginData()
                    data.ParseFromString(v.metadata.plugin_data.content)
                    # protobuf maps have no order: sorted, so a run compares by content
                    entry["content"] = tree(sorted_keys(MessageToDict(data)), masks)
                elif v.metadata.plugin_data.content:
                    entry["content"] = {"sha256": digest(v.metadata.plugin_data.content)}
                which = v.WhichOneof("value")
                if TIMED_TAG.search(v.tag):
                    entry["value"] = MASK
                elif which == "tensor":
                    arr = tensor_util.make_ndarray(v.tensor)
                    if arr.dtype.kind in "OSU":
                        entry["value"] = tree(
                            [x.decode() if isinstance(x, bytes) else str(x) for x in arr.ravel()],
                            masks,
                        )
                    else:
                        entry["value"] = tree(arr.tolist(), masks)
                elif which == "simple_value":
                    entry["value"] = float(v.simple_value)
                elif which is not None:
                    entry["value"] = {"sha256": digest(getattr(v, which).SerializeToString())}
                values.append(entry)
            item["values"] = values
        else:
            item["sha256"] = digest(ev.SerializeToString())
        events.append(item)
    return events


def read_checkpoint(path: Path, masks: Masks) -> Any:
    import torch

    data = torch.load(path, map_location="cpu", weights_only=False)
    return tree(data, masks)


def read_npz(path: Path, masks: Masks) -> Any:
    import numpy as np

    with np.load(path, allow_pickle=False) as z:
        return {name: array_print(z[name], masks) for name in sorted(z.files)}


def normalize_file(path: Path, masks: Masks) -> Any:
    """One file's normalized content (a JSON value)."""
    name = path.name
    raw = path.read_bytes()
    if not raw:
        return ""
    if name.endswith(".json"):
        return tree(json.loads(raw), masks)
    if name.endswith(".jsonl"):
        return [tree(json.loads(line), masks) for line in raw.decode().splitlines() if line]
    if name.endswith(".npz"):
        return read_npz(path, masks)
    if name.endswith(".pt"):
        return read_checkpoint(path, masks)
    if TFEVENTS.match(name):
        return read_events(path, masks)
    try:
        return masks.text(raw.decode())
    except UnicodeDecodeError:
        return {"bytes": len(raw), "sha256": digest(raw)}


def relative_name(path: Path, root: Path, masks: Masks) -> str:
    parts = []
    for part in path.relative_to(root).parts:
        part = TFEVENTS.sub(r"\1.<masked>", part)
        parts.append(masks.text(part))
    return "/".join(parts)


def fingerprint_folder(root: Path, masks: Masks) -> dict[str, Any]:
    """{relative path: folded normalized content} of every file below `root`."""
    files: dict[str, Any] = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = relative_name(path, root, masks)
        if rel in files:
            raise RuntimeError(f"two files normalize to the same name {rel!r} under {root}")
        files[rel] = fold(normalize_file(path, masks))
    return dict(sorted(files.items()))


# ----------------------------------------------------------------------------- the paths
@dataclass
class Context:
    repo: Path
    work: Path  # an empty folder for this path's run (the cwd of its commands)

    def env(self) -> dict[str, str]:
        old = os.environ.get("PYTHONPATH", "")
        path = os.pathsep.join(p for p in [str(self.repo), old] if p)
        return {**os.environ, "PYTHONPATH": path, "PYTHONIOENCODING": "utf-8"}

    def spades(self, *args: str, timeout: float = 600) -> subprocess.CompletedProcess[str]:
        done = subprocess.run(
            [sys.executable, "-m", "experiments.cli", *args],
            cwd=self.work,
            env=self.env(),
            capture_output=True,
            text=True,
            encoding="utf-8",
            timeout=timeout,
        )
        if done.returncode != 0:
            raise RuntimeError(
                f"spades {' '.join(args)} exited {done.returncode}:\n{done.stderr[-4000:]}"
            )
        return done


@dataclass
class PathRun:
    """One path: `run(ctx)` writes under ctx.work/"out" and returns (the command, extra
    pseudo-files such as a normalized transcript)."""

    name: str
    run: Callable[[Context], tuple[list[str], dict[str, Any]]]
    needs: tuple[str, ...] = ()  # modules without which the path cannot run


TOURNAMENT = ["--deals", "4", "--chunk", "2", "--seed", "7", "--no-progress"]


def tournament(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    args = ["tournament", "--agents", "random,heuristic", *TOURNAMENT, "--workers", "2"]
    ctx.spades(*args, "--out", str(ctx.work / "out"))
    return args, {}


def tournament_named(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    args = [
        "tournament",
        "--agents",
        "heuristic,h2=heuristic:aggression=0.2",
        "--deals",
        "2",
        "--chunk",
        "1",
        "--seed",
        "5",
        "--option",
        "target=300",
        "--workers",
        "1",
        "--no-progress",
    ]
    ctx.spades(*args, "--out", str(ctx.work / "out"))
    return args, {}


def evaluate(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    out = ctx.work / "out"
    args = ["evaluate", "heuristic", "--test-deals", "1", "--workers", "1", "--no-progress"]
    # (an --out inside the folder the evaluation reads is refused unless the user says so)
    ctx.spades(*args, "--dir", str(out), "--out", str(out / "result-copy.json"),
               "--overwrite-input")  # fmt: skip
    return args, {}


PLAY = ["--seed", "11", "--option", "target=150", "--option", "max_hands=1"]


def play(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    """`spades play` scripted over pipes: each prompt answered with the first choice it
    lists; saved with --save. Its transcript (stdout) is kept too, the save path masked."""
    out = ctx.work / "out"
    out.mkdir()
    args = ["play", *PLAY]
    proc = subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", *args, "--save", str(out / "game.json")],
        cwd=ctx.work,
        env=ctx.env(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        encoding="utf-8",
        bufsize=1,
    )
    transcript: list[str] = []
    assert proc.stdin is not None and proc.stdout is not None
    deadline = time.monotonic() + 600
    for line in proc.stdout:
        line = line.rstrip("\n")
        transcript.append(line)
        m = PROMPT.search(line)
        if m:
            proc.stdin.write(m.group(1).split(", ")[0] + "\n")
            proc.stdin.flush()
        if time.monotonic() > deadline:
            proc.kill()
            raise RuntimeError("spades play did not finish")
    proc.stdin.close()
    err = proc.stderr.read() if proc.stderr else ""
    if proc.wait(timeout=60) != 0:
        raise RuntimeError(f"spades play exited {proc.returncode}:\n{err[-4000:]}")
    return args, {"<stdout>": transcript}


def web(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    """A web table in this process (tests/web/test_web_logic.py's `_table`, `_play_hand`):
    seat 2 a person answering at random (seeded), the others the heuristic; two hands.
    It writes game.json, log.jsonl and bc-seat2/ (a behaviour-cloning dataset)."""
    from experiments.web.catalogue import Catalogue
    from experiments.web.game import SeatInfo, create_table
    from experiments.web.views import seat_state
    from spades_env.rules import Rules

    catalogue = Catalogue()
    rules = Rules()
    seats = [
        SeatInfo("human", f"p{s}")
        if s == 2
        else SeatInfo("agent", "heuristic", spec=catalogue.spec("heuristic", rules))
        for s in range(rules.num_players)
    ]
    hint = ("heuristic", catalogue.spec("heuristic", rules))
    table = create_table(ctx.work / "out" / "g", rules, seats, seed=11, hint=hint)
    rng = random.Random(6)
    try:
        for _ in range(2):
            while True:
                if table.bot_to_act():
                    record = table.bot_move()
                else:
                    seat = table.game.to_act
                    legal = seat_state(table, seat)["legal"]
                    record = table.act(seat, rng.choice(legal)["action"], table.moves)
                if record is not None:
                    break
    finally:
        table.close()
    return ["(in process) create_table seed=11 humans=(2,); 2 hands, Random(6)"], {}


TRAIN = [
    "--total-timesteps",
    "700",
    "--num-games",
    "8",
    "--hidden",
    "16",
    "--eval-deals",
    "2",
    "--save-every",
    "1",
    "--no-progress",
]


def train_dmc(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    args = ["train", "dmc", *TRAIN]
    ctx.spades(*args, "--runs-dir", str(ctx.work / "out"))
    return args, {}


def train_ppo(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    args = ["train", "ppo", *TRAIN, "--eval-every", "1", "--pool-size", "1"]
    ctx.spades(*args, "--runs-dir", str(ctx.work / "out"))
    return args, {}


BC = [
    "--hands",
    "20",
    "--hands-per-shard",
    "10",
    "--epochs",
    "1",
    "--hidden",
    "32",
    "--eval-deals",
    "2",
    "--no-progress",
]


def train_bc(ctx: Context) -> tuple[list[str], dict[str, Any]]:
    args = ["train", "bc", *BC]
    ctx.spades(*args, "--runs-dir", str(ctx.work / "out"))
    return args, {}


PATHS: dict[str, PathRun] = {
    p.name: p
    for p in [
        PathRun("tournament", tournament),
        PathRun("tournament_named", tournament_named),
        PathRun("evaluate", evaluate, ("torch",)),
        PathRun("play", play),
        PathRun("web", web, ("starlette",)),
        PathRun("train_dmc", train_dmc, ("torch", "tensorboard")),
        PathRun("train_ppo", train_ppo, ("torch", "tensorboard")),
        PathRun("train_bc", train_bc, ("torch", "tensorboard")),
    ]
}


# ----------------------------------------------------------------------------- running
def code_root() -> Path:
    """The repository whose code this process imports (spades_env's parent), checked to
    hold the other three packages too."""
    import agents
    import experiments
    import spades_env
    import training

    root = Path(spades_env.__file__).resolve().parents[1]
    for module in (agents, experiments, training):
        where = Path(module.__file__).resolve().parents[1]
        if where != root:
            raise RuntimeError(f"{module.__name__} is imported from {where}, not {root}")
    return root


def environment() -> dict[str, Any]:
    """What the fingerprints may depend on beyond the code: float results of torch differ
    across versions and CPUs (recorded, not compared)."""
    import numpy

    env: dict[str, Any] = {
        "python": platform.python_version(),
        "numpy": numpy.__version__,
        "machine": platform.machine(),
    }
    try:
        import torch

        env["torch"] = torch.__version__
    except ImportError:
        pass
    return env


def fingerprint(name: str, repo: Path | None = None, keep: Path | None = None) -> dict[str, Any]:
    """Run path `name` in a fresh temporary folder and return its fingerprint. `keep`: copy
    the written files there (for a look at them)."""
    repo = repo or code_root()
    path = PATHS[name]
    work = Path(tempfile.mkdtemp(prefix=f"same-outputs-{name}-")).resolve()
    try:
        ctx = Context(repo, work)
        command, extra = path.run(ctx)
        masks = Masks.of(work / "out", repo)
        files = fingerprint_folder(work / "out", masks)
        for key, value in extra.items():
            files[key] = fold(tree(value, masks))
        if keep is not None:
            shutil.copytree(work / "out", keep / name, dirs_exist_ok=True)
        return {
            "path": name,
            "command": command,
            "environment": environment(),
            "files": files,
        }
    finally:
        shutil.rmtree(work, ignore_errors=True)


def dump(value: Any) -> str:
    return json.dumps(value, indent=1, sort_keys=False, allow_nan=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="folder for the <path>.json files")
    parser.add_argument("--only", default="", help="comma-separated paths (default: all)")
    parser.add_argument("--keep", default="", help="also copy the written files here")
    args = parser.parse_args(argv)
    names = [n for n in args.only.split(",") if n] or list(PATHS)
    unknown = sorted(set(names) - set(PATHS))
    if unknown:
        parser.error(f"unknown path {unknown[0]!r}; known: {', '.join(PATHS)}")
    repo = code_root()
    print(f"code under test: {repo}", file=sys.stderr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    keep = Path(args.keep) if args.keep else None
    for name in names:
        start = time.monotonic()
        data = fingerprint(name, repo, keep)
        (out / f"{name}.json").write_text(dump(data), encoding="utf-8")
        print(
            f"{name}: {len(data['files'])} files, {time.monotonic() - start:.1f} s", file=sys.stderr
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
