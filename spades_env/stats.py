"""Moved to `spades_env.tooling.stats` (what the commands and scripts share, which the game
never imports); this path warns on import and goes in the next release."""

from spades_env.tooling import stats
from spades_env.tooling.renamed import renamed

renamed(globals(), stats)
