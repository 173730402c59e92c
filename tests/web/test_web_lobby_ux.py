"""A lobby and a table a person understands, in the OS's Chromium at a desktop's and a
phone's width: every choice a drop-down with its meaning (presets, rules options, agents
with their leaderboard strength), "you", "your partner" and "opponent" by seat, any name a
person types (shown as text, never as markup), a partner who is away shown and waited
for, turn alerts (the tab's title, an optional sound), the opponents' card backs, the
card faces in words, and errors in the lobby's words."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from web_helpers import (
    VIEWPORTS,
    Seat,
    Server,
    click_turn,
    no_sideways_scroll,
    page_at,
    page_state,
    seats,
    token_of,
    wait_turn,
)

from experiments.web.catalogue import (
    AGENT_LINES,
    LEADERBOARD,
    OPTION_LINES,
    PRESET_LINES,
    read_leaderboard,
    strength_line,
)
from spades_env.rules import PRESETS, Rules

pytest.importorskip("starlette")
pytestmark = pytest.mark.cli  # a spades serve subprocess
WIDTHS = list(VIEWPORTS)
#: options the presets set (the table's shape and its kind of game), not the lobby's
PRESET_ONLY = {
    "num_players",
    "hand_size",
    "deck",
    "draw",
    "partnerships",
    "scoring",
    "bid_constraint",
    "trump",
}
SEAT_NAMES = ["North", "East", "South", "West"]
#: names as people type them: accents and apostrophes, emoji (a joined family), scripts
#: written right to left, CJK, markup that must stay text, and the longest allowed
NAMES = [
    "Zoë O'Brien",
    "🂡 Ace 👨‍👩‍👧",
    "שלום עולם",
    "名前テスト",
    '<img src=x onerror="window.__xss=1">',
    "x" * 40,
]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    srv = Server(tmp_path_factory.mktemp("root"), "--pace", "0", "--no-review")
    yield srv
    srv.stop()


def _lobby(browser, server, width):
    page = page_at(browser, width)
    page.goto(server.url + "/")
    page.wait_for_function("window.spadesLobbyReady === true")
    return page


def _roles(page) -> dict[str, str]:
    return {
        row.get_attribute("data-seat"): row.locator(".role").inner_text()
        for row in page.locator("#seats .seat-row").all()
    }


# ============================================================================ the catalogue
def test_every_preset_and_every_option_of_the_rules_has_its_line():
    assert set(PRESET_LINES) == set(PRESETS)
    assert set(OPTION_LINES) | PRESET_ONLY == set(Rules.option_names())
    assert not set(OPTION_LINES) & PRESET_ONLY
    for name, (meaning, values) in OPTION_LINES.items():
        assert meaning
        for value in values:  # every value offered is one the rules take
            preset = "standard" if name != "open_hands" else "family"
            extra = ["blind_nil=always"] if name == "blind_nil_exchange" else []
            Rules.build(preset, [",".join([*extra, f"{name}={value}"])])


def test_the_leaderboard_is_read_into_each_agents_strength(tmp_path: Path):
    page = tmp_path / "board.md"
    page.write_text(
        "# Leaderboard\n\ntext\n\n| agent | vs `random` | vs `heuristic` | version |\n"
        "|---|---:|---:|---|\n"
        "| `pimc:worlds=64` | +200.0 [+1, +2] | +26.2 [+1, +2] | 0.2.0 |\n"
        "| `heuristic` | +194.4 [+1, +2] | +0.0 [+0.0, +0.0] | 0.1.0 |\n"
        "| `random` | -2.1 [-5, +1] | -194.1 [-1, -2] | 0.1.0 |\n\n"
        "## Later\n\n| agent | nils made |\n|---|---:|\n| `heuristic` | 5% of 3 |\n"
    )
    rows = read_leaderboard(page)
    assert list(rows) == ["pimc:worlds=64", "heuristic", "random"]
    assert strength_line("heuristic", rows) == (
        "leaderboard: 2 of 3; +194.4 points a deal against random"
    )
    assert (
        strength_line("random", rows)
        == "leaderboard: 3 of 3; -194.1 points a deal against heuristic"
    )
    assert strength_line("pimc", rows) == (
        "leaderboard: 1 of 3 (as pimc:worlds=64); +26.2 points a deal against heuristic"
    )
    assert strength_line("search", rows) is None
    assert read_leaderboard(tmp_path / "missing.md") == {}


def test_the_server_offers_the_catalogue_with_lines_and_strengths(server):
    status, data = server.get("/api/options")
    assert status == 200
    rows = read_leaderboard(LEADERBOARD)
    for offer in data["catalogue"]:
        assert offer["help"] == AGENT_LINES.get(offer["name"], offer["help"])
        assert offer["strength"] == strength_line(offer["name"], rows)
    assert rows, "the project's leaderboard page was not read"
    assert {p: v["line"] for p, v in data["rules"]["presets"].items()} == PRESET_LINES
    assert set(data["rules"]["options"]) == set(OPTION_LINES)


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"seats": seats(agent="nobody")}, "North's agent: 'nobody' is not an agent"),
        ({"seats": seats(agent="heuristic:aggression=lots")}, "North's agent: heuristic:"),
        ({"seats": seats(), "options": ["target=0"]}, "the rules: rules option target=0"),
        ({"seats": seats(), "options": ["bogus=1"]}, "the rules: unknown rules option"),
        ({"seats": seats(), "rules": "nope"}, "the rules: unknown preset 'nope'"),
        ({"seats": [*seats()[:3], {"kind": "robot"}]}, "West: a person or an agent"),
        ({"seats": [*seats()[:3], "x"]}, "West: say who sits there"),
        ({"seats": seats()[:3]}, "seats: standard has 4 seats"),
    ],
)
def test_errors_speak_the_lobbys_words(server, body, words):
    status, data = server.post("/api/tables", body)
    assert status == 400
    assert data["error"].startswith(words), data["error"]
    assert not re.search(r"seat \d|--option|--rules", data["error"]), data["error"]


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("x" * 41, "South: a name has at most 40 characters (this one has 41)"),
        ("two\nlines", "South: a name is one line of text"),
        ("bell\x07", "South: a name is one line of text"),
        (7, "South: a name is a text"),
    ],
)
def test_a_name_past_the_bounds_is_refused_in_one_line(server, name, why):
    body = seats()
    body[2]["name"] = name
    status, data = server.post("/api/tables", {"seats": body})
    assert status == 400 and data["error"].startswith(why), data


# ============================================================================ the lobby
@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_the_lobby_says_what_each_choice_means(browser, server, width):
    page = _lobby(browser, server, width)
    presets = page.locator("#preset option").all_inner_texts()
    assert presets == [f"{p} — {PRESET_LINES[p]}" for p in PRESETS]
    assert page.inner_text("#preset-line") == PRESET_LINES["standard"]
    page.click("#rules-details summary")
    for name, (meaning, values) in OPTION_LINES.items():
        control = page.locator(f"[data-option='{name}']")
        assert control.is_visible()
        assert page.inner_text(f"#opt-{name}-help").startswith(meaning)
        if values:
            texts = control.locator("option").all_inner_texts()
            assert texts == [f"{v} — {m}" for v, m in values.items()]
    # agents: a line each, and the leaderboard's row in the seat's line
    rows = read_leaderboard(LEADERBOARD)
    texts = page.locator("#seat-0-who optgroup option").all_inner_texts()
    assert texts and all(" — " in t for t in texts)
    strength = strength_line("heuristic", rows)
    assert strength[0].upper() + strength[1:] in page.inner_text("[data-seat='0'] .help")
    # who each seat is to the person, and after they move
    assert _roles(page) == {
        "0": "— your partner",
        "1": "— opponent",
        "2": "— you",
        "3": "— opponent",
    }
    page.select_option("#seat-1-who", "me")
    assert _roles(page) == {
        "0": "— opponent",
        "1": "— you",
        "2": "— opponent",
        "3": "— your partner",
    }
    assert page.input_value("#seat-2-who") == "agent:heuristic"  # one "you" at a time
    page.select_option("#preset", "cutthroat")
    assert page.inner_text("#preset-line") == PRESET_LINES["cutthroat"]
    assert set(_roles(page).values()) == {"— you", "— opponent"}
    # what a game writes, as this server was started (datasets kept)
    assert "training dataset (its bc-seatN folders" in page.inner_text("#writes")
    sw, inner = no_sideways_scroll(page)
    assert sw <= inner
    page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_a_changed_option_reaches_the_table_and_a_bad_one_is_told(browser, server, width):
    page = _lobby(browser, server, width)
    page.click("#rules-details summary")
    page.fill("#opt-target", "0")
    page.click("#start")
    error = page.locator("#error")
    error.filter(has_text="target").wait_for()
    assert not re.search(r"--option|seat \d", error.inner_text()), error.inner_text()
    page.fill("#opt-target", "300")
    page.select_option("#opt-blind_nil", "never")
    assert page.inner_text("#changed") == "(2 changed from the preset)"
    page.click("#start")
    page.wait_for_url("**/table/**")
    state = wait_turn(page, "true")
    assert state["rules"]["target"] == 300
    game = json.loads((server.root / "web" / state["table"] / "game.json").read_text())
    assert game["rules"]["target"] == 300 and game["rules"]["blind_nil"] == "never"
    page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_any_name_is_taken_and_shown_as_text(browser, server, width):
    page = _lobby(browser, server, width)
    roles = {0: "your partner", 1: "opponent", 2: "you", 3: "opponent"}
    for names in (NAMES[:4], [*NAMES[4:], "Ann", "Bo"]):  # South's name first
        page.goto(server.url + "/")
        page.wait_for_function("window.spadesLobbyReady === true")
        page.fill("#name", names[0])
        for seat, name in zip((0, 1, 3), names[1:], strict=True):
            page.select_option(f"#seat-{seat}-who", "human")
            page.fill(f"#seat-{seat}-name", name)
        page.click("#start")
        page.locator("#link-list li").nth(3).wait_for()
        listed = page.locator("#link-list li .link-who").all_inner_texts()
        by_seat = dict(zip((2, 0, 1, 3), names, strict=True))
        assert listed == [
            f"{SEAT_NAMES[s]} ({by_seat[s]}{'' if s == 2 else ', ' + roles[s]}): " for s in range(4)
        ]
        page.click("#link-list a.my-seat")
        page.wait_for_url("**/table/**")
        state = wait_turn(page, "true")
        for seat, name in by_seat.items():
            mark = "you" if seat == 2 else roles[seat]
            who = page.inner_text(f".seat[data-seat='{seat}'] .who")
            assert who == f"{SEAT_NAMES[seat]}: {name} ({mark})"
        assert page.evaluate("window.__xss") is None
        assert page.locator("img").count() == 0
        game = json.loads((server.root / "web" / state["table"] / "game.json").read_text())
        assert [seat["name"] for seat in game["seats"]] == [by_seat[s] for s in range(4)]
    # past the bound: the lobby says so, and nothing is made
    page.goto(server.url + "/")
    page.wait_for_function("window.spadesLobbyReady === true")
    page.fill("#name", "y" * 41)
    page.click("#start")
    assert page.inner_text("#error") == (
        "Your name is too long: at most 40 characters (it has 41)."
    )
    assert "/table/" not in page.url
    page.context.close()


# ============================================================================ the table
@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_a_partner_away_is_shown_and_waited_for(browser, server, width):
    table = server.new_table(seats(human=2, s0="Bo"))
    links = {link["seat"]: link["link"] for link in table["links"]}
    page = page_at(browser, width)
    page.goto(server.url + links[2])
    wait_turn(page, "true")
    away = page.locator(".seat[data-seat='0'] .away")
    away.wait_for()
    bo = Seat(server, token_of(links[0]))  # Bo comes back: shown at once
    try:
        bo.next("state")
        away.wait_for(state="detached")
    finally:
        bo.close()
    away.wait_for()  # and leaves again
    # the table waits at Bo's turn: nobody plays for them
    while page_state(page)["to_act"] != 0:
        state = wait_turn(page, "s.your_turn || s.to_act === 0")
        if state["your_turn"]:
            click_turn(page)
    moves = page_state(page)["moves"]
    assert "away: waiting for them" in page.inner_text("#turn-msg")
    assert "away: the table waits for them" in away.inner_text()
    page.wait_for_timeout(1000)
    assert page_state(page)["moves"] == moves
    page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_turn_alerts_the_title_the_sound_and_the_announcements(browser, server, width):
    # every text the live region is given, in order
    said = """document.addEventListener("DOMContentLoaded", () => {
      const box = document.getElementById("announce");
      window.__said = [];
      new MutationObserver(() => window.__said.push(box.textContent))
        .observe(box, { childList: true, characterData: true, subtree: true });
    });"""
    for sound in (True, False):
        table = server.new_table(seats(human=2))
        page = page_at(browser, width)
        page.add_init_script(said)
        if sound:  # the person turned the sound on at an earlier visit (the page keeps it)
            page.add_init_script("localStorage.setItem('spades-sound', 'on')")
        page.goto(server.url + table["links"][0]["link"])
        wait_turn(page)
        assert page.is_checked("#sound") == sound
        assert page.title() == "▶ Your turn — Spades — table"
        assert page.evaluate("window.spadesSounds") == (1 if sound else 0)
        titles = set()  # (the title, whether it is the person's turn) as drawn together
        # to the first finished trick: its winner is announced, as each turn was
        while True:
            click_turn(page)
            titles.add(tuple(page.evaluate("[document.title, window.spadesState.your_turn]")))
            state = wait_turn(page, "s.your_turn || s.last_trick")
            if state.get("last_trick"):
                break
        assert titles <= {("▶ Your turn — Spades — table", True), ("Spades — table", False)}
        assert ("Spades — table", False) in titles
        page.wait_for_function("window.__said.some((t) => t.includes('took trick 1'))")
        said_lines = page.evaluate("window.__said")
        assert any(t.startswith("Your turn: your bid") for t in said_lines), said_lines
        sounds = page.evaluate("window.spadesSounds")
        assert (sounds >= 2) if sound else sounds == 0
        page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_the_opponents_card_backs_count_their_cards(browser, server, width):
    table = server.new_table(seats(human=2))
    page = page_at(browser, width)
    page.goto(server.url + table["links"][0]["link"])
    wait_turn(page)
    for seat in (0, 1, 3):
        backs = page.locator(f".seat[data-seat='{seat}'] .backs")
        assert backs.get_attribute("data-left") == "13"
        assert backs.locator(".count").inner_text() == "13 cards"
    assert page.locator(".seat[data-seat='2'] .backs").count() == 0  # your own hand is shown
    while page_state(page)["tricks_played"] < 2:
        state = wait_turn(page, "s.your_turn || s.tricks_played >= 2")
        if state["your_turn"]:
            click_turn(page)
    # the state and what the page drew of it, read together (the bots play on meanwhile)
    state, drawn = page.evaluate(
        "[window.spadesState, [0, 1, 3].map((s) =>"
        " Number(document.querySelector(`.seat[data-seat='${s}'] .backs`).dataset.left))]"
    )
    for seat, left in zip((0, 1, 3), drawn, strict=True):
        played = state["tricks_played"] + (state["trick"][seat] is not None)
        assert left == 13 - played == state["cards_left"][seat]
    page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_the_card_faces_are_explained(browser, server, width):
    table = server.new_table(seats(human=2))
    page = page_at(browser, width)
    page.goto(server.url + table["links"][0]["link"])
    wait_turn(page, "s.hand.length > 0")
    ranks = {"A": "ace", "K": "king", "Q": "queen", "J": "jack", "T": "ten", "9": "nine"}
    suits = {"♠": "spades", "♥": "hearts", "♦": "diamonds", "♣": "clubs"}
    for card in page.locator("#hand .card").all():
        face = card.inner_text().replace("\n", "")
        rank, suit = face[:-1], face[-1]
        words = f"{ranks.get(rank, '')} of {suits[suit]}"
        assert card.get_attribute("title") == card.get_attribute("aria-label").split(",")[0]
        if rank in ranks:
            assert card.get_attribute("title") == words
    names = page.evaluate(
        "[cardName({label: 'BJ', suit: 4}), cardName({label: 'LJ', suit: 4}),"
        " cardName({label: 'T♠', suit: 0}), cardName({label: '2♣', suit: 3})]"
    )
    assert names == ["big joker", "little joker", "ten of spades", "two of clubs"]
    legend = page.inner_text("#legend")
    assert "T (ten)" in legend and "BJ and LJ are the big and little jokers" in legend
    page.context.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", WIDTHS)
def test_the_hint_agent_is_picked_from_a_described_list(browser, server, width):
    table = server.new_table(seats(human=2))
    page = page_at(browser, width)
    page.goto(server.url + table["links"][0]["link"])
    wait_turn(page)
    _, data = server.get("/api/options")
    offered = page.locator("#hint-agent option").all_inner_texts()
    assert offered == ["heuristic (this table's)"] + [
        f"{a['name']} — {a['help']}" for a in data["catalogue"]
    ]
    page.select_option("#hint-agent", "random")
    page.click("#hint-btn")
    page.locator("#hint-line").filter(has_text="random:").wait_for()
    page.context.close()
