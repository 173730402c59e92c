"""The sweep of every value domain: every flag of every `spades` command, read from the
command's own argparse parser (so a flag added tomorrow is swept without anyone listing
it), through the values at the edges of what a flag may be given.

A case is one flag given one edge value on top of a small base command line that makes
the command finish quickly when the value is taken. A case ends in one of three ways:

- `worked`: the command accepted the value and finished (exit status 0), with no
  traceback and no temporary file left;
- `error`: the command refused it in one line (`spades CMD: error: ...`) that names the
  flag (its option string, its metavar or the value itself), with no traceback and no
  partial output file;
- `FAILED: why`: anything else: a traceback, an error that names nothing, more than one
  line, no answer within the time limit, a temporary or partial file left behind, an
  input changed.

`parse_outcome` checks a case in-process (argparse's converters only, cheap: every case
in every run); `run_case` runs it as a subprocess in a fresh folder and home, with a
time limit (a sample by default, every case under `-m slow`).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import io
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: value class -> the text given on the command line. `@FIFO`, `@DIR` are made in the
#: case's folder (a named pipe with no writer, an empty folder).
EDGES: dict[str, str] = {
    "zero": "0",
    "minus-one": "-1",
    "tiny-float": "1e-400",  # underflows to 0.0
    "subnormal": "5e-324",
    "huge-float": "1e308",
    "overflow-float": "1e400",  # overflows to inf
    "nan": "nan",
    "inf": "inf",
    "minus-inf": "-inf",
    "2**31": str(2**31),
    "2**63": str(2**63),
    "2**64": str(2**64),
    "empty": "",
    "10k-chars": "x" * 10_000,
    "odd-unicode": "\u202e\u0301\u540d\U0001f0a1\ufeff\u200b",
    "long-name": "n" * 300,  # past NAME_MAX (255)
    "long-path": "/".join(["d" * 200] * 25),  # past PATH_MAX (4096)
    "folder": "@DIR",
    "fifo": "@FIFO",
    "device": "/dev/zero",
    "one-seat": "random",  # fewer items than there are seats
    "five-seats": "random,random,random,random,random",  # more than a table of 4
}

#: per command: the base command line (a quick run when the swept value is taken), the
#: positionals it fills in order, and whether it needs the fixture run folder `run/`.
BASE: dict[str, list[str]] = {
    "demo": ["--hands", "1"],
    "bench": ["--seconds", "0.01", "--only", "presets"],
    "tournament": ["--agents", "random,random", "--deals", "2", "--chunk", "1",
                   "--workers", "1", "--no-progress", "--out", "out"],
    "evaluate": ["random", "--test-deals", "1", "--workers", "1", "--no-progress",
                 "--dir", "eval"],
    "leaderboard": ["run/summary.json"],
    "show": ["run", "--deal", "0"],
    "analyze": ["run", "--no-dd", "--out", "plots"],
    "dd-table": ["--deals", "1", "--workers", "1", "--no-progress", "--cache", "dd.sqlite"],
    "play": ["--seed", "1", "--save", "game.json"],
    "serve": ["--port", "0", "--root", "run"],
    "train": ["bc", "--help"],
    "export-chat": ["run", "--out", "chat.jsonl"],
}  # fmt: skip
#: commands that keep running when they work (a server): still running at the time
#: limit, with no error said, is `worked`.
SERVERS = {"serve"}
#: commands whose accepted values take long to run (an evaluation ladder, a first solve
#: that compiles the solver, a measurement, a server): only under `-m slow`
EXPENSIVE = {"evaluate", "dd-table", "bench", "serve", "train", "analyze"}
#: commands whose base needs an input the sweep cannot make cheaply (an evaluation
#: result, a chat log): every case is refused for the base's input, so the default
#: sample leaves them to `-m slow`
NO_CHEAP_BASE = {"leaderboard", "export-chat"}
#: flags that need no value in the sweep (their one case is: given)
SKIP_FLAGS = {"-h", "--help", "--quiet", "--version"}


@dataclass(frozen=True)
class Case:
    command: str
    flag: str  # the option string, or a positional's metavar
    value_class: str
    argv: tuple[str, ...]  # the whole command line after `spades`
    positional: bool = False

    @property
    def id(self) -> str:
        return f"{self.command} {self.flag} {self.value_class}"

    @property
    def value(self) -> str:
        return "" if self.value_class == "given" else EDGES.get(self.value_class, "")


def build_parser() -> argparse.ArgumentParser:
    from experiments.cli.app import build_parser as build

    return build()


def subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("spades has no subcommands")


def _positionals(p: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in p._actions if not a.option_strings]


def _with_value(command: str, p: argparse.ArgumentParser, action: argparse.Action, value: str):
    """The base command line with `action` given `value` (replacing the base's own value
    of that flag or positional)."""
    base = list(BASE.get(command, []))
    if not action.option_strings:  # a positional: its place in the base
        index = _positionals(p).index(action)
        base_pos = [i for i, t in enumerate(base) if _is_positional_at(base, i)]
        if index < len(base_pos):
            base[base_pos[index]] = value
            return base
        return [*base, value]
    flag = action.option_strings[-1]
    for opt in action.option_strings:
        if opt in base:
            i = base.index(opt)
            if action.nargs == 0:
                return base
            return [*base[:i], flag, value, *base[i + 2 :]]
    if action.nargs == 0:
        return [*base, flag]
    return [*base, flag, value]


def _is_positional_at(argv: list[str], i: int) -> bool:
    """Whether argv[i] of a base command line is a positional (not a flag or its value)."""
    if argv[i].startswith("-"):
        return False
    return i == 0 or not argv[i - 1].startswith("--") or argv[i - 1] in _NO_VALUE_FLAGS


_NO_VALUE_FLAGS = {"--no-progress", "--no-dd", "--resume"}


def cli_cases() -> list[Case]:
    """Every flag of every command x every edge value (a flag without a value: once)."""
    cases = []
    for command, p in subparsers(build_parser()).items():
        for action in p._actions:
            if set(action.option_strings) & SKIP_FLAGS:
                continue
            if action.nargs == argparse.REMAINDER:  # train's script flags: swept in-process
                continue
            flag = (
                action.option_strings[-1]
                if action.option_strings
                else (action.metavar or action.dest)
            )
            positional = not action.option_strings
            if action.nargs == 0:
                argv = (command, *_with_value(command, p, action, ""))
                cases.append(Case(command, str(flag), "given", argv, positional))
                continue
            for value_class, value in EDGES.items():
                argv = (command, *_with_value(command, p, action, value))
                cases.append(Case(command, str(flag), value_class, argv, positional))
    return cases


# ----------------------------------------------------------------------------- in-process
def names_flag(line: str, case: Case, extra: tuple[str, ...] = ()) -> bool:
    """Whether an error line names the case's flag (or quotes its value)."""
    bare = case.flag.lstrip("-")
    names = {case.flag, bare, bare.replace("-", "_"), bare.replace("-", " "), *extra}
    value = case.value
    if value.startswith("@"):
        value = {"@FIFO": "fifo", "@DIR": "adir"}[value]
    if (value and repr(value) in line) or (len(value) >= 3 and repr(value)[1:-1] in line):
        return True
    lowered = line.lower()
    if any(n and n.lower() in lowered for n in names):
        return True
    if case.value_class == "given":  # a flag alone: its error may name the flag it needs
        return any(a.startswith("--") and a in line for a in case.argv) or any(
            len(a) >= 3 and repr(a) in line for a in case.argv
        )
    return False


