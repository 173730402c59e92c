"""The seat's view in English: `view_text` of the JSON view (`seat_text` of a game, with
the rules paragraph of `rules_text`), and `parse_text`, which reads such a text back into
the dict (so the text is complete)."""

from __future__ import annotations

import re
from typing import Any

from spades_env.cards import (
    card_to_str,
)
from spades_env.rules import Rules
from spades_env.state import State
from spades_env.text.names import card_index, card_name, rules_from, team_name
from spades_env.text.view import seat_json


def rules_text(rules: Rules) -> str:
    """The rules in force, in one paragraph of English (every option is in the JSON)."""
    p = rules.num_players
    if rules.partnerships:
        teams = " against ".join(team_name(rules, t) for t in range(rules.num_teams))
        table = f"{p} players in partnerships ({teams}), partners sitting opposite"
    else:
        table = f"{p} players, each playing alone"
    trump = (
        "the highest bidder names the trump suit after the bidding"
        if rules.trump == "named"
        else "spades are always trump"
    )
    parts = [
        f"Rules: {rules.name} ({table}; {rules.hand_size} cards each, deck {rules.deck}).",
        f"Trumps: {trump}; a trump may not be led until one has been played (broken) "
        "unless the leader holds nothing else; you must follow the suit led if you can.",
    ]
    bids = f"Bids: {rules.min_bid}..{rules.max_bid}"
    if rules.min_bid == 0:
        bids += f" (0 is nil: take no trick, {rules.nil_value} points)"
    if rules.bid_constraint != "none":
        bids += f", {rules.bid_constraint} rule"
    if rules.max_total_bid is not None:
        bids += f", all bids together at most {rules.max_total_bid}"
    blind = {
        "never": "no blind nil",
        "when_behind_100": f"blind nil ({rules.blind_nil_value} points) only when 100 or more "
        "behind, before looking at the hand",
        "always": f"blind nil ({rules.blind_nil_value} points) before looking at the hand",
    }.get(rules.blind_nil, f"blind nil: {rules.blind_nil}")
    parts.append(f"{bids}; {blind}.")
    parts.append(
        f"Scoring: a made bid scores 10 per trick bid plus 1 per extra trick (a bag); "
        f"{rules.bag_limit} bags cost {rules.bag_penalty} points; a missed bid loses 10 per "
        f"trick bid; the game ends at {rules.target} points"
        + (f" or after {rules.max_hands} hands" if rules.max_hands else "")
        + "."
    )
    return " ".join(parts)


def seat_text(state: State, game: int = 0, seat: int | None = None) -> str:
    """`seat_json` as readable English (`view_text`)."""
    return view_text(seat_json(state, game, seat))


def _ucard(text: str) -> str:
    return card_to_str(card_index(text), unicode=True)


def _ucards(cards: list[str]) -> str:
    return " ".join(_ucard(c) for c in cards) if cards else "none"


def _plays_text(plays: list[list[str]]) -> str:
    return ", ".join(f"{who} {_ucard(card)}" for who, card in plays)


def view_text(view: dict[str, Any]) -> str:
    """The seat's view (`seat_json`) as English, one fact per line; `parse_text` reads it
    back. The rules paragraph comes first, the legal actions last."""
    rules = rules_from(tuple(view["rules"].items()))
    lines = [
        f"Spades, text view version {view['version']}.",
        rules_text(rules),
        f"Rules options: {_options_text(view['rules'])}.",
        f"You are {view['seat']}.",
        f"Hands completed in this game: {view['hands_completed']}. Dealer: {view['dealer']}.",
        f"Phase: {view['phase']}. To act: {view['to_act']}.",
    ]
    teams = ", ".join(
        f"{team} {score} ({view['bags'][team]} bags)" for team, score in view["scores"].items()
    )
    lines.append(f"Scores: {teams}.")
    if view["hand"] is None:
        lines.append("Your hand: not looked at yet (you may still bid blind nil).")
    else:
        lines.append(f"Your hand: {_ucards(view['hand'])}.")
    bids = ", ".join(f"{who} {'-' if bid is None else bid}" for who, bid in view["bids"].items())
    lines.append(f"Bids (- not yet): {bids}.")
    trump = view["trump"] or "not named yet"
    lines.append(f"Trump: {trump}, {'broken' if view['trump_broken'] else 'not broken'}.")
    won = ", ".join(f"{who} {n}" for who, n in view["tricks_won"].items())
    lines.append(f"Tricks won this hand: {won}.")
    for i, trick in enumerate(view["tricks"], 1):
        lines.append(f"Trick {i}: {_plays_text(trick['plays'])}; won by {trick['winner']}.")
    current = _plays_text(view["current_trick"]) or "no card yet"
    lines.append(f"Trick in progress: {current}.")
    voids = "; ".join(f"{who} has no {', '.join(s)}" for who, s in view["voids"].items())
    lines.append(f"Voids shown: {voids or 'none'}.")
    if "passed" in view:
        lines.append(f"Exchange: you passed {_ucards(view['passed'])}.")
        lines.append(f"Exchange: you received {_ucards(view['received'])}.")
    if "open_hands" in view:
        for who, cards in view["open_hands"].items():
            lines.append(f"Open hand of {who}: {_ucards(cards)}.")
    if "looking_at" in view:
        look = view["looking_at"]
        lines.append(f"Looking at: {_ucard(look) if look else 'nothing'}.")
        lines.append(f"Seen and discarded: {_ucards(view['seen'])}.")
        lines.append(f"Stock left: {view['stock_left']}.")
    legal = view["legal_actions"]
    lines.append(f"Legal actions: {'; '.join(legal) if legal else 'none (not your turn)'}.")
    return "\n".join(lines)


