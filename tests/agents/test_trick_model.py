"""The fitted trick model and the bids of highest expected score (agents.heuristic.trick_model,
agents.heuristic.model_bids, training.bid_fit): the file is validated, the bid choice is the
argmax of the expected team score on hand-built cases, and the fit runs as a command."""

from __future__ import annotations

import json
import subprocess
from itertools import product

import numpy as np
import pytest
from cli_helpers import one_line_error, run_module

from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.bidding import choose_bid
from agents.heuristic.model_bids import choose_model_bid, expected_scores, seat_features
from agents.heuristic.seat_table import Table
from agents.heuristic.trick_model import (
    DEFAULT_PATH,
    FEATURES,
    TRICKS,
    Y_CLASSES,
    Y_LOW,
    TrickModel,
    TrickModelError,
    applies,
    load,
)
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env.cards import BID_BASE, str_to_card
from spades_env.rules import Rules
from spades_env.scoring import score_hand
from spades_env.state import BID

COUNT = FEATURES.index("count")
ALL_BIDS = (1 << TRICKS) - 1


def hand(*names: str) -> int:
    return sum(1 << str_to_card(n) for n in names)


#: 13 cards: A K Q of spades and small side cards (rule text 000 counts about 3 tricks)
STRONG = hand("AS", "KS", "QS", "2H", "3H", "4H", "5H", "2D", "3D", "4D", "2C", "3C", "4C")
#: 13 low cards, no spade: a clear nil
LOW = hand("2H", "3H", "4H", "5H", "6H", "2D", "3D", "4D", "5D", "2C", "3C", "4C", "5C")


def table(h: int, bids: list[int], rules: Rules | None = None, seat: int = 0) -> Table:
    return Table(
        rules=rules or Rules(),
        seat=seat,
        hand=h,
        legal=ALL_BIDS,
        phase=BID,
        bids=bids,
        scores=[0, 0],
        bags=[0, 0],
        dealer=3,
    )


def point_model(
    pmf: dict[int, float], nil_made: float, partner: dict[int, dict[int, float]]
) -> TrickModel:
    """A model whose team tricks beyond the partner's bid follow `pmf` whatever the hand
    (weights 0, the thresholds at the cumulative probabilities), nil made with
    `nil_made`, and partners that bid b take t tricks with the weights `partner[b][t]`."""
    cdf = np.cumsum([pmf.get(y, 0.0) for y in range(Y_LOW, TRICKS)])[:-1]
    cdf = np.clip(cdf, 1e-12, 1 - 1e-12)
    theta = np.maximum.accumulate(np.log(cdf / (1 - cdf))) + np.arange(Y_CLASSES - 1) * 1e-9
    counts = np.zeros((TRICKS, TRICKS))
    for b, row in partner.items():
        for t, c in row.items():
            counts[b, t] = c * 1e9  # the half-count smoothing becomes negligible
    return TrickModel(
        weights=np.zeros(len(FEATURES)),
        thresholds=theta,
        nil_weights=np.zeros(len(FEATURES)),
        nil_bias=float(np.log(nil_made / (1 - nil_made))),
        partner=counts,
    )


def team_points(rules: Rules, b: int, pb: int, k: int, tp: int) -> float:
    """My team's points less 10 a bag: I bid b and take k, my partner bids pb, takes tp."""
    rest = max(13 - k - tp, 0)
    hs = score_hand(rules, [[b, 1, pb, 1]], [[False] * 4], [[k, rest, tp, 0]])
    return hs.points[0, 0] - rules.bag_penalty / rules.bag_limit * hs.bags[0, 0]


def brute_force(model: TrickModel, x, partner_bid: int, rules: Rules) -> np.ndarray:
    """The expected team score of each bid, enumerating every outcome with score_hand."""
    team, made = model.team_pmf(x), float(model.nil_made(x))
    prior, theirs = model.partner_pmf()
    weight = prior if partner_bid < 0 else np.eye(TRICKS)[partner_bid]
    out = np.zeros(TRICKS)
    for b, pb in product(range(TRICKS), range(TRICKS)):
        if weight[pb] < 1e-15:
            continue
        if b == 0:  # nil: no trick or one; the partner as its table says
            outcomes = [
                (p * q, k, tp)
                for k, p in ((0, made), (1, 1 - made))
                for tp, q in enumerate(theirs[pb])
            ]
        elif pb == 0:  # beside a nil: my tricks alone make the contract
            outcomes = [
                (p * q, max(y, 0), tp)
                for y, p in zip(range(Y_LOW, TRICKS), team, strict=True)
                for tp, q in enumerate(theirs[0])
            ]
        else:  # the team takes pb + y: I take max(y, 0), my partner the rest
            outcomes = [
                (p, max(y, 0), min(max(pb + min(y, 0), 0), 13))
                for y, p in zip(range(Y_LOW, TRICKS), team, strict=True)
            ]
        out[b] += weight[pb] * sum(
            p * team_points(rules, b, pb, k, tp) for p, k, tp in outcomes if p > 1e-15
        )
    return out


