"""`spades leaderboard RESULT.json...`: the results of `spades evaluate` as one Markdown page.

The page (the project's one leaderboard: `docs/results/leaderboard.md`) is written by this
command from the result files alone, never by hand: one row per agent, one column per
rung of the ladder, each cell the agent's margin with its 95% CI. Results of different
protocol versions, deal sets or scales are refused, so every row of a page was played
under the same protocol.

Results of the short ladder for language models (`spades evaluate SPEC --ladder llm`,
`experiments.tournament.llm_ladder`) make a table of their own, **Language models**: one
row per model and partner, its margin on each rung beside the share of its decisions
the fallback played and of its answers not understood, the tokens it paid and their
price, and the ladder's version. A result marked invalid (its fallback share past the
limit the run was given) is refused, naming the rung.

Every result is checked field by field before anything is written (an unknown protocol
version, rungs that are not the ladder's, a value of the wrong type: one line naming the
file and the field), and every name is escaped where the page writes it, so that a `|`,
a backtick, HTML or a line break in an agent's name cannot change the page.

With `--out PAGE.md` it also draws the margins as a chart, `PAGE.png` beside the page
(one panel per opponent, each agent's margin as a dot with its 95% interval as a bar),
which the page shows above its table: the same numbers, read at a glance.
"""

from __future__ import annotations

import argparse
import html
import json
import math
import re
from pathlib import Path
from typing import Any

from experiments.tournament import ladder_protocol, llm_ladder
from spades_env.text import TEXT_VERSION
from spades_env.tooling.files import atomic_write, open_input

#: in the chart, a margin further than this from its panel's median is drawn at the edge
OUTLIER = 80.0
_SAME = ("protocol", "version", "deal_seed", "deal_set_sha256", "test_deals")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="spades evaluate results as one Markdown leaderboard page",
        description="Render `spades evaluate` result files (same protocol version and deal "
        "set) as one Markdown page: one row per agent, one column per opponent.",
    )
    p.add_argument("results", nargs="+", metavar="RESULT.json", help="spades evaluate results")
    p.add_argument(
        "--out",
        metavar="FILE",
        help="write the page here, and its chart of the margins beside it as FILE's name "
        "with .png (default: print the page, no chart)",
    )
    p.set_defaults(run=run)


#: a result file is a few kilobytes; anything past this is not one
MAX_RESULT_BYTES = 16 * 2**20


def load(path: str) -> dict[str, Any]:
    try:
        with open_input(path, "the result") as f:  # a pipe or a device is refused at once
            raw = f.read(MAX_RESULT_BYTES + 1)
    except FileNotFoundError:
        raise ValueError(f"{path!r} does not exist") from None
    if len(raw) > MAX_RESULT_BYTES:
        raise ValueError(f"{path!r} is over {MAX_RESULT_BYTES // 2**20} MiB: not a result file")
    try:
        data = json.loads(raw.decode())
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path!r} is not JSON ({exc})") from None
    protocol = data.get("protocol") if isinstance(data, dict) else None
    if protocol == llm_ladder.PROTOCOL:
        check_llm_result(path, data)
        return data
    if protocol != ladder_protocol.PROTOCOL:
        raise ValueError(f"{path!r} is not a spades evaluate result")
    check_result(path, data)
    return data


#: the protocol versions this release can show (`ladder_protocol.VERSION_HISTORY`)
KNOWN_VERSIONS = tuple(v for v, _ in ladder_protocol.VERSION_HISTORY)


def _damaged(path: str, field: str, value: Any, want: str) -> ValueError:
    return ValueError(f"{path!r}: {field} is {value!r:.60}, not {want}; the file is damaged")


def _check_rungs(path: str, rungs: Any, opponents: list[str], version: int, name: str) -> None:
    """The rungs are the ladder's, in its order: as many, against the same opponents."""
    if not isinstance(rungs, list) or not rungs:
        raise _damaged(path, "rungs", rungs, "a list of the ladder's rungs")
    if len(rungs) != len(opponents):
        raise ValueError(
            f"{path!r}: rungs has {len(rungs):,} entries, not the {len(opponents)} rungs of "
            f"{name} version {version}; the file is damaged"
        )
    for k, (r, want) in enumerate(zip(rungs, opponents, strict=True)):
        if isinstance(r, dict) and r.get("opponent") != want:
            raise ValueError(
                f"{path!r}: rungs[{k}].opponent is {r.get('opponent')!r:.60}, not {want!r}, "
                f"rung {k + 1} of {name} version {version}; the file is damaged"
            )


