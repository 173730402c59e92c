"""Renamed `agents.montecarlo.world_weights` (the Monte Carlo searches, PIMC and ISMCTS;
the `search` agent is `agents.netsearch`); this path warns on import and goes in the next
release."""

from agents.montecarlo import world_weights
from spades_env.tooling.renamed import renamed

renamed(globals(), world_weights)
