"""The score sheet of a game: each finished hand as the engine scored it, in parts.

For every hand record (`spades_env.records`) and every team: the contract (the sum of
its members' bids other than nil) against the tricks that judge it, made or set, with
what it scored; each nil and blind nil on its own, kept or broken, with its value; the
bags gained and the bag penalty this hand (RULES.md §4); the net change of the score and
the running total. The parts are the engine's own numbers: the points and the penalty
come from the record, the nil values from the rules, and the contract's part is the rest
of the points, so the parts always add up to what the engine scored
(tests/web/test_web_scoresheet.py checks whole games of several presets against
`spades_env.scoring`). Only public numbers: never a record's deal or seed.
"""

from __future__ import annotations

from typing import Any

from experiments.table.words import contract_label, team_seats
from spades_env.rules import Rules
from spades_env.scoring import score_hand


def _nils(rules: Rules, record: dict[str, Any], seats: tuple[int, ...]) -> list[dict[str, Any]]:
    """Each nil of the team's seats: kept (no trick) or broken, and its value (RULES.md
    §4: nil ±nil_value, blind nil ±blind_nil_value; the family scoring has no nil)."""
    if rules.scoring == "family":
        return []
    out = []
    for s in seats:
        if record["bids"][s] != 0:
            continue
        blind = bool(record["blind"][s])
        value = rules.blind_nil_value if blind else rules.nil_value
        kept = record["tricks"][s] == 0
        out.append(
            {
                "seat": s,
                "blind": blind,
                "tricks": record["tricks"][s],
                "made": kept,
                "points": value if kept else -value,
            }
        )
    return out


def hand_row(rules: Rules, record: dict[str, Any]) -> dict[str, Any]:
    """One hand of the sheet: per team, its contract, nils, bags, penalty, net and total."""
    hs = score_hand(rules, [record["bids"]], [record["blind"]], [record["tricks"]])
    teams = []
    for k in range(rules.num_teams):
        seats = team_seats(rules, k)
        nils = _nils(rules, record, seats)
        points, penalty = record["points"][k], record["penalty"][k]
        contract = int(hs.contract[0, k])
        judged = sum(
            record["tricks"][s]
            for s in seats
            if record["bids"][s] != 0 or rules.nil_tricks == "count"
        )
        teams.append(
            {
                "team": k,
                "contract": contract,
                "label": contract_label(record["bids"], record["blind"], seats),
                "tricks": sum(record["tricks"][s] for s in seats),
                "judged": judged,
                # a team of nil bidders alone has no contract to make or set
                "made": bool(hs.made[0, k]) if contract > 0 else None,
                "contract_points": points - sum(n["points"] for n in nils),
                "nils": nils,
                "points": points,
                "bags_gained": record["bags_gained"][k],
                "penalty": penalty,
                "net": points - penalty,
                "total": record["scores"][k],
                "bags": record["bags"][k],
            }
        )
    return {
        "hand": record["hand_no"] + 1,
        "bids": record["bids"],
        "blind": record["blind"],
        "tricks": record["tricks"],
        "teams": teams,
    }


def sheet_rows(rules: Rules, records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The score sheet of these finished hands, oldest first."""
    return [hand_row(rules, r) for r in records]
