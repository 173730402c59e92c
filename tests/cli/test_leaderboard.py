"""`spades leaderboard`: every result checked field by field (the field named), every name
escaped where the page writes it, the language models' table, an invalid result refused."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest
from cli_helpers import one_line_error, spades

from experiments.cli import leaderboard
from experiments.tournament import ladder_protocol, llm_ladder

RESULTS = Path(__file__).resolve().parents[2] / "docs" / "results"


def shipped(name: str = "heuristic") -> dict:
    return json.loads((RESULTS / f"{name}.json").read_text())


def llm_result(name: str = "gpt", partner: str | None = "heuristic", **model) -> dict:
    """A result as `spades evaluate --ladder llm` writes it."""
    figures = {
        "agent": name, "model": "m", "decisions": 224, "answers": 230, "fallback_share": 0.05,
        "not_understood_share": 0.02, "invalid": False, "invalid_reason": None,
        "tokens_in": 80_000, "tokens_out": 1_000, "replayed_tokens_in": 0, "dollars": 0.25,
    } | model  # fmt: skip
    rungs = [
        {"opponent": o, "deals": llm_ladder.DEALS, "margin": m, "ci": [m - 40, m + 40],
         "model": dict(figures), "llm": {name: {}}, "run": "x"}
        for o, m in zip(llm_ladder.OPPONENTS, (60.0, -20.0), strict=True)
    ]  # fmt: skip
    return {
        "protocol": llm_ladder.PROTOCOL, "version": llm_ladder.VERSION,
        "candidate": f"{name}=llm:model=m", "partner": partner, "team": None,
        "deal_seed": llm_ladder.DEAL_SEED, "deals": llm_ladder.DEALS,
        "spades_version": "0.1", "invalid": False, "rungs": rungs,
    }  # fmt: skip


def write(tmp_path: Path, name: str, data: dict) -> str:
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(data))
    return str(path)


def refused(path: str) -> str:
    with pytest.raises(ValueError) as err:
        leaderboard.load(path)
    text = str(err.value)
    assert "\n" not in text and repr(path) in text
    return text


# ----------------------------------------------------------------------------- checks
@pytest.mark.parametrize("version", [999, 0, -1, 2, 2**63])
def test_an_unknown_protocol_version_is_refused_naming_the_field(tmp_path, version):
    data = shipped() | {"version": version}
    assert f"version is {version}" in refused(write(tmp_path, "v", data))


@pytest.mark.parametrize("version", [999, 0, 2])
def test_an_unknown_llm_ladder_version_is_refused_naming_the_field(tmp_path, version):
    assert f"version is {version}" in refused(
        write(tmp_path, "v", llm_result() | {"version": version})
    )


@pytest.mark.parametrize("times", [0, 2, 200])
@pytest.mark.parametrize("maker", [shipped, llm_result])
def test_rungs_that_are_not_the_ladders_are_refused_naming_the_field(tmp_path, times, maker):
    data = maker()
    data["rungs"] = data["rungs"] * times
    assert "rungs" in refused(write(tmp_path, "r", data))


@pytest.mark.parametrize("maker", [shipped, llm_result])
def test_rungs_in_another_order_or_with_other_deals_are_refused(tmp_path, maker):
    data = maker()
    data["rungs"] = data["rungs"][::-1]
    assert "rungs[0].opponent" in refused(write(tmp_path, "o", data))
    data = maker()
    data["rungs"][1]["deals"] += 1
    assert "rungs[1].deals" in refused(write(tmp_path, "d", data))


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"fallback_share": 1.5}, "rungs[1].model.fallback_share"),
        ({"fallback_share": float("nan")}, "rungs[1].model.fallback_share"),
        ({"not_understood_share": -0.1}, "rungs[1].model.not_understood_share"),
        ({"tokens_in": -3}, "rungs[1].model.tokens_in"),
        ({"tokens_out": 2.5}, "rungs[1].model.tokens_out"),
        ({"dollars": float("inf")}, "rungs[1].model.dollars"),
        ({"invalid": "no"}, "rungs[1].model.invalid"),
    ],
)
def test_a_models_figures_are_checked_field_by_field(tmp_path, change, field):
    data = llm_result()
    data["rungs"][1]["model"].update(change)
    assert field in refused(write(tmp_path, "m", data))


def test_an_invalid_result_is_refused_with_its_reason(tmp_path):
    data = llm_result()
    data["rungs"][0]["model"].update(invalid=True, invalid_reason="224 of 224 decisions fell back")
    text = refused(write(tmp_path, "i", data))
    assert "rungs[0].model.invalid is true" in text and "224 of 224" in text
    assert "invalid is true" in refused(write(tmp_path, "j", llm_result() | {"invalid": True}))
    # a protocol result of a language model carries its figures in each rung's `llm`
    proto = shipped()
    proto["rungs"][2]["llm"] = {"fallback_share": 0.9, "invalid": True}
    assert "rungs[2].llm.invalid is true" in refused(write(tmp_path, "p", proto))
    out = spades("leaderboard", write(tmp_path, "k", data))
    assert "invalid" in one_line_error(out)


# ----------------------------------------------------------------------------- names
HOSTILE = [
    "a|b", "x||y|", "<script>alert(1)</script>", "two\nlines", "cr\rhere", "tick`s", "``",
    "**bold** _it_ [l](http://x)", "# head", "$x^2$", "a\\|b", "<img src=x onerror=y>",
]  # fmt: skip


def cells(line: str) -> list[str]:
    """The cells of a Markdown table row: split at each `|` that is not escaped."""
    return re.split(r"(?<!\\)\|", line.strip())[1:-1]


def shape(page: str) -> list[int]:
    """The page's lines as their numbers of table cells (0: not a table row)."""
    return [len(cells(line)) if line.startswith("|") else 0 for line in page.splitlines()]


