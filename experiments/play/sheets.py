"""What `spades play` shows between hands: the score sheet, the hand summary, the result.

By partnership under the standard table (RULES.md §1), by player where every player is a
one-player team (RULES.md §6: family, three_player, two_player, cutthroat): the hand
records of `spades_env.records` keep bids and tricks per seat and points, bags and
scores per team, and a one-player team is its seat.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.table import Table

from experiments.play.screen import bid_label, contract_label, seat_title, team_name, team_seats
from spades_env.rules import Rules


def _bid(rules: Rules, rec: dict[str, Any], team: int) -> str:
    seats = team_seats(rules, team)
    if rules.partnerships:
        return contract_label(rec["bids"], rec["blind"], seats)
    return bid_label(rec["bids"][seats[0]], rec["blind"][seats[0]])


def score_sheet(records: list[dict[str, Any]], rules: Rules, human: int = -1) -> Table:
    """Rule text 000's score sheet ("Ett räkneexempel med tre givar"), one row per hand and team.

    Bid is the team's contract with its two bids (with one-player teams: the player's
    bid); Points is the hand's score with any bag penalty included; Bags and Total are
    running counts after the hand. Family scoring has no bags (RULES.md §6): no column.
    """
    by_player = not rules.partnerships
    bags_col = rules.scoring != "family"
    t = Table(title="Score sheet", box=box.SIMPLE_HEAVY)
    for col in ("Hand", "Player" if by_player else "Team", "Bid", "Tricks", "Points"):
        t.add_column(col, justify="right" if col in ("Hand", "Tricks", "Points") else "left")
    if bags_col:
        t.add_column("Bags", justify="right")
    t.add_column("Total", justify="right")
    last = rules.num_teams - 1
    for rec in records:
        for team in range(rules.num_teams):
            row = [
                str(rec["hand_no"] + 1),
                team_name(rules, team, human),
                _bid(rules, rec, team),
                str(sum(rec["tricks"][s] for s in team_seats(rules, team))),
                str(rec["points"][team] - rec["penalty"][team]),
            ]
            if bags_col:
                bags = str(rec["bags"][team])
                if rec["penalty"][team]:
                    bags += f" (-{rec['penalty'][team]})"
                row.append(bags)
            t.add_row(*row, str(rec["scores"][team]), end_section=team == last)
    if not records:
        t.caption = "no hand finished yet"
    return t


def hand_summary(rec: dict[str, Any], players: list[str], human: int, rules: Rules) -> Table:
    """After a hand: each seat's bid and tricks, each team's (or player's) points."""
    t = Table(title=f"Hand {rec['hand_no'] + 1} is over", box=box.SIMPLE_HEAVY)
    points = "Team points" if rules.partnerships else "Points"
    for col in ("Seat", "Bid", "Tricks", points, "Total"):
        t.add_column(col, justify="left" if col == "Seat" else "right")
    for team in range(rules.num_teams):
        seats = team_seats(rules, team)
        for k, seat in enumerate(seats):
            who = "you" if seat == human else players[seat]
            pts = rec["points"][team] - rec["penalty"][team]
            note = f" (bags -{rec['penalty'][team]})" if rec["penalty"][team] else ""
            t.add_row(
                f"{seat_title(seat)} · {who}",
                bid_label(rec["bids"][seat], rec["blind"][seat]),
                str(rec["tricks"][seat]),
                f"{pts}{note}" if k == 0 else "",
                str(rec["scores"][team]) if k == 0 else "",
                end_section=k == len(seats) - 1 and rules.partnerships,
            )
    return t


def result_line(rules: Rules, scores: list[int], winner: int, hands: int, human: int) -> str:
    """The game's verdict (RULES.md §5) for the person at `human`."""
    verdict = "you win!" if winner == rules.team_of(human) else "you lose."
    after = f"Game over after {hands} hand{'' if hands == 1 else 's'}"
    if rules.partnerships:
        names = [team_name(rules, t, human) for t in range(rules.num_teams)]
        return f"{after}: {names[winner]} win {scores[winner]} to {scores[1 - winner]}; {verdict}"
    you = winner == rules.team_of(human)
    who = "you win" if you else f"{team_name(rules, winner, human)} wins"
    others = ", ".join(
        f"{team_name(rules, t, human)} {scores[t]}" for t in range(rules.num_teams) if t != winner
    )
    return f"{after}: {who} with {scores[winner]}; {others}; {verdict}"
