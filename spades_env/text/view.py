"""The game as text: what one seat knows, in English and as JSON, and answers read back.

For language-model agents and anyone who reads the game rather than its arrays. Three
parts, all for one seat of one game at one decision:

- ``seat_json(state, game, seat)``: a JSON-ready dict of what the seat knows and nothing
  more: its hand (none while it may still bid blind nil, RULES.md §2), every bid, every
  finished trick with who played what and who won it, the trick in progress, tricks won,
  scores and bags, the dealer, the trump and whether it is broken, the voids shown, the
  exchange cards it passed and received, the rules in force and, when the seat is to
  act, its legal actions by name. Open-hands rules (RULES.md §6 ``open_hands``) add the
  other hands; two_player (RULES.md §6) the card looked at, the cards seen and the stock.
- ``seat_text(state, game, seat)``: the same as readable English (``view_text`` of the
  dict); ``parse_text`` reads such a text back into the dict, so the text is complete.
  ``json_to_obs`` turns the dict into the engine's int16 encoding of that seat
  (`spades_env.observation`): the tests check both round trips against the engine on
  every decision of hands of every preset.
- ``parse_answer(answer, state, game)``: a free-form answer (``bid 4``, ``nil``,
  ``blind nil``, ``play QH``, ``Q♥``, ``queen of hearts``, ``10♥``, ``pass 2C``, ``keep``,
  ``trump hearts``; any case, extra words, a final-answer tag such as ``Final answer: Q♥``,
  ``<answer>Q♥</answer>`` or ``[play Q♥]``) -> the legal action it names, or
  ``AnswerError`` saying why not: not understood, or not legal with the rule it breaks
  (the engine's own message, `engine.explain_illegal`, citing RULES.md).

Seats are named North, East, South, West (`engine.seat_name`; a fifth seat is ``seat 4``)
and cards in the project's notation (`spades_env.cards`): ``card_to_str`` (``QH``, ``TD``)
in JSON, with suit symbols (``Q♥``) in English. The whole table (every hand) is a
separate, named view: ``render.render_state(state, show_all=True)``.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    CARD_RANK,
    CARD_SUIT,
    DRAW_DISCARD,
    DRAW_KEEP,
    MAX_BID,
    NAME_TRUMP,
    NUM_CARDS,
    NUM_SUITS,
    RANK_CHARS,
    SEE_HAND,
    SPADES,
    SUIT_CHARS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    TWO_OF_CLUBS,
    card_to_str,
    cards_to_mask,
    mask_to_cards,
    str_to_card,
)
from spades_env.core.layout import obs_size, obs_slices, phase_slots
from spades_env.core.rule_functions import trick_winner
from spades_env.engine import PHASE_BASE, explain_illegal, legal_actions, seat_name
from spades_env.observation import SeatView, seat_view
from spades_env.rules import Rules
from spades_env.state import DONE, DRAW, EXCHANGE, PHASE_NAMES, PLAY, State, init, one_index

TEXT_VERSION = 1

__all__ = [
    "TEXT_VERSION",
    "AnswerError",
    "action_name",
    "json_to_obs",
    "obs_extras",
    "parse_answer",
    "parse_text",
    "parse_view_answer",
    "rules_text",
    "seat_json",
    "seat_text",
    "view_json",
    "view_text",
]


class AnswerError(ValueError):
    """An answer that names no legal action. `kind` is ``"not understood"`` or
    ``"illegal"``; the message says why (for an illegal action, the RULES.md rule)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


# ----------------------------------------------------------------------------- names
#: card text -> card, for every spelling the views write (``QH``, ``Q♥``, ``10♥``)
_CARD_INDEX: dict[str, int] = {}
for _c in range(NUM_CARDS):
    for _u in (False, True):
        _CARD_INDEX[card_to_str(_c, unicode=_u)] = _c
        _CARD_INDEX[card_to_str(_c, unicode=_u).replace("T", "10", 1)] = _c


def _index(text: str) -> int:
    """A card of the views' notation -> its index (any other spelling: `str_to_card`)."""
    found = _CARD_INDEX.get(text)
    return str_to_card(text) if found is None else found