def page_for(tmp_path: Path, name: str) -> str:
    proto = shipped("learned2") | {"candidate": name}  # a result with its play figures
    model = llm_result(name=name, partner=name)
    files = [write(tmp_path, "p", proto), write(tmp_path, "m", model)]
    return leaderboard.render_page([leaderboard.load(f) for f in files], files)


@pytest.mark.parametrize("name", HOSTILE)
def test_a_name_cannot_break_the_page(tmp_path, name):
    page, plain = page_for(tmp_path, name), page_for(tmp_path, "plain")
    # the same lines, each table row with the same cells, as with a plain name
    assert shape(page) == shape(plain)
    # outside its code spans, nothing of the name is HTML
    outside = re.sub(r"(`+) ?(.+?) ?\1", "", page)
    assert "<script" not in outside and "<img" not in outside


def test_a_hostile_name_is_drawn_in_the_chart(tmp_path):
    """matplotlib reads `$...$` as math: the chart shows the name as written."""
    pytest.importorskip("matplotlib")
    data = [shipped() | {"candidate": "$x^{2$"}, shipped("random")]
    path = leaderboard.draw_chart(data, tmp_path / "c.png")
    assert path.stat().st_size > 0


# ----------------------------------------------------------------------------- the table
def test_the_language_models_table_gives_each_margin_its_shares_tokens_and_dollars(tmp_path):
    a = llm_result("gpt", "heuristic")
    b = llm_result("gpt", None, fallback_share=0.0, dollars=None, decisions=448, answers=448)
    b["rungs"][1]["model"]["fallback_share"] = 0.01
    files = [write(tmp_path, "a", a), write(tmp_path, "b", b)]
    out = spades("leaderboard", *files, "--out", str(tmp_path / "lb.md"))
    assert out.returncode == 0, out.stderr
    page = (tmp_path / "lb.md").read_text()
    assert not (tmp_path / "lb.png").exists()  # no protocol result: no chart
    _, table = page.split("## Language models")
    assert f"version {llm_ladder.VERSION}" in table and str(llm_ladder.DEAL_SEED) in table
    rows = [cells(line) for line in table.splitlines() if line.startswith("| `")]
    assert [[c.strip() for c in r[:2]] for r in rows] == [["`gpt`", "`heuristic`"], ["`gpt`", "-"]]
    first, second = rows
    # fallback over the ladder, weighted by decisions; not understood by answers
    assert first[4:8] == [" 5.0% ", " 2.0% ", " 162,000 ", " 0.50 "]
    assert second[4:8] == [" 0.5% ", " 2.0% ", " 162,000 ", " - "]
    assert first[2].strip() == "+60.0 [+20.0, +100.0]"
    # the same model with and without a partner are two rows; twice the same is refused
    again = spades("leaderboard", files[0], write(tmp_path, "c", a))
    assert "is in both" in one_line_error(again)