def parse_outcome(parser: argparse.ArgumentParser, case: Case) -> str:
    """`parsed`, `error` (one line naming the flag) or `FAILED: why`, from argparse's
    converters alone."""
    err = io.StringIO()
    argv = [_placed(a, Path("/nonexistent-sweep")) for a in case.argv]
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parser.parse_args(argv)
    except SystemExit as exc:
        if exc.code in (0, None):
            return "parsed"
        return classify_error(err.getvalue(), case)
    except Exception as exc:
        return f"FAILED: {type(exc).__name__} from the parser: {exc}"[:300]
    return "parsed"


def classify_error(stderr: str, case: Case, extra: tuple[str, ...] = ()) -> str:
    if "Traceback" in stderr:
        return "FAILED: traceback: " + stderr.strip().splitlines()[-1][:200]
    lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
    if not lines:
        return "FAILED: refused with nothing said"
    errors = [ln for ln in lines if ": error: " in ln]
    if len(errors) != 1:
        return f"FAILED: {len(errors)} error lines: {lines[-1][:200]}"
    if not names_flag(errors[0], case, extra):
        return f"FAILED: the error names no flag: {errors[0][:200]}"
    return "error"


# ----------------------------------------------------------------------------- subprocess
def _placed(arg: str, cwd: Path) -> str:
    if arg == "@FIFO":
        return "fifo"
    if arg == "@DIR":
        return "adir"
    return arg