def _card(c: int) -> str:
    return card_to_str(c)


@lru_cache(maxsize=64)
def _rules_dict(rules: Rules) -> dict[str, Any]:
    return rules.to_dict()


@lru_cache(maxsize=64)
def _rules_from(items: tuple[tuple[str, Any], ...]) -> Rules:
    return Rules.from_dict(dict(items))


def _cards(cards: list[int]) -> list[str]:
    """Cards sorted as a player holds them: spades first, high cards first."""
    return [_card(c) for c in sorted(cards, key=lambda c: (CARD_SUIT[c], -CARD_RANK[c]))]


def action_name(action: int) -> str:
    """An action as the prompt names it: ``bid 4``, ``nil``, ``blind nil``, ``see hand``,
    ``play Q♥`` (a card in the exchange: ``pass Q♥``; see `parse_answer`), ``keep``,
    ``discard``, ``trump hearts``."""
    a = int(action)
    if 0 <= a < NUM_CARDS:
        return f"play {card_to_str(a, unicode=True)}"
    if BID_BASE <= a < BLIND_NIL:
        return "nil" if a == BID_BASE else f"bid {a - BID_BASE}"
    names = {BLIND_NIL: "blind nil", SEE_HAND: "see hand", DRAW_KEEP: "keep"}
    names[DRAW_DISCARD] = "discard"
    if a in names:
        return names[a]
    return f"trump {SUIT_NAMES[a - NAME_TRUMP]}"


def _phase_action_name(action: int, phase: int) -> str:
    name = action_name(action)
    return "pass" + name[len("play") :] if phase == EXCHANGE and action < NUM_CARDS else name


def _team_name(rules: Rules, team: int) -> str:
    seats = [s for s in range(rules.num_players) if rules.team_of(s) == team]
    return "-".join(seat_name(s) for s in seats)


def _bid_value(bid: int, blind: bool) -> int | str | None:
    if bid < 0:
        return None
    if bid == 0:
        return "blind nil" if blind else "nil"
    return bid


# ----------------------------------------------------------------------------- the seat's view
def seat_json(state: State, game: int = 0, seat: int | None = None) -> dict[str, Any]:
    """What `seat` (default: the seat to act) knows in game `game`, as a JSON-ready dict
    (see the module doc). Nothing in it depends on another seat's hidden cards."""
    g = one_index(game, state.batch_size, "game")
    rules = state.rules
    p = rules.num_players
    s = int(state.to_act[g]) if seat is None else one_index(seat, p, "seat")
    one = state.take([g])
    view = seat_view(one, np.array([s]))
    played = int(state.played[g])
    open_hands = (
        {k: int(state.hands[g, k]) & ~played for k in range(p)} if rules.open_hands else None
    )
    stock_left = 52 - int(state.stock_pos[g]) if int(state.phase[g]) == DRAW else 0
    return view_json(view, 0, open_hands=open_hands, stock_left=stock_left)


