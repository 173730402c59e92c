"""The table in a real browser (the OS's Chromium, driven by Playwright): a hand played by
clicking and one by keyboard with the score the engine made, two people as partners with
a reload, what each browser received over the wire, a tournament deal replayed, and a
game resumed after the server was killed. The screenshots of the docs are taken here."""

from __future__ import annotations

import json
import shutil

import pytest
from web_helpers import Server, leaked_cards, screenshot, seats, token_of

from experiments.tournament.results_log import read_rows
from spades_env.records import replay

pytest.importorskip("starlette")
pytestmark = [pytest.mark.browser, pytest.mark.cli]
WAIT_MS = 60_000


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("root"), "--pace", "0")
    yield srv
    srv.stop()


def _page(browser, context=None):
    context = context or browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    page.set_default_timeout(WAIT_MS)
    return page


def _state(page) -> dict:
    """The last state the page received (table.js keeps it as window.spadesState)."""
    return page.evaluate("window.spadesState || null") or {}


def _hands_done(page) -> int:
    return len(_state(page).get("sheet", []))


def _moves(page) -> int:
    return _state(page).get("moves", -1)


def _wait_moved(page, before: int) -> None:
    page.wait_for_function(f"window.spadesState.moves > {before}")


def _wait_turn_or_hand(page, hands: int) -> None:
    page.wait_for_function(
        "(h) => { const s = window.spadesState;"
        " return s && (s.your_turn || s.sheet.length > h || s.game_over); }",
        arg=hands,
    )


def _click_turn(page) -> None:
    """One move by mouse: a bid button (not blind nil), else the first legal card."""
    buttons = page.locator("#prompt button.act")
    if buttons.count():
        labels = buttons.all_inner_texts()
        pick = next((i for i, t in enumerate(labels) if t in ("see", "3", "2", "4")), 0)
        buttons.nth(pick).click()
    else:
        page.locator("#hand .card.legal").first.click()


def _play_hand(page, how) -> None:
    start = _hands_done(page)
    while _hands_done(page) == start:
        _wait_turn_or_hand(page, start)
        if _hands_done(page) > start:
            break
        before = _moves(page)
        how(page)
        _wait_moved(page, before)


def _shown_scores(page) -> list[int]:
    text = page.locator("#sheet tr").nth(1).inner_text()
    return [int(cell.split("→")[1]) for cell in text.split("\t")[1:]]


def _records(server, table_id):
    return [r["record"] for r in read_rows(server.root / "web" / table_id)]


def test_a_hand_by_clicking_shows_the_engines_score(browser, server):
    page = _page(browser)
    page.goto(server.url + "/")
    page.locator("#seats .seat-row").first.wait_for()
    page.fill("#name", "Ann")
    screenshot(page, "lobby")
    page.click("#start")
    page.wait_for_url("**/table/**")
    page.wait_for_function("window.spadesFrames.length > 0")
    _wait_turn_or_hand(page, 0)
    # an illegal choice: refused with the reason and the rule, nothing played
    _play_until_play_phase(page)
    assert "your" in page.inner_text("#turn-msg").lower()  # "Your turn" or "... your lead"
    dim = page.locator("#hand .card.dim")
    if dim.count():
        before = _moves(page)
        dim.first.click()
        page.locator("#error").filter(has_text="RULES.md").wait_for()
        assert _moves(page) == before
    screenshot(page, "table")
    _play_hand(page, _click_turn)
    table_id = page.evaluate("JSON.parse(window.spadesFrames[0]).table")
    record = _records(server, table_id)[0]
    assert replay(record) == record  # the engine's own hand
    assert _shown_scores(page) == record["scores"]
    # the double-dummy review of the hand (a fresh tree compiles the solver first: minutes)
    page.locator("#review-bids").wait_for(timeout=900_000)
    page.locator("#review-panel").screenshot(path=str(screenshot(page, "review")))
    page.context.close()


def _play_until_play_phase(page) -> None:
    while True:
        _wait_turn_or_hand(page, 0)
        state = _state(page)
        if state.get("phase") == "play" and state.get("your_turn"):
            return
        before = _moves(page)
        _click_turn(page)
        _wait_moved(page, before)


def _keys(page) -> None:
    page.keyboard.press("ArrowRight")
    page.keyboard.press("Enter")


def test_a_hand_by_keyboard(browser, server):
    table = server.new_table(seats(human=1))
    page = _page(browser)
    page.goto(server.url + table["links"][0]["link"])
    page.wait_for_function("window.spadesFrames.length > 0")
    _play_hand(page, _keys)
    record = _records(server, table["table"])[0]
    assert _shown_scores(page) == record["scores"]
    page.context.close()


