"""The review after a hand judges by the Spades score: a hand-built deal where South bids
nil and can duck every trick, so the card that wins a trick under nil costs points but no
trick, and the opponents' cards that only let South's nil be broken are not blamed; the
review says its objective and marks each seat's first costly card."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.web.replay import start_state
from experiments.web.review import OBJECTIVE, review_hand
from spades_env.cards import action_to_str, str_to_action, str_to_card
from spades_env.engine import step
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import PLAY, init

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


def _unscored_prefix(review: dict) -> int:
    """How many cards from the hand's first are judged in tricks only (cost None); the
    rest must all be judged in points."""
    costs = [c["cost"] for c in review["cards"]]
    n = next((k for k in range(len(costs), 0, -1) if costs[k - 1] is None), 0)
    assert all(c is not None for c in costs[n:])
    return n


def test_without_a_budget_early_cards_are_judged_in_tricks_only():
    review = review_hand(_record(False), nodes=0)
    early = [c for c in review["cards"] if c["trick"] <= 13 - 9]
    late = [c for c in review["cards"] if c not in early]
    # an early card is not judged in points, unless it had no real choice (costs 0)
    assert early and all(c["cost"] in (None, 0) for c in early)
    assert any(c["cost"] is None for c in early)
    assert late and all(c["cost"] is not None for c in late)
    n = _unscored_prefix(review)
    assert review["objective"]["score_tricks"] == 13 - review["cards"][n - 1]["trick"] >= 9
    # the rest are judged in points later (`test_web_review_complete.py`)
    assert review["pending"]["cards"] == n
    assert (
        f"every card but the first {n}, which are still being judged"
        in (review["objective"]["text"])
    )


@pytest.mark.parametrize("wins", [True, False])
def test_a_budget_judges_the_early_cards_in_points_exactly(reviews, wins):
    """With room enough every card of the hand is judged in points, each value the same
    as the full score solve's: the 2S breaking the nil in trick 1 costs its points."""
    review = review_hand(_record(wins), nodes=10**12)
    full = reviews[wins]
    assert _unscored_prefix(review) == 0
    assert review["cards"] == full["cards"]
    assert review["first_costly"] == full["first_costly"]
    assert review["objective"]["score_tricks"] == 13
    assert "first" not in review["objective"]["text"]
    if wins:
        assert _card(review, 2, "2♠")["trick"] == 1 and _card(review, 2, "2♠")["cost"] >= 100


def test_the_default_budget_judges_this_nil_hand_in_points_from_the_first_card():
    """South's 2S that breaks its nil in trick 1 costs, in points, exactly what the plain
    score solve from that position gives South's team (every card of the deal searched
    afresh with its own objective), and every card of the hand is judged in points."""
    from agents.dd import DDSolver, Position, score_objective

    record = _record(True)
    review = review_hand(record)
    assert _unscored_prefix(review) == 0 and review["objective"]["score_tricks"] == 13
    state = start_state(record)
    for _, text in record["actions"]:
        if int(state.phase[0]) == PLAY:
            break
        step(state, [str_to_action(text)])
    bids = [0 if BIDS[s] == "nil" else int(BIDS[s]) for s in range(4)]
    pos = Position.from_state(state)
    assert pos.tricks_left == 13 and not pos.trick
    for c in ("3C", "4C", "TC"):
        pos = pos.play(str_to_action(c))
    obj = score_objective(Rules.preset("standard"), bids, None, 0, relative=True)
    values = DDSolver().move_values(pos, obj)  # South (seat 2) is team 0
    two = _card(review, 2, "2♠")
    assert two["trick"] == 1
    assert two["cost"] == max(values.values()) - values[str_to_action("2S")] >= 100
    assert values[str_to_action("2H")] == max(values.values())


def test_the_default_budget_leaves_only_a_first_run_of_cards_in_tricks(reviews):
    """Whatever the budget allows, each card is judged in points exactly or not at all."""
    for wins in (True, False):
        review = review_hand(_record(wins))
        n = _unscored_prefix(review)
        assert review["cards"][n:] == reviews[wins]["cards"][n:]
        for c, f in zip(review["cards"][:n], reviews[wins]["cards"][:n], strict=True):
            assert c["cost_tricks"] == f["cost_tricks"]