def prepare_folder(root: Path, fixture_run: Path | None) -> tuple[Path, Path]:
    """A case's working folder (a copy of the fixture run as `run/`, a named pipe `fifo`,
    an empty folder `adir`) and its home."""
    cwd, home = root / "cwd", root / "home"
    cwd.mkdir(parents=True)
    home.mkdir()
    if fixture_run is not None:
        shutil.copytree(fixture_run, cwd / "run")
    os.mkfifo(cwd / "fifo")
    (cwd / "adir").mkdir()
    return cwd, home


def snapshot(folder: Path) -> dict[str, bytes]:
    """{relative path: content hash} of every regular file under `folder`."""
    out = {}
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            out[str(path.relative_to(folder))] = hashlib.sha256(path.read_bytes()).digest()
    return out


#: commands that may write into the run folder they are given (a tournament resumes it)
WRITES_RUN = {"tournament"}


def ended_within(pid: int, timeout: float, poll: float) -> int | None:
    """Wait up to `timeout` seconds for the forked child `pid` (the leader of its own
    process group); then kill the group (the child, and what it left running) and reap the
    child. Its wait status, or None if it had not ended in time."""
    deadline = time.monotonic() + timeout
    status = None
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        time.sleep(poll)
    else:
        status = None
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    if status is None:
        os.waitpid(pid, 0)
    return status


def run_case(case: Case, root: Path, fixture_run: Path | None, timeout: float) -> str:
    """Run `case` as `python -m experiments.cli ...` in a fresh folder and home; its outcome."""
    cwd, home = prepare_folder(root, fixture_run)
    before_run = snapshot(cwd / "run") if (cwd / "run").exists() else {}
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SPADES_", "XDG_"))}
    env.update(HOME=str(home), SPADES_COMPILE_NOTICE="0", PYTHONPATH=str(REPO), COLUMNS="120")
    for var, sub in (("XDG_CACHE_HOME", ".cache"), ("XDG_CONFIG_HOME", ".config"),
                     ("XDG_DATA_HOME", ".local/share"), ("MPLCONFIGDIR", ".mpl")):  # fmt: skip
        env[var] = str(home / sub)
    argv = [sys.executable, "-m", "experiments.cli", *(_placed(a, cwd) for a in case.argv)]
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        errors="replace",
        start_new_session=True,
    )
    try:
        _out, err = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        _out, err = proc.communicate()
        if case.command in SERVERS and "Traceback" not in err and ": error: " not in err:
            outcome = "worked"
        else:
            return f"FAILED: no answer within {timeout:g} s"
    else:
        with contextlib.suppress(ProcessLookupError):  # what it left running
            os.killpg(proc.pid, signal.SIGKILL)
        if "Traceback" in err:
            return "FAILED: traceback: " + err.strip().splitlines()[-1][:200]
        outcome = "worked" if proc.returncode == 0 else classify_error(err, case)
    return _leftovers(case, cwd, before_run) or outcome