def view_json(
    view: SeatView,
    row: int = 0,
    *,
    open_hands: dict[int, int] | None = None,
    stock_left: int = 0,
) -> dict[str, Any]:
    """`seat_json` of row `row` of an agent's `SeatView`. What the structured view lacks
    comes as arguments: `open_hands` (seat -> hand mask, RULES.md §6 open_hands) and
    `stock_left` (two_player's stock during the draw); an agent reads both from the
    encoding (`obs_extras`). The order of the cards of each finished trick is the
    rules' (its leader, then clockwise; each trick's winner leads the next)."""
    rules = view.rules
    p = rules.num_players
    names = [seat_name(k) for k in range(p)]
    s = int(view.seat[row])
    phase = int(view.phase[row])
    trump = int(view.trump[row])
    card_trick = view.card_trick[row]
    seat_of = np.full(NUM_CARDS, -1, dtype=np.int64)
    for k in range(p):
        for c in mask_to_cards(int(view.played_by[row, k])):
            seat_of[c] = k
    tricks: list[dict[str, Any]] = []
    done = int(view.tricks_played[row])
    if done:
        two_clubs = rules.first_lead == "two_of_clubs"
        leader = int(seat_of[TWO_OF_CLUBS]) if two_clubs else (int(view.dealer[row]) + 1) % p
        for t in range(done):
            table = np.full(p, -1, dtype=np.int8)
            for c in np.flatnonzero(card_trick == t):
                table[seat_of[c]] = c
            order = [(leader + k) % p for k in range(p)]
            lead = int(CARD_SUIT[table[leader]])
            winner = int(trick_winner(table, leader, p, lead, SPADES if trump < 0 else trump))
            tricks.append(
                {
                    "plays": [[names[k], _card(int(table[k]))] for k in order],
                    "winner": names[winner],
                }
            )
            leader = winner
    current = [
        [names[k], _card(int(view.trick[row, k]))]
        for k in ((int(view.leader[row]) + i) % p for i in range(int(view.trick_size[row])))
    ]
    hidden = bool(view.hand_hidden[row])
    out: dict[str, Any] = {
        "version": TEXT_VERSION,
        "rules": dict(_rules_dict(rules)),
        "seat": names[s],
        "phase": PHASE_NAMES[phase],
        "to_act": names[int(view.to_act[row])],
        "dealer": names[int(view.dealer[row])],
        "hands_completed": int(view.hand_no[row]),
        "hand": None if hidden else _cards(mask_to_cards(int(view.hand[row]))),
        "bids": {
            names[k]: _bid_value(int(view.bids[row, k]), bool(view.blind[row, k])) for k in range(p)
        },
        "tricks_won": {names[k]: int(view.tricks_won[row, k]) for k in range(p)},
        "tricks": tricks,
        "current_trick": current,
        "trump": None if trump < 0 else SUIT_NAMES[trump],
        "trump_broken": bool(view.broken[row]),
        "scores": {_team_name(rules, t): int(view.scores[row, t]) for t in range(rules.num_teams)},
        "bags": {_team_name(rules, t): int(view.bags[row, t]) for t in range(rules.num_teams)},
        "voids": {
            names[k]: [SUIT_NAMES[u] for u in range(NUM_SUITS) if int(view.voids[row, k]) >> u & 1]
            for k in range(p)
            if int(view.voids[row, k])
        },
    }
    if rules.blind_nil_exchange:
        out["passed"] = _cards(mask_to_cards(int(view.passed[row])))
        out["received"] = _cards(mask_to_cards(int(view.received[row])))
    if rules.open_hands:  # RULES.md §6 open_hands: every hand is face up
        hands = open_hands or {}
        out["open_hands"] = {
            names[k]: _cards(mask_to_cards(hands.get(k, 0))) for k in range(p) if k != s
        }
    if rules.draw:  # RULES.md §6 two_player
        look = int(view.looking[row])
        out["looking_at"] = _card(look) if look >= 0 else None
        out["seen"] = _cards(mask_to_cards(int(view.seen[row])))
        out["stock_left"] = int(stock_left)
    acting = int(view.to_act[row]) == s and phase != DONE
    legal = int(view.legal[row])
    base = int(PHASE_BASE[phase])
    out["legal_actions"] = (
        [_phase_action_name(base + i, phase) for i in range(64) if legal >> i & 1] if acting else []
    )
    return out


def obs_extras(view: SeatView, obs: npt.NDArray[np.int16], row: int = 0) -> dict[str, Any]:
    """The `view_json` arguments the structured view lacks, read from the seat's encoding
    `obs` ((B, obs_size) or (obs_size,)): the open hands and two_player's stock left."""
    rules = view.rules
    o = obs[row] if obs.ndim == 2 else obs
    sl = obs_slices(rules)
    p, s = rules.num_players, int(view.seat[row])
    out: dict[str, Any] = {}
    if rules.open_hands:
        block = o[sl["open_hands"]].reshape(p - 1, NUM_CARDS)
        out["open_hands"] = {
            (s + r) % p: int(cards_to_mask(np.flatnonzero(block[r - 1]))) for r in range(1, p)
        }
    if rules.draw:
        out["stock_left"] = int(o[sl["stock"]][0])
    return out


