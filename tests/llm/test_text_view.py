"""The game as text (spades_env/text/): complete, seat-private, and read back exactly.

On every decision of random hands of every preset (and the open-hands and exchange
options), for every seat: the JSON view turned back into the encoding equals the engine's
own observation of that seat, the English text parses back to the same JSON, and nothing
in either names a card the seat cannot see.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from spades_env.cards import BID_BASE, BLIND_NIL, card_to_str, mask_to_cards
from spades_env.engine import legal_actions, step, step_random
from spades_env.observation import encode, hand_hidden, seat_view
from spades_env.rules import PRESETS, Rules
from spades_env.state import DONE, PLAY, init
from spades_env.text import (
    AnswerError,
    json_to_obs,
    obs_extras,
    parse_answer,
    parse_text,
    seat_json,
    view_json,
    view_text,
)

#: every preset, plus the options that change what a seat sees
CONFIGS = [(name, {}) for name in PRESETS] + [
    ("standard", {"open_hands": True, "blind_nil": "never"}),
    ("standard", {"blind_nil": "always", "blind_nil_exchange": True}),
]


def _rules(name: str, options: dict) -> Rules:
    return Rules.preset(name, **options)


def _visible_cards(state, g: int, seat: int) -> set[int]:
    """Every card `seat` may know the place of: its own hand (unless hidden), the cards
    played, its exchange cards, the open hands, its own draw cards."""
    rules = state.rules
    p = rules.num_players
    out = set(mask_to_cards(int(state.played[g])))
    if not hand_hidden(state, np.full(state.batch_size, seat))[g]:
        out |= set(mask_to_cards(int(state.hands[g, seat])))
    out |= set(mask_to_cards(int(state.passing[g, seat])))
    if state.phase[g] >= PLAY:
        out |= set(mask_to_cards(int(state.passing[g, (seat + p // 2) % p])))
    if rules.open_hands:
        out |= {c for k in range(p) for c in mask_to_cards(int(state.hands[g, k]))}
    if rules.draw:
        out |= set(mask_to_cards(int(state.seen[g, seat])))
        pos = int(state.stock_pos[g])
        if state.to_act[g] == seat and pos < 54 and state.stock[g, pos] >= 0:
            out.add(int(state.stock[g, pos]))
    return out


def _plays(view: dict) -> list[str]:
    return [c for t in view["tricks"] for _, c in t["plays"]] + [
        c for _, c in view["current_trick"]
    ]


def _history_plays(state, g: int) -> list[str]:
    """The card play in the engine's own order: the hand's last actions (history)."""
    n = int(state.played[g]).bit_count()
    hist = [h & 0x7F for h in state.history[g, : int(state.history_len[g])].tolist()]
    return [card_to_str(a) for a in hist[len(hist) - n :]] if n else []


def check_decisions(name: str, options: dict, games: int, seed: int, max_steps: int) -> int:
    """Play random games; check every seat at every decision. Returns the checks made."""
    rules = _rules(name, options)
    state = init(rules, games, np.random.default_rng(seed))
    rng = np.random.default_rng(seed + 1)
    checks = 0
    for _ in range(max_steps):
        obs = {s: encode(state, np.full(games, s)) for s in range(rules.num_players)}
        for g in range(games):
            if state.phase[g] == DONE:
                continue
            for s in range(rules.num_players):
                view = seat_json(state, g, s)
                assert json.loads(json.dumps(view)) == view  # JSON-ready
                assert _plays(view) == _history_plays(state, g)  # the order of play
                agent_view = seat_view(state, np.full(games, s))
                extras = obs_extras(agent_view, obs[s], g)
                assert view_json(agent_view, g, **extras) == view  # an agent's path
                np.testing.assert_array_equal(json_to_obs(view), obs[s][g])
                text = view_text(view)
                assert parse_text(text) == view
                hidden = set(range(54)) - _visible_cards(state, g, s)
                names = {card_to_str(c) for c in hidden}
                shown = json.dumps(view)
                assert not any(f'"{c}"' in shown for c in names), (name, g, s)
                ushown = {card_to_str(c, unicode=True) for c in hidden}
                assert not any(f" {c}" in text or f" {c}." in text for c in ushown)
                if s == state.to_act[g]:  # every legal action's name reads back as it
                    legal = legal_actions(state, g)
                    for name, action in zip(view["legal_actions"], legal, strict=True):
                        assert parse_answer(f"Final answer: {name}", state, g) == action
                checks += 1
        if (state.phase == DONE).all():
            break
        step_random(state, rng)
    return checks


@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}{o}" for n, o in CONFIGS])
def test_round_trip_every_decision(name, options):
    assert check_decisions(name, options, games=1, seed=11, max_steps=70) > 60


@pytest.mark.slow
@pytest.mark.parametrize(("name", "options"), CONFIGS, ids=[f"{n}{o}" for n, o in CONFIGS])
def test_round_trip_many_hands(name, options):
    assert check_decisions(name, options, games=8, seed=5, max_steps=300) > 2000


def _at_play() -> object:
    """A standard game at the first card play (everyone bid 3)."""
    state = init(Rules(), 1, seeds=np.array([3], dtype=np.uint64))
    while state.phase[0] != PLAY:
        legal = legal_actions(state, 0)
        step(state, np.array([BID_BASE + 3 if BID_BASE + 3 in legal else legal[0]]))
    return state


def test_parse_answer_forms():
    state = _at_play()
    legal = legal_actions(state, 0)
    card = legal[0]
    from spades_env.cards import CARD_RANK, CARD_SUIT, RANK_CHARS, SUIT_NAMES, SUIT_SYMBOLS

    rank, suit = RANK_CHARS[CARD_RANK[card]], int(CARD_SUIT[card])
    words = {"T": "ten", "J": "jack", "Q": "queen", "K": "king", "A": "ace"}
    forms = [
        f"play {rank}{'SHDC'[suit]}",
        f"{rank.lower()}{SUIT_SYMBOLS[suit]}",
        f"I think the best is {words.get(rank, rank)} of {SUIT_NAMES[suit]}.",
        f"Reasoning... Final answer: **{rank}{SUIT_SYMBOLS[suit]}**",
        f"<answer>PLAY {rank}{'shdc'[suit]}</answer>",
    ]
    if rank == "T":
        forms.append(f"play 10{SUIT_SYMBOLS[suit]}")
    for form in forms:
        assert parse_answer(form, state) == card, form


def test_parse_answer_refusals_say_why():
    state = _at_play()
    legal = set(legal_actions(state, 0))
    hand = mask_to_cards(int(state.hands[0, int(state.to_act[0])]))
    with pytest.raises(AnswerError) as err:
        parse_answer("I am not sure what to do", state)
    assert err.value.kind == "not understood"
    with pytest.raises(AnswerError) as err:
        parse_answer("bid 4", state)
    assert err.value.kind == "illegal" and "a card is expected" in str(err.value)
    not_held = next(c for c in range(52) if c not in hand)
    with pytest.raises(AnswerError) as err:
        parse_answer(f"play {card_to_str(not_held)}", state)
    assert err.value.kind == "illegal" and "not in the seat's hand" in str(err.value)
    held_illegal = [c for c in hand if c not in legal]
    if held_illegal:
        with pytest.raises(AnswerError) as err:
            parse_answer(card_to_str(held_illegal[0]), state)
        assert "RULES.md §3" in str(err.value)


def test_parse_answer_bids():
    state = init(Rules(), 1, seeds=np.array([3], dtype=np.uint64))
    assert parse_answer("I'll bid 4.", state) == BID_BASE + 4
    assert parse_answer("Final answer: NIL", state) == BID_BASE
    assert parse_answer("four", state) == BID_BASE + 4
    assert BLIND_NIL not in legal_actions(state, 0)  # 0-0: blind nil only 100 behind
    with pytest.raises(AnswerError) as err:
        parse_answer("blind nil", state)
    assert err.value.kind == "illegal" and "RULES.md §2" in str(err.value)
