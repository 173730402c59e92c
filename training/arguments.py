"""Moved to `spades_env.tooling.flags` (the flag parser of every `spades` command and
training script, below both packages that use it); this path warns on import and goes in
the next release."""

from spades_env.tooling import flags
from spades_env.tooling.renamed import renamed

renamed(globals(), flags)