def _random_record(seed: int) -> dict:
    """A hand played at random, its bids chosen so that seat 1 bids nil."""
    rng = np.random.default_rng(seed)
    rules = Rules.preset("standard")
    state = init(rules, 1, seeds=np.array([seed], dtype=np.uint64), dealer=0)
    game = SingleGame.from_state(state)
    while True:
        legal = game.legal_list()
        names = [action_to_str(a) for a in legal]
        if "see hand" in names:
            pick = str_to_action("see hand")
        elif "nil" in names:
            pick = str_to_action("nil" if game.to_act == 1 else str(rng.integers(1, 5)))
        else:
            pick = int(rng.choice(legal))
        info = game.step(pick)
        if info.finished is not None:
            return hand_records(Rules.preset("standard"), info.finished)[0]


@pytest.mark.parametrize("seed", [3, 4])
def test_a_random_nil_hands_points_are_the_plain_solvers(seed):
    """Every card the review judges in points costs what the plain score solve gives the
    mover's team from that position (checked over the last six tricks, where the plain
    solve is quick), and the cards left in tricks only are a first run."""
    from agents.dd import DDSolver, Position, score_objective

    record = _random_record(seed)
    assert record["bids"][1] == 0
    review = review_hand(record)
    _unscored_prefix(review)
    rules = Rules.preset("standard")
    objs = [
        score_objective(rules, record["bids"], record["blind"], t, relative=True) for t in (0, 1)
    ]
    state = start_state(record)
    plain = DDSolver()
    k = 0
    for seat, text in record["actions"]:
        if int(state.phase[0]) == PLAY:
            pos = Position.from_state(state)
            card = review["cards"][k]
            if pos.tricks_left <= 6 and len(pos.legal_cards()) > 1:
                values = plain.move_values(pos, objs[seat % 2])
                top = max(values.values())
                assert card["cost"] == round(top - values[str_to_action(text)], 3), card
            k += 1
        step(state, [str_to_action(text)])
    assert k == len(review["cards"]) == 52


# ----------------------------------------------------------------------------- in Chromium
def _shown_review(page) -> dict:
    """The last review message the page received."""
    import json

    frames = page.evaluate("window.spadesFrames")
    return [m for m in map(json.loads, frames) if m["type"] == "review"][-1]["review"]


#: the deal and the play of the game below (one seed: its early cards are judged in
#: points in a few seconds, where some random deals take minutes)
GAME_SEED = 1