def test_partners_on_two_browsers_finish_a_hand_and_a_reload_rejoins(browser, server):
    table = server.new_table(seats(human=2, s0="Bo"))
    links = {link["seat"]: server.url + link["link"] for link in table["links"]}
    pages = {s: _page(browser) for s in links}
    for s, page in pages.items():
        page.goto(links[s])
        page.wait_for_function("window.spadesFrames.length > 0")
    frames = {s: [] for s in pages}
    reloaded = False
    while True:
        states = {
            s: json.loads(p.evaluate("window.spadesFrames[window.spadesFrames.length-1]"))
            for s, p in pages.items()
        }
        if any(st.get("sheet") for st in states.values()):
            break
        turn = next((s for s, st in states.items() if st.get("your_turn")), None)
        if turn is None:
            pages[0].wait_for_timeout(50)
            continue
        page = pages[turn]
        before = states[turn]["moves"]
        _click_turn(page)
        _wait_moved(page, before)
        if not reloaded and before > 20:  # Bo reloads mid-hand: the seat is as it was
            hand = states[0]["hand"]
            frames[0] += pages[0].evaluate("window.spadesFrames")
            pages[0].reload()
            pages[0].wait_for_function("window.spadesFrames.length > 0")
            again = json.loads(pages[0].evaluate("window.spadesFrames[0]"))
            assert again["seat"] == 0 and len(again["hand"]) <= len(hand)
            assert {c["id"] for c in again["hand"]} <= {c["id"] for c in hand}
            reloaded = True
    assert reloaded
    for s, page in pages.items():
        page.wait_for_function("window.spadesState && window.spadesState.sheet.length > 0")
        frames[s] += page.evaluate("window.spadesFrames")
    records = _records(server, table["table"])
    for s in pages:  # what each browser received never held another seat's hidden cards
        assert len(frames[s]) > 20
        assert leaked_cards(frames[s], s, records) == []
    for page in pages.values():
        page.context.close()


def test_a_tournament_deal_replays_step_by_step(browser, server, small_run):
    shutil.copytree(small_run, server.root / "tour", dirs_exist_ok=True)
    page = _page(browser)
    page.goto(server.url + "/replay?run=tour")
    page.locator("#deals tr[data-deal='1']").first.click()
    page.locator(".side").nth(1).wait_for()
    assert page.locator(".side").count() == 2
    rows = [r for r in read_rows(small_run) if r["deal"] == 1 and r["hand"] == 0]
    logged = next(r for r in rows if r["side"] == 0)["record"]["actions"]
    seen = []
    for _ in range(len(logged)):
        page.keyboard.press("ArrowRight")
        seen.append(page.locator(".side[data-side='0'] .last-action").inner_text())
    from experiments.table.words import card_label
    from spades_env.cards import NUM_CARDS, str_to_action

    def label(text):
        a = str_to_action(text)
        return card_label(a) if 0 <= a < NUM_CARDS else text

    plays = [label(t) for _, t in logged]
    assert [s.split(" ", 1)[1] for s in seen] == plays
    page.keyboard.press("Home")
    page.keyboard.press("d")  # to the first difference of the two tables, if any
    screenshot(page, "replay")
    page.context.close()


def test_a_killed_server_resumes_in_the_browser(browser, tmp_path):
    srv = Server(tmp_path, "--pace", "0", "--no-review")
    table = srv.new_table(seats(human=2))
    token = token_of(table["links"][0]["link"])
    page = _page(browser)
    page.goto(srv.url + f"/table/{token}")
    page.wait_for_function("window.spadesFrames.length > 0")
    _play_hand(page, _click_turn)
    for _ in range(3):  # a few moves into the next hand
        _wait_turn_or_hand(page, 1)
        before = _moves(page)
        _click_turn(page)
        _wait_moved(page, before)
    moves, shown = _moves(page), _shown_scores(page)
    srv.kill()
    page.locator("#status").filter(has_text="reconnecting").wait_for()
    again = Server(tmp_path, "--pace", "0", "--no-review")
    try:
        page.goto(again.url + f"/table/{token}")
        page.wait_for_function("window.spadesFrames.length > 0")
        assert _moves(page) >= moves
        assert _shown_scores(page) == shown
        assert len(read_rows(tmp_path / "web" / table["table"])) == 1
    finally:
        page.context.close()
        again.stop()


def test_a_running_tournament_is_watched_as_rows_arrive(browser, server, small_run):
    lines = (small_run / "log.jsonl").read_text().splitlines(keepends=True)
    run = server.root / "running"
    run.mkdir()
    shutil.copy(small_run / "config.json", run / "config.json")
    half = len(lines) // 2
    (run / "log.jsonl").write_text("".join(lines[:half]))
    page = _page(browser)
    page.goto(server.url + "/replay?run=running")
    page.locator("#count").filter(has_text=f"{half} rows").wait_for()
    page.check("#follow")
    with open(run / "log.jsonl", "a") as log:  # the tournament logs its next units
        log.write("".join(lines[half:]))
    page.locator("#count").filter(has_text=f"{len(lines)} rows").wait_for()
    page.context.close()