def test_shipped_model_loads_and_gives_distributions():
    model = load(DEFAULT_PATH)
    assert "training.bid_fit" in model.meta["recipe"]
    x = seat_features(table(STRONG, [-1, -1, -1, -1]), dealer=3)
    pmf = model.team_pmf(x)
    assert pmf.shape == (Y_CLASSES,) and np.isclose(pmf.sum(), 1) and (pmf >= 0).all()
    strong, weak = (model.team_pmf(seat_features(table(h, [-1] * 4), 3)) for h in (STRONG, LOW))
    ys = np.arange(Y_LOW, TRICKS)
    assert strong @ ys > weak @ ys
    assert model.nil_made(seat_features(table(LOW, [-1] * 4), 3)) > model.nil_made(x)


def _good() -> dict:
    return json.loads(DEFAULT_PATH.read_text())


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        pytest.param(lambda d: d.update(format="other"), "not a trick model", id="format"),
        pytest.param(lambda d: d.update(version=99), "version 99", id="version"),
        pytest.param(lambda d: d["features"].reverse(), "features differ", id="features"),
        pytest.param(lambda d: d["weights"].pop(), "'weights' must be a list", id="short"),
        pytest.param(lambda d: d["weights"].__setitem__(0, "x"), "finite numbers", id="text"),
        pytest.param(lambda d: d["thresholds"].reverse(), "must increase", id="thresholds"),
        pytest.param(lambda d: d.update(nil_bias=None), "'nil_bias'", id="nil-bias"),
        pytest.param(lambda d: d.update(partner=[[0] * 14] * 14), "not all zero", id="partner"),
    ],
)
def test_a_corrupt_model_file_is_one_line_error(tmp_path, edit, message):
    d = _good()
    edit(d)
    path = tmp_path / "model.json"
    path.write_text(json.dumps(d))
    with pytest.raises(TrickModelError, match=message) as err:
        load(path)
    assert "\n" not in str(err.value) and str(path) in str(err.value)


def test_a_model_file_that_is_not_json_or_missing_is_one_line_error(tmp_path):
    path = tmp_path / "model.json"
    path.write_text('{"format": ')
    with pytest.raises(TrickModelError, match="not JSON"):
        load(path)
    with pytest.raises(TrickModelError, match="cannot read"):
        load(tmp_path / "absent.json")


def test_heuristic_refuses_a_bad_model_file_or_bidder(tmp_path):
    path = tmp_path / "model.json"
    path.write_text("[]")
    with pytest.raises(AgentSpecError, match="not a trick model"):
        make_agent(parse_agent(f"heuristic:model={path}"))
    with pytest.raises(AgentSpecError, match="bid 'guess'; use model or rules"):
        make_agent(parse_agent("heuristic:bid=guess"))
    # aggression and nil_risk shade rule text 000's count: they select it, and refuse the model
    assert make_agent(parse_agent("heuristic:aggression=0.5")).bid == "rules"
    assert make_agent(parse_agent("heuristic:nil_risk=-2")).bid == "rules"
    assert make_agent(parse_agent("heuristic")).bid == "model"
    with pytest.raises(AgentSpecError, match="use them with bid=rules"):
        make_agent(parse_agent("heuristic:bid=model,aggression=0.5"))
    for agent in ("pimc", "ismcts"):
        with pytest.raises(AgentSpecError, match="use search, heuristic or model"):
            make_agent(parse_agent(f"{agent}:bid=guess"))
        assert make_agent(parse_agent(f"{agent}:bid=model"))._bidder.bid == "model"


