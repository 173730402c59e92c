"""Renamed `agents.montecarlo.ismcts_kernel` (the Monte Carlo searches, PIMC and ISMCTS;
the `search` agent is `agents.netsearch`); this path warns on import and goes in the next
release."""

from agents.montecarlo import ismcts_kernel
from spades_env.tooling.renamed import renamed

renamed(globals(), ismcts_kernel)
