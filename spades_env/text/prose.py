"""The seat's view in English: `view_text` of the JSON view (`seat_text` of a game, with
the rules paragraph of `rules_text`), and `parse_text`, which reads such a text back into
the dict (so the text is complete)."""

from __future__ import annotations

import re
from typing import Any

from spades_env.cards import CARD_RANK, CARD_SUIT, SPADES, SUIT_NAMES, card_to_str
from spades_env.engine import seat_name
from spades_env.rules import Rules
from spades_env.state import State
from spades_env.text.names import card_index, card_name, rules_from, team_name
from spades_env.text.view import seat_json

_DECKS = {
    "jokers": " The twos of hearts and diamonds are out; the Big Joker (BJ) and the Little "
    "Joker (LJ) are in: the two highest spades, the Big over the Little, both over the ace.",
    "no_2c": " The two of clubs is out of the deck.",
    "no_2c_2d": " The twos of clubs and diamonds are out of the deck.",
}
_CONSTRAINTS = {
    "suicide": " Each team bids exactly one nil (a blind nil counts): if the first partner "
    "to bid does not bid nil, the second must; if the first does, the second must not.",
    "mirror": " Each bid is the number of spades held (none: nil).",
    "whiz": " Each bid is nil or exactly the number of spades held.",
}


def rules_text(rules: Rules) -> str:
    """The rules in force, once, in plain words: only what a player needs (the options
    themselves are in the JSON view)."""
    p = rules.num_players
    trump = "spades" if rules.trump == "spades" else "trumps"
    out = []
    if rules.partnerships:
        teams = " and ".join(team_name(rules, t) for t in range(rules.num_teams))
        out.append(f"Rules: {p} players in two teams ({teams}); partners sit opposite.")
    else:
        out.append(f"Rules: {p} players, each playing alone.")
    if rules.draw:  # RULES.md §6 two_player
        out.append(
            f" No deal: in turn, look at the top card of the stock and keep it (the next is "
            f"discarded unseen) or discard it (the next must be kept), until each holds "
            f"{rules.hand_size}."
        )
    else:
        out.append(f" {rules.hand_size} cards each.")
    out.append(_DECKS.get(rules.deck, ""))
    bids = f" Bid once the tricks you will take, {rules.min_bid} to {rules.max_bid}"
    if rules.min_bid == 0:
        bids += f"; 0 is nil: take no trick (+{rules.nil_value}, else -{rules.nil_value})"
    out.append(bids + ".")
    out.append(_CONSTRAINTS.get(rules.bid_constraint, ""))
    if rules.max_total_bid is not None:
        out.append(f" All bids but nils total at most {rules.max_total_bid}.")
    if rules.blind_nil != "never":
        when = " when 100 or more behind" if rules.blind_nil == "when_behind_100" else ""
        out.append(
            f" Blind nil (+{rules.blind_nil_value}, else -{rules.blind_nil_value}) is bid "
            f"before looking at the hand{when}."
        )
    if rules.blind_nil_exchange:
        out.append(" After the bidding, a blind-nil bidder and partner pass each other 2 cards.")
    if rules.trump == "named":  # RULES.md §6 auction
        out.append(" After the bidding, the highest bidder names the trump suit.")
    if rules.first_lead == "two_of_clubs":
        out.append(" The two of clubs leads the first trick.")
    out.append(
        f" Follow suit if you can, else play any card. The highest {trump[:-1]} wins a "
        f"trick, else the highest card of the suit led. {trump.capitalize()} can't be led "
        f"until one has been played, unless you hold only {trump}."
    )
    if rules.scoring == "family":
        out.append(
            f" Score: 1 per trick, 5 more for taking exactly the bid; first to {rules.target}."
        )
    else:
        out.append(
            " Score: a team that makes its bid gets 10 per trick bid and 1 per extra trick "
            f"(a bag; {rules.bag_limit} bags cost {rules.bag_penalty}); a team short of "
            "it loses 10 per trick bid."
        )
        if rules.nil_tricks == "count":
            out.append(" A nil bidder's tricks count toward the team's bid.")
        if rules.thirteen_bid_doubles:
            out.append(" Bidding 13 and taking all 13 scores double.")
        if rules.ten_for_two_hundred:
            out.append(" A bid of 10 or more scores 200 if made, -200 if not.")
        end = f" Game to {rules.target}"
        if rules.lose_at is not None:
            end += f", or down to {rules.lose_at}"
        out.append(end + ".")
    if rules.max_hands:
        out.append(f" At most {rules.max_hands} hands.")
    if rules.open_hands:
        out.append(" Every hand is face up.")
    return "".join(out)


