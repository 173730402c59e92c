"""Moved to `spades_env.env_common` (what the three environments share; `core/` is the
compiled core); this path warns on import and goes in the next release."""

from spades_env import env_common
from spades_env.tooling.renamed import renamed

renamed(globals(), env_common)