_COUNTS = ("nil_attempts", "opponent_nils", "contracts", "seat_hands")
_SHARES = ("nil_success", "nils_set", "set_rate", "bags_per_hand")


def check_result(path: str, data: dict[str, Any]) -> None:
    """Refuse a result file whose fields are not what `spades evaluate` writes (a hand
    edit, a damaged copy), naming the file and the field: a wrong value is never shown,
    and a NaN margin would reorder the rows."""

    def bad(field: str, value: Any, want: str) -> ValueError:
        return ValueError(f"{path!r}: {field} is {value!r:.60}, not {want}; the file is damaged")

    def need(d: dict[str, Any], key: str, where: str) -> Any:
        if key not in d:
            raise ValueError(f"{path!r}: {where}{key} is missing; the file is damaged")
        return d[key]

    def number(value: Any, field: str, none: bool = True, whole: bool = False) -> None:
        if value is None and none:
            return
        kinds = int if whole else int | float
        if isinstance(value, bool) or not isinstance(value, kinds) or not math.isfinite(value):
            raise bad(field, value, "a whole number" if whole else "a finite number")

    for key in ("candidate", "spades_version", "deal_set_sha256"):
        if not isinstance(need(data, key, ""), str):
            raise bad(key, data[key], "text")
    for key in ("version", "deal_seed"):
        number(need(data, key, ""), key, none=False, whole=True)
    if data["version"] not in KNOWN_VERSIONS:
        raise ValueError(
            f"{path!r}: version is {data['version']!r}, not a protocol version this release "
            f"knows ({', '.join(map(str, KNOWN_VERSIONS))}); show it with the release that "
            "made it"
        )
    if data["deal_seed"] != ladder_protocol.DEAL_SEED:
        raise bad("deal_seed", data["deal_seed"], f"{ladder_protocol.DEAL_SEED}, the protocol's")
    number(need(data, "test_deals", ""), "test_deals", whole=True)
    if data["test_deals"] is not None and data["test_deals"] < 1:
        raise bad("test_deals", data["test_deals"], "a count of at least 1, or null")
    rungs = need(data, "rungs", "")
    ladder = ladder_protocol.LADDER
    _check_rungs(path, rungs, [r.opponent for r in ladder], data["version"], "the protocol")
    for k, r in enumerate(rungs):
        where = f"rungs[{k}]."
        if not isinstance(r, dict):
            raise bad(f"rungs[{k}]", r, "an object")
        if not isinstance(need(r, "opponent", where), str):
            raise bad(where + "opponent", r["opponent"], "text")
        number(need(r, "deals", where), where + "deals", none=False, whole=True)
        deals = ladder_protocol.rung_deals(ladder[k], data["test_deals"])
        if r["deals"] != deals:
            raise bad(where + "deals", r["deals"], f"{deals}, the rung's deals")
        number(need(r, "margin", where), where + "margin")
        ci = need(r, "ci", where)
        if ci is not None:
            if not isinstance(ci, list) or len(ci) != 2:
                raise bad(where + "ci", ci, "a pair [low, high] or null")
            for x in ci:
                number(x, where + "ci", none=False)
        if "llm" in r:
            _check_model(path, r["llm"], where + "llm")
        play = r.get("play")
        if play is None:
            continue
        if not isinstance(play, dict):
            raise bad(where + "play", play, "an object")
        for side in ("candidate", "opponent"):
            figures = need(play, side, where + "play.")
            if not isinstance(figures, dict):
                raise bad(f"{where}play.{side}", figures, "an object")
            for key in _COUNTS:
                number(need(figures, key, f"{where}play.{side}."), f"{where}play.{side}.{key}",
                       whole=True)  # fmt: skip
            for key in _SHARES:
                number(need(figures, key, f"{where}play.{side}."), f"{where}play.{side}.{key}")


