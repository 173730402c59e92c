"""Helpers shared by the engine tests: hand-built deals and deterministic play.

Nothing here re-implements a rule; the helpers only build inputs and drive `step`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from spades_env.cards import (
    BID_BASE,
    SEE_HAND,
    mask_to_cards,
    str_to_action,
    str_to_card,
)
from spades_env.engine import PHASE_BASE, StepInfo, step
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.state import BID, BLIND, DONE, State, init

Action = int | str
Chooser = Callable[[State], npt.NDArray[np.int64]]

#: Each seat holds one whole suit: North spades, East hearts, South diamonds, West clubs.
#: Whoever leads, North wins all 13 tricks (spades are trump and nobody else holds one).
ALL_TO_NORTH = [
    "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S",
    "AH KH QH JH TH 9H 8H 7H 6H 5H 4H 3H 2H",
    "AD KD QD JD TD 9D 8D 7D 6D 5D 4D 3D 2D",
    "AC KC QC JC TC 9C 8C 7C 6C 5C 4C 3C 2C",
]


def cards(text: str) -> list[int]:
    return [str_to_card(c) for c in text.split()]


def deal_array(hands: Sequence[str]) -> npt.NDArray[np.int64]:
    """(1, 4, 13) card indices from four strings of 13 cards each."""
    return np.array([[cards(h) for h in hands]], dtype=np.int64)


def fill_deal(fixed: dict[int, str], voids: dict[int, str] | None = None) -> npt.NDArray[np.int64]:
    """A full deal holding `fixed` cards per seat, the other cards spread so that a seat
    listed in `voids` (e.g. {1: "H"}) gets no card of those suits."""
    voids = voids or {}
    hands: list[list[int]] = [cards(fixed.get(s, "")) for s in range(4)]
    used = {c for h in hands for c in h}
    rest = [c for c in range(52) if c not in used]
    # Constrained suits first, so a seat with room is always found.
    void_suits = {"SHDC".index(x) for v in voids.values() for x in v}
    rest.sort(key=lambda c: (c // 13 not in void_suits, c))
    for c in rest:
        suit = "SHDC"[c // 13]
        seat = next(s for s in range(4) if len(hands[s]) < 13 and suit not in voids.get(s, ""))
        hands[seat].append(c)
    return np.array([hands], dtype=np.int64)


def start(
    rules: Rules | None = None,
    hands: Sequence[str] | npt.NDArray[np.int64] | None = None,
    dealer: int = 3,
    scores: Sequence[int] = (0, 0),
    bags: Sequence[int] = (0, 0),
    seed: int = 12345,
) -> State:
    """One game from a hand-built deal (dealer 3 makes North bid and lead first)."""
    rules = rules or Rules()
    deals = None
    if hands is not None:
        deals = hands if isinstance(hands, np.ndarray) else deal_array(hands)
    return init(
        rules,
        1,
        seeds=np.array([seed], dtype=np.uint64),
        deals=deals,
        dealer=dealer,
        scores=np.array([scores]),
        bags=np.array([bags]),
    )


def act(state: State, action: Action, **kwargs) -> StepInfo:
    a = str_to_action(action) if isinstance(action, str) else int(action)
    return step(state, [a], **kwargs)


def lowest_legal(state: State, bid: int = 1) -> npt.NDArray[np.int64]:
    """A deterministic chooser: see the hand, bid `bid`, play/pass the lowest legal card."""
    legal = state.legal
    low = np.zeros(state.batch_size, dtype=np.int64)
    has = legal != 0
    lowbit = legal[has] & (~legal[has] + np.uint64(1))
    low[has] = np.bitwise_count(lowbit - np.uint64(1))
    acts = PHASE_BASE[state.phase] + low
    acts = np.where(state.phase == BLIND, SEE_HAND, acts)
    return np.where(state.phase == BID, BID_BASE + bid, acts)


def play_out(
    state: State,
    forced: Sequence[Action] = (),
    chooser: Chooser = lowest_legal,
    hands: int = 1,
) -> list[dict]:
    """Play `forced` actions (game 0), then `chooser`, until `hands` hands finish or the
    game ends; return the records of the finished hands."""
    records: list[dict] = []
    for a in forced:
        info = act(state, a)
        if info.finished is not None:
            records += hand_records(state.rules, info.finished)
    while len(records) < hands and state.phase[0] != DONE:
        info = step(state, chooser(state))
        if info.finished is not None:
            records += hand_records(state.rules, info.finished)
    return records


def bid_all(state: State, *bids: int | str) -> None:
    """Bid in turn from left of the dealer (game 0): ints, 'nil' or 'blind nil'. A seat
    offered blind nil that bids otherwise first looks at its hand ('see hand')."""
    for b in bids:
        if b != "blind nil" and state.phase[0] == BLIND:
            act(state, "see hand")
        act(state, "nil" if b == 0 else str(b))


def hand_cards(state: State, seat: int, game: int = 0) -> list[int]:
    """Cards a seat holds now (unplayed)."""
    return mask_to_cards(int(state.hands[game, seat]) & ~int(state.played[game]))


def snapshot(state: State) -> dict[str, np.ndarray]:
    """Copies of every array of a state, for comparing before and after."""
    return {
        f.name: np.array(getattr(state, f.name), copy=True)
        for f in dataclasses.fields(state)
        if f.name != "rules"
    }


def assert_same_state(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_array_equal(a[name], b[name], err_msg=name)
