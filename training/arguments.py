"""Command-line flags from an `Args` dataclass, CleanRL-style.

Each field becomes `--field-name`, typed by its annotation, with the docstring written
under the field as its help (read from the source, as `tyro` does for CleanRL). Booleans
get `--flag / --no-flag`. A bad flag or value is one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import sys
import textwrap
from collections.abc import Sequence
from typing import Any, TypeVar

T = TypeVar("T")


class FlagParser(argparse.ArgumentParser):
    """argparse that reports a bad flag or value as one line, without the usage dump."""

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def field_docs(cls: type) -> dict[str, str]:
    """{field: the docstring under it} from the class source."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    body = tree.body[0].body  # type: ignore[attr-defined]
    docs: dict[str, str] = {}
    for node, nxt in itertools.pairwise(body):
        if (
            isinstance(node, ast.AnnAssign)
            and isinstance(node.target, ast.Name)
            and isinstance(nxt, ast.Expr)
            and isinstance(nxt.value, ast.Constant)
            and isinstance(nxt.value.value, str)
        ):
            docs[node.target.id] = " ".join(nxt.value.value.split())
    return docs


def _kind(annotation: Any) -> type:
    text = str(annotation).replace(" ", "")
    for name, kind in (("bool", bool), ("int", int), ("float", float)):
        if text == name or text.startswith(name + "|"):
            return kind
    return str


def add_flags(parser: argparse.ArgumentParser, cls: type) -> None:
    """One flag per field of the dataclass `cls`, its default and docstring shown."""
    docs = field_docs(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        help_text = f"{docs.get(f.name, '')} (default: {f.default})"
        kind = _kind(f.type)
        if kind is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=f.default, help=help_text
            )
        else:
            parser.add_argument(
                flag, type=kind, default=f.default, metavar=kind.__name__.upper(), help=help_text
            )


def parse_args(cls: type[T], argv: Sequence[str] | None = None, prog: str | None = None) -> T:
    """Build an instance of `cls` from command-line flags."""
    parser = FlagParser(prog=prog, description=(cls.__doc__ or "").strip().splitlines()[0])
    add_flags(parser, cls)
    ns = parser.parse_args(argv)
    return cls(**{f.name: getattr(ns, f.name) for f in dataclasses.fields(cls)})  # type: ignore[call-arg]
