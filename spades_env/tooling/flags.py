"""Command-line flags from an `Args` dataclass, CleanRL-style.

Each field becomes `--field-name`, typed by its annotation, with the docstring written
under the field as its help (read from the source, as `tyro` does for CleanRL). Booleans
get `--flag / --no-flag`. A bad flag or value is one line on stderr and exit status 2.

The parser of every `spades` command (`experiments.cli`) and of every training script
(`training`); it lives in the lowest package so both reach it without an upward import,
and imports nothing but the standard library.
"""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect
import itertools
import sys
import textwrap
import typing
from collections.abc import Sequence
from typing import Any, Literal, TypeVar

T = TypeVar("T")


class StoreOnce(argparse._StoreAction):
    """argparse's `store`, refusing a flag given twice (`--deals 4 --deals 8` would
    silently take the last): the `store` action of every `FlagParser`."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        if option_string is not None:
            seen = namespace.__dict__.setdefault(_GIVEN, set())
            if self.dest in seen:
                parser.error(f"argument {'/'.join(self.option_strings)}: given twice; give it once")
            seen.add(self.dest)
        super().__call__(parser, namespace, values, option_string)


#: The namespace attribute where `StoreOnce` notes the flags given (removed after parsing).
_GIVEN = "_flags_given_once"


class FlagParser(argparse.ArgumentParser):
    """argparse that reports a bad flag or value as one line, without the usage dump, and
    refuses a single-valued flag given twice (`StoreOnce`; its groups share the rule)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.register("action", None, StoreOnce)
        self.register("action", "store", StoreOnce)

    def parse_known_args(self, args=None, namespace=None):  # type: ignore[override]
        parsed, extras = super().parse_known_args(args, namespace)
        parsed.__dict__.pop(_GIVEN, None)  # StoreOnce's notes, not an argument
        return parsed, extras

    def error(self, message: str) -> None:  # type: ignore[override]
        sys.stderr.write(f"{self.prog}: error: {message}\n")
        raise SystemExit(2)


def field_docs(cls: type) -> dict[str, str]:
    """{field: the docstring under it} from the source of `cls` and of its dataclass bases:
    a field restated in a subclass without a docstring keeps its base's, one restated with
    a docstring has the subclass's."""
    docs: dict[str, str] = {}
    for klass in reversed(cls.__mro__):  # the bases first, so a subclass's docstring wins
        if dataclasses.is_dataclass(klass):
            docs.update(_own_field_docs(klass))
    return docs


def _own_field_docs(cls: type) -> dict[str, str]:
    """{field: the docstring under it} of the fields written in the source of `cls` itself."""
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


def _help(doc: str, default: Any) -> str:
    """The docstring, with the default appended unless the docstring gives it or it is empty."""
    if "default" in doc or default in ("", None, ()):
        return doc
    shown = ",".join(map(str, default)) if isinstance(default, tuple) else default
    return f"{doc} (default: {shown})".strip()


#: Metavars of fields whose values have a shape of their own.
METAVARS = {"rules": "PRESET", "option": "NAME=VALUE", "resume": "RUN_DIR"}


def add_flags(parser: argparse.ArgumentParser, cls: type) -> None:
    """One flag per field of the dataclass `cls`, its default and docstring shown.

    A `Literal[...]` field takes one of its values (listed in the help); a
    `tuple[str, ...]` field is a repeatable flag, each use adding one value.
    """
    docs = field_docs(cls)
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        flag = "--" + f.name.replace("_", "-")
        help_text = _help(docs.get(f.name, ""), f.default)
        hint = hints.get(f.name, f.type)
        if typing.get_origin(hint) is Literal:
            parser.add_argument(
                flag, choices=typing.get_args(hint), default=f.default, help=help_text
            )
            continue
        if typing.get_origin(hint) is tuple:
            parser.add_argument(
                flag,
                action="append",
                metavar=METAVARS.get(f.name, "VALUE"),
                default=None,
                help=help_text,
            )
            continue
        kind = _kind(f.type)
        if kind is bool:
            parser.add_argument(
                flag, action=argparse.BooleanOptionalAction, default=f.default, help=help_text
            )
        else:
            parser.add_argument(
                flag,
                type=kind,
                default=f.default,
                metavar=METAVARS.get(f.name, kind.__name__.upper()),
                help=help_text,
            )


def _parser(cls: type, prog: str | None) -> FlagParser:
    parser = FlagParser(prog=prog, description=(cls.__doc__ or "").strip().splitlines()[0])
    add_flags(parser, cls)
    return parser


def parse_args(cls: type[T], argv: Sequence[str] | None = None, prog: str | None = None) -> T:
    """Build an instance of `cls` from command-line flags."""
    ns = _parser(cls, prog).parse_args(argv)
    values = {}
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        value = getattr(ns, f.name)
        if isinstance(f.default, tuple):
            value = f.default if value is None else tuple(value)
        values[f.name] = value
    return cls(**values)


def given_flags(cls: type, argv: Sequence[str] | None = None) -> set[str]:
    """The fields of `cls` whose flags appear in `argv` (given, even if equal to the default)."""
    parser = _parser(cls, None)
    for action in parser._actions:
        if not isinstance(action, argparse._AppendAction):  # appending needs a list or None
            action.default = _NOT_GIVEN
    ns = parser.parse_args(argv)
    return {k for k, v in vars(ns).items() if v is not _NOT_GIVEN and v is not None}


_NOT_GIVEN = object()