@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A short game (two hands, `GAME_SEED`) played to its end with reviews on, their
    early cards judged in points only in the background (`--review-nodes 0`): the server,
    the person's link, the table's folder; the browser."""
    from web_helpers import Server, chromium, play_to_game_over

    pytest.importorskip("starlette")
    from experiments.web.catalogue import Catalogue
    from experiments.web.game import create_table
    from experiments.web.records import SeatInfo

    root = tmp_path_factory.mktemp("root")
    rules = Rules.preset("standard").replace(max_hands=2)
    agent = Catalogue().spec("random", rules)
    people = [
        SeatInfo("human", "me") if s == 2 else SeatInfo("agent", "random", spec=agent)
        for s in range(4)
    ]
    table = create_table(root / "web" / "seeded", rules, people, seed=GAME_SEED)
    link = f"/table/{table.seats[2].token}"
    srv = Server(root, "--pace", "0", "--review-nodes", "0")
    pw, browser = chromium()
    try:
        page = browser.new_page()
        page.goto(srv.url + link)
        play_to_game_over(page)
        page.close()
        yield {"srv": srv, "link": link, "folder": root / "web" / "seeded", "b": browser}
    finally:
        browser.close()
        pw.stop()
        srv.stop()


def _open(game, width: str):
    from web_helpers import VIEWPORTS

    page = game["b"].new_page(viewport=VIEWPORTS[width])
    page.set_default_timeout(300_000)
    page.goto(game["srv"].url + game["link"])
    # the last hand's review appears on the page once the game is over, and is shown
    # again, complete, once its early cards are judged in points in the background
    page.locator("#review-objective").filter(has_text="Hand 2,").wait_for()
    page.locator("#review-pending").wait_for(state="detached")
    return page


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_last_hands_review_appears_with_its_objective_and_costs(game, width):
    page = _open(game, width)
    try:
        live = _shown_review(page)
        assert live["hand"] == 2 and "Spades score" in page.inner_text("#review-objective")
        assert "pending" not in live and "first" not in live["objective"]["text"]
        page.locator("#review details summary").click()  # every card's cost
        header = page.locator("#review-cards tr").first.inner_text()
        assert "Cost (points)" in header and "Cost (tricks)" in header
        for row in page.locator("#review-cards tr").all()[1:]:
            pts, tricks = row.locator("td").all_inner_texts()[3:5]
            assert pts == "0" or pts.endswith(" pts")  # every card judged in points
            assert tricks == "0" or "trick" in tricks
        firsts = page.locator("#review-firsts li")
        assert firsts.count() == len(live["first_costly"])  # one line per seat that erred
        assert page.locator("#review-cards tr.first-costly").count() == firsts.count()
        assert page.locator("#review-pick option").count() == 2
        game.setdefault("shown", {})[width] = live
    finally:
        page.close()


@pytest.fixture(scope="module")
def restarted(game):
    """The same root served again after the first server stopped."""
    import json

    from web_helpers import Server

    game["srv"].stop()
    kept = json.loads((game["folder"] / "reviews.json").read_text())
    assert sorted(kept["reviews"]) == ["0", "1"]
    for review in kept["reviews"].values():  # complete: every card judged in points
        assert "pending" not in review and all(c["cost"] is not None for c in review["cards"])
    print(f"review seconds per hand: {[kept['reviews'][h]['seconds'] for h in '01']}")
    game["srv"] = Server(game["folder"].parents[1], "--pace", "0")
    return game


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_reviews_survive_a_restart(restarted, width):
    page = _open(restarted, width)
    try:
        assert _shown_review(page) == restarted["shown"][width]  # kept, not made again
    finally:
        page.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_restart_goes_on_judging_and_the_page_shows_the_review_completed(restarted, width):
    """The server stops while both reviews still have every card to judge in points: the
    restarted server goes on judging them in the background, and the page, not reloaded,
    says which cards are pending, then shows the complete review, the same as before."""
    from web_helpers import VIEWPORTS, Server

    from experiments.web.records import read_reviews, write_reviews

    game = restarted
    game["srv"].stop()
    reviews = read_reviews(game["folder"])
    for review in reviews.values():
        for card in review["cards"]:
            card["cost"] = None
        review["pending"] = {"cards": len(review["cards"]), "value": None}
    write_reviews(game["folder"], reviews)
    game["srv"] = Server(game["folder"].parents[1], "--pace", "0")
    page = game["b"].new_page(viewport=VIEWPORTS[width])
    page.set_default_timeout(300_000)
    try:
        page.goto(game["srv"].url + game["link"])
        note = page.locator("#review-pending")
        note.wait_for()
        assert "first 52 cards are still being judged in points" in note.inner_text()
        assert "Hand 2," in page.inner_text("#review-objective")
        assert page.locator("#review-cards tr td:nth-child(4)").all_text_contents() == ["–"] * 52
        note.wait_for(state="detached")  # completed, and shown again without a reload
        shown = _shown_review(page)

        def same(r: dict) -> dict:
            return {k: v for k, v in r.items() if k != "seconds"}

        assert same(shown) == same(game["shown"][width])
        firsts = page.locator("#review-firsts li")
        assert firsts.count() == len(shown["first_costly"])
        assert page.locator("#review-cards tr.first-costly").count() == firsts.count()
        assert "–" not in page.locator("#review-cards tr td:nth-child(4)").all_text_contents()
        assert all("pending" not in r for r in read_reviews(game["folder"]).values())
    finally:
        page.close()
