"""Moved to `spades_env.flags` (the flag parser of every `spades` command and training
script, below both packages that use it); this name stays importable."""

from spades_env.flags import (
    FlagParser,
    StoreOnce,
    add_flags,
    field_docs,
    given_flags,
    parse_args,
)

__all__ = ["FlagParser", "StoreOnce", "add_flags", "field_docs", "given_flags", "parse_args"]