def test_a_page_of_both_ladders_keeps_the_protocols_table_as_it_was(tmp_path):
    files = sorted(str(p) for p in RESULTS.glob("*.json"))
    proto = [leaderboard.load(f) for f in files]
    alone = leaderboard.render(copy.deepcopy(proto), files)
    extra = write(tmp_path, "m", llm_result())
    both = leaderboard.render_page([*proto, leaderboard.load(extra)], [*files, extra])
    assert both.startswith(alone) and "## Language models" in both[len(alone) :]


def test_a_language_model_on_the_protocol_shows_its_shares_beside_each_margin(tmp_path):
    data = shipped()
    for r in data["rungs"]:
        r["llm"] = {"fallback_share": 0.012, "not_understood_share": 0.004, "invalid": False}
    page = leaderboard.render([leaderboard.load(write(tmp_path, "p", data))], ["p"])
    row = next(line for line in page.splitlines() if line.startswith("| `heuristic`"))
    assert row.count("(fallback 1.2%, not understood 0.4%)") == len(ladder_protocol.LADDER)


# ----------------------------------------------------------------------------- prompt
@pytest.mark.parametrize("text_view", [0, -1, 999, 2**63, "2", 2.0, None, True])
def test_a_text_view_that_no_release_wrote_is_refused_naming_the_field(tmp_path, text_view):
    data = llm_result() | {"text_view": text_view}
    assert "text_view is" in refused(write(tmp_path, "t", data))


def test_each_row_says_which_prompt_its_model_was_asked_with(tmp_path):
    """A result without `text_view` predates it: its prompt was version 1."""
    from spades_env.text import TEXT_VERSION

    new = llm_result("new") | {"text_view": TEXT_VERSION}
    old = llm_result("old")
    page = leaderboard.render_page(
        [leaderboard.load(write(tmp_path, n, d)) for n, d in (("n", new), ("o", old))],
        ["n.json", "o.json"],
    )
    rows = {ln.split("|")[1].strip(): ln for ln in page.splitlines() if ln.startswith("| `")}
    assert f"| 1 (prompt v{TEXT_VERSION}) |" in rows["`new`"]
    assert "| 1 (prompt v1) |" in rows["`old`"]


@pytest.mark.parametrize("kind", ["fifo", "device", "folder", "huge"])
def test_a_result_that_is_no_file_or_too_big_is_refused_at_once(tmp_path, kind):
    """A pipe or /dev/zero was waited on for ever; a huge file read whole."""
    import os

    path = {"device": "/dev/zero", "folder": str(tmp_path)}.get(kind, str(tmp_path / "r"))
    if kind == "fifo":
        os.mkfifo(path)
    if kind == "huge":
        with open(path, "wb") as f:
            f.truncate(leaderboard.MAX_RESULT_BYTES + 1)
    with pytest.raises(ValueError) as err:
        leaderboard.load(path)
    assert "\n" not in str(err.value) and repr(path) in str(err.value)
