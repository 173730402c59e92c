"""Moved to `spades_env.tooling.ray_address` (what the commands and scripts share, which the game
never imports); this path warns on import and goes in the next release."""

from spades_env.tooling import ray_address
from spades_env.tooling.renamed import renamed

renamed(globals(), ray_address)
