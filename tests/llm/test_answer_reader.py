"""The answer reader (spades_env/text/answers.py, reading.py) never reads an answer as an
action it does not mean.

- the labelled corpus (tests/data/answer_corpus.jsonl, every phase and the variants, in
  the styles models answer in): its confusion table is printed, 0 answers are read as a
  different action than meant, and few that commit to one action are not understood;
- the misreadings found in the `llm:` agent's first version, each a family of cases, on
  real games (`parse_answer`), with the kind of refusal (not understood, never illegal);
- the final-answer tags: the last decides alone, in every form; `strict` reads only it;
- hostile answers: any text at all raises nothing but `AnswerError` (hypothesis), a
  5,000-digit number is not understood, and many tags are read in one pass.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spades_env.cards import BID_BASE, BLIND_NIL, SEE_HAND, str_to_card
from spades_env.engine import legal_actions, step
from spades_env.rules import Rules
from spades_env.state import BID, BLIND, DRAW, EXCHANGE, PHASE_NAMES, PLAY, TRUMP, init
from spades_env.text import AnswerError, final_tag, parse_answer, read_answer
from spades_env.text.names import phase_action_name

CORPUS = Path(__file__).parents[1] / "data" / "answer_corpus.jsonl"
NU = "not understood"
_CORPUS_TEXTS = [
    json.loads(line)["text"] for line in CORPUS.read_text(encoding="utf-8").splitlines()
]


def _reading(text: str, phase: int, held=None, strict: bool = False) -> str:
    try:
        return phase_action_name(read_answer(text, phase, held, strict=strict), phase)
    except AnswerError as exc:
        return NU if exc.kind == NU else f"illegal: {exc}"


# ----------------------------------------------------------------------------- the corpus
def test_corpus_confusion_table():
    records = [json.loads(line) for line in CORPUS.read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 500
    table: dict[str, Counter] = defaultdict(Counter)
    wrong = []
    for r in records:
        phase = PHASE_NAMES.index(r["phase"])
        held = None if r["held"] is None else [str_to_card(c) for c in r["held"]]
        got = _reading(r["text"], phase, held)
        meant = r["meaning"]
        if got == meant:
            outcome = "right"
        elif got == NU:
            outcome = "not understood"
        else:
            outcome = "wrong"
            wrong.append((r["id"], r["text"], meant, got))
        key = "committing" if meant != NU else "meaning nothing"
        table[r["phase"]][outcome] += 1
        table[key][outcome] += 1
    print("\nanswer reader on the corpus (right / not understood / wrong):")
    for phase, counts in table.items():
        print(
            f"  {phase:<16} {counts['right']:>4} {counts['not understood']:>4} {counts['wrong']:>3}"
        )
    assert not wrong, wrong
    assert {r["phase"] for r in records} == {"bid", "blind", "play", "exchange", "draw", "trump"}
    committing = table["committing"]
    share = committing["not understood"] / sum(committing.values())
    print(f"  not understood among answers that commit to one action: {share:.1%}")
    assert share < 0.10


# ----------------------------------------------------------------------------- games
def _bidding(seed: int = 3):
    return init(Rules(), 1, seeds=np.array([seed], dtype=np.uint64))


def _playing(seed: int = 3):
    state = _bidding(seed)
    while state.phase[0] != PLAY:
        legal = legal_actions(state, 0)
        step(state, np.array([BID_BASE + 3 if BID_BASE + 3 in legal else legal[0]]))
    return state


def _outcome(answer: str, state) -> str:
    try:
        action = parse_answer(answer, state)
    except AnswerError as exc:
        return exc.kind
    return phase_action_name(action, int(state.phase[0]))


@pytest.mark.parametrize(
    ("answer", "meant"),
    [
        ("I will not bid nil. I bid 2.", "bid 2"),
        ("No nil for me; bid 5.", "bid 5"),
        ("Final answer: bid 3 (not nil)", "bid 3"),
        ("Nil is too risky here, so I'll bid 3.", "bid 3"),
        ("Never nil with two aces: bid 4.", "bid 4"),
        ("Nil would be a mistake. Bid 2.", "bid 2"),
        ("I'd bid 3 rather than nil.", "bid 3"),
        ("Instead of nil, I bid 1.", "bid 1"),
        ("I don't want to go nil, I'll bid 3.", "bid 3"),
        ("Final answer: bid 3 … Final answer: bid 4", "bid 4"),
        ("<answer>bid 2</answer> and then <answer>bid 5</answer>", "bid 5"),
        ("Final answer: nil\nFinal answer: bid 6", "bid 6"),
        ("I'll bid 4 since partner bid 3.", "bid 4"),
        ("four", "bid 4"),
        ("Final answer: NIL", "nil"),
        ("Going nil would be insane with the A♠, so 3.", "bid 3"),
        ("I was going to bid nil but I'll bid 3 instead.", "bid 3"),
    ],
)
def test_bids_mean_what_they_say(answer, meant):
    assert _outcome(answer, _bidding()) == meant


@pytest.mark.parametrize(
    "answer",
    [
        "No blind nil.",
        "No nil.",
        "I'll pass on this one.",
        "I pass.",
        "As an AI, I find card games fascinating!",
        "bid -1",
        "bid -3",
        "bid 3.5",
        "bid 2,5",
        "Bid 3 or 4",
        "Play JD or TD",
        "nil or 2",
        "Final answer: bid 3 or bid 4",
        "Final answer: maybe",
        "I'll bid " + "7" * 5000,
        "7" * 5000,
        "I'm torn between nil and 2.",
        "Should I bid nil?",
        "Nil: no.",
        "Nil, not a chance.",
        "Nil? Never.",
        "I'd go nil, but my spades are too strong.",
        "Final answer: not nil",
    ],
)
def test_doubtful_bids_are_not_understood_never_illegal(answer):
    assert _outcome(answer, _bidding()) == NU


@pytest.mark.parametrize(
    "answer",
    [
        "As expected, partner is winning, so I'll play low.",
        "As an AI, I find card games fascinating!",
        "Ah, the classic dilemma.",
        "Js are the worst.",
        "play as low as possible",
        "Play JD or TD",
        "Play low.",
        "I'd rather not play the T♣",
        "Either the 3♥ or the A♥.",
        "Play anything but the A♥.",
    ],
)
def test_prose_is_never_a_card(answer):
    assert _outcome(answer, _playing()) == NU


def test_a_card_not_held_is_illegal_only_when_committed_to():
    state = _playing()
    seat = int(state.to_act[0])
    hand = int(state.hands[0, seat])
    absent = next(c for c in range(52) if not hand >> c & 1)
    held = next(c for c in legal_actions(state, 0))
    name, other = (phase_action_name(a, PLAY)[5:] for a in (absent, held))
    assert _outcome(f"play {name}", state) == "illegal"
    assert _outcome(f"East has the {name}, so I'll play the {other}.", state) == f"play {other}"


def test_blind_phase_declining_is_seeing_the_hand():
    rules = Rules(blind_nil="always")
    state = init(rules, 1, seeds=np.array([1], dtype=np.uint64))
    assert int(state.phase[0]) == BLIND
    assert parse_answer("No blind nil.", state) == SEE_HAND
    assert parse_answer("I won't risk a blind nil.", state) == SEE_HAND
    assert parse_answer("Final answer: blind nil", state) == BLIND_NIL
    assert _outcome("Blind nil or see hand?", state) == NU


# ----------------------------------------------------------------------------- tags
@pytest.mark.parametrize(
    ("answer", "tag"),
    [
        ("Final answer: bid 3", "bid 3"),
        ("**Final Answer:** bid 3", "bid 3"),
        ("final answer is 3", "3"),
        ("Final answer:\n\nbid 3", "bid 3"),
        ("<answer>bid 3</answer>", "bid 3"),
        ("<answer> nil", "nil"),
        ("\\boxed{\\text{bid 3}}", "bid 3"),
        ('{"reason": "x", "action": "bid 3"}', "bid 3"),
        ("Answer: bid 3", "bid 3"),
        ("[bid 3]", "bid 3"),
        ("Final answer: bid 2 then <answer>bid 3</answer>", "bid 3"),
        ("<answer>bid 2</answer> Final answer: bid 3", "bid 3"),
        ("[bid 2] Final answer: bid 3", "bid 3"),
        ("The answer: maybe later", None),
        ("I bid 3", None),
    ],
)
def test_the_last_tag_is_found(answer, tag):
    assert final_tag(answer) == tag


def test_a_tag_decides_alone():
    # the words around a tag never win over it, nor fill in when it is unreadable
    assert _reading("I'll bid nil. Final answer: bid 3", BID) == "bid 3"
    assert _reading("I'll bid 4.\nFinal answer: hmm", BID) == NU
    assert _reading("Play the A♠! Final answer: 3", BID) == "bid 3"


@pytest.mark.parametrize("phase", [BID, PLAY])
def test_strict_reads_only_the_tag(phase):
    tagged = "Final answer: bid 3" if phase == BID else "Final answer: Q♥"
    bare = "I bid 3." if phase == BID else "I play Q♥."
    assert _reading(tagged, phase, strict=True) == _reading(tagged, phase)
    assert _reading(bare, phase) != NU
    assert _reading(bare, phase, strict=True) == NU


@pytest.mark.parametrize(
    ("phase", "answer", "meant"),
    [
        (EXCHANGE, "I'll pass the 2♣ to partner.", "pass 2♣"),
        (DRAW, "Don't keep this one; discard.", "discard"),
        (DRAW, "Keep.", "keep"),
        (TRUMP, "Not clubs: trump hearts.", "trump hearts"),
        (TRUMP, "Hearts or spades?", NU),
    ],
)
def test_every_phase_is_read(phase, answer, meant):
    held = [str_to_card(c) for c in ("2C", "AS", "QH")]
    assert _reading(answer, phase, held) == meant


# ----------------------------------------------------------------------------- hostile
@settings(max_examples=300, deadline=None)
@given(
    text=st.text(
        alphabet=st.sampled_from(list("bid nilplay0123456789-.,;:?!AKQJTSHDC♠♥♦♣<>/[]{}\\\"'\n"))
        | st.characters(),
        max_size=300,
    ),
    phase=st.sampled_from([BLIND, BID, EXCHANGE, PLAY, DRAW, TRUMP]),
    strict=st.booleans(),
)
def test_any_text_raises_nothing_but_answer_error(text, phase, strict):
    try:
        read_answer(text, phase, [0, 13, 26, 39], strict=strict)
    except AnswerError as exc:
        assert exc.kind in (NU, "illegal")


@pytest.mark.parametrize(
    "answer",
    [
        "<answer>" * 16000,
        "Final answer: " * 16000,
        "[" * 50000,
        "\\boxed{" * 16000,
        "9" * 100000,
        "nil " * 10000,  # past the longest answer read without a tag
        "Final answer: " + "bid 3 " * 200,  # past the longest final answer
    ],
)
def test_long_hostile_answers_are_read_in_one_pass(answer):
    # correctness only; the time is in `spades bench --only llm` (linear patterns)
    assert _reading(answer, BID) == NU


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=200) | st.sampled_from(_CORPUS_TEXTS))
def test_the_fast_scan_finds_the_tokens_of_the_full_pattern(text):
    from spades_env.text.reading import _TOKENS, _scan

    def tokens(found):
        return [(m.lastgroup, m.span()) for m in found if m.lastgroup != "space"]

    assert tokens(_scan(text)) == tokens(_TOKENS.finditer(text))


def test_a_long_reasoning_is_read_by_its_short_final_answer():
    reasoning = "Let me weigh nil, 2, 3 and 4 once more. " * 2000
    assert _reading(reasoning + "\nFinal answer: bid 3", BID) == "bid 3"
    assert _reading(reasoning + "\nSo I bid 3.", BID) == NU  # too long to read untagged
