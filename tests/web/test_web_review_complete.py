"""A review's early cards left in tricks only are judged in points afterwards, one card
at a time (`complete_card`): the points equal the plain score solve's, the review then
has points for every card and its first costly cards marked from them, what is written
to reviews.json is enough to go on after a restart, a first review of a hand goes
first, and a card past the safety cap stays in tricks only and the review says so."""

from __future__ import annotations

import pytest
from test_web_review import _random_record, _record

from experiments.web import review as rv
from experiments.web.records import read_reviews, write_reviews
from experiments.web.replay import start_state
from spades_env.cards import str_to_action
from spades_env.engine import step
from spades_env.rules import Rules
from spades_env.state import PLAY


def _complete(record: dict, review: dict, most: int | None = None) -> tuple[dict, int]:
    """The review once `complete_card` has judged its pending cards (`most` of them at
    most), and how many calls that took."""
    calls = 0
    while "pending" in review and (most is None or calls < most):
        out = rv.complete_card(record, review)
        assert out is not None  # no first review waits for the solver
        assert out is not review  # the caller's review is not changed under it
        review, calls = out, calls + 1
    return review, calls


@pytest.fixture(scope="module")
def nil_hand() -> dict:
    """South's nil broken in trick 1 (`test_web_review`): its review with no budget for
    the early cards, and the same review completed."""
    record = _record(True)
    first = rv.review_hand(record, nodes=0)
    done, calls = _complete(record, first)
    return {"record": record, "first": first, "done": done, "calls": calls}


def test_the_cards_left_are_judged_in_points_as_the_plain_solver_judges_them(nil_hand):
    from agents.dd import DDSolver, Position, score_objective

    record, first, done = nil_hand["record"], nil_hand["first"], nil_hand["done"]
    n = first["pending"]["cards"]
    assert n == 16 and nil_hand["calls"] == n  # every card of tricks 1-4, one call each
    assert all(c["cost"] is None for c in first["cards"][:n])
    assert "first 16, which are still being judged" in first["objective"]["text"]
    assert "pending" not in done and all(c["cost"] is not None for c in done["cards"])
    assert done["cards"][n:] == first["cards"][n:]
    assert done["objective"]["score_tricks"] == 13 and "first" not in done["objective"]["text"]
    rules = Rules.preset("standard")
    objs = [
        score_objective(rules, record["bids"], record["blind"], t, relative=True) for t in (0, 1)
    ]
    state, k = start_state(record), 0
    for seat, text in record["actions"]:
        if int(state.phase[0]) == PLAY:
            if k < n:
                values = DDSolver().move_values(Position.from_state(state), objs[seat % 2])
                top = max(values.values())
                card = done["cards"][k]
                assert card["cost"] == round(top - values[str_to_action(text)], 3), card
                best = sorted(c for c, v in values.items() if v >= top - rv.EPS)[:4]
                assert card["best"] == [rv.card_label(c) for c in best], card
            k += 1
        step(state, [str_to_action(text)])
    # South's 2S breaking the nil in trick 1 is now priced, and marked South's first
    two = next(c for c in done["cards"] if c["seat"] == 2 and c["card"] == "2♠")
    assert two["trick"] == 1 and two["cost"] >= 100
    assert done["cards"][done["first_costly"]["2"]] is two
    assert "2" not in first["first_costly"] or first["cards"][first["first_costly"]["2"]] != two


def test_a_completed_review_is_the_review_with_room_for_every_card(nil_hand):
    whole = rv.review_hand(nil_hand["record"], nodes=10**12)
    done = nil_hand["done"]
    for key in ("cards", "first_costly", "first_costly_card", "objective", "dd", "seats"):
        assert done[key] == whole[key], key


