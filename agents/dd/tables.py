"""Moved to `agents.dd.cache` (the on-disk SQLite cache of double-dummy answers, beside
`agents.dd.transposition`, the solver's in-memory table); this path warns on import and
goes in the next release."""

from agents.dd import cache
from spades_env.tooling.renamed import renamed

renamed(globals(), cache)