def _check_model(path: str, m: Any, field: str) -> None:
    """A language-model agent's figures (a rung's `llm` or `model`): the shares are
    shares, the counts counts, and an invalid run is refused with its reason."""
    if not isinstance(m, dict):
        raise _damaged(path, field, m, "an object")
    if m.get("invalid") not in (None, False, True):
        raise _damaged(path, field + ".invalid", m["invalid"], "true or false")
    if m.get("invalid"):
        reason = str(m.get("invalid_reason") or "no reason recorded").replace("\n", " ")
        raise ValueError(
            f"{path!r}: {field}.invalid is true ({reason:.400}); an invalid result is never "
            "put on a leaderboard: fix what made the fallback play and run the ladder again"
        )
    for key in ("fallback_share", "not_understood_share"):
        x = m.get(key)
        if x is not None and (
            isinstance(x, bool) or not isinstance(x, int | float) or not 0 <= x <= 1
        ):
            raise _damaged(path, f"{field}.{key}", x, "a share from 0 to 1")
    for key in ("decisions", "answers", "tokens_in", "tokens_out"):
        x = m.get(key)
        if x is not None and (isinstance(x, bool) or not isinstance(x, int) or x < 0):
            raise _damaged(path, f"{field}.{key}", x, "a count")
    x = m.get("dollars")
    if x is not None and (
        isinstance(x, bool) or not isinstance(x, int | float) or not 0 <= x < math.inf
    ):
        raise _damaged(path, f"{field}.dollars", x, "a price in dollars, or null")


def check_llm_result(path: str, data: dict[str, Any]) -> None:
    """Refuse a result of the short ladder for language models whose fields are not what
    `spades evaluate --ladder llm` writes, naming the file and the field, and a result
    marked invalid."""
    if not isinstance(data.get("candidate"), str) or not data["candidate"]:
        raise _damaged(path, "candidate", data.get("candidate"), "an agent's spec")
    if data.get("partner") is not None and not isinstance(data["partner"], str):
        raise _damaged(path, "partner", data["partner"], "an agent's spec or null")
    version = data.get("version")
    if version != llm_ladder.VERSION:
        raise ValueError(
            f"{path!r}: version is {version!r:.60}, not a version of the language-model "
            f"ladder this release knows ({llm_ladder.VERSION}); show it with the release "
            "that made it"
        )
    if data.get("deal_seed", llm_ladder.DEAL_SEED) != llm_ladder.DEAL_SEED:
        raise _damaged(path, "deal_seed", data["deal_seed"], f"{llm_ladder.DEAL_SEED}")
    if data.get("invalid") not in (None, False, True):
        raise _damaged(path, "invalid", data["invalid"], "true or false")
    text_view = data.get("text_view", 1)  # (absent: written before it was recorded)
    if type(text_view) is not int or not 1 <= text_view <= TEXT_VERSION:
        raise _damaged(path, "text_view", text_view, f"a text view version, 1 to {TEXT_VERSION}")
    rungs = data.get("rungs")
    _check_rungs(path, rungs, list(llm_ladder.OPPONENTS), version, "the language-model ladder")
    for k, r in enumerate(rungs):
        where = f"rungs[{k}]"
        if not isinstance(r, dict):
            raise _damaged(path, where, r, "an object")
        if r.get("deals") != llm_ladder.DEALS or isinstance(r.get("deals"), bool):
            raise _damaged(path, where + ".deals", r.get("deals"), f"{llm_ladder.DEALS}")
        m = r.get("margin")
        if m is not None and (
            isinstance(m, bool) or not isinstance(m, int | float) or not math.isfinite(m)
        ):
            raise _damaged(path, where + ".margin", m, "a finite number")
        ci = r.get("ci")
        if ci is not None and not (
            isinstance(ci, list)
            and len(ci) == 2
            and all(
                isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)
                for x in ci
            )
        ):
            raise _damaged(path, where + ".ci", ci, "a pair [low, high] or null")
        if r.get("model") is not None:
            _check_model(path, r["model"], where + ".model")
    if data.get("invalid"):
        raise ValueError(
            f"{path!r}: invalid is true; an invalid result is never put on a leaderboard"
        )


