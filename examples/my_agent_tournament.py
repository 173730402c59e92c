"""Your own agent in a duplicate tournament, from Python.

An agent is a `BaseAgent` with `act(view, obs, mask) -> actions`: it acts for a batch of
games at once, `view` (a `SeatView`) holds what the acting seats know, and `mask` the
legal actions (batch x 80, bool). Registered under a name, it is a spec like any
shipped agent. Register at the top level of the script: tournament workers are started
with `spawn` and import this file again, so a registration inside `main()` would be lost.

    python examples/my_agent_tournament.py            # 200 deals against random and heuristic
    python examples/my_agent_tournament.py --tiny     # 4 deals (what the tests run)
"""

from __future__ import annotations

import argparse
import tempfile

import numpy as np

from agents.base import BaseAgent
from agents.registry import register
from experiments.tournament import TournamentConfig, run_tournament
from spades_env.cards import BID_BASE


class BidThreeLowCard(BaseAgent):
    """Bids 3 where it may, plays the lowest-numbered legal card (`spades_env.cards`)."""

    name = "bid3"

    def act(self, view, obs, mask):
        actions = np.argmax(mask, axis=1)  # the first legal action of each game
        bid3 = mask[:, BID_BASE + 3]  # games where bidding 3 is legal (the bidding phase)
        actions[bid3] = BID_BASE + 3
        return actions.astype(np.int64)


register("bid3", BidThreeLowCard, {}, "bids 3, plays its lowest card (examples/)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiny", action="store_true", help="4 deals, one process")
    parser.add_argument("--deals", type=int, default=200)
    args = parser.parse_args()
    deals, workers = (4, 1) if args.tiny else (args.deals, 2)
    config = TournamentConfig(agents=("bid3", "random", "heuristic"), deals=deals)
    result = run_tournament(tempfile.mkdtemp(prefix="my-agent-"), config, workers=workers)
    print(result)  # the tables `spades tournament` prints
    print(result.margins.to_string(index=False))  # the same margins as a pandas DataFrame


if __name__ == "__main__":
    main()
