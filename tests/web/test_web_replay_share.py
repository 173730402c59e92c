"""Replays to share: a link opens a deal at a decision, a game or a deal exports as hand
records, a record file imports checked action by action (a bad one named by its first
wrong action), and the showdown claims the rest of a hand once no play can change it;
in Chromium at desktop and phone widths, and the import's checks as a family."""

from __future__ import annotations

import copy
import json

import numpy as np
import pytest

from experiments.web.share import ShareError, claims, import_records
from spades_env.cards import action_to_str, str_to_action
from spades_env.records import hand_records, replay
from spades_env.rules import Rules
from spades_env.single import SingleGame


def _hand(seed: int = 4) -> dict:
    rules = Rules.preset("standard")
    game, rng = SingleGame(rules, seed=seed), np.random.default_rng(seed)
    while True:
        info = game.step(int(rng.choice(game.legal_list())))
        if info.finished is not None:
            return hand_records(rules, info.finished)[0]


def _first_play(rec: dict) -> int:
    return next(k for k, (_, a) in enumerate(rec["actions"]) if len(a) == 2 and a[1] in "SHDC")


def _broken(rec: dict, how: str) -> tuple[dict, str]:
    """The record damaged one way, and what the error must name."""
    bad = copy.deepcopy(rec)
    k = _first_play(rec) + 5  # an action of the play (the second trick)
    seat = bad["actions"][k][0]
    if how == "wrong seat":
        bad["actions"][k][0] = (seat + 1) % 4
        return bad, f"action {k + 1} ("
    if how == "card not held":
        held = {c for c in rec["deal"][seat]}
        other = next(c for h in rec["deal"] for c in h if c not in held)
        bad["actions"][k][1] = other
        return bad, f"action {k + 1} ("
    if how == "not an action":
        bad["actions"][k][1] = "XX"
        return bad, f"action {k + 1} ("
    if how == "after the end":
        bad["actions"].append(list(bad["actions"][-1]))
        return bad, "ended"
    if how == "short":
        del bad["actions"][-3:]
        return bad, "does not end"
    if how == "outcome":
        bad["scores"] = [s + 10 for s in bad["scores"]]
        return bad, "scores"
    if how == "missing field":
        del bad["deal"]
        return bad, "'deal'"
    raise AssertionError(how)


HOW = ["wrong seat", "card not held", "not an action", "after the end", "short", "outcome",
       "missing field"]  # fmt: skip


@pytest.mark.parametrize("how", HOW)
def test_a_bad_record_file_is_refused_naming_its_first_wrong_action(how):
    rec = _hand()
    bad, named = _broken(rec, how)
    text = json.dumps(rec) + "\n" + json.dumps(bad) + "\n"  # the second hand is bad
    with pytest.raises(ShareError, match="hand 2 of the file") as err:
        import_records(text)
    assert named in str(err.value)
    assert "\n" not in str(err.value)


def test_an_illegal_card_names_the_rule():
    rec = _hand()
    for k in range(_first_play(rec) + 1, len(rec["actions"])):
        seat = rec["actions"][k][0]
        lead = rec["actions"][k - (k - _first_play(rec)) % 4][1]
        if (k - _first_play(rec)) % 4 == 0:
            continue
        later = [a for s, a in rec["actions"][k + 1 :] if s == seat and a[1] != lead[1]]
        if later and rec["actions"][k][1][1] == lead[1]:  # followed suit; it had another
            bad = copy.deepcopy(rec)
            j = next(
                j for j in range(k + 1, len(rec["actions"])) if rec["actions"][j][1] == later[0]
            )
            bad["actions"][k][1], bad["actions"][j][1] = later[0], rec["actions"][k][1]
            with pytest.raises(ShareError, match=f"action {k + 1} ") as err:
                import_records(json.dumps(bad))
            assert "RULES.md" in str(err.value) or "follow" in str(err.value)
            return
    pytest.fail("no hand to break")


@pytest.mark.parametrize("shape", ["one", "lines", "list", "rows"])
def test_a_good_file_imports_in_every_shape_the_project_writes(shape):
    recs = [_hand(4), _hand(5)]
    text = {
        "one": json.dumps(recs[0]),
        "lines": "".join(json.dumps(r) + "\n" for r in recs),
        "list": json.dumps(recs),
        "rows": "".join(
            json.dumps({"seats": ["a", "b", "c", "d"], "record": r}) + "\n" for r in recs
        ),
    }[shape]
    hands = import_records(text)["hands"]
    assert len(hands) == (1 if shape == "one" else 2)
    for h, rec in zip(hands, recs, strict=False):
        assert replay(h["sides"][0]["record"]) == rec
        assert len(h["sides"][0]["frames"]) == len(rec["actions"]) + 1


def test_the_showdown_claims_only_what_every_line_of_play_gives():
    rec = _hand()
    got = claims(rec)
    assert len(got) == len(rec["actions"]) + 1
    proven = [k for k, c in enumerate(got) if c is not None]
    assert proven  # the last trick at least: every seat has one card left
    for k in proven:  # the claim is what the hand did (any line gives it)
        assert got[k]["tricks"] == rec["tricks"]
    last_trick = len(rec["actions"]) - 4
    assert got[last_trick] is not None and got[last_trick]["tricks_left"] == 1
    assert got[0] is None and got[-1] is None  # the deal, the hand's end


