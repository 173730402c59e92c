"""How the text views name things: cards in the views' notation and back, seats' teams,
the rules of a view, and actions as the prompt names them (``play Q♥``, ``bid 4``)."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    DRAW_DISCARD,
    DRAW_KEEP,
    NAME_TRUMP,
    NUM_CARDS,
    SEE_HAND,
    SUIT_NAMES,
    card_to_str,
    str_to_card,
)
from spades_env.engine import seat_name
from spades_env.rules import Rules
from spades_env.state import EXCHANGE

#: card text -> card, for every spelling the views write (``QH``, ``Q♥``, ``10♥``)
_CARD_INDEX: dict[str, int] = {}
for _c in range(NUM_CARDS):
    for _u in (False, True):
        _CARD_INDEX[card_to_str(_c, unicode=_u)] = _c
        _CARD_INDEX[card_to_str(_c, unicode=_u).replace("T", "10", 1)] = _c


def card_index(text: str) -> int:
    """A card of the views' notation -> its index (any other spelling: `str_to_card`)."""
    found = _CARD_INDEX.get(text)
    return str_to_card(text) if found is None else found


def card_name(c: int) -> str:
    """A card in the JSON view's notation (``QH``, ``TD``)."""
    return card_to_str(c)


@lru_cache(maxsize=64)
def rules_from(items: tuple[tuple[str, Any], ...]) -> Rules:
    """The `Rules` of a view's ``rules`` items (cached)."""
    return Rules.from_dict(dict(items))


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


def phase_action_name(action: int, phase: int) -> str:
    """`action_name` in `phase`: a card in the exchange is ``pass Q♥``."""
    name = action_name(action)
    return "pass" + name[len("play") :] if phase == EXCHANGE and action < NUM_CARDS else name


def team_name(rules: Rules, team: int) -> str:
    """A team by its seats: ``North-South``."""
    seats = [s for s in range(rules.num_players) if rules.team_of(s) == team]
    return "-".join(seat_name(s) for s in seats)
