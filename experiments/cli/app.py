"""The `spades` command line. Each subcommand lives in its own module of
`experiments.cli` with `add_parser(subparsers)` and `run(args) -> int`; this module only
wires them."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from experiments.cli import analyze, bench, demo, play, show, tournament, train

COMMANDS = [demo, bench, tournament, show, analyze, play, train]


class _Parser(argparse.ArgumentParser):
    """argparse that reports a bad flag or value as one line, without the usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="spades", description="Spades research environment")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    for module in COMMANDS:
        module.add_parser(sub)
    return parser


class UserError(Exception):
    """An error the user can fix; printed as one line."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.run(args) or 0)
    except (UserError, ValueError, FileNotFoundError, KeyError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
        sys.stderr.write(f"spades {args.command}: error: {msg}\n")
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        return 130


if __name__ == "__main__":
    raise SystemExit(main())