# ----------------------------------------------------------------------------- in Chromium
@pytest.fixture(scope="module")
def game(tmp_path_factory):
    """A two-hand web game played to its end, its run path and records; the browser."""
    from web_helpers import Server, chromium, play_to_game_over, seats

    from experiments.tournament.results_log import read_rows

    pytest.importorskip("starlette")
    root = tmp_path_factory.mktemp("root")
    srv = Server(root, "--pace", "0", "--no-review")
    pw, browser = chromium()
    try:
        table = srv.new_table(seats(human=2, agent="random"), options="max_hands=2")
        page = browser.new_page()
        page.goto(srv.url + table["links"][0]["link"])
        play_to_game_over(page)
        page.close()
        run = f"web/{table['table']}"
        records = [r["record"] for r in read_rows(root / run)]
        yield {"srv": srv, "run": run, "records": records, "b": browser}
    finally:
        browser.close()
        pw.stop()
        srv.stop()


def _page(game, width):
    from web_helpers import VIEWPORTS

    page = game["b"].new_page(viewport=VIEWPORTS[width])
    page.set_default_timeout(120_000)
    return page


def _label(text: str) -> str:
    from experiments.table.words import card_label

    a = str_to_action(text)
    return card_label(a) if a < 52 else action_to_str(a)


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_link_opens_a_deal_at_a_decision(game, width):
    page = _page(game, width)
    try:
        rec = game["records"][1]
        page.goto(f"{game['srv'].url}/replay?run={game['run']}&deal=0&hand=1&step=20")
        page.locator("#step-info").filter(has_text="action 20 of").wait_for()
        assert page.inner_text(".last-action").endswith(_label(rec["actions"][19][1]))
        assert page.inner_text("#diff-info") == "one table"  # a web game has one table
        assert page.locator("#jump-diff").is_hidden()
        page.keyboard.press("ArrowRight")
        link = page.input_value("#share-link")
        assert "step=21" in link and "hand=1" in link
        again = _page(game, width)  # the link, opened by someone else
        again.goto(link)
        again.locator("#step-info").filter(has_text="action 21 of").wait_for()
        again.close()
    finally:
        page.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_a_game_exports_and_a_record_file_imports_checked(game, width, tmp_path):
    page = _page(game, width)
    try:
        page.goto(f"{game['srv'].url}/replay?run={game['run']}")
        with page.expect_download() as got:
            page.click("#export-run")
        path = tmp_path / "game.jsonl"
        got.value.save_as(path)
        lines = [json.loads(x) for x in path.read_text().splitlines()]
        assert lines == game["records"]  # the project's hand records, as logged
        page.set_input_files("#import-file", str(path))
        page.locator("#count").filter(has_text="every action checked").wait_for()
        assert page.locator("#deals tr[data-deal]").count() == 2
        page.locator("#step-info").wait_for()
        bad, named = _broken(lines[1], "card not held")
        broken = tmp_path / "bad.jsonl"
        broken.write_text(json.dumps(lines[0]) + "\n" + json.dumps(bad) + "\n")
        page.set_input_files("#import-file", str(broken))
        page.locator("#error").filter(has_text="hand 2 of the file").wait_for()
        assert named in page.inner_text("#error")
        # one deal's record
        page.goto(f"{game['srv'].url}/replay?run={game['run']}&deal=0&hand=0&step=0")
        page.locator("#step-info").wait_for()
        with page.expect_download() as got:
            page.click("#export-deal")
        assert json.loads(got.value.path().read_text()) == game["records"][0]
    finally:
        page.close()


@pytest.mark.browser
@pytest.mark.parametrize("width", ["desktop", "phone"])
def test_the_showdown_claims_the_rest_once_it_is_proven(game, width):
    page = _page(game, width)
    try:
        rec = game["records"][0]
        page.goto(f"{game['srv'].url}/replay?run={game['run']}&deal=0&hand=0&step=0")
        page.locator("#step-info").wait_for()
        first = page.evaluate("D.sides[0].claims.findIndex((c) => c !== null)")
        assert 0 < first <= len(rec["actions"]) - 4  # by the last trick at the latest
        page.check("#showdown")
        assert page.locator("#claim").is_hidden()  # the deal: nothing proven
        page.goto(f"{game['srv'].url}/replay?run={game['run']}&deal=0&hand=0&step={first}")
        page.locator("#step-info").filter(has_text=f"action {first} of").wait_for()
        page.check("#showdown")
        page.locator("#claim").filter(has_text="whatever is played").wait_for()
        assert str(rec["tricks"][0]) in page.inner_text("#claim")
        page.click("#claim-rest")
        n = len(rec["actions"])
        page.locator("#step-info").filter(has_text=f"action {n} of {n}").wait_for()
    finally:
        page.close()


@pytest.mark.parametrize(
    ("body", "headers", "status", "says"),
    [
        (b"{}", {"Origin": "http://evil.example"}, 403, "own pages"),
        (b"x" * 2_000_001, {}, 413, "over 2,000,000 bytes"),
        (b"[" * 5000, {}, 400, "not JSON"),
        (b"\xff\xfe", {}, 400, "UTF-8"),
        (b"", {}, 400, "no hand record"),
    ],
)
def test_the_import_endpoint_refuses_in_one_line(game, body, headers, status, says):
    import urllib.error
    import urllib.request

    request = urllib.request.Request(game["srv"].url + "/api/import", data=body, headers=headers)
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=60)
    assert err.value.code == status
    assert says in json.loads(err.value.read())["error"]


@pytest.mark.parametrize("query", ["run=../x", "run=/etc", "run=web&deal=0", "run="])
def test_the_export_endpoint_reads_only_runs_under_the_root(game, query):
    import urllib.error
    import urllib.request

    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(f"{game['srv'].url}/api/export?{query}", timeout=60)
    assert err.value.code == 400
    assert json.loads(err.value.read())["error"]
