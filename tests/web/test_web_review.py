"""The review after a hand judges by the Spades score: a hand-built deal where South bids
nil and can duck every trick, so the card that wins a trick under nil costs points but no
trick, and the opponents' cards that only let South's nil be broken are not blamed; the
review says its objective and marks each seat's first costly card."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.web.review import OBJECTIVE, review_hand
from spades_env.cards import action_to_str, str_to_action, str_to_card
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import init

# South holds the lowest cards of every suit it holds and no club: after a club lead it
# can always discard, so its nil is safe unless it trumps with the 2♠ and wins.
DEAL = {
    0: "2C 4C 8C 9C TD JD QD KD AD 3S 4S 5S 6S",  # North
    1: "TC JC QC KC AC 7S 8S 9S TS JS QS KS AS",  # East
    2: "2S 2H 3H 4H 5H 2D 3D 4D 5D 6D 7D 8D 9D",  # South, nil
    3: "3C 5C 6C 7C 6H 7H 8H 9H TH JH QH KH AH",  # West, leads
}
BIDS = {3: "3", 0: "4", 1: "5", 2: "nil"}  # West bids first (South deals)


def _record(south_wins: bool) -> dict:
    """The hand played: West leads 3♣, North 4♣, East T♣, South trumps with the 2♠ (wins:
    the nil broken) or discards the 2♥; every later card the first legal one."""
    rules = Rules.preset("standard")
    deal = np.array([[[str_to_card(c) for c in DEAL[s].split()] for s in range(4)]])
    state = init(rules, 1, seeds=np.array([7], dtype=np.uint64), deals=deal, dealer=2)
    game = SingleGame.from_state(state)
    script = ["3C", "4C", "TC", "2S" if south_wins else "2H"]
    while True:
        legal = game.legal_list()
        names = [action_to_str(a) for a in legal]
        if "see hand" in names:  # not blind: look at the hand
            pick = str_to_action("see hand")
        elif "nil" in names:  # the bidding
            pick = str_to_action(BIDS[game.to_act])
        elif script:
            pick = str_to_action(script.pop(0))
            assert pick in legal
        else:
            pick = legal[0]
        info = game.step(pick)
        if info.finished is not None:
            return hand_records(rules, info.finished)[0]


@pytest.fixture(scope="module")
def reviews() -> dict[bool, dict]:
    return {wins: review_hand(_record(wins), score_tricks=13) for wins in (True, False)}


def _card(review: dict, seat: int, label: str) -> dict:
    return next(c for c in review["cards"] if c["seat"] == seat and c["card"] == label)


def test_the_nil_bidder_winning_a_trick_costs_points_not_tricks(reviews):
    broke = reviews[True]
    q = _card(broke, 2, "2♠")
    assert q["cost"] >= 100  # a kept nil is +100, a broken one -100
    assert q["cost_tricks"] == 0  # in tricks the 2♠ gains one
    assert "2♥" in q["best"]
    assert broke["first_costly"]["2"] == broke["cards"].index(q)
    assert broke["objective"]["name"] == OBJECTIVE["name"]
    assert "nil" in broke["objective"]["text"]


def test_ducking_under_nil_costs_nothing(reviews):
    ducked = reviews[False]
    duck = _card(ducked, 2, "2♥")
    assert duck["cost"] == 0 and duck["trick"] == 1
    assert ducked["first_costly"].get("2", 99) > ducked["cards"].index(duck)


def test_costs_are_never_negative_and_a_best_card_costs_nothing(reviews):
    for review in reviews.values():
        for c in review["cards"]:
            assert c["cost"] >= 0 and c["cost_tricks"] >= 0
            if c["card"] in c["best"]:
                assert c["cost"] == 0


def test_early_cards_are_judged_in_tricks_only_by_default():
    review = review_hand(_record(False))
    early = [c for c in review["cards"] if c["trick"] <= 13 - review["objective"]["score_tricks"]]
    late = [c for c in review["cards"] if c not in early]
    # an early card is not judged in points, unless it had no real choice (costs 0)
    assert early and all(c["cost"] in (None, 0) for c in early)
    assert any(c["cost"] is None for c in early)
    assert late and all(c["cost"] is not None for c in late)
    assert "last 9 tricks" in review["objective"]["text"]
