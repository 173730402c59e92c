"""The table's score sheet against the engine: every hand of whole games of several
presets, its parts (contract, nils, bags, penalty) adding up to the engine's points and
its running total to the engine's scores; and the hand of the bag penalty that the sheet
once left out, by hand."""

from __future__ import annotations

import numpy as np
import pytest

from experiments.web.sheet import hand_row, sheet_rows
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.scoring import apply_bags, score_hand
from spades_env.single import SingleGame

#: (preset, options): short games (a low target, a cap on hands) so each ends quickly;
#: a small bag limit makes bag penalties common.
GAMES = [
    ("standard", "target=150,max_hands=8,bag_limit=3"),
    ("standard", "target=200,max_hands=6,blind_nil=always,nil_value=50"),
    ("standard", "max_hands=5,nil_tricks=count,bag_limit=2,bag_penalty=30"),
    ("jokers", "max_hands=5,bag_limit=4"),
    ("suicide", "max_hands=5"),
    ("cutthroat", "max_hands=5,bag_limit=3"),
    ("three_player", "max_hands=4"),
    ("family", "max_hands=4"),
]


def _whole_game(preset: str, options: str, seed: int) -> tuple[Rules, list[dict]]:
    """A whole game of random legal play, and the engine's record of every hand."""
    rules = Rules.build(preset, [options])
    game, rng, records = SingleGame(rules, seed=seed), np.random.default_rng(seed), []
    while not game.done:
        legal = game.legal_list()
        info = game.step(int(rng.choice(legal)))
        if info.finished is not None:
            records += hand_records(rules, info.finished)
    return rules, records


def _check_hand(rules: Rules, record: dict, row: dict, scores: list, bags: list) -> None:
    """One sheet row against `spades_env.scoring` from the bids and tricks alone."""
    hs = score_hand(rules, [record["bids"]], [record["blind"]], [record["tricks"]])
    after, held, penalty = apply_bags(rules, np.add(scores, hs.points[0]), np.add(bags, hs.bags[0]))
    assert row["hand"] == record["hand_no"] + 1
    for k, team in enumerate(row["teams"]):
        assert team["points"] == hs.points[0, k]
        assert team["penalty"] == penalty[k]
        assert team["bags_gained"] == hs.bags[0, k]
        assert team["net"] == hs.points[0, k] - penalty[k] == after[k] - scores[k]
        assert team["total"] == after[k] and team["bags"] == held[k]
        assert team["contract_points"] + sum(n["points"] for n in team["nils"]) == team["points"]
        if team["made"] is not None:
            assert team["made"] == bool(hs.made[0, k])
        for n in team["nils"]:
            assert record["bids"][n["seat"]] == 0 and rules.team_of(n["seat"]) == k
            assert n["made"] == (record["tricks"][n["seat"]] == 0)
            value = rules.blind_nil_value if n["blind"] else rules.nil_value
            assert n["points"] == (value if n["made"] else -value)


@pytest.mark.parametrize(("preset", "options"), GAMES)
def test_every_hand_of_a_whole_game_is_on_the_sheet_as_the_engine_scored_it(preset, options):
    hands = penalties = nils = 0
    for seed in (1, 2):
        rules, records = _whole_game(preset, options, seed)
        rows = sheet_rows(rules, records)
        assert len(rows) == len(records) > 0
        scores, bags = [0] * rules.num_teams, [0] * rules.num_teams
        for record, row in zip(records, rows, strict=True):
            assert record["scores_before"] == scores
            _check_hand(rules, record, row, scores, bags)
            scores, bags = record["scores"], record["bags"]
            hands += 1
            penalties += sum(t["penalty"] > 0 for t in row["teams"])
            nils += sum(len(t["nils"]) for t in row["teams"])
        assert records[-1]["game_over"]
    assert hands >= 4
    if "bag_limit" in options:  # the sheet shows the penalty these games do pay
        assert penalties > 0
    if preset == "family":
        assert nils == 0  # RULES.md §6 family: no nil


def test_the_bag_penalty_hand_nets_the_penalty():
    """Bid 6, took 8 with 8 bags held from 19 points: +62 for the hand, 10 bags reached,
    100 points lost: -38, and the total -19 (the sheet used to read "+62 -> -19")."""
    rules = Rules.preset("standard")
    bids, blind, tricks = [3, 2, 3, 2], [False] * 4, [4, 2, 4, 3]
    hs = score_hand(rules, [bids], [blind], [tricks])
    after, held, penalty = apply_bags(
        rules, np.add([19, 0], hs.points[0]), np.add([8, 0], hs.bags[0])
    )
    record = {
        "hand_no": 3,
        "bids": bids,
        "blind": blind,
        "tricks": tricks,
        "points": hs.points[0].tolist(),
        "bags_gained": hs.bags[0].tolist(),
        "penalty": penalty.tolist(),
        "scores": after.tolist(),
        "bags": held.tolist(),
    }
    ns = hand_row(rules, record)["teams"][0]
    assert (ns["points"], ns["penalty"], ns["net"], ns["total"]) == (62, 100, -38, -19)
    assert ns["made"] is True and ns["bags_gained"] == 2 and ns["bags"] == 0
    ew = hand_row(rules, record)["teams"][1]
    assert (ew["points"], ew["net"], ew["made"]) == (41, 41, True)