def rules_text(rules: Rules) -> str:
    """The rules in force, in one paragraph of English (every option is in the JSON)."""
    p = rules.num_players
    if rules.partnerships:
        teams = " against ".join(_team_name(rules, t) for t in range(rules.num_teams))
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
    return card_to_str(_index(text), unicode=True)


def _ucards(cards: list[str]) -> str:
    return " ".join(_ucard(c) for c in cards) if cards else "none"


def _plays_text(plays: list[list[str]]) -> str:
    return ", ".join(f"{who} {_ucard(card)}" for who, card in plays)


def view_text(view: dict[str, Any]) -> str:
    """The seat's view (`seat_json`) as English, one fact per line; `parse_text` reads it
    back. The rules paragraph comes first, the legal actions last."""
    rules = _rules_from(tuple(view["rules"].items()))
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
    return [] if text == "none" else [_card(_index(c)) for c in text.split()]


def _parse_plays(text: str) -> list[list[str]]:
    if text == "no card yet":
        return []
    out = []
    for item in text.split(", "):
        who, _, card = item.rpartition(" ")
        out.append([who, _card(_index(card))])
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
            extra["looking_at"] = None if rest == "nothing" else _card(_index(rest))
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


# ----------------------------------------------------------------------------- back to the encoding
def json_to_obs(view: dict[str, Any]) -> npt.NDArray[np.int16]:
    """The engine's int16 encoding (`observation.encode`) of the seat `view` describes,
    built from the view alone: the view is the whole of what the encoding holds."""
    rules = _rules_from(tuple(view["rules"].items()))
    p, t = rules.num_players, rules.num_teams
    names = [seat_name(k) for k in range(p)]
    me = names.index(view["seat"])
    sl = obs_slices(rules)
    out = np.zeros(obs_size(rules), dtype=np.int16)

    def rel(name: str) -> int:
        return (names.index(name) - me) % p

    def card_block(block: str, cards: list[str], row: int = 0) -> None:
        base = sl[block].start + row * NUM_CARDS
        for c in cards:
            out[base + _index(c)] = 1

    def one_hot(block: str, index: int | None, row: int = 0, width: int = 0) -> None:
        if index is not None and index >= 0:
            out[sl[block].start + row * width + index] = 1

    card_block("hand", view["hand"] or [])
    for number, trick in enumerate(view["tricks"], 1):
        for who, c in trick["plays"]:
            card_block("played_by", [c], rel(who))
            out[sl["played_trick"].start + _index(c)] = number
    for who, c in view["current_trick"]:
        card_block("played_by", [c], rel(who))
        card_block("table", [c], rel(who))
        out[sl["played_trick"].start + _index(c)] = len(view["tricks"]) + 1
    k = MAX_BID + 2
    for who, bid in view["bids"].items():
        value = -1 if bid is None else 0 if bid in ("nil", "blind nil") else int(bid)
        one_hot("bids", value + 1, rel(who), k)
        out[sl["blind"].start + rel(who)] = bid == "blind nil"
    for who, n in view["tricks_won"].items():
        out[sl["tricks_won"].start + rel(who)] = n
    card_block("passed", view.get("passed", []))
    card_block("received", view.get("received", []))
    teams = list(view["scores"])
    own = rules.team_of(me)
    for r in range(t):
        team = teams[(own + r) % t]
        out[sl["scores"].start + r] = np.clip(view["scores"][team], -32768, 32767)
        out[sl["bags"].start + r] = view["bags"][team]
    one_hot("dealer", rel(view["dealer"]))
    if view["current_trick"]:
        one_hot("leader", rel(view["current_trick"][0][0]))
        one_hot("lead_suit", int(CARD_SUIT[_index(view["current_trick"][0][1])]))
    one_hot("to_act", rel(view["to_act"]))
    out[sl["broken"].start] = view["trump_broken"]
    phase = PHASE_NAMES.index(view["phase"])
    if phase < phase_slots(rules):
        one_hot("phase", phase)
    for who, suits in view["voids"].items():
        for suit in suits:
            one_hot("voids", SUIT_NAMES.index(suit), rel(who), NUM_SUITS)
    out[sl["hand_no"].start] = view["hands_completed"]
    for who, cards in view.get("open_hands", {}).items():
        card_block("open_hands", cards, rel(who) - 1)
    if rules.draw:
        card_block("looking", [view["looking_at"]] if view["looking_at"] else [])
        card_block("seen", view["seen"])
        out[sl["stock"].start] = view["stock_left"]
    if rules.trump == "named" and view["trump"] is not None:
        one_hot("trump", SUIT_NAMES.index(view["trump"]))
    return out


