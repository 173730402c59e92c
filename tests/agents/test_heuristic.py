"""The heuristic agent: hand-built situations, legality over many games, and its margin.

Situations are built with the real engine: a fixed deal (`init(..., deals=...)`), the
bids, then the cards played so far; the agent then decides for the seat to act.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.heuristic.agent import HeuristicAgent
from agents.heuristic.bidding import estimate_tricks
from agents.random_agent import RandomAgent
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env import Rules, init, step
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    SEE_HAND,
    action_to_str,
    cards_to_mask,
    str_to_card,
)
from spades_env.engine import legal_action_mask
from spades_env.observation import seat_view
from spades_env.state import BID, BLIND, DONE, State, deal_hands

DECK = [f"{r}{s}" for s in "SHDC" for r in "23456789TJQKA"]


def deal(hands: dict[int, str]) -> np.ndarray:
    """(1, 4, 13) cards: the given hands, the rest of the deck filled in seat order."""
    given = {s: [str_to_card(c) for c in h.split()] for s, h in hands.items()}
    used = {c for cs in given.values() for c in cs}
    rest = [str_to_card(c) for c in DECK if str_to_card(c) not in used]
    out = []
    for s in range(4):
        cs = list(given.get(s, []))
        while len(cs) < 13:
            cs.append(rest.pop(0))
        out.append(cs)
    return np.array([out])


def situation(
    hands: dict[int, str],
    bids: list[int] | None = None,
    plays: str = "",
    dealer: int = 3,
    rules: Rules | None = None,
    **init_kw,
) -> State:
    """A state after `bids` (in bidding order, from left of the dealer) and `plays`."""
    state = init(rules or Rules(), 1, seeds=[1], deals=deal(hands), dealer=dealer, **init_kw)
    for b in bids or []:
        step(state, [BID_BASE + b])
    for card in plays.split():
        step(state, [str_to_card(card)])
    return state


def decide(state: State, agent: HeuristicAgent | None = None) -> str:
    agent = agent or HeuristicAgent()
    action = int(agent.act_state(state)[0])
    assert legal_action_mask(state)[0, action], "the heuristic chose an illegal action"
    return action_to_str(action)


# ----------------------------------------------------------------------------- registry
def test_registry_builds_the_heuristic_with_its_parameters():
    agent = make_agent(
        parse_agent("heuristic:aggression=0.2,nil_risk=-1,blind_deficit=150"), seed=3
    )
    assert isinstance(agent, HeuristicAgent)
    assert (agent.aggression, agent.nil_risk, agent.blind_deficit) == (0.2, -1.0, 150)
    with pytest.raises(AgentSpecError, match="aggression"):
        make_agent(parse_agent("heuristic:boldness=1"))


# ----------------------------------------------------------------------------- play
# Dealer West (3): North (0) bids and leads first, East (1) plays second, South (2) third,
# West (3) fourth. Partners: North-South (seats 0, 2) and East-West (1, 3).
REST = "9S 8S 7S 9D 8D 7D 9C 8C 7C"  # nine cards that take no part in the heart trick
PLAY_CASES = [
    pytest.param(
        {0: "3H", 1: f"KH 5H 2H 6C {REST}"},
        [3, 3, 3, 3],
        "3H",
        "2H",
        id="second-hand-low",
    ),
    pytest.param(
        {0: "4H", 1: "5H", 2: "9H", 3: f"AH JH TH 3H {REST}"},
        [3, 3, 3, 3],
        "4H 5H 9H",  # South (an opponent) wins so far with the 9H
        "TH",
        id="win-cheaply",
    ),
    pytest.param(
        {0: "4H", 1: "5H", 2: "9H", 3: "3S 9S 2D 3D 4D 5D 6D 2C 3C 4C 5C 6C 7C"},
        [3, 3, 3, 3],
        "4H 5H 9H",
        "3S",
        id="trump-when-void-and-the-contract-needs-tricks",
    ),
    pytest.param(
        {0: "2H", 1: "QH", 2: "3H", 3: f"AH KH 4H 6C {REST}"},
        [3, 0, 3, 3],  # East (West's partner) bid nil and is winning with the queen
        "2H QH 3H",
        "KH",
        id="overtake-the-partners-nil-card",
    ),
    pytest.param(
        {0: "2H", 1: f"8H 4H 6C 5C {REST}"},
        [3, 0, 3, 3],  # East bid nil: every heart beats the 2H, so play low
        "2H",
        "4H",
        id="nil-bidder-plays-low-hoping-to-be-overtaken",
    ),
    pytest.param(
        {0: "TH", 1: "4H", 2: f"9H 3H 6C 5C {REST}"},
        [3, 3, 0, 3],  # South bid nil
        "TH 4H",
        "9H",
        id="nil-bidder-ducks-with-the-highest-card-under-the-winner",
    ),
    pytest.param(
        {0: "2H", 1: "3H", 2: "5H", 3: f"4H 8H 6C 5C {REST}"},
        [3, 3, 3, 3],
        "2H 3H 5H",  # South (an opponent) wins so far with the 5H
        "8H",
        id="fourth-hand-wins-when-the-contract-needs-it",
    ),
    pytest.param(
        {0: "2H", 1: "3H", 2: "5H", 3: f"4H 8H 6C 5C {REST}"},
        [3, 3, 0, 3],  # South (an opponent of West) bid nil and is winning: leave it there
        "2H 3H 5H",
        "4H",
        id="do-not-overtake-the-nil-bidders-card",
    ),
    pytest.param(
        {0: "AC 2H", 1: "2C 3H", 2: "3C 9H", 3: f"4C 8H AH 4H {REST}"},
        [1, 7, 1, 6],  # East-West promised 13 and lost the first trick: contract lost
        "AC 2C 3C 4C 2H 3H 9H",
        "8H",
        id="contract-lost-feed-the-opponents-bags",
    ),
    pytest.param(
        {0: "AC 2H", 1: "2C 3H", 2: "3C 9H", 3: f"4C 8H AH 4H {REST}"},
        [2, 2, 2, 2],  # the same trick when East-West still need tricks: win it
        "AC 2C 3C 4C 2H 3H 9H",
        "AH",
        id="contract-needs-tricks-take-it",
    ),
]


@pytest.mark.parametrize(("hands", "bids", "plays", "expected"), PLAY_CASES)
def test_heuristic_plays_the_textbook_card(hands, bids, plays, expected):
    assert decide(situation(hands, bids, plays)) == expected


def test_never_leads_spades_before_they_are_broken():
    state = situation({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 2H 3H"}, [6, 2, 2, 2])
    assert decide(state) in ("2H", "3H")


def test_leads_a_spade_when_only_spades_are_held():
    state = situation({0: "AS KS QS JS TS 9S 8S 7S 6S 5S 4S 3S 2S"}, [9, 1, 1, 1])
    assert decide(state).endswith("S")


def test_protects_a_partners_nil_by_cashing_high_cards_first():
    state = situation({0: f"AH KH AD 6C {REST}"}, [3, 3, 0, 3])  # South bid nil
    assert decide(state) in ("AH", "AD")


def test_protects_a_partners_nil_by_leading_its_void():
    # South (nil) showed no clubs on the first trick; North, back on lead, leads a club.
    hands = {
        0: "AC KC QC 2C JH 9S 8S 7S 9D 8D 7D 6H 5H",
        1: "3C",
        2: "2D 3D 4D 5D 6D 2H 3H 4H 7H 2S 3S 4S 5S",
        3: "4C",
    }
    state = situation(hands, [3, 3, 0, 3], "AC 3C 2D 4C")
    assert decide(state).endswith("C")


def test_ducks_when_the_contract_is_made():
    # North-South bid 2 and took the first two tricks: South ducks the 9H with the 8H.
    hands = {
        0: "AC AD 2H",
        1: "2C 2D 9H",
        2: "3C 3D AH 8H 3H 9S 8S 7S 9D 8D 7D 9C 7C",
        3: "4C 4D",
    }
    state = situation(hands, [1, 4, 1, 4], "AC 2C 3C 4C AD 2D 3D 4D 2H 9H")
    assert decide(state) == "8H"


# ----------------------------------------------------------------------------- bidding
def bid_for(hand: str, bids_before: tuple[int, ...] = (), **init_kw) -> str:
    """Rule text 000's bid (`heuristic:bid=rules`) for North (dealer West: North bids first)
    or later seats."""
    seat = len(bids_before)
    state = situation({seat: hand}, list(bids_before), **init_kw)
    assert state.to_act[0] == seat
    return decide(state, HeuristicAgent(bid="rules"))


BID_CASES = [
    # Four aces and the ace of spades with nothing else counted.
    ("AS 2H 3H AH 4D AD 2C 5D 6D 3C AC 4C 5C", 4),
    # Rule text 000: a king with a small card counts half; two of them make one.
    ("AS KH 2H KD 2D 3H 4D 5C 6C 7C 8C 3D 4H", 2),
    # Long spades add their length.
    ("AS KS QS JS TS 9S 2H 3H 4D 5D 2C 3C 4C", 6),
]


@pytest.mark.parametrize(("hand", "expected"), BID_CASES)
def test_bid_counts_sure_tricks(hand, expected):
    assert bid_for(hand) == str(expected)


def test_a_lone_queen_or_jack_counts_nothing():
    base = "AS 2H 3H 4H 5H 2D 3D 4D 5D 2C 3C 4C 5C"
    assert estimate_tricks(cards_to_mask([str_to_card(c) for c in base.split()])) == (
        estimate_tricks(cards_to_mask([str_to_card(c) for c in base.replace("5D", "QD").split()]))
    )


def test_nil_on_a_hand_of_low_cards():
    assert bid_for("2S 3S 2H 3H 4H 6H 2D 4D 5D 7D 3C 5C 6C") == "nil"


def test_no_nil_beside_a_partners_nil():
    # North bid nil; South (third to bid) holds the same low hand and must not double it.
    assert bid_for("2S 3S 2H 3H 4H 6H 2D 4D 5D 7D 3C 5C 6C", (0, 3)) != "nil"


def test_no_nil_with_a_lone_king():
    assert bid_for("2S 3S 2H 3H 4H KH 2D 4D 5D 7D 3C 5C KC") != "nil"


def test_bids_up_when_bags_are_near_the_penalty():
    hand = "AS 2H 3H AH 4D KD 2C 5D 6D 3C 7C 4C 5C"  # 2.5 tricks: a bid of 2 or 3
    calm = int(bid_for(hand))
    loaded = int(bid_for(hand, bags=[8, 0]))
    assert loaded == calm + 1


def test_bids_less_when_the_table_has_promised_the_tricks():
    hand = "AS KS QS 9S 8S 7S 2H 3H 4D 5D 2C 3C 4C"
    assert int(bid_for(hand, (6, 5, 2))) < int(bid_for(hand))


# ----------------------------------------------------------------------------- blind nil
def test_blind_nil_when_far_behind_and_late():
    state = situation({}, scores=[100, 400])
    assert state.phase[0] == BLIND
    assert decide(state) == action_to_str(BLIND_NIL)


def test_sees_the_hand_when_not_far_enough_behind():
    state = situation({}, scores=[200, 320])  # behind 120: allowed, not called for
    assert state.phase[0] == BLIND
    assert decide(state) == action_to_str(SEE_HAND)


@pytest.mark.parametrize("blind_nil", ["never", "when_behind_100"])
def test_blind_nil_is_never_chosen_when_not_offered(blind_nil):
    rules = Rules(blind_nil=blind_nil)
    agent = HeuristicAgent()
    # Far behind, but the rules do not offer blind nil (never / the team is ahead).
    state = situation({}, rules=rules, scores=[480, 100])
    assert state.phase[0] == BID
    assert int(agent.act_state(state)[0]) != BLIND_NIL


# ----------------------------------------------------------------------------- whole games
def _heuristic_seats_play(rules: Rules, hands: int, seed: int) -> None:
    """Heuristic at random seats against random agents; every action must be legal."""
    rng = np.random.default_rng(seed)
    b = 32
    state = init(rules, b, rng=rng)
    heur, rand = HeuristicAgent(seed), RandomAgent(seed)
    is_heur = rng.random((b, 4)) < 0.6
    done = 0
    while done < hands and (state.phase != DONE).any():
        view = seat_view(state)
        mask = legal_action_mask(state)
        acts = rand.act(view, None, mask)
        rows = np.flatnonzero(is_heur[np.arange(b), state.to_act] & (state.phase != DONE))
        if rows.size:
            chosen = heur.act(view.take(rows), None, mask[rows])
            assert mask[rows, chosen].all()
            acts[rows] = chosen
        info = step(state, acts)  # raises IllegalActionError on any illegal action
        if info.finished is not None:
            done += len(info.finished.games)


@pytest.mark.parametrize(
    "options",
    [
        "",
        "blind_nil=always,blind_nil_exchange=true",
        "nil_tricks=count,first_lead=two_of_clubs",
        "blind_nil=never,max_total_bid=13",
    ],
)
def test_only_legal_actions_over_many_hands(options):
    rules = Rules.from_options(f"{options},target=250" if options else "target=250")
    _heuristic_seats_play(rules, hands=300 if not options else 100, seed=7)


def play_one_hand(rules: Rules, seeds, deals, dealer, agents) -> np.ndarray:
    """(N, 2) hand points per team of one hand per deal, `agents[s]` in seat s."""
    n = len(seeds)
    state = init(rules, n, seeds=seeds, deals=deals, dealer=dealer)
    points = np.zeros((n, 2), dtype=np.int64)
    over = np.zeros(n, dtype=bool)
    while not over.all():
        view = seat_view(state)
        acts = np.zeros(n, dtype=np.int64)
        for s, agent in enumerate(agents):
            rows = np.flatnonzero(~over & (state.to_act == s))
            if rows.size:
                acts[rows] = agent.act(view.take(rows), None, None)
        info = step(state, acts)
        fin = info.finished
        if fin is not None:
            fresh = ~over[fin.games]
            points[fin.games[fresh]] = fin.points[fresh] - fin.penalty[fresh]
            over[fin.games] = True
    return points


def test_beats_random_by_a_wide_margin_in_a_duplicate_match():
    rules = Rules()
    n = 200
    rng = np.random.default_rng(2024)
    seeds = rng.integers(0, 2**63, n, dtype=np.uint64)
    deals = deal_hands(rules, seeds, np.zeros(n, dtype=np.int32))
    dealer = rng.integers(0, 4, n)
    h, r = HeuristicAgent(0), RandomAgent(1)
    a = play_one_hand(rules, seeds, deals, dealer, [h, r, h, r])
    b = play_one_hand(rules, seeds, deals, dealer, [r, h, r, h])
    margin = ((a[:, 0] - a[:, 1]) + (b[:, 1] - b[:, 0])) / 2  # heuristic minus random
    low = margin.mean() - 1.96 * margin.std(ddof=1) / np.sqrt(n)
    assert low > 100, f"margin {margin.mean():.1f} points per deal"


def test_explain_names_the_rule_behind_each_decision():
    agent = HeuristicAgent()
    state = situation({0: "3H", 1: f"KH 5H 2H 6C {REST}"}, [3, 3, 3, 3], "3H")
    (reason,) = agent.explain(seat_view(state))
    assert "second hand low" in reason
    agent.act_state(state)
    assert agent.last_reasons == [reason]