def _code(name: Any, cell: bool = True) -> str:
    """`name` as a Markdown code span that nothing in it can break: line breaks shown as
    `\\n`, a backtick fenced by a longer run, and (in a table cell) `|` escaped; HTML in a
    code span is shown as text."""
    text = str(name).replace("\r", "\\r").replace("\n", "\\n")
    if cell:
        text = text.replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", text)), default=0)
    pad = " " if longest else ""
    fence = "`" * (longest + 1)
    return f"{fence}{pad}{text}{pad}{fence}"


def _plain(text: Any) -> str:
    """Text for a table cell outside a code span: HTML escaped, `|` and line breaks
    made harmless, Markdown's emphasis and link marks escaped."""
    out = html.escape(str(text)).replace("\r", " ").replace("\n", " ")
    return re.sub(r"([\\`*_\[\]|#])", r"\\\1", out)


def _chart_label(name: str) -> str:
    """A name as the chart draws it: `$` escaped (matplotlib reads `$...$` as math), a
    line break shown as `\\n`."""
    return name.replace("\r", "\\r").replace("\n", "\\n").replace("$", r"\$")


def _model_note(m: Any) -> str:
    """Beside a language-model candidate's margin: its fallback share and its share of
    answers not understood on that rung (nothing for another agent)."""
    if not isinstance(m, dict):
        return ""
    share = lambda x: "-" if x is None else f"{x:.1%}"  # noqa: E731
    return (
        f" (fallback {share(m.get('fallback_share'))}, not understood "
        f"{share(m.get('not_understood_share'))})"
    )


def _cell(r: dict[str, Any]) -> str:
    if r["margin"] is None:
        return "-"
    ci = "" if r["ci"] is None else f" [{r['ci'][0]:+.1f}, {r['ci'][1]:+.1f}]"
    return f"{r['margin']:+.1f}{ci}"


def render(results: list[dict[str, Any]], sources: list[str], chart: str | None = None) -> str:
    """The page for `results` (checked to share one protocol, deal set and scale); `chart`:
    the file name of its chart (`draw_chart`), shown above the table, relative to the page."""
    first = results[0]
    for res, src in zip(results[1:], sources[1:], strict=True):
        for key in _SAME:
            if res.get(key) != first.get(key):
                raise ValueError(
                    f"{src!r} has another {key} ({res.get(key)!r}) than {sources[0]!r} "
                    f"({first.get(key)!r}); one page holds one protocol"
                )
    opponents = [r["opponent"] for r in first["rungs"]]
    seen: dict[str, str] = {}
    for res, src in zip(results, sources, strict=True):
        if [r["opponent"] for r in res["rungs"]] != opponents:
            raise ValueError(f"{src!r}: its ladder differs from {sources[0]!r}'s")
        if res["candidate"] in seen:
            raise ValueError(
                f"{res['candidate']!r} is in both {seen[res['candidate']]!r} and {src!r}"
            )
        seen[res["candidate"]] = src

    deals = ", ".join(f"{r['opponent']} {r['deals']}" for r in first["rungs"])
    lines = [
        "# Leaderboard",
        "",
        "<!-- made by `spades leaderboard`; do not edit: rerun the command -->",
        "",
    ]
    if first["test_deals"] is not None:
        lines += [
            f"**TEST SCALE (--test-deals {first['test_deals']}): NOT THE PROTOCOL.** "
            "These rows check the page's making only; do not cite them.",
            "",
        ]
    lines += [
        f"Protocol `{first['protocol']}` version {first['version']} "
        "(`experiments/tournament/ladder_protocol.py`): standard rules, hand mode, duplicate deals "
        f"of the deal set of seed {first['deal_seed']} (SHA-256 "
        f"`{first['deal_set_sha256']}`). Each cell is the agent's margin over the opponent "
        "in points per deal with its 95% CI; deals per opponent: "
        f"{deals}. Rows are ordered by the mean of their margins. Run "
        "`spades evaluate SPEC --out RESULT.json` on an agent of your own for its row.",
        "",
    ]
    if chart:
        lines += [f"![Each agent's margin per opponent, with its 95% interval]({chart})", ""]
    lines += [
        "| agent | " + " | ".join(f"vs {_code(o)}" for o in opponents) + " | version |",
        "|---|" + "---:|" * len(opponents) + "---|",
    ]
    for res in ranked(results):
        cells = [_cell(r) + _model_note(r.get("llm")) for r in res["rungs"]]
        lines.append(
            f"| {_code(res['candidate'])} | "
            + " | ".join(cells)
            + f" | {_plain(res['spades_version'])} |"
        )
    lines += play_table(ranked(results))
    missing = [a for a in ladder_protocol.SHIPPED if a not in seen]
    if missing:
        names = ", ".join(f"`{a}`" for a in missing)
        lines += ["", f"Shipped agents without a result on this page: {names}."]
    return "\n".join(lines) + "\n"