# ----------------------------------------------------------------------------- answers
_TAGS = (
    r"<answer>\s*(.*?)\s*</answer>",
    r"\\boxed\{([^}]*)\}",
    r"final answer\s*[:=\-]*\s*(.+)",
    r"\banswer\s*[:=]\s*(.+)",
    r"\baction\s*[:=]\s*(.+)",
    r"\[([^\[\]]+)\]",  # TextArena's bracketed action
)
_RANK_WORDS = {
    "two": "2", "three": "3", "four": "4", "five": "5", "six": "6", "seven": "7",
    "eight": "8", "nine": "9", "ten": "T", "jack": "J", "queen": "Q", "king": "K", "ace": "A",
}  # fmt: skip
_SUIT_WORD = r"(spades?|hearts?|diamonds?|clubs?)"
_CARD_WORDS = re.compile(
    r"\b(" + "|".join(_RANK_WORDS) + r"|10|[2-9]|[tjqka])\s+of\s+" + _SUIT_WORD + r"\b"
)
_CARD_SHORT = re.compile(r"(?<![\w])(10|[2-9tjqka])\s?([shdc♠♥♦♣♤♡♢♧])(?![a-z])")
_JOKER = re.compile(r"\b(little joker|big joker|lj|bj)\b")
_NUMBER_WORDS = {
    "zero": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
    "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13,
}  # fmt: skip
_ALT_SUITS = str.maketrans("♤♡♢♧", "♠♥♦♣")


def _final_part(answer: str) -> str:
    """The part of an answer that holds the decision: the last tagged final answer, else
    the whole answer."""
    text = answer.strip()
    for pattern in _TAGS:
        found = re.findall(pattern, text, flags=re.IGNORECASE | re.DOTALL)
        if found:
            return found[-1].strip().splitlines()[0] if found[-1].strip() else ""
    return text


def _cards_named(text: str) -> list[int]:
    """The cards a text names, in order of appearance."""
    found: list[tuple[int, int]] = []
    for m in _CARD_WORDS.finditer(text):
        rank = _RANK_WORDS.get(m[1], m[1]).upper().replace("10", "T")
        found.append((m.start(), str_to_card(rank + m[2][0].upper())))
    for m in _CARD_SHORT.finditer(text):
        suit = m[2].translate(_ALT_SUITS)
        suit = SUIT_CHARS[SUIT_SYMBOLS.index(suit)] if suit in SUIT_SYMBOLS else suit.upper()
        rank = m[1].upper().replace("10", "T")
        if rank in RANK_CHARS:
            found.append((m.start(), str_to_card(rank + suit)))
    for m in _JOKER.finditer(text):
        found.append((m.start(), str_to_card("LJ" if m[1].startswith("l") else "BJ")))
    out: list[int] = []
    for _, card in sorted(found):
        if card not in out:
            out.append(card)
    return out


