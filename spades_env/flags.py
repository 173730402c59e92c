"""Moved to `spades_env.tooling.flags` (what the commands and scripts share, which the game
never imports); this path warns on import and goes in the next release."""

from spades_env.tooling import flags
from spades_env.tooling.renamed import renamed

renamed(globals(), flags)
