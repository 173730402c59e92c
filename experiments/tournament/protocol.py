"""Renamed `experiments.tournament.ladder_protocol` (the evaluation ladder's protocol,
`spades evaluate`; not experiments.web.protocol's websocket messages); this path warns on
import and goes in the next release."""

from experiments.tournament import ladder_protocol
from spades_env.tooling.renamed import renamed

renamed(globals(), ladder_protocol)