@pytest.mark.parametrize("stop_after", [1, 7])
def test_a_restart_goes_on_from_what_reviews_json_kept(nil_hand, tmp_path, monkeypatch, stop_after):
    record = nil_hand["record"]
    part, _ = _complete(record, nil_hand["first"], most=stop_after)
    assert part["pending"]["cards"] == 16 - stop_after
    write_reviews(tmp_path, {0: part})
    # a new server: no solver, no objective kept in memory
    monkeypatch.setattr(rv, "_SOLVER", None)
    monkeypatch.setattr(rv, "_LAST", None)
    kept = read_reviews(tmp_path)[0]
    assert kept == part
    done, calls = _complete(record, kept)
    assert calls == 16 - stop_after
    assert {k: v for k, v in done.items() if k != "seconds"} == {
        k: v for k, v in nil_hand["done"].items() if k != "seconds"
    }


def test_a_first_review_goes_first(nil_hand, monkeypatch):
    monkeypatch.setattr(rv, "_URGENT", 1)  # a hand's first review waits for the solver
    assert rv.complete_card(nil_hand["record"], nil_hand["first"]) is None


def test_a_first_review_interrupts_the_card_being_judged(nil_hand, monkeypatch):
    """A hand's first review does not wait for the card judged in the background: it
    interrupts it (`DDSolver.interrupt`: the search gives up as past its node limit),
    the background call returns None with nothing changed, and is made again later."""
    import threading
    import time

    from agents.dd import SearchLimitError
    from agents.dd.transposition import P_LIMIT

    solver = rv._solver()
    real, started, got = solver.judge, threading.Event(), {}

    def endless(*args, **kwargs):  # a search that runs until it is interrupted
        solver._P[P_LIMIT] = 1 << 62
        started.set()
        until = time.monotonic() + 30
        while solver._P[P_LIMIT] != 0:
            if time.monotonic() > until:
                raise RuntimeError("never interrupted")
            time.sleep(0.001)
        solver.nodes = 0
        raise SearchLimitError("interrupted")

    def background():
        try:
            got["out"] = rv.complete_card(nil_hand["record"], nil_hand["first"])
        except RuntimeError as exc:
            got["out"] = exc

    monkeypatch.setattr(solver, "judge", endless)
    thread = threading.Thread(target=background)
    thread.start()
    assert started.wait(30)
    monkeypatch.setattr(solver, "judge", real)  # the first review's solves are real
    other = rv.review_hand(_record(False), nodes=10**12)
    thread.join(60)
    assert got["out"] is None and not rv._BACKGROUND
    assert all(c["cost"] is not None for c in other["cards"])  # not cut short
    done, calls = _complete(nil_hand["record"], nil_hand["first"])
    assert calls == 16 and done["cards"] == nil_hand["done"]["cards"]


@pytest.mark.parametrize("cap", [1, 1000])
def test_a_card_past_the_cap_stays_in_tricks_and_the_review_says_so(nil_hand, cap, monkeypatch):
    """Cards that need no search are judged whatever the cap; the first that passes it
    ends the judging: it and the cards before it keep their tricks only."""
    monkeypatch.setattr(rv, "_SOLVER", None)  # nothing known: the cards are searched
    review = nil_hand["first"]
    while "pending" in review:
        review = rv.complete_card(nil_hand["record"], review, nodes=cap)
    costs = [c["cost"] for c in review["cards"]]
    m = max(k + 1 for k, c in enumerate(costs) if c is None)
    assert 0 < m <= nil_hand["first"]["pending"]["cards"]
    assert review["cards"][m:] == nil_hand["done"]["cards"][m:]
    assert f"every card but the first {m} " in review["objective"]["text"]
    assert "search cap" in review["objective"]["text"]


@pytest.mark.slow
@pytest.mark.parametrize("seed", [3, 4])
def test_a_random_nil_hand_is_completed_as_with_room_for_every_card(seed):
    record = _random_record(seed)
    first = rv.review_hand(record, nodes=0)
    assert first["pending"]["cards"] > 0
    done, _ = _complete(record, first)
    assert all(c["cost"] is not None for c in done["cards"])
    whole = rv.review_hand(record, nodes=10**12)
    assert done["cards"] == whole["cards"] and done["first_costly"] == whole["first_costly"]
