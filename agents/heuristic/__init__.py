"""The rule-based player: bidding, card play, the draw, the card tracking it reasons with,
and the trick model it bids from (`agent.HeuristicAgent` is the registry's `heuristic`)."""
