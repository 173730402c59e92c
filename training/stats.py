"""Moved to `spades_env.tooling.stats` (below both training and the tournament, which share
it); this path warns on import and goes in the next release."""

from spades_env.tooling import stats
from spades_env.tooling.renamed import renamed

renamed(globals(), stats)
