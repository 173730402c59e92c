"""Seeds and hand records: the same seed gives the same games; records survive JSON and
`replay` reproduces each of them exactly."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from spades_env.engine import IllegalActionError, random_legal_actions, reset_done, step
from spades_env.records import ReplayError, hand_records, replay
from spades_env.render import render_record
from spades_env.rules import Rules
from spades_env.state import init


def random_records(rules: Rules, n_hands: int, seed: int, batch: int = 32) -> list[dict]:
    rng = np.random.default_rng(seed)
    state = init(rules, batch, rng)
    records: list[dict] = []
    while len(records) < n_hands:
        info = step(state, random_legal_actions(state.legal, state.phase, rng))
        if info.finished is not None:
            records += hand_records(rules, info.finished)
            reset_done(state, rng)
    return records


CONFIGS = [
    pytest.param(Rules(), id="standard"),
    pytest.param(Rules(blind_nil="always", blind_nil_exchange=True), id="blind-exchange"),
    pytest.param(Rules(first_lead="two_of_clubs", nil_tricks="count"), id="2c-count"),
    pytest.param(Rules(max_hands=2, lose_at=-150, bag_limit=3), id="max-hands-lose-at-bags3"),
]


@pytest.mark.parametrize("rules", CONFIGS)
def test_same_seed_gives_the_same_games(rules):
    assert random_records(rules, 60, seed=5) == random_records(rules, 60, seed=5)


def test_different_seeds_give_different_deals():
    a = random_records(Rules(), 32, seed=5)
    b = random_records(Rules(), 32, seed=6)
    assert [r["deal"] for r in a] != [r["deal"] for r in b]


def test_explicit_seeds_give_the_same_deals_and_first_dealer():
    seeds = np.array([3, 1, 4, 1, 5], dtype=np.uint64)
    a, b = init(Rules(), 5, seeds=seeds), init(Rules(), 5, seeds=seeds)
    assert (a.deal == b.deal).all() and (a.dealer == b.dealer).all()
    assert (a.deal[1] == a.deal[3]).all()  # equal seeds, equal games
    assert not (a.deal[0] == a.deal[1]).all()


@pytest.mark.parametrize("rules", CONFIGS)
def test_records_round_trip_through_json(rules):
    for record in random_records(rules, 60, seed=8):
        assert json.loads(json.dumps(record)) == record


@pytest.mark.parametrize("rules", CONFIGS)
def test_replay_reproduces_every_record_exactly(rules):
    records = random_records(rules, 80, seed=9)
    for record in records:
        assert replay(json.loads(json.dumps(record))) == record


def test_replay_covers_blind_nil_exchange_and_game_over():
    # The configurations above must really produce what they are meant to test.
    exchange = random_records(Rules(blind_nil="always", blind_nil_exchange=True), 80, seed=9)
    assert any(any(r["blind"]) for r in exchange)
    assert any(len(r["actions"]) > 4 + 4 + 52 for r in exchange)  # passes recorded
    ended = random_records(Rules(max_hands=2, lose_at=-150, bag_limit=3), 80, seed=9)
    assert any(r["game_over"] for r in ended)
    assert any(any(r["penalty"]) for r in ended)


def test_record_holds_the_whole_hand():
    (record,) = random_records(Rules(blind_nil="never"), 1, seed=3, batch=1)
    assert record["version"] == 1
    assert [len(hand) for hand in record["deal"]] == [13] * 4
    assert len({c for hand in record["deal"] for c in hand}) == 52
    assert len(record["actions"]) == 4 + 52
    assert sum(record["tricks"]) == 13
    said = {seat: action for seat, action in record["actions"][:4]}
    assert record["bids"] == [0 if said[s] == "nil" else int(said[s]) for s in range(4)]
    assert record["actions"][0][0] == (record["dealer"] + 1) % 4
    assert Rules.from_dict(record["rules"]) == Rules(blind_nil="never")


def test_replay_of_a_tampered_seat_raises():
    (record,) = random_records(Rules(), 1, seed=3, batch=1)
    bad = copy.deepcopy(record)
    bad["actions"][0][0] = (bad["actions"][0][0] + 1) % 4
    with pytest.raises(ReplayError, match="turn"):
        replay(bad)


def test_replay_of_a_truncated_record_raises():
    (record,) = random_records(Rules(), 1, seed=3, batch=1)
    bad = copy.deepcopy(record)
    bad["actions"] = bad["actions"][:-1]
    with pytest.raises(ReplayError, match="do not finish"):
        replay(bad)


def test_replay_of_an_illegal_action_raises():
    (record,) = random_records(Rules(blind_nil="never"), 1, seed=3, batch=1)
    bad = copy.deepcopy(record)
    bad["actions"][0][1] = "AS"  # a card while bidding
    with pytest.raises(IllegalActionError):
        replay(bad)


def test_render_record_shows_every_trick():
    (record,) = random_records(Rules(), 1, seed=3, batch=1)
    text = render_record(record)
    assert "trick 13" in text and "♠" in text
