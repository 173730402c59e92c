"""The pages for everyone, in the OS's Chromium at a desktop's and a phone's width:
axe-core finds no serious or critical violation (WCAG AA contrast included, with cards
that cannot be played shown) on the lobby, the table, a hand's review and the replay;
no page scrolls sideways; the phone's header stays compact; a card is played with the
keyboard alone (Tab to it, Enter); and the favicon is served. The docs' phone pictures
are taken here (SPADES_SCREENSHOTS=1).

One game serves the module: played through its seat's websocket to a turn where some
cards cannot be played (the table's pages are looked at there), then to the end of the
hand, whose review and replay are looked at next."""

from __future__ import annotations

import pytest
from web_helpers import (
    VIEWPORTS,
    Seat,
    Server,
    axe_serious,
    no_sideways_scroll,
    page_at,
    screenshot,
    seats,
    token_of,
)

pytest.importorskip("starlette")
pytestmark = [pytest.mark.browser, pytest.mark.cli]
WIDTHS = list(VIEWPORTS)
#: the most of a phone's height (844 px) the table's header may take
PHONE_HEADER = 844 // 8


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("root"), "--pace", "0")
    yield srv
    srv.stop()


@pytest.fixture(scope="module")
def game(server):
    """A table whose person (South) is to play a card, some of their cards not playable;
    its seat's link, websocket and id."""
    table = server.new_table(seats(human=2))
    link = table["links"][0]["link"]
    seat = Seat(server, token_of(link))
    while True:
        state = seat.turn()
        legal = {a["action"] for a in state["legal"]}
        if state["phase"] == "play" and len(legal) < len(state["hand"]):
            break
        see = [a["action"] for a in state["legal"] if a["label"] in ("see", "3")]
        seat.act(lambda s, see=see: see[0] if see else s["legal"][0]["action"])
    yield {"link": link, "seat": seat, "table": table["table"]}
    seat.close()


@pytest.fixture(scope="module")
def reviewed(game):
    """The same game once its first hand is over and reviewed."""
    seat = game["seat"]
    while not (seat.latest["sheet"] and seat.latest["reviews"]):
        if seat.latest["your_turn"] and not seat.latest["sheet"]:
            seat.act()
        else:
            seat.next("state", timeout=900)  # a fresh tree compiles the solver first
    return game


def _check(page, width) -> None:
    scroll, inner = no_sideways_scroll(page)
    assert scroll <= inner, f"{width}: the page is {scroll} px wide in a {inner} px window"
    assert axe_serious(page) == []


@pytest.mark.parametrize("width", WIDTHS)
def test_the_lobby(browser, server, width):
    page = page_at(browser, width)
    page.goto(server.url + "/")
    page.wait_for_function("window.spadesLobbyReady === true")
    _check(page, width)
    if width == "phone":  # the docs' picture (test_web_browser takes the desktop's)
        screenshot(page, "lobby-phone")
    page.click("#rules-details summary")  # the rules' options open
    _check(page, width)
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_table_with_cards_that_cannot_be_played(browser, server, game, width):
    page = page_at(browser, width)
    page.goto(server.url + game["link"])
    page.wait_for_function("window.spadesState && window.spadesState.your_turn")
    assert page.locator("#hand .card.dim").count() > 0
    assert page.locator("#hand .card.legal").count() > 0
    _check(page, width)
    header = page.locator("header").bounding_box()["height"]
    assert header <= (PHONE_HEADER if width == "phone" else 80), header
    assert page.locator("link[rel=icon]").count() == 1
    if width == "phone":
        screenshot(page, "table-phone")
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_review(browser, server, reviewed, width):
    page = page_at(browser, width)
    page.goto(server.url + reviewed["link"])
    page.wait_for_function(
        "!document.getElementById('review-panel').hidden"
        " && document.getElementById('review').textContent.length > 0"
    )
    page.locator("#review-panel").scroll_into_view_if_needed()
    if width == "phone":
        page.locator("#review-panel").screenshot(path=str(screenshot(page, "review-phone")))
    page.evaluate("document.querySelectorAll('#review details').forEach((d) => d.open = true)")
    _check(page, width)
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_the_replay(browser, server, reviewed, width):
    page = page_at(browser, width)
    page.goto(server.url + f"/replay?run=web/{reviewed['table']}")
    page.locator("#deals tr[data-deal]").first.click()
    page.locator(".side").first.wait_for()
    page.keyboard.press("ArrowRight")
    if width == "phone":
        screenshot(page, "replay-phone")
    _check(page, width)
    page.context.close()


@pytest.mark.parametrize("path", ["/", "/replay"])
def test_the_favicon(browser, server, path):
    page = page_at(browser, "desktop")
    page.goto(server.url + path)
    icon = page.evaluate(
        "fetch(document.querySelector('link[rel=icon]').href)"
        ".then(async (r) => [r.status, r.headers.get('content-type'), await r.text()])"
    )
    assert icon[0] == 200 and icon[1].startswith("image/svg+xml") and icon[2].startswith("<svg")
    old = page.evaluate(
        "fetch('/favicon.ico').then((r) => [r.status, r.headers.get('content-type')])"
    )
    assert old[0] == 200 and old[1].startswith("image/svg+xml")
    page.context.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_a_card_is_played_with_tab_and_enter(browser, server, width):
    table = server.new_table(seats(human=2))
    page = page_at(browser, width)
    page.goto(server.url + table["links"][0]["link"])
    while True:  # to the person's first card (bids by keyboard too: Tab to a button, Enter)
        page.wait_for_function("window.spadesState && window.spadesState.your_turn")
        state = page.evaluate("window.spadesState")
        if state["phase"] == "play":
            break
        label = next(a["label"] for a in state["legal"] if a["label"] in ("see", "3", "nil"))
        page.locator(f"#prompt button.act[data-action='{_action(state, label)}']").focus()
        page.keyboard.press("Enter")
        page.wait_for_function(f"window.spadesState.moves > {state['moves']}")
    page.locator("body").focus()
    for _ in range(60):  # the cards are in the Tab order
        page.keyboard.press("Tab")
        if page.evaluate("document.activeElement.matches('#hand .card.legal')"):
            break
    else:
        raise AssertionError("Tab never reached a playable card")
    card = int(page.evaluate("document.activeElement.dataset.card"))
    label = page.evaluate("document.activeElement.getAttribute('aria-label')")
    assert label and "not playable" not in label
    moves = state["moves"]
    page.keyboard.press("Enter")
    page.wait_for_function(f"window.spadesState.moves > {moves}")
    played = page.evaluate("window.spadesState")
    assert card not in {c["id"] for c in played["hand"]}
    page.context.close()


def _action(state, label: str) -> int:
    return next(a["action"] for a in state["legal"] if a["label"] == label)