def model_name(res: dict[str, Any]) -> str:
    """A language-model result's row name: its model agent's name (its label, else its
    spec), else the candidate's spec."""
    for r in res["rungs"]:
        if isinstance(r.get("model"), dict) and isinstance(r["model"].get("agent"), str):
            return r["model"]["agent"]
    return res["candidate"]


def model_totals(res: dict[str, Any]) -> dict[str, Any]:
    """A language-model result's figures over its rungs: the fallback share (weighted by
    decisions) and the share not understood (by answers), the tokens paid, the dollars
    (None unless every rung has a price)."""
    ms = [r["model"] for r in res["rungs"] if isinstance(r.get("model"), dict)]
    if not ms:
        return {"fallback_share": None, "not_understood_share": None, "tokens": None,
                "dollars": None}  # fmt: skip

    def weighted(share: str, count: str) -> float | None:
        n = sum(m.get(count) or 0 for m in ms)
        if not n or any(m.get(share) is None for m in ms):
            return None
        return sum((m.get(count) or 0) * m[share] for m in ms) / n

    dollars = [m.get("dollars") for m in ms]
    return {
        "fallback_share": weighted("fallback_share", "decisions"),
        "not_understood_share": weighted("not_understood_share", "answers"),
        "tokens": sum((m.get("tokens_in") or 0) + (m.get("tokens_out") or 0) for m in ms),
        "dollars": None if any(d is None for d in dollars) else sum(dollars),
    }