def fork_case(case: Case, root: Path, fixture_run: Path | None, timeout: float) -> str:
    """Run `case` through `experiments.cli.app.main` in a forked child of this process (the
    commands already imported: no start-up cost), in a fresh folder and home, as its own
    process group, killed at `timeout`; its outcome, classified as `run_case` does."""
    cwd, home = prepare_folder(root, fixture_run)
    before_run = snapshot(cwd / "run") if (cwd / "run").exists() else {}
    err_path = root / "stderr.txt"
    argv = [_placed(a, cwd) for a in case.argv]
    pid = os.fork()
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.setsid()
            os.chdir(cwd)
            os.environ.update(HOME=str(home), SPADES_COMPILE_NOTICE="0", COLUMNS="120")
            for var in ("XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "MPLCONFIGDIR"):
                os.environ[var] = str(home / var.lower())
            os.environ.pop("SPADES_DD_CACHE", None)
            null = os.open(os.devnull, os.O_RDWR)
            err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
            os.dup2(null, 0)
            os.dup2(null, 1)
            os.dup2(err, 2)
            # the streams of this process may be a test runner's capture: the fds instead
            sys.stdin = open(0, closefd=False)  # noqa: SIM115
            sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
            sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
            from experiments.cli.app import main

            code = main(argv)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(code)
    status = ended_within(pid, timeout, poll=0.02)
    err = err_path.read_text(errors="replace") if err_path.exists() else ""
    if status is None:
        if case.command in SERVERS and "Traceback" not in err and ": error: " not in err:
            outcome = "worked"
        else:
            return f"FAILED: no answer within {timeout:g} s"
    elif "Traceback" in err:
        return "FAILED: traceback: " + err.strip().splitlines()[-1][:200]
    else:
        rc = os.waitstatus_to_exitcode(status)
        outcome = "worked" if rc == 0 else classify_error(err, case)
    return _leftovers(case, cwd, before_run) or outcome


def _leftovers(case: Case, cwd: Path, before_run: dict[str, bytes]) -> str | None:
    """A temporary file left behind, or an input changed: the failure, else None."""
    left = [p for p in cwd.rglob("*.tmp") if p.is_file()]
    if left:
        return f"FAILED: temporary file left: {left[0].relative_to(cwd)}"
    if before_run and case.command not in WRITES_RUN:
        after = snapshot(cwd / "run")
        changed = sorted(k for k in before_run if after.get(k) != before_run[k])
        if changed:
            return f"FAILED: changed its input run/{changed[0]}"
    return None


# ----------------------------------------------------------------------------- sample
def stable_rank(case: Case) -> str:
    return hashlib.sha256(case.id.encode()).hexdigest()


def sample(cases: list[Case], parsed: set[str], size: int) -> list[Case]:
    """A deterministic sample for the default run: the cases that get past the parser
    first (what argparse refuses is checked in-process for every case), spread over the
    commands and value classes by a stable hash."""
    cheap = [c for c in cases if c.command not in EXPENSIVE | NO_CHEAP_BASE]
    past = sorted((c for c in cheap if c.id in parsed), key=stable_rank)
    rest = sorted((c for c in cheap if c.id not in parsed), key=stable_rank)
    by_command: dict[str, list[Case]] = defaultdict(list)
    for c in past:
        by_command[c.command].append(c)
    chosen: list[Case] = []
    while len(chosen) < size and any(by_command.values()):  # round robin over commands
        for command in sorted(by_command):
            if by_command[command] and len(chosen) < size:
                chosen.append(by_command[command].pop(0))
    return chosen + rest[: max(0, size - len(chosen))]


# ----------------------------------------------------------------------------- report
class Report:
    """The sweep's count of outcomes by command and flag (or constructor and parameter)."""

    def __init__(self) -> None:
        self.counts: dict[str, dict[str, Counter[str]]] = defaultdict(lambda: defaultdict(Counter))
        self.failures: list[str] = []

    def add(self, layer: str, where: str, value_class: str, outcome: str) -> None:
        kind = "FAILED" if outcome.startswith("FAILED") else outcome
        self.counts[layer][where][kind] += 1
        if kind == "FAILED":
            self.failures.append(f"{layer}: {where} {value_class}: {outcome}")

    def lines(self) -> list[str]:
        out = ["", "edge sweep: values tried, by command/parameter and how each ended"]
        for layer, table in sorted(self.counts.items()):
            total: Counter[str] = Counter()
            for counter in table.values():
                total.update(counter)
            out.append(f"[{layer}] {sum(total.values())} cases: {_fmt(total)}")
            for where in sorted(table):
                out.append(f"  {where}: {_fmt(table[where])}")
        if self.failures:
            out.append(f"FAILED cases ({len(self.failures)}):")
            out.extend("  " + f for f in self.failures)
        return out


def _fmt(counter: Counter[str]) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(counter.items()))


REPORT = Report()
