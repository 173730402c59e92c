"""Moved to `spades_env.tooling.ray_address` (shared by `spades train` and `spades
tournament`, below both); this path warns on import and goes in the next release."""

from spades_env.tooling import ray_address
from spades_env.tooling.renamed import renamed

renamed(globals(), ray_address)