def llm_table(results: list[dict[str, Any]], sources: list[str]) -> list[str]:
    """The language models' table: one row per model and partner, best mean margin first,
    each margin beside the model's fallback share and share of answers not understood."""
    seen: dict[tuple[str, str | None], str] = {}
    for res, src in zip(results, sources, strict=True):
        key = (model_name(res), res.get("partner"))
        if key in seen:
            raise ValueError(f"{key[0]!r} (partner {key[1]}) is in both {seen[key]!r} and {src!r}")
        seen[key] = src
    opponents = list(llm_ladder.OPPONENTS)
    lines = [
        "",
        "## Language models",
        "",
        f"Ladder `{llm_ladder.PROTOCOL}` version {llm_ladder.VERSION} "
        "(`experiments/tournament/llm_ladder.py`): standard rules, hand mode, "
        f"{llm_ladder.DEALS} duplicate deals per opponent of the deal set of seed "
        f"{llm_ladder.DEAL_SEED}. Each cell is the model's margin over the opponent in "
        "points per deal with its 95% CI, which is wide: the ladder tells a model that "
        "plays like random from one that plays like the heuristic, and little finer. "
        "fallback: the share of the model's decisions its fallback agent played; not "
        "understood: the share of its answers the reader could not read (both over the "
        "whole ladder); tokens: paid, in and out; $: at the prices the run was given. A "
        "model with a partner holds one seat of its partnership, the partner the other: "
        "read its margins against the partner's own row (the partner partnering itself). "
        "ladder: its version, and the version of the prompt's words (results before "
        "`text_view` was recorded were asked with version 1). Cite a row with its ladder "
        "and version, its prompt version, its partner and the deal set's seed.",
        "",
        "| model | partner | " + " | ".join(f"vs {_code(o)}" for o in opponents)
        + " | fallback | not understood | tokens | $ | ladder | spades |",
        "|---|---|" + "---:|" * (len(opponents) + 4) + "---|---|",
    ]  # fmt: skip
    for res in ranked(results):
        t = model_totals(res)
        share = lambda x: "-" if x is None else f"{x:.1%}"  # noqa: E731
        cells = [
            _code(model_name(res)),
            "-" if res.get("partner") is None else _code(res["partner"]),
            *(_cell(r) for r in res["rungs"]),
            share(t["fallback_share"]),
            share(t["not_understood_share"]),
            "-" if t["tokens"] is None else f"{t['tokens']:,}",
            "-" if t["dollars"] is None else f"{t['dollars']:.2f}",
            f"{res['version']} (prompt v{_plain(res.get('text_view', 1))})",
            _plain(res.get("spades_version", "-")),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def render_page(results: list[dict[str, Any]], sources: list[str], chart: str | None = None) -> str:
    """The page for results of either ladder: the protocol's table (`render`) and the
    language models' (`llm_table`), each from its own results."""
    llm = [(r, s) for r, s in zip(results, sources, strict=True)
           if r["protocol"] == llm_ladder.PROTOCOL]  # fmt: skip
    proto = [(r, s) for r, s in zip(results, sources, strict=True)
             if r["protocol"] != llm_ladder.PROTOCOL]  # fmt: skip
    if proto:
        page = render([r for r, _ in proto], [s for _, s in proto], chart=chart)
    else:
        page = (
            "# Leaderboard\n\n<!-- made by `spades leaderboard`; do not edit: rerun the "
            "command -->\n"
        )
    if llm:
        page += "\n".join(llm_table([r for r, _ in llm], [s for _, s in llm])) + "\n"
    return page


def _totals(rungs: list[dict[str, Any]]) -> dict[str, Any]:
    """One side's figures over several rungs: counts summed, each share weighted by its
    count (bags by the seat-hands)."""
    out: dict[str, Any] = {}
    for count, share in (
        ("nil_attempts", "nil_success"), ("opponent_nils", "nils_set"),
        ("contracts", "set_rate"), ("seat_hands", "bags_per_hand"),
    ):  # fmt: skip
        n = sum(r[count] or 0 for r in rungs)
        out[count] = n
        out[share] = sum((r[count] or 0) * (r[share] or 0.0) for r in rungs) / n if n else None
    return out


def _pct(n: int, x: float | None) -> str:
    return "-" if x is None else f"{x:.0%} of {n:,}"


def play_table(results: list[dict[str, Any]]) -> list[str]:
    """Each agent's own figures over its whole ladder: its nils (made), the opponents'
    nils it faced (set), its contracts (set) and its bags per team-hand."""
    lines = [
        "",
        "## Nils, sets and bags",
        "",
        "Each agent's own figures over all its rungs (`spades evaluate` records them per "
        "rung, for both sides): nils bid and the share made; the opponents' nils faced and "
        "the share set; its team contracts and the share set; bags per team-hand.",
        "",
        "| agent | nils made | opponents' nils set | contracts set | bags per hand |",
        "|---|---:|---:|---:|---:|",
    ]
    old = []
    for res in results:
        own = [r["play"]["candidate"] for r in res["rungs"] if r.get("play")]
        if len(own) < len(res["rungs"]):
            old.append(res["candidate"])
            continue
        cells = _play_cells(_totals(own))
        lines.append(f"| {_code(res['candidate'])} | " + " | ".join(cells) + " |")
    if old:
        names = ", ".join(_code(a, cell=False) for a in old)
        lines += ["", f"Results made before these figures were recorded (no row): {names}."]
    lines += rung_play_table([r for r in results if r["candidate"] not in old])
    return lines


def _play_cells(f: dict[str, Any]) -> list[str]:
    return [
        _pct(f["nil_attempts"], f["nil_success"]),
        _pct(f["opponent_nils"], f["nils_set"]),
        _pct(f["contracts"], f["set_rate"]),
        "-" if f["bags_per_hand"] is None else f"{f['bags_per_hand']:.2f}",
    ]


def rung_play_table(results: list[dict[str, Any]]) -> list[str]:
    """The same figures rung by rung, both sides of each match beside each other."""
    if not results:
        return []
    lines = [
        "",
        "By match (each rung's two sides, the same deals):",
        "",
        "| match | side | nils made | opponents' nils set | contracts set | bags per hand |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for res in results:
        for r in res["rungs"]:
            match = f"{_code(res['candidate'])} vs {_code(r['opponent'])}"
            for k, side in enumerate(("candidate", "opponent")):
                name = res["candidate"] if side == "candidate" else r["opponent"]
                cells = [match if k == 0 else "", _code(name), *_play_cells(r["play"][side])]
                lines.append("| " + " | ".join(cells) + " |")
    return lines


def ranked(results: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The results in the page's order: by the mean of their margins, best first."""

    def score(res: dict[str, Any]) -> float:
        ms = [r["margin"] for r in res["rungs"] if r["margin"] is not None]
        return sum(ms) / len(ms) if ms else float("-inf")

    return sorted(results, key=score, reverse=True)


def chart_points(results: list[dict[str, Any]]) -> dict[str, list[tuple[str, float, float, float]]]:
    """{opponent: [(agent, margin, CI low, CI high), ...] in the page's order}, the rungs
    with a margin only (an interval-less margin is its own interval)."""
    out: dict[str, list[tuple[str, float, float, float]]] = {}
    for res in ranked(results):
        for r in res["rungs"]:
            if r["margin"] is None:
                continue
            lo, hi = r["ci"] if r["ci"] is not None else (r["margin"], r["margin"])
            out.setdefault(r["opponent"], []).append((res["candidate"], r["margin"], lo, hi))
    return out


def draw_chart(results: list[dict[str, Any]], path: Path) -> Path:
    """The margins of `results` as a PNG at `path`: one panel per opponent, one row per
    agent (the page's order), a dot at the margin and a bar over its 95% interval, and the
    line of an even match. No timestamp is written, so the same results give the same file."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = chart_points(results)
    agents = [res["candidate"] for res in ranked(results)]
    fig, axes = plt.subplots(
        1, len(points), figsize=(3.2 * len(points) + 1.5, 0.42 * len(agents) + 1.4),
        sharey=True, squeeze=False,
    )  # fmt: skip
    for ax, (opponent, rows) in zip(axes[0], points.items(), strict=True):
        # a margin far from the rest (random's -200 against everyone's +20) would squeeze
        # every interval to a dot: such a row is drawn at the panel's edge, with its value
        middle = sorted(m for _, m, _, _ in rows)[len(rows) // 2]
        near = [r for r in rows if abs(r[1] - middle) <= OUTLIER]
        far = [r for r in rows if abs(r[1] - middle) > OUTLIER]
        y = [agents.index(a) for a, *_ in near]
        margin = [m for _, m, _, _ in near]
        err = [[m - lo for _, m, lo, _ in near], [hi - m for _, m, _, hi in near]]
        ax.errorbar(margin, y, xerr=err, fmt="o", markersize=4, capsize=3, color="#1f4e79")
        lo = min([r[2] for r in near] + [0.0])
        hi = max([r[3] for r in near] + [0.0])
        pad = 0.08 * (hi - lo) + 1
        ax.set_xlim(lo - pad, hi + pad)
        for agent, m, _, _ in far:
            x, side = (lo - pad, "left") if m < middle else (hi + pad, "right")
            row = agents.index(agent)
            marker, shift = ("<", 8) if side == "left" else (">", -8)
            ax.plot([x], [row], marker=marker, color="#b03a2e", clip_on=False)
            ax.annotate(
                f"{m:+.0f}", (x, row), xytext=(shift, 0), textcoords="offset points",
                ha=side, va="center", fontsize=8, color="#b03a2e",
            )  # fmt: skip
        ax.axvline(0, color="0.6", linewidth=0.8)
        ax.set_title(f"vs {_chart_label(opponent)}", fontsize=10)
        ax.set_xlabel("points per deal")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(agents)), [_chart_label(a) for a in agents], fontsize=9)
    axes[0][0].invert_yaxis()  # best first, at the top, as in the table
    fig.suptitle("Margin per opponent, 95% intervals", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def run(args: argparse.Namespace) -> int:
    results = [load(p) for p in args.results]
    proto = [r for r in results if r["protocol"] != llm_ladder.PROTOCOL]
    if args.out:
        out = Path(args.out)
        chart = out.with_suffix(".png") if proto else None
        page = render_page(results, list(args.results), chart=chart and chart.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, page)
        if chart is not None:
            draw_chart(proto, chart)
        drawn = f"; chart: {chart}" if chart is not None else ""
        print(f"leaderboard: {out} ({len(results)} agents){drawn}")
        return 0
    print(render_page(results, list(args.results)), end="")
    return 0