@pytest.mark.parametrize(
    ("pmf", "partner_bid", "want"),
    [
        pytest.param({4: 1.0}, 3, 4, id="certain-4-tricks"),
        pytest.param({3: 0.5, 5: 0.5}, 3, 3, id="set-risk-bids-the-safe-3"),
        pytest.param({3: 0.1, 5: 0.9}, 3, 5, id="likely-5-bids-5"),
        pytest.param({2: 1.0}, -1, 2, id="partner-yet-to-bid"),
    ],
)
def test_the_bid_maximises_the_expected_team_score(pmf, partner_bid, want):
    # partners take exactly what they bid; nil is made one time in ten
    model = point_model(pmf, 0.1, {b: {b: 1.0} for b in range(1, 6)} | {0: {0: 1.0}})
    bids = [-1, -1, partner_bid, -1]
    t = table(STRONG, bids)
    x = seat_features(t, 3)
    bid, why = choose_model_bid(t, 3, model)
    assert bid == want, why
    value = expected_scores(model, x, partner_bid, t.rules)
    assert np.allclose(value, brute_force(model, x, partner_bid, t.rules))
    assert bid == int(np.argmax(value))


def test_a_clear_nil_hand_bids_nil_unless_the_partner_did():
    model = point_model({1: 0.6, 2: 0.4}, 0.95, {3: {3: 1.0}, 0: {0: 0.8, 1: 0.2}})
    assert choose_model_bid(table(LOW, [-1, -1, 3, -1]), 3, model)[0] == 0
    # rule text 000: never nil beside a partner's nil
    assert choose_model_bid(table(LOW, [-1, -1, 0, -1]), 3, model)[0] == 1
    # RULES.md §4 nil_value: a nil worth nothing is not bid
    free = Rules(nil_value=1)
    assert choose_model_bid(table(LOW, [-1, -1, 3, -1], free), 3, model)[0] == 1


def test_the_legal_bids_bound_the_choice():
    model = point_model({6: 1.0}, 0.01, {3: {3: 1.0}})
    t = table(STRONG, [-1, -1, 3, -1])
    t.legal = 0b1111  # RULES.md §2 max_total_bid: nil..3 left
    assert choose_model_bid(t, 3, model)[0] == 3


def test_heuristic_bids_with_the_model_by_default_and_rules_on_request():
    t = table(STRONG, [-1, -1, -1, -1])
    model_agent, rules_agent = HeuristicAgent(), HeuristicAgent(bid="rules")
    assert model_agent.decide(t)[1].startswith("trick model")
    bid, why = choose_bid(t, 0.0, 0.0)
    assert rules_agent.decide(t) == (BID_BASE + bid, why)
    # other tables than the standard one keep rule text 000's count (RULES.md §6)
    auction = Rules.preset("auction")
    assert not applies(auction) and applies(Rules(nil_tricks="count"))
    t.rules, t.trump = auction, -1
    assert not model_agent.decide(t)[1].startswith("trick model")


def fit(*args: str) -> subprocess.CompletedProcess[str]:
    return run_module("training.bid_fit", *args, timeout=600)


@pytest.mark.cli
@pytest.mark.torch  # the fit is a torch model
def test_fit_command_writes_a_model_that_loads(tmp_path):
    out = tmp_path / "m.json"
    done = fit("--hands", "150", "--rounds", "2", "--seed", "3", "--out", str(out))
    assert done.returncode == 0, done.stderr
    model = load(out)
    assert model.meta["recipe"].startswith("python -m training.bid_fit --hands 150 --rounds 2")
    assert [r["hands"] for r in model.meta["rounds"]] == [150, 150]
    assert model.partner.sum() > 0
    # the count of rule text 000 says more tricks, the model too
    assert model.weights[COUNT] > 0


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--hands", "0"], "--hands must be >= 1"),
        (["--explore", "2"], "--explore must be between 0 and 1"),
        (["--out", "."], "is a folder"),
        (["--hands", "3", "--rounds", "1"], "too few hands to fit"),
    ],
)
@pytest.mark.cli
def test_fit_command_refuses_bad_input_in_one_line(tmp_path, args, message):
    args = args if "--out" in args else [*args, "--out", str(tmp_path / "m.json")]
    line = one_line_error(fit(*args))
    assert message in line
    assert not (tmp_path / "m.json").exists()


def test_a_bag_cost_of_zero_bids_for_the_hand_alone():
    # 3 or 4 tricks beyond a partner's exact 3: bidding 4 risks 70 to save a 10-point bag
    model = point_model({3: 0.1, 4: 0.9}, 0.01, {3: {3: 1.0}})
    t = table(STRONG, [-1, -1, 3, -1])
    assert choose_model_bid(t, 3, model)[0] == 4  # a bag costs 100 / 10
    assert choose_model_bid(t, 3, model, cost=0.0)[0] == 3


