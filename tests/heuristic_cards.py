"""Recorded card-play decisions of the heuristic, with their reasons.

The fixture `tests/data/heuristic_cards.json` holds, for every preset of RULES.md §6 and
two option sets (the two-of-clubs lead with blind nil and nil_tricks=count, standard and
auction), card-play positions of one seat (the fields of
`agents.heuristic.play.decide_card`) and the card and reason the heuristic chose. It
was written by the plain-Python card play the compiled one replaced, which had been
checked card for card and reason for reason against it on 558,000 positions; run this
module as a script to rewrite it (only for an intended change of the heuristic's play).

Positions: the heuristic bids (nil_risk=0.6, so nils are common), half the games play
the heuristic's cards and half random legal cards, so that positions stray from what the
heuristic would reach; one position in `KEEP` is kept.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from agents.heuristic.agent import HeuristicAgent
from spades_env.engine import random_legal_actions, step
from spades_env.observation import seat_view
from spades_env.rules import PRESETS, Rules
from spades_env.state import PLAY, deck_mask, init

FIXTURE = Path(__file__).parent / "data" / "heuristic_cards.json"
RULES = {name: Rules.preset(name) for name in PRESETS} | {
    "two_of_clubs_count": Rules(first_lead="two_of_clubs", blind_nil="always", nil_tricks="count"),
    "auction_count": Rules.auction(blind_nil="always", nil_tricks="count"),
}
KEEP = 50  # one position in KEEP


def positions(rules: Rules, seed: int, batch: int = 32) -> list[dict]:
    """Card-play positions (the fields of `decide_card`) from one seeded batch of games."""
    rng = np.random.default_rng([seed, 2718])
    agent = HeuristicAgent(nil_risk=0.6)
    state = init(rules, batch, rng)
    rand = np.arange(batch) % 2 == 1
    deck = int(deck_mask(rules))
    out = []
    for _ in range(rules.num_players * rules.hand_size + 40):
        view = seat_view(state)
        for i in np.flatnonzero((view.phase == PLAY) & (rng.random(batch) < 1 / KEEP)):
            seen = int(view.played[i]) | int(view.hand[i]) | int(view.seen[i])
            out.append(
                {
                    "seat": int(view.seat[i]), "hand": int(view.hand[i]),
                    "legal": int(view.legal[i]), "unseen": deck & ~seen,
                    "leader": int(view.leader[i]), "trick_size": int(view.trick_size[i]),
                    "lead_suit": int(view.lead_suit[i]),
                    "tricks_played": int(view.tricks_played[i]), "trump": int(view.trump[i]),
                    "bids": view.bids[i].tolist(), "tricks_won": view.tricks_won[i].tolist(),
                    "trick": view.trick[i].tolist(), "voids": view.voids[i].tolist(),
                }
            )  # fmt: skip
        acts = agent.act(view, None, None)
        play = (state.phase == PLAY) & rand
        acts[play] = random_legal_actions(state.legal, state.phase, rng)[play]
        step(state, acts)
    return out


def record(path: Path = FIXTURE, choose=None) -> None:
    """Write the fixture; `choose(rules, position) -> (card, reason)` decides."""
    data = {}
    for name, rules in RULES.items():
        rows = []
        for seed in range(1):
            for pos in positions(rules, seed):
                card, why = choose(rules, pos)
                rows.append({"position": pos, "card": card, "reason": why})
        data[name] = rows
        print(name, len(rows), flush=True)
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n")


def load() -> dict:
    return json.loads(FIXTURE.read_text())


if __name__ == "__main__":
    from agents.heuristic.play import decide_card

    record(Path(sys.argv[1]) if len(sys.argv) > 1 else FIXTURE, decide_card)
