"""Hand records: every finished hand as a JSON-serialisable dict, and exact replay.

A record holds the rules, the game's seed and hand number, the dealer, the deal, the
position before the hand (scores and bags), every action in order with its seat, and
the outcome: bids, tricks per seat, hand points, bags, bag penalty, scores after; with
rules `trump="named"` (RULES.md §6 auction) also `trump`, the suit named (`"hearts"`),
whose naming is among the actions (`[seat, "trump hearts"]`).
`replay(record)` plays the actions again through the engine from the recorded deal and
position, and returns the record it produces, which equals the original. In RULES.md §6
two_player the deal is the hands as drawn; the replay draws them again from the stock of
`(seed, hand_no)` with the recorded keep/discard actions.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spades_env.cards import (
    NUM_ACTIONS,
    NUM_CARDS,
    SUIT_NAMES,
    action_to_str,
    card_to_str,
    mask_to_cards,
    str_to_action,
)
from spades_env.engine import HISTORY_SEAT_SHIFT, HandResult, step
from spades_env.rules import Rules
from spades_env.state import init

RECORD_VERSION = 1


#: The name of every action and card (cards.py), looked up once.
_ACTION_NAMES = tuple(action_to_str(a) for a in range(NUM_ACTIONS))
_CARD_NAMES = tuple(card_to_str(c) for c in range(NUM_CARDS))
_RULES_DICTS: dict[Rules, dict[str, Any]] = {}


def _rules_dict(rules: Rules) -> dict[str, Any]:
    """`rules.to_dict()` (a fresh dict of plain values; `asdict` is slow, so the values
    are computed once per rules)."""
    cached = _RULES_DICTS.get(rules)
    if cached is None:
        cached = _RULES_DICTS[rules] = rules.to_dict()
    return dict(cached)


def hand_records(rules: Rules, result: HandResult) -> list[dict[str, Any]]:
    """One record per hand in `result` (the `finished` field of a `StepInfo`)."""
    out = []
    named = rules.trump == "named"
    names, cards = _ACTION_NAMES, _CARD_NAMES
    for i in range(result.games.shape[0]):
        n = int(result.history_len[i])
        hist = result.history[i, :n].astype(np.int64)
        seats = (hist >> HISTORY_SEAT_SHIFT).tolist()
        acts = (hist & ((1 << HISTORY_SEAT_SHIFT) - 1)).tolist()
        record = {
            "version": RECORD_VERSION,
            "rules": _rules_dict(rules),
            "seed": int(result.seed[i]),
            "hand_no": int(result.hand_no[i]),
            "dealer": int(result.dealer[i]),
            "deal": [[cards[c] for c in mask_to_cards(m)] for m in result.deal[i]],
            "scores_before": result.scores_before[i].tolist(),
            "bags_before": result.bags_before[i].tolist(),
            "actions": [[s, names[a]] for s, a in zip(seats, acts, strict=True)],
            "bids": result.bids[i].tolist(),
            "blind": result.blind[i].tolist(),
            "tricks": result.tricks[i].tolist(),
            "points": result.points[i].tolist(),
            "bags_gained": result.bags_gained[i].tolist(),
            "penalty": result.penalty[i].tolist(),
            "scores": result.scores[i].tolist(),
            "bags": result.bags[i].tolist(),
            "game_over": bool(result.game_over[i]),
            "winner": int(result.winner[i]),
        }
        if named:  # RULES.md §6 auction: the suit named for this hand
            record["trump"] = SUIT_NAMES[int(result.trump[i])]
        out.append(record)
    return out


class ReplayError(ValueError):
    """A record whose actions do not replay to the recorded outcome."""


def replay(record: dict[str, Any]) -> dict[str, Any]:
    """Play a record's actions again from its deal; return the record the engine makes."""
    rules = Rules.from_dict(record["rules"])
    from spades_env.cards import str_to_card

    deal = np.array([[[str_to_card(c) for c in hand] for hand in record["deal"]]])
    state = init(
        rules,
        1,
        seeds=np.array([record["seed"]], dtype=np.uint64),
        deals=None if rules.draw else deal,
        dealer=record["dealer"],
        scores=np.array(record["scores_before"])[None],
        bags=np.array(record["bags_before"])[None],
    )
    state.hand_no[:] = record["hand_no"]
    if rules.draw:  # RULES.md §6 two_player: the stock of hand `hand_no` comes from the seed
        from spades_env.engine import start_hand

        start_hand(state, np.zeros(1, dtype=np.int64))
    for k, (seat, action) in enumerate(record["actions"]):
        if int(state.to_act[0]) != seat:
            raise ReplayError(
                f"action {k}: seat {seat} acts, but it is seat {state.to_act[0]}'s turn"
            )
        info = step(state, [str_to_action(action)])
        if info.finished is not None:
            if k != len(record["actions"]) - 1:
                raise ReplayError(f"the hand ended after action {k}, before the record's end")
            return hand_records(rules, info.finished)[0]
    raise ReplayError("the record's actions do not finish the hand")
