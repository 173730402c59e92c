# PYTHON_ARGCOMPLETE_OK (argcomplete: `eval "$(register-python-argcomplete spades)"`)
"""The `spades` command line. Each subcommand lives in its own module of
`experiments.cli` with `add_parser(subparsers)` and `run(args) -> int`; this module only
wires them."""

from __future__ import annotations

import argparse
import importlib.metadata
import os
import sys
from collections.abc import Sequence
from types import ModuleType

import argcomplete

from spades_env.tooling.flags import FlagParser


def commands() -> list[ModuleType]:
    """The subcommand modules, imported by `main` under its Ctrl-C guard (they load numpy,
    rich and the engine: the moments when a Ctrl-C is most likely to land)."""
    from experiments.cli import (
        analyze,
        bench,
        dd_table,
        demo,
        evaluate,
        export_chat,
        leaderboard,
        play,
        serve,
        show,
        tournament,
        train,
    )

    return [
        demo, bench, tournament, evaluate, leaderboard, show, analyze, dd_table, play, serve,
        train, export_chat,
    ]  # fmt: skip


class _Parser(FlagParser):
    """argparse that reports a bad flag or value as one line, without the usage dump, and
    refuses a single-valued flag given twice (`spades_env.tooling.flags.FlagParser`, which the
    training scripts' flags share)."""


def version() -> str:
    try:
        return importlib.metadata.version("spades-env")
    except importlib.metadata.PackageNotFoundError:  # a source tree that is not installed
        return "unknown (not installed)"


#: `spades_env.core.compile.NOTICE_ENV`, named here without importing `spades_env` (whose
#: import may already print the notice)
NOTICE_ENV = "SPADES_COMPILE_NOTICE"
QUIET_HELP = (
    "print no notices on stderr (that the kernels compile on a first run, that a long "
    "solve starts); results, errors and progress bars (--no-progress) are unchanged"
)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spades", description="Spades research environment")
    parser.add_argument("--version", action="version", version=f"spades {version()}")
    parser.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for module in commands():
        module.add_parser(sub)
    for command in sub.choices.values():  # `spades COMMAND --quiet` as well
        command.add_argument("--quiet", action="store_true", help=QUIET_HELP)
    return parser


def quiet_notices(argv: Sequence[str]) -> bool:
    """`--quiet` anywhere in `argv` silences the compile notice before anything imports the
    kernels (building the parser imports the commands, and with them the engine), and in
    every process the command starts (they inherit the environment)."""
    if "--quiet" not in argv:
        return False
    os.environ[NOTICE_ENV] = "0"
    return True


class UserError(Exception):
    """An error the user can fix; printed as one line."""


def _one_line(msg: object) -> str:
    """An error on one line: a value it quotes (a path, an option) may hold a line break."""
    return str(msg).replace("\r", "\\r").replace("\n", "\\n")


def main(argv: Sequence[str] | None = None) -> int:
    """The `spades` command. Called without `argv` (the process's own entry: the `spades`
    script, `python -m experiments.cli`), the process is the command's alone: it adopts
    what its agents leave behind and ends with none of it running (`_run`). Called with
    `argv` (from someone's Python), the caller's process is left as it is."""
    entry = argv is None
    argv = list(sys.argv[1:] if argv is None else argv)
    quiet = quiet_notices(argv)
    try:
        parser = build_parser()
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130
    argcomplete.autocomplete(parser)  # answers the shell's tab key, then exits; else nothing
    args = parser.parse_args(argv)
    args.quiet = quiet  # given before or after COMMAND (or among `spades train`'s flags)
    if args.command is None:  # bare `spades`: what it can do
        parser.print_help()
        return 0
    if not entry:
        return _run(args)
    from spades_env.agent_calls import leave_no_threads
    from spades_env.process_tree import become_subreaper

    become_subreaper()  # what an agent starts, even in a session of its own, stays below
    return leave_no_threads(_run(args))


def _run(args: argparse.Namespace) -> int:
    """The command, its errors as one line. A call that no alarm can stop ends the
    command with the same one line (`Limits.on_stuck`)."""
    from spades_env.agent_calls import limits

    def stuck(err: Exception) -> None:
        os.write(2, f"spades {args.command}: error: {_one_line(err)}\n".encode(errors="replace"))

    try:
        with limits(on_stuck=stuck):
            return int(args.run(args) or 0)
    except (UserError, ValueError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        sys.stderr.write(f"spades {args.command}: error: {_one_line(msg)}\n")
        return 2
    except OSError as exc:  # a missing file, a full disk, a folder we may not write
        name = exc.filename
        if isinstance(name, bytes):  # some libraries pass paths as bytes: shown as text
            name = os.fsdecode(name)
        where = f"{name}: " if name else ""
        text = _one_line(f"{where}{exc.strerror or exc}")
        sys.stderr.write(f"spades {args.command}: error: {text}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
