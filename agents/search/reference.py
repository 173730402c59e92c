"""Renamed `agents.montecarlo.reference` (the Monte Carlo searches, PIMC and ISMCTS;
the `search` agent is `agents.netsearch`); this path warns on import and goes in the next
release."""

from agents.montecarlo import reference
from spades_env.tooling.renamed import renamed

renamed(globals(), reference)