def _rules_line(options: dict[str, Any]) -> str:
    """The rules in force by name: the preset and the options changed from it."""
    rules = rules_from(tuple(options.items()))
    changed = rules.changed_options()
    return f"Preset: {rules.name}" + (f" with {', '.join(changed)}" if changed else "")


def _trick_leader(view: dict[str, Any]) -> str | None:
    """Who is winning the trick in progress, or None before its first card."""
    plays = view["current_trick"]
    if not plays:
        return None
    suits = [int(CARD_SUIT[card_index(c)]) for _, c in plays]
    trump = SPADES if view["trump"] is None else SUIT_NAMES.index(view["trump"])
    best = max(
        range(len(plays)),
        key=lambda i: (suits[i] == trump, suits[i] == suits[0], CARD_RANK[card_index(plays[i][1])]),
    )
    return plays[best][0]


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
    back. The rules come first (in plain words, then by name), the legal actions last;
    lines with nothing to say yet (no trick won, no void shown) are left out."""
    rules = rules_from(tuple(view["rules"].items()))
    me = _seat_index(view["seat"])
    partner = [
        seat_name(k)
        for k in range(rules.num_players)
        if k != me and rules.partnerships and rules.team_of(k) == rules.team_of(me)
    ]
    who = f"You are {view['seat']}"
    who += f"; your partner is {partner[0]}" if partner else ", playing alone"
    lines = [
        f"Spades, text view version {view['version']}.",
        rules_text(rules),
        f"{_rules_line(view['rules'])}.",
        f"{who}.",
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
    if any(view["tricks_won"].values()):
        won = ", ".join(f"{who} {n}" for who, n in view["tricks_won"].items())
        lines.append(f"Tricks won this hand: {won}.")
    for i, trick in enumerate(view["tricks"], 1):
        (first, card), *rest = trick["plays"]
        others = " ".join(_ucard(c) for _, c in rest)
        won = trick["winner"]
        lines.append(f"Trick {i}: {first} led {_ucard(card)}, then {others}; {won} won.")
    if view["current_trick"]:
        winning = _trick_leader(view)
        lines.append(
            f"Trick in progress: {_plays_text(view['current_trick'])} ({winning} winning)."
        )
    if view["voids"]:
        voids = "; ".join(f"{who} has no {', '.join(s)}" for who, s in view["voids"].items())
        lines.append(f"Voids shown: {voids}.")
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


def _seat_index(name: str) -> int:
    return int(name.split()[1]) if name.startswith("seat ") else _SEATS.index(name)


_SEATS = [seat_name(k) for k in range(4)]


def _preset_rules(name: str, options: dict[str, Any]) -> Rules:
    """The rules of a preset with options changed (`Rules.changed_options` read back)."""
    return Rules.preset(name, **options)


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
    view: dict[str, Any] = {"tricks": [], "current_trick": [], "voids": {}}
    extra: dict[str, Any] = {}
    tricks: list[tuple[str, list[str], str]] = []  # (leader, cards in order, winner)
    for line in text.splitlines():
        body = line.rstrip(".")
        if m := re.fullmatch(r"Spades, text view version (\d+)", body):
            view["version"] = int(m[1])
        elif m := re.fullmatch(r"Preset: (\w+)(?: with (.+))?", body):
            items = m[2].split(", ") if m[2] else []
            options = {k: _parse_value(v) for k, _, v in (i.partition("=") for i in items)}
            view["rules"] = _preset_rules(m[1], options).to_dict()
        elif m := re.fullmatch(r"You are (.+?)(?:; your partner is .+|, playing alone)", body):
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
        elif m := re.fullmatch(r"Trick \d+: (.+?) led (\S+), then (.+); (.+) won", body):
            tricks.append((m[1], [m[2], *m[3].split()], m[4]))
        elif m := re.fullmatch(r"Trick in progress: (.+) \(.+ winning\)", body):
            view["current_trick"] = _parse_plays(m[1])
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
    names = list(view["bids"])
    view.setdefault("tricks_won", dict.fromkeys(names, 0))
    for leader, cards, winner in tricks:
        first = names.index(leader)
        seats = [names[(first + k) % len(names)] for k in range(len(cards))]
        plays = [[who, card_name(card_index(c))] for who, c in zip(seats, cards, strict=True)]
        view["tricks"].append({"plays": plays, "winner": winner})
    order = [
        "version", "rules", "seat", "phase", "to_act", "dealer", "hands_completed", "hand",
        "bids", "tricks_won", "tricks", "current_trick", "trump", "trump_broken", "scores",
        "bags", "voids",
    ]  # fmt: skip
    out = {k: view[k] for k in order}
    out.update(extra)
    out["legal_actions"] = view["legal_actions"]
    return out
