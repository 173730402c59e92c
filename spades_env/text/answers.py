"""The answer reader: a free-form answer (``bid 4``, ``Q♥``, ``Final answer: play QH``) ->
the legal action it names (`parse_answer` of a game, `parse_view_answer` of an agent's
`SeatView`), or `AnswerError` saying why not. The module doc of `spades_env.text` lists
what it reads."""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    DRAW_DISCARD,
    DRAW_KEEP,
    MAX_BID,
    NAME_TRUMP,
    RANK_CHARS,
    SEE_HAND,
    SUIT_CHARS,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    card_to_str,
    str_to_card,
)
from spades_env.engine import PHASE_BASE, explain_illegal, legal_actions
from spades_env.observation import SeatView
from spades_env.state import EXCHANGE, PLAY, State, init, one_index
from spades_env.text.names import phase_action_name


class AnswerError(ValueError):
    """An answer that names no legal action. `kind` is ``"not understood"`` or
    ``"illegal"``; the message says why (for an illegal action, the RULES.md rule)."""

    def __init__(self, kind: str, message: str) -> None:
        super().__init__(message)
        self.kind = kind


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
    shown = "; ".join(phase_action_name(a, phase) for a in legal)
    raise AnswerError(
        "illegal", f"{phase_action_name(action, phase)} is not legal: {reason}. Legal: {shown}"
    )