def _options_text(options: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in options.items())


# ----------------------------------------------------------------------------- reading text back
def _parse_value(raw: str) -> Any:
    if raw == "None":
        return None
    if raw in ("True", "False"):
        return raw == "True"
    if re.fullmatch(r"-?\d+", raw):
        return int(raw)
    return raw


def _parse_cards(text: str) -> list[str]:
    return [] if text == "none" else [card_name(card_index(c)) for c in text.split()]


def _parse_plays(text: str) -> list[list[str]]:
    if text == "no card yet":
        return []
    out = []
    for item in text.split(", "):
        who, _, card = item.rpartition(" ")
        out.append([who, card_name(card_index(card))])
    return out


def _pairs(text: str) -> list[tuple[str, str]]:
    return [tuple(item.rsplit(" ", 1)) for item in text.split(", ")]  # type: ignore[misc]


def parse_text(text: str) -> dict[str, Any]:
    """The dict `seat_json` gave for a text `view_text` wrote (the text is complete)."""
    view: dict[str, Any] = {"tricks": []}
    extra: dict[str, Any] = {}
    for line in text.splitlines():
        body = line.rstrip(".")
        if m := re.fullmatch(r"Spades, text view version (\d+)", body):
            view["version"] = int(m[1])
        elif body.startswith("Rules options: "):
            items = body[len("Rules options: ") :].split(", ")
            view["rules"] = {k: _parse_value(v) for k, _, v in (i.partition("=") for i in items)}
        elif m := re.fullmatch(r"You are (.+)", body):
            view["seat"] = m[1]
        elif m := re.fullmatch(r"Hands completed in this game: (\d+)\. Dealer: (.+)", body):
            view["hands_completed"], view["dealer"] = int(m[1]), m[2]
        elif m := re.fullmatch(r"Phase: (\w+)\. To act: (.+)", body):
            view["phase"], view["to_act"] = m[1], m[2]
        elif body.startswith("Scores: "):
            view["scores"], view["bags"] = {}, {}
            for item in body[len("Scores: ") :].split("), "):
                m = re.fullmatch(r"(.+) (-?\d+) \((\d+) bags\)?", item)
                assert m is not None, item
                view["scores"][m[1]], view["bags"][m[1]] = int(m[2]), int(m[3])
        elif body.startswith("Your hand: "):
            rest = body[len("Your hand: ") :]
            view["hand"] = None if rest.startswith("not looked at") else _parse_cards(rest)
        elif body.startswith("Bids (- not yet): "):
            view["bids"] = {}
            for item in body[len("Bids (- not yet): ") :].split(", "):
                who, bid = re.fullmatch(r"(.+?) (-|nil|blind nil|\d+)", item).groups()  # type: ignore[union-attr]
                view["bids"][who] = None if bid == "-" else int(bid) if bid.isdigit() else bid
        elif m := re.fullmatch(r"Trump: (.+), (broken|not broken)", body):
            view["trump"] = None if m[1] == "not named yet" else m[1]
            view["trump_broken"] = m[2] == "broken"
        elif body.startswith("Tricks won this hand: "):
            won = body[len("Tricks won this hand: ") :]
            view["tricks_won"] = {who: int(n) for who, n in _pairs(won)}
        elif m := re.fullmatch(r"Trick \d+: (.+); won by (.+)", body):
            view["tricks"].append({"plays": _parse_plays(m[1]), "winner": m[2]})
        elif body.startswith("Trick in progress: "):
            view["current_trick"] = _parse_plays(body[len("Trick in progress: ") :])
        elif body.startswith("Voids shown: "):
            rest = body[len("Voids shown: ") :]
            view["voids"] = {}
            if rest != "none":
                for item in rest.split("; "):
                    who, suits = item.split(" has no ")
                    view["voids"][who] = suits.split(", ")
        elif body.startswith("Exchange: you passed "):
            extra["passed"] = _parse_cards(body[len("Exchange: you passed ") :])
        elif body.startswith("Exchange: you received "):
            extra["received"] = _parse_cards(body[len("Exchange: you received ") :])
        elif m := re.fullmatch(r"Open hand of (.+?): (.+)", body):
            extra.setdefault("open_hands", {})[m[1]] = _parse_cards(m[2])
        elif body.startswith("Looking at: "):
            rest = body[len("Looking at: ") :]
            extra["looking_at"] = None if rest == "nothing" else card_name(card_index(rest))
        elif body.startswith("Seen and discarded: "):
            extra["seen"] = _parse_cards(body[len("Seen and discarded: ") :])
        elif body.startswith("Stock left: "):
            extra["stock_left"] = int(body[len("Stock left: ") :])
        elif body.startswith("Legal actions: "):
            rest = body[len("Legal actions: ") :]
            view["legal_actions"] = [] if rest.startswith("none") else rest.split("; ")
    order = [
        "version", "rules", "seat", "phase", "to_act", "dealer", "hands_completed", "hand",
        "bids", "tricks_won", "tricks", "current_trick", "trump", "trump_broken", "scores",
        "bags", "voids",
    ]  # fmt: skip
    out = {k: view[k] for k in order}
    out.update(extra)
    out["legal_actions"] = view["legal_actions"]
    return out
