"""The answer reader: a free-form answer (``bid 4``, ``Q♥``, ``Final answer: play QH``) ->
the legal action it names (`parse_answer` of a game, `parse_view_answer` of an agent's
`SeatView`), or `AnswerError` saying why not. The module doc of `spades_env.text` lists
what it reads."""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Iterable
from typing import Any

import numpy as np

from spades_env.cards import MAX_BID, mask_to_cards
from spades_env.engine import PHASE_BASE, explain_illegal, legal_actions
from spades_env.observation import SeatView
from spades_env.state import EXCHANGE, PLAY, State, init, one_index
from spades_env.text.names import phase_action_name
from spades_env.text.reading import AMBIGUOUS, INVALID, commitment


class AnswerError(ValueError):
    """An answer that names no legal action. `kind` is ``"not understood"`` or
    ``"illegal"``; the message says why (for an illegal action, the RULES.md rule, then
    the legal actions); `reason` is the message without the legal actions."""

    def __init__(self, kind: str, message: str, reason: str | None = None) -> None:
        super().__init__(message)
        self.kind = kind
        self.reason = message if reason is None else reason


#: a labelled final answer: "Final answer:", "Answer:", "Action:", their translations,
#: a JSON "action" field; a label other than "final answer" only at a line's start or
#: quoted, so that prose ("the answer: maybe") is no tag
_LABEL = re.compile(
    r"(?P<final>final\s+answer|slutligt\s+svar|endgültige\s+antwort|respuesta\s+final"
    r"|réponse\s+finale)\b[\s*_`\"']{0,6}(?:[:=]|\bis\b|-\s|(?=\n))"
    r"|(?:^|\n)[\s*_#>`-]{0,6}(?:my\s+)?(?:answer|action|decision|svar|antwort|respuesta"
    r"|réponse|reponse|entscheidung|beslut|decisión|décision)\b[\s*_`]{0,6}[:=]"
    r"|\"action\"\s*:",
    re.IGNORECASE,
)
_BRACKET = re.compile(r"\[([^\[\]\n]{1,300})\]")
_MARKUP = re.compile(r"</?answer>|\\(?:text|mathrm|textbf)\{|[{}*`\"_#]")
_QUOTES = str.maketrans(
    {"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\ufe0f": None}
)
_ALT_SUITS = str.maketrans("♤♡♢♧", "♠♥♦♣")
#: the longest final answer (characters) and the longest answer without one that are
#: read: past them, an answer is not understood (the reading stays fast and certain)
MAX_TAG = 500
MAX_UNTAGGED = 20_000


def final_tag(answer: str) -> str | None:
    """The content of the answer's last final-answer tag (``Final answer: X``,
    ``<answer>X</answer>``, ``\\boxed{X}``, a JSON ``"action": X``, a label such as
    ``Answer: X`` at a line's start; TextArena's ``[X]`` only where none of these is
    present), markup removed, or None without one. Linear in the answer's length."""
    found: list[tuple[int, str]] = []  # (where the tag starts, its content)
    low = answer.lower()
    close = low.rfind("</answer>")
    opened = low.rfind("<answer>", 0, close if close >= 0 else len(low))
    if opened >= 0:
        end = close if close > opened else _line_end(answer, opened + 8)
        found.append((opened, answer[opened + 8 : end]))
    boxed = low.rfind("\\boxed{")
    if boxed >= 0:
        found.append((boxed, _braced(answer, boxed + 7)))
    label = _last(_LABEL, answer)
    if label is not None:
        rest = answer[label.end() :]
        line = rest[: _line_end(rest, 0)]
        if not _MARKUP.sub("", line).strip(" :=-\t"):  # the answer on the next line
            nxt = rest[len(line) :].lstrip("\n")
            line = nxt[: _line_end(nxt, 0)]
        found.append((label.start(), line))
    if not found:
        bracket = _last(_BRACKET, answer)
        if bracket is None:
            return None
        found.append((bracket.start(), bracket[1]))
    return " ".join(_MARKUP.sub(" ", max(found)[1]).split())


def _last(pattern: re.Pattern[str], text: str) -> re.Match[str] | None:
    """The last match of `pattern` in `text` (one linear scan)."""
    last = deque(pattern.finditer(text), maxlen=1)
    return last[0] if last else None


def _line_end(text: str, start: int) -> int:
    end = text.find("\n", start)
    return len(text) if end < 0 else end


