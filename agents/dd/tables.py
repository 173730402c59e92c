"""Moved to `agents.dd.cache` (the on-disk SQLite cache of double-dummy answers, beside
`agents.dd.transposition`, the solver's in-memory table); this name stays importable."""

from agents.dd.cache import (
    CACHE_ENV,
    CHUNK,
    MAX_TRICKS,
    SQLITE_MAGIC,
    DDCache,
    DDCacheError,
    dd_key,
    default_cache_path,
    seeded_deals,
    solve_many,
    tricks_tables,
)

__all__ = [
    "CACHE_ENV", "CHUNK", "MAX_TRICKS", "SQLITE_MAGIC", "DDCache", "DDCacheError", "dd_key",
    "default_cache_path", "seeded_deals", "solve_many", "tricks_tables",
]  # fmt: skip