def test_the_batched_bid_choice_is_each_seats_own():
    """`choose_model_bids` (one pass for the heuristic's batch) bids each seat as
    `choose_model_bid` does on its own: no row sees another row's partner or hand."""
    from agents.heuristic.model_bids import choose_model_bids

    model = load(DEFAULT_PATH)
    rng = np.random.default_rng(7)
    deck = np.arange(52)
    tables = []
    for _ in range(40):
        cards = rng.permutation(deck)[:13]
        h = int(sum(1 << int(c) for c in cards))
        bids = [-1, -1, int(rng.integers(-1, 8)), -1]  # the partner (seat 2) unbid, nil or a number
        t = table(h, bids)
        t.scores = [int(rng.integers(-20, 40)) * 10, 0]
        tables.append(t)
    batch = choose_model_bids(tables, [3] * len(tables), model)
    assert batch == [choose_model_bid(t, 3, model) for t in tables]
    assert len({b for b, _ in batch}) > 2


def _hands(rng: np.random.Generator, n: int) -> list[int]:
    """n 13-card hands, half of them from two or three suits only (voids, long suits)."""
    out = []
    for i in range(n):
        suits = rng.permutation(4)[: 4 - i % 3] if i % 2 else np.arange(4)
        deck = (suits[:, None] * 13 + np.arange(13)).ravel()
        out.append(int(sum(1 << int(c) for c in rng.choice(deck, 13, replace=False))))
    return out


def test_batched_hand_features_are_the_scalar_ones_bit_for_bit():
    from agents.heuristic.trick_features import hand_features_batch
    from agents.heuristic.trick_model import hand_features

    hands = _hands(np.random.default_rng(3), 4000)
    batch = hand_features_batch(np.array(hands, dtype=np.uint64))
    scalar = np.array([hand_features(h) for h in hands], dtype=np.float64)
    assert batch.dtype == np.float64 and batch.shape == scalar.shape
    assert np.array_equal(batch, scalar)  # exact: the same sums in the same order
    assert len(set(batch[:, COUNT].tolist())) > 50  # the hands differ


def test_batched_context_features_are_the_scalar_ones():
    from agents.heuristic.trick_features import context_features_batch
    from agents.heuristic.trick_model import bidding_order, context_features

    rng = np.random.default_rng(4)
    n = 500
    seat, dealer = rng.integers(4, size=n), rng.integers(4, size=n)
    bids = rng.integers(-1, 9, size=(n, 4))
    scores, bags = rng.integers(-700, 700, size=(n, 2)), rng.integers(0, 10, size=(n, 2))
    batch = context_features_batch(seat, dealer, bids, scores, bags)
    scalar = [
        context_features(
            int(seat[i]), bids[i].tolist(), scores[i].tolist(), bags[i].tolist(),
            bidding_order(int(dealer[i])),
        )
        for i in range(n)
    ]  # fmt: skip
    assert np.array_equal(batch, np.array(scalar, dtype=np.float64))


def test_the_heuristic_bids_a_batch_as_each_seat_alone():
    """`HeuristicAgent.act` (the features from arrays, one pass) chooses the bids and
    reasons that the one-table path (`choose_model_bid`, scalar features) gives."""
    from agents.heuristic.seat_table import rows_from_view
    from spades_env import init, step
    from spades_env.engine import random_legal_actions
    from spades_env.observation import seat_view

    rng = np.random.default_rng(5)
    agent = HeuristicAgent()
    state = init(Rules(), 300, rng)
    state.scores[:] = rng.integers(-30, 50, size=state.scores.shape) * 10
    state.bags[:] = rng.integers(0, 10, size=state.bags.shape)
    chosen = set()
    for _ in range(4):  # every bidding position, after random bids
        view = seat_view(state)
        actions = agent.act(view, None, None)
        singles = [agent.decide(t) for t in rows_from_view(view)]
        assert actions.tolist() == [a for a, _ in singles]
        assert agent.last_reasons == [why for _, why in singles]
        chosen |= set(actions.tolist())
        step(state, random_legal_actions(state.legal, state.phase, rng))
    assert {BID_BASE, BID_BASE + 3} <= chosen  # nils and numbers among them