def _read(text: str, phase: int) -> int:
    """The action a (lower-case, final) answer names in `phase`; AnswerError if none."""
    t = " ".join(re.sub(r"[*`\"'_]", " ", text).split())
    if re.search(r"\bblind\s*nil\b", t):
        return BLIND_NIL
    if re.search(r"\b(see|look at)\s+(my\s+|the\s+)?(hand|cards)\b", t) or t in ("see", "look"):
        return SEE_HAND
    if m := re.search(r"\b(?:trump|name)\s+(?:is\s+|suit\s+)?" + _SUIT_WORD, t):
        return NAME_TRUMP + [s[:-1] for s in SUIT_NAMES].index(m[1].rstrip("s"))
    if m := re.search(_SUIT_WORD + r"\s+(?:are|is|as)\s+trumps?\b", t):
        return NAME_TRUMP + [s[:-1] for s in SUIT_NAMES].index(m[1].rstrip("s"))
    if re.search(r"\bkeep\b", t) and not re.search(r"\bdiscard\b", t):
        return DRAW_KEEP
    if re.search(r"\bdiscard\b", t) and not re.search(r"\bkeep\b", t):
        return DRAW_DISCARD
    cards = _cards_named(t)
    bid_phase = phase not in (PLAY, EXCHANGE)
    if not bid_phase or cards:
        if len(cards) == 1:
            return cards[0]
        if len(cards) > 1:
            after = re.split(r"\b(?:play|pass|lead)\b", t)
            last = _cards_named(after[-1]) if len(after) > 1 else []
            if last:
                return last[0]
            raise AnswerError(
                "not understood",
                "the answer names several cards ("
                + ", ".join(card_to_str(c, unicode=True) for c in cards)
                + "); name exactly one",
            )
    if re.search(r"\bnil\b", t):
        return BID_BASE
    numbers = [int(n) for n in re.findall(r"\b\d+\b", t)]
    numbers += [_NUMBER_WORDS[w] for w in re.findall(r"\b(" + "|".join(_NUMBER_WORDS) + r")\b", t)]
    bids = re.findall(r"\bbid\s+(?:of\s+)?(\d+)\b", t)
    if bids:
        numbers = [int(bids[-1])]
    if len(set(numbers)) == 1:
        if numbers[0] > MAX_BID:
            raise AnswerError("illegal", f"bid {numbers[0]} is above the largest bid {MAX_BID}")
        return BID_BASE + numbers[0]
    if len(set(numbers)) > 1:
        raise AnswerError("not understood", "the answer names several numbers; bid one")
    raise AnswerError(
        "not understood",
        "the answer names no action; answer with one of the legal actions, e.g. "
        + ("'play Q♥'" if not bid_phase else "'bid 4'"),
    )


def parse_answer(answer: str, state: State, game: int = 0) -> int:
    """The legal action `answer` names for the seat to act in game `game` of `state`.

    Raises `AnswerError`: ``kind="not understood"`` (no action, or several) or
    ``kind="illegal"`` with the engine's reason and the RULES.md rule
    (`engine.explain_illegal`)."""
    g = one_index(game, state.batch_size, "game")
    phase = int(state.phase[g])
    return _checked(answer, phase, legal_actions(state, g), lambda a: explain_illegal(state, g, a))


def parse_view_answer(answer: str, view: SeatView, row: int = 0) -> int:
    """`parse_answer` for the seat of row `row` of an agent's `SeatView`: the reason an
    action is illegal is the engine's, from a game that holds only what the seat knows."""
    phase = int(view.phase[row])
    legal, base = int(view.legal[row]), int(PHASE_BASE[phase])
    actions = [base + i for i in range(64) if legal >> i & 1]
    return _checked(
        answer, phase, actions, lambda a: explain_illegal(_known_state(view, row), 0, a)
    )


def _known_state(view: SeatView, row: int) -> State:
    """A one-game `State` holding what the seat of `view` knows (its hand, the public
    play), for `engine.explain_illegal`; the other hands are empty."""
    state = init(view.rules, 1, seeds=np.zeros(1, dtype=np.uint64))
    seat = int(view.seat[row])
    state.hands[0] = 0
    state.hands[0, seat] = int(view.hand[row]) | int(view.played_by[row, seat])
    for name in ("phase", "to_act", "played", "legal", "leader", "trick_size", "lead_suit"):
        getattr(state, name)[0] = getattr(view, name)[row]
    for name in ("tricks_played", "trump", "broken", "dealer", "hand_no"):
        getattr(state, name)[0] = getattr(view, name)[row]
    state.bids[0] = view.bids[row]
    return state


def _checked(answer: str, phase: int, legal: list[int], explain: Any) -> int:
    action = _read(_final_part(answer).lower(), phase)
    if action in legal:
        return action
    reason = explain(action)
    shown = "; ".join(_phase_action_name(a, phase) for a in legal)
    raise AnswerError(
        "illegal", f"{_phase_action_name(action, phase)} is not legal: {reason}. Legal: {shown}"
    )