@pytest.mark.parametrize("blind", [False, True])
@pytest.mark.parametrize("nil_tricks", [0, 1, 3])
def test_a_nil_is_kept_or_broken_on_its_own(blind, nil_tricks):
    rules = Rules.build("standard", ["blind_nil=always"])
    bids, flags = [4, 3, 0, 3], [False, False, blind, False]
    tricks = [5, 3, nil_tricks, 5 - nil_tricks]
    hs = score_hand(rules, [bids], [flags], [tricks])
    record = {
        "hand_no": 0,
        "bids": bids,
        "blind": flags,
        "tricks": tricks,
        "points": hs.points[0].tolist(),
        "bags_gained": hs.bags[0].tolist(),
        "penalty": [0, 0],
        "scores": hs.points[0].tolist(),
        "bags": hs.bags[0].tolist(),
    }
    ns = hand_row(rules, record)["teams"][0]
    (nil,) = ns["nils"]
    value = 200 if blind else 100
    assert nil["seat"] == 2 and nil["made"] == (nil_tricks == 0)
    assert nil["points"] == (value if nil_tricks == 0 else -value)
    # RULES.md §4 nil_tricks=bags: North's 5 of 4 made; each nil trick +1 and a bag
    assert ns["made"] and ns["contract_points"] == 41 + nil_tricks
    assert ns["bags_gained"] == 1 + nil_tricks


# ----------------------------------------------------------------------------- in Chromium
@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A short game played to its end (one person, three random bots; a bag limit of 1,
    so that bag penalties come), and the records of its hands."""
    from web_helpers import Server, chromium, play_to_game_over, seats

    pytest.importorskip("starlette")
    srv = Server(tmp_path_factory.mktemp("root"), "--pace", "0", "--no-review")
    pw, browser = chromium()
    try:
        table = srv.new_table(
            seats(human=2, agent="random"), options="max_hands=3,bag_limit=1,bag_penalty=50"
        )
        link = srv.url + table["links"][0]["link"]
        page = browser.new_page()
        page.goto(link)
        play_to_game_over(page)
        page.close()
        from experiments.tournament.results_log import read_rows

        records = [r["record"] for r in read_rows(srv.root / "web" / table["table"])]
        yield browser, link, records
    finally:
        browser.close()
        pw.stop()
        srv.stop()


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_sheet_in_chromium_shows_every_hand_as_the_engine_scored_it(finished, width):
    from web_helpers import VIEWPORTS

    browser, link, records = finished
    page = browser.new_page(viewport=VIEWPORTS[width])
    try:
        page.goto(link)
        page.wait_for_function("window.spadesState && window.spadesState.game_over")
        rows = page.locator("#sheet tr.sheet-hand")
        assert rows.count() == len(records) == 3
        penalties = 0
        for k, rec in enumerate(records):
            cells = rows.nth(k).locator("td").all_inner_texts()[1:]
            parts = page.locator("#sheet tr.sheet-parts").nth(k).inner_text()
            for team, cell in enumerate(cells):
                net = rec["scores"][team] - rec["scores_before"][team]
                assert cell == f"{'+' if net > 0 else ''}{net} → {rec['scores'][team]}"
                if rec["penalty"][team]:
                    penalties += 1
                    assert f"bag penalty −{rec['penalty'][team]}" in parts
            for s, bid in enumerate(rec["bids"]):  # each nil on its own, by its seat
                if bid == 0:
                    name = ["North", "East", "South", "West"][s]
                    assert f"{name} {'blind nil' if rec['blind'][s] else 'nil'}" in parts
        assert penalties > 0  # a bag limit of 1: a penalty is all but certain
        # after the game: how many hands were played, the final scores, no live bid
        assert "game over after 3 hands" in page.inner_text("#info")
        last = page.locator("#sheet tr").last.inner_text()
        assert last.startswith("final") and "bid" not in last
        box = page.evaluate("document.documentElement.scrollWidth")
        assert box <= VIEWPORTS[width]["width"]  # no sideways scroll at this width
    finally:
        page.close()