def _braced(text: str, start: int) -> str:
    """The text inside the braces opened just before `start` (nested braces kept), at most
    300 characters."""
    depth = 1
    for i in range(start, min(len(text), start + 300)):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        if depth == 0:
            return text[start:i]
    return text[start : start + 300]


def _understood(answer: str, phase: int, held: set[int] | None, strict: bool) -> int:
    """The action an answer commits to in `phase`, or AnswerError (not understood; a bid
    past the largest: illegal)."""
    text = answer.translate(_QUOTES).translate(_ALT_SUITS)
    tag = final_tag(text)
    if tag is None and strict:
        raise AnswerError(
            "not understood", "no final answer; end with a line 'Final answer: ACTION'"
        )
    reading = text if tag is None else tag
    if len(reading) > (MAX_TAG if tag is not None else MAX_UNTAGGED):
        where = "its final answer" if tag is not None else "an answer without a final answer"
        raise AnswerError(
            "not understood",
            f"{where} is too long to read with certainty; end with a short line "
            "'Final answer: ACTION'",
        )
    action = commitment(reading, phase, tag is not None, held)
    if isinstance(action, int):
        return action
    if isinstance(action, tuple):
        raise AnswerError(
            "illegal", f"bid {action[1]} is not legal: no hand has more than {MAX_BID} tricks"
        )
    example = "'play Q♥'" if phase in (PLAY, EXCHANGE) else "'bid 4'"
    why = {
        None: "the answer names no action",
        AMBIGUOUS: "the answer leaves more than one action open",
        INVALID: "the answer's number is no bid (a whole number of tricks)",
    }[action]
    where = "its final answer" if tag is not None else "the answer"
    raise AnswerError(
        "not understood",
        f"{why.replace('the answer', where, 1)}; answer with exactly one of the legal "
        f"actions, e.g. {example}",
    )


def read_answer(
    answer: str, phase: int, held: Iterable[int] | None = None, *, strict: bool = False
) -> int:
    """The action `answer` commits to in `phase` (a `spades_env.state` phase), legal or
    not: the reader without the rules' check. `held`: the cards the seat holds (a card
    only thought of, not held, is no candidate), or None. Raises `AnswerError`
    (``"not understood"``; ``"illegal"`` for a bid past any hand's tricks)."""
    return _understood(answer, phase, None if held is None else set(held), strict)


def parse_answer(answer: str, state: State, game: int = 0, *, strict: bool = False) -> int:
    """The legal action `answer` names for the seat to act in game `game` of `state`.

    Raises `AnswerError`: ``kind="not understood"`` (no action, several, or any doubt)
    or ``kind="illegal"`` with the engine's reason and the RULES.md rule
    (`engine.explain_illegal`). `strict` reads only a final-answer tag (`final_tag`)."""
    g = one_index(game, state.batch_size, "game")
    phase = int(state.phase[g])
    held = set(mask_to_cards(int(state.hands[g, int(state.to_act[g])]) & ~int(state.played[g])))
    return _checked(
        answer, phase, legal_actions(state, g), lambda a: explain_illegal(state, g, a),
        held, strict,
    )  # fmt: skip


def parse_view_answer(answer: str, view: SeatView, row: int = 0, *, strict: bool = False) -> int:
    """`parse_answer` for the seat of row `row` of an agent's `SeatView`: the reason an
    action is illegal is the engine's, from a game that holds only what the seat knows."""
    phase = int(view.phase[row])
    legal, base = int(view.legal[row]), int(PHASE_BASE[phase])
    actions = [base + i for i in range(64) if legal >> i & 1]
    held = None if view.hand_hidden[row] else set(mask_to_cards(int(view.hand[row])))
    return _checked(
        answer, phase, actions, lambda a: explain_illegal(_known_state(view, row), 0, a),
        held, strict,
    )  # fmt: skip


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


def _checked(
    answer: str,
    phase: int,
    legal: list[int],
    explain: Any,
    held: set[int] | None,
    strict: bool,
) -> int:
    action = _understood(answer, phase, held, strict)
    if action in legal:
        return action
    reason = explain(action)
    shown = "; ".join(phase_action_name(a, phase) for a in legal)
    why = f"{phase_action_name(action, phase)} is not legal: {reason}"
    raise AnswerError("illegal", f"{why}. Legal: {shown}", why)
