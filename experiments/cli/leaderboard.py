"""`spades leaderboard RESULT.json...`: the results of `spades evaluate` as one Markdown page.

The page (the project's one leaderboard: `docs/results/leaderboard.md`) is written by this
command from the result files alone, never by hand: one row per agent, one column per
rung of the ladder, each cell the agent's margin with its 95% CI. Results of different
protocol versions, deal sets or scales are refused, so every row of a page was played
under the same protocol.

With `--out PAGE.md` it also draws the margins as a chart, `PAGE.png` beside the page
(one panel per opponent, each agent's margin as a dot with its 95% interval as a bar),
which the page shows above its table: the same numbers, read at a glance.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from experiments.tournament import ladder_protocol
from spades_env.tooling.files import atomic_write

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


def load(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"{path!r} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path!r} is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("protocol") != ladder_protocol.PROTOCOL:
        raise ValueError(f"{path!r} is not a spades evaluate result")
    check_result(path, data)
    return data


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
    number(need(data, "test_deals", ""), "test_deals", whole=True)
    rungs = need(data, "rungs", "")
    if not isinstance(rungs, list) or not rungs:
        raise bad("rungs", rungs, "a list of the ladder's rungs")
    for k, r in enumerate(rungs):
        where = f"rungs[{k}]."
        if not isinstance(r, dict):
            raise bad(f"rungs[{k}]", r, "an object")
        if not isinstance(need(r, "opponent", where), str):
            raise bad(where + "opponent", r["opponent"], "text")
        number(need(r, "deals", where), where + "deals", none=False, whole=True)
        number(need(r, "margin", where), where + "margin")
        ci = need(r, "ci", where)
        if ci is not None:
            if not isinstance(ci, list) or len(ci) != 2:
                raise bad(where + "ci", ci, "a pair [low, high] or null")
            for x in ci:
                number(x, where + "ci", none=False)
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
        "| agent | " + " | ".join(f"vs `{o}`" for o in opponents) + " | version |",
        "|---|" + "---:|" * len(opponents) + "---|",
    ]
    for res in ranked(results):
        cells = [_cell(r) for r in res["rungs"]]
        lines.append(
            f"| `{res['candidate']}` | " + " | ".join(cells) + f" | {res['spades_version']} |"
        )
    lines += play_table(ranked(results))
    missing = [a for a in ladder_protocol.SHIPPED if a not in seen]
    if missing:
        names = ", ".join(f"`{a}`" for a in missing)
        lines += ["", f"Shipped agents without a result on this page: {names}."]
    return "\n".join(lines) + "\n"


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
        lines.append(f"| `{res['candidate']}` | " + " | ".join(cells) + " |")
    if old:
        names = ", ".join(f"`{a}`" for a in old)
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
            match = f"`{res['candidate']}` vs `{r['opponent']}`"
            for k, side in enumerate(("candidate", "opponent")):
                name = res["candidate"] if side == "candidate" else r["opponent"]
                cells = [match if k == 0 else "", f"`{name}`", *_play_cells(r["play"][side])]
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
        ax.set_title(f"vs {opponent}", fontsize=10)
        ax.set_xlabel("points per deal")
        ax.grid(axis="x", alpha=0.3)
    axes[0][0].set_yticks(range(len(agents)), agents, fontsize=9)
    axes[0][0].invert_yaxis()  # best first, at the top, as in the table
    fig.suptitle("Margin per opponent, 95% intervals", fontsize=11)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)
    return path


def run(args: argparse.Namespace) -> int:
    results = [load(p) for p in args.results]
    if args.out:
        out = Path(args.out)
        chart = out.with_suffix(".png")
        page = render(results, list(args.results), chart=chart.name)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, page)
        draw_chart(results, chart)
        print(f"leaderboard: {out} ({len(results)} agents); chart: {chart}")
        return 0
    print(render(results, list(args.results)), end="")
    return 0
