"""The seat's view as JSON: what one seat knows (`seat_json`, `view_json` of an agent's
`SeatView`, with `obs_extras`), and the view back to the engine's encoding
(`json_to_obs`). The module doc of `spades_env.text` describes the view."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

import numpy as np
import numpy.typing as npt

from spades_env.cards import (
    CARD_RANK,
    CARD_SUIT,
    MAX_BID,
    NUM_CARDS,
    NUM_SUITS,
    SPADES,
    SUIT_NAMES,
    TWO_OF_CLUBS,
    cards_to_mask,
    mask_to_cards,
)
from spades_env.core.layout import obs_size, obs_slices, phase_slots
from spades_env.core.rule_functions import trick_winner
from spades_env.engine import PHASE_BASE, seat_name
from spades_env.observation import SeatView, seat_view
from spades_env.rules import Rules
from spades_env.state import DONE, DRAW, PHASE_NAMES, State, one_index
from spades_env.text.names import card_index, card_name, phase_action_name, rules_from, team_name

TEXT_VERSION = 2


@lru_cache(maxsize=64)
def _rules_dict(rules: Rules) -> dict[str, Any]:
    return rules.to_dict()


def _cards(cards: list[int]) -> list[str]:
    """Cards sorted as a player holds them: spades first, high cards first."""
    return [card_name(c) for c in sorted(cards, key=lambda c: (CARD_SUIT[c], -CARD_RANK[c]))]


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
                    "plays": [[names[k], card_name(int(table[k]))] for k in order],
                    "winner": names[winner],
                }
            )
            leader = winner
    current = [
        [names[k], card_name(int(view.trick[row, k]))]
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
        "scores": {team_name(rules, t): int(view.scores[row, t]) for t in range(rules.num_teams)},
        "bags": {team_name(rules, t): int(view.bags[row, t]) for t in range(rules.num_teams)},
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
        out["looking_at"] = card_name(look) if look >= 0 else None
        out["seen"] = _cards(mask_to_cards(int(view.seen[row])))
        out["stock_left"] = int(stock_left)
    acting = int(view.to_act[row]) == s and phase != DONE
    legal = int(view.legal[row])
    base = int(PHASE_BASE[phase])
    out["legal_actions"] = (
        [phase_action_name(base + i, phase) for i in range(64) if legal >> i & 1] if acting else []
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


# ----------------------------------------------------------------------------- back to the encoding
def json_to_obs(view: dict[str, Any]) -> npt.NDArray[np.int16]:
    """The engine's int16 encoding (`observation.encode`) of the seat `view` describes,
    built from the view alone: the view is the whole of what the encoding holds."""
    rules = rules_from(tuple(view["rules"].items()))
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
            out[base + card_index(c)] = 1

    def one_hot(block: str, index: int | None, row: int = 0, width: int = 0) -> None:
        if index is not None and index >= 0:
            out[sl[block].start + row * width + index] = 1

    card_block("hand", view["hand"] or [])
    for number, trick in enumerate(view["tricks"], 1):
        for who, c in trick["plays"]:
            card_block("played_by", [c], rel(who))
            out[sl["played_trick"].start + card_index(c)] = number
    for who, c in view["current_trick"]:
        card_block("played_by", [c], rel(who))
        card_block("table", [c], rel(who))
        out[sl["played_trick"].start + card_index(c)] = len(view["tricks"]) + 1
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
        one_hot("lead_suit", int(CARD_SUIT[card_index(view["current_trick"][0][1])]))
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
