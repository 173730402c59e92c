"""The `search` agent: search (PIMC over bid-weighted worlds, exact endgames) guided by
the learned network (`agents.netsearch.agent`)."""
