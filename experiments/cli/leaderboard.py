"""`spades leaderboard RESULT.json...`: the results of `spades evaluate` as one Markdown page.

The page (the project's one leaderboard: `docs/results/leaderboard.md`) is written by this
command from the result files alone, never by hand: one row per agent, one column per
rung of the ladder, each cell the agent's margin with its 95% CI. Results of different
protocol versions, deal sets or scales are refused, so every row of a page was played
under the same protocol.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path
from typing import Any

from experiments.tournament import protocol
from spades_env.files import atomic_write

_SAME = ("protocol", "version", "deal_seed", "deal_set_sha256", "test_deals")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "leaderboard",
        help="spades evaluate results as one Markdown leaderboard page",
        description="Render `spades evaluate` result files (same protocol version and deal "
        "set) as one Markdown page: one row per agent, one column per opponent.",
    )
    p.add_argument("results", nargs="+", metavar="RESULT.json", help="spades evaluate results")
    p.add_argument("--out", metavar="FILE", help="write the page here (default: print it)")
    p.set_defaults(run=run)


def load(path: str) -> dict[str, Any]:
    try:
        data = json.loads(Path(path).read_text())
    except FileNotFoundError:
        raise ValueError(f"{path!r} does not exist") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{path!r} is not JSON ({exc})") from None
    if not isinstance(data, dict) or data.get("protocol") != protocol.PROTOCOL:
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


def render(results: list[dict[str, Any]], sources: list[str]) -> str:
    """The page for `results` (checked to share one protocol, deal set and scale)."""
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

    def score(res: dict[str, Any]) -> float:
        ms = [r["margin"] for r in res["rungs"] if r["margin"] is not None]
        return sum(ms) / len(ms) if ms else float("-inf")

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
        "(`experiments/tournament/protocol.py`): standard rules, hand mode, duplicate deals "
        f"of the deal set of seed {first['deal_seed']} (SHA-256 "
        f"`{first['deal_set_sha256']}`). Each cell is the agent's margin over the opponent "
        "in points per deal with its 95% CI; deals per opponent: "
        f"{deals}. Rows are ordered by the mean of their margins. Run "
        "`spades evaluate SPEC --out RESULT.json` on an agent of your own for its row.",
        "",
        "| agent | " + " | ".join(f"vs `{o}`" for o in opponents) + " | version |",
        "|---|" + "---:|" * len(opponents) + "---|",
    ]
    for res in sorted(results, key=score, reverse=True):
        cells = [_cell(r) for r in res["rungs"]]
        lines.append(
            f"| `{res['candidate']}` | " + " | ".join(cells) + f" | {res['spades_version']} |"
        )
    lines += play_table(sorted(results, key=score, reverse=True))
    missing = [a for a in protocol.SHIPPED if a not in seen]
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


def run(args: argparse.Namespace) -> int:
    results = [load(p) for p in args.results]
    page = render(results, list(args.results))
    if args.out:
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(out, page)
        print(f"leaderboard: {out} ({len(results)} agents)")
    else:
        print(page, end="")
    return 0
