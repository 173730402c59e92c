"""A tournament's summary as tables: the one renderer of `spades tournament` and of the
Python API.

`TournamentResult` is what `experiments.tournament.runner.run_tournament` returns: the
summary dict (`summary.json`, unchanged, so `result["pairs"]` reads as before) that also
prints the command line's tables and gives them as data frames:

    from experiments.tournament.runner import run_tournament
    from experiments.tournament.config import TournamentConfig

    result = run_tournament("runs/mine", TournamentConfig(agents=("random", "heuristic")))
    print(result)            # the tables `spades tournament` prints
    result.margins           # pandas: a, b, deals, metric, margin, lo, hi (a - b)
    result.ratings           # pandas: agent, mu, sigma, ordinal (best first)
    result.bids              # pandas: one bid-accuracy line per agent

`print_summary(summary, console)` draws the three tables on a rich console; the command
line calls it on the same summary.
"""

from __future__ import annotations

import html
import io
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table

from agents.base import ReportTable
from agents.registry import summary_sections

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["TournamentResult", "markdown_text", "print_summary", "render"]

#: Markdown's characters that would format a name, close a table cell or start a link
_MARKDOWN_SPECIALS = re.compile(r"([\\`*_\[\]|#~])")


def markdown_text(text: object) -> str:
    """A name (an agent's, a file's) as Markdown shows it literally, in a sentence or a
    table cell: on one line (a line break would end the row), HTML's `<`, `>` and `&` as
    entities (a `<script>` is text, not a tag), and Markdown's `|`, `*`, `_`, `[`, ... each
    escaped."""
    one_line = " ".join(str(text).split())
    return _MARKDOWN_SPECIALS.sub(r"\\\1", html.escape(one_line, quote=False))


# ----------------------------------------------------------------------------- cells
def _num(x: float | None, fmt: str = "{:.1f}") -> str:
    return "-" if x is None else fmt.format(x)


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.0f}%"


def _ci(stat: dict[str, Any], fmt: str = "{:+.1f}") -> str:
    if stat["ci"] is None:
        return "-"
    lo, hi = stat["ci"]
    return f"[{fmt.format(lo)}, {fmt.format(hi)}]"


def _flip(stat: dict[str, Any], top: float = 0.0) -> dict[str, Any]:
    """A statistic of A - B (top = 0) or of A's rate (top = 1) seen from B's side."""
    if stat["mean"] is None:
        return stat
    ci = None if stat["ci"] is None else [top - stat["ci"][1], top - stat["ci"][0]]
    return {**stat, "mean": top - stat["mean"], "ci": ci}


def leader_first(pair: dict[str, Any]) -> dict[str, Any]:
    """Show each pair with the agent ahead first, so margins read as 'A beats B by'."""
    if pair["margin"]["mean"] is None or pair["margin"]["mean"] >= 0:
        return pair
    out = {**pair, "a": pair["b"], "b": pair["a"], "margin": _flip(pair["margin"])}
    if "win_rate" in pair:
        out["win_rate"] = _flip(pair["win_rate"], 1.0)
        out["final_margin"] = _flip(pair["final_margin"])
    return out


# ----------------------------------------------------------------------------- tables
def model_shares(summary: dict[str, Any], entry: str) -> str | None:
    """The fallback share and the share of answers not understood of the language-model
    agents of `entry` (an agent, or a team's members: `teams`), over the run, as
    `F / U` (`name: F / U` for a team's member; INVALID where the run marked it so);
    None when no such agent plays in it."""
    section = summary.get("llm") or {}
    if not isinstance(section, dict):
        return None
    members = (summary.get("teams") or {}).get(entry) or [entry]
    out = []
    for name in dict.fromkeys(members):
        s = section.get(name)
        if not isinstance(s, dict):
            continue
        fallback = s.get("fallback_share", s.get("fallbacks_per_decision"))
        unread = s.get("not_understood_share")
        text = " / ".join("-" if x is None else f"{x:.1%}" for x in (fallback, unread))
        if s.get("invalid"):
            text += " INVALID"
        out.append(text if len(members) == 1 or members[0] == members[-1] else f"{name}: {text}")
    return "; ".join(out) or None


def pairs_table(summary: dict[str, Any]) -> Table:
    game = summary["mode"] == "game"
    unit = "pts/hand" if game else "pts/deal"
    shares = any(
        model_shares(summary, p[k]) is not None for p in summary["pairs"] for k in ("a", "b")
    )
    pairs = Table(
        title=f"Duplicate results ({summary['mode']} mode)",
        caption="A's and B's language-model agents: the share of their decisions the "
        "fallback played and of their answers not understood, over the run"
        if shares
        else None,
    )
    for col in ("A", "B", "deals", f"A - B ({unit})", "95% CI"):
        pairs.add_column(col, justify="right" if col not in ("A", "B") else "left")
    if game:
        for col in ("A wins", "95% CI ", "hands/game"):
            pairs.add_column(col, justify="right")
    if shares:
        for col in ("A fallback / not understood", "B fallback / not understood"):
            pairs.add_column(col, justify="left")
    for p in map(leader_first, summary["pairs"]):
        cells = [p["a"], p["b"], str(p["deals"]), _num(p["margin"]["mean"], "{:+.1f}")]
        cells.append(_ci(p["margin"]))
        if game:
            wr = p["win_rate"]
            cells += [_pct(wr["mean"]), _ci(wr, "{:.0%}"), _num(p["hands_per_game"])]
        if shares:
            cells += [model_shares(summary, p[k]) or "-" for k in ("a", "b")]
        pairs.add_row(*cells)
    return pairs


def agents_table(summary: dict[str, Any]) -> Table | None:
    """Per agent, where teams of two agents play (`teams` in the summary): its rating
    with teams of players and its team's duplicate margin pooled over its deals; None
    in a tournament without such teams."""
    if "agent_ratings" not in summary:
        return None
    unit = "pts/hand" if summary["mode"] == "game" else "pts/deal"
    table = Table(
        title="Per agent (teams of two agents)",
        caption="rating: OpenSkill over the four seats of each duplicate match; margin: its "
        "team's duplicate margin, pooled over its teams and opponents (a deal where both "
        "teams hold it left out)",
    )
    for col in ("agent", "mu", "sigma", "mu - 3 sigma", "deals", f"margin ({unit})", "95% CI"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    margins = {m["agent"]: m["margin"] for m in summary.get("agent_margins", ())}
    for r in summary["agent_ratings"]:
        m = margins.get(r["agent"], {"n": 0, "mean": None, "ci": None})
        table.add_row(
            r["agent"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}",
            str(m["n"]), _num(m["mean"], "{:+.1f}"), _ci(m),
        )  # fmt: skip
    return table


def ratings_table(summary: dict[str, Any]) -> Table:
    ratings = Table(
        title="Ratings (OpenSkill)", caption="one match per duplicate deal; ranked by mu - 3 sigma"
    )
    for col in ("agent", "mu", "sigma", "mu - 3 sigma"):
        ratings.add_column(col, justify="left" if col == "agent" else "right")
    for r in summary["ratings"]:
        ratings.add_row(r["agent"], f"{r['mu']:.2f}", f"{r['sigma']:.2f}", f"{r['ordinal']:.2f}")
    return ratings


def bids_table(summary: dict[str, Any]) -> Table:
    bids = Table(
        title="Bid accuracy",
        caption="err: tricks - bid over non-nil bids; made/set: team contracts; "
        "nil: attempts (share made); nils set: the opponents' nils (share set); "
        "bags: team bags per hand",
    )
    cols = ("agent", "mean bid", "|err|", "err", "made", "set", "nil", "blind nil", "nils set",
            "bags")  # fmt: skip
    for col in cols:
        bids.add_column(col, justify="left" if col == "agent" else "right")
    for b in summary["bids"]:
        bids.add_row(
            b["agent"],
            _num(b["mean_bid"], "{:.2f}"),
            _num(b["bid_error"], "{:.2f}"),
            _num(b["signed_error"], "{:+.2f}"),
            _pct(b["make_rate"]),
            _pct(b["set_rate"]),
            f"{b['nil_attempts']} ({_pct(b['nil_success'])})",
            f"{b['blind_nil_attempts']} ({_pct(b['blind_nil_success'])})",
            f"{b.get('opponent_nils', 0)} ({_pct(b.get('nils_set'))})",
            _num(b["bags_per_hand"], "{:.2f}"),
        )
    return bids


def agent_bids_table(summary: dict[str, Any]) -> Table | None:
    """Where teams of two agents play: each agent's own bids over every seat it held (the
    per-entry table counts a team's two members together); None without teams."""
    if "agent_bids" not in summary:
        return None
    table = Table(
        title="Bid accuracy per agent (teams of two agents)",
        caption="over every seat the agent held, in its teams and alone; err: tricks - bid "
        "over non-nil bids; nil: attempts (share made)",
    )
    for col in ("agent", "seat-hands", "mean bid", "|err|", "err", "nil", "blind nil"):
        table.add_column(col, justify="left" if col == "agent" else "right")
    for b in summary["agent_bids"]:
        table.add_row(
            b["agent"],
            str(b["seat_hands"]),
            _num(b["mean_bid"], "{:.2f}"),
            _num(b["bid_error"], "{:.2f}"),
            _num(b["signed_error"], "{:+.2f}"),
            f"{b['nil_attempts']} ({_pct(b['nil_success'])})",
            f"{b['blind_nil_attempts']} ({_pct(b['blind_nil_success'])})",
        )
    return table


def agent_table(spec: ReportTable) -> Table:
    """A table an agent kind gives for its section of the summary (`report_tables`, a
    run hook of `agents.base.BaseAgent`), drawn as the others."""
    table = Table(title=spec.title, caption=spec.caption or None)
    for col in spec.columns:
        table.add_column(col, justify="left" if col in spec.left else "right")
    for row in spec.rows:
        table.add_row(*row)
    return table


#: the keys of a summary that are the tournament's own (any other is an agent kind's)
_OWN_KEYS = frozenset(
    ("tournament", "config", "play_rules", "mode", "rows", "pairs", "ratings", "bids", "teams",
     "agent_ratings", "agent_margins", "agent_bids")
)  # fmt: skip


def agent_tables(summary: dict[str, Any]) -> list[Table]:
    """The tables of the agent kinds of the run that wrote a section of the summary
    (`agents.registry.summary_sections`): none when the summary holds no such section."""
    if not set(summary) - _OWN_KEYS:
        return []  # (no agent's spec is read)
    agents = summary.get("config", {}).get("agents", ())
    return [
        agent_table(spec)
        for key, kind in summary_sections(agents).items()
        if summary.get(key)
        for spec in kind.report_tables(summary[key])
    ]


def _tables(summary: dict[str, Any]) -> list[Table]:
    tables = [pairs_table(summary), ratings_table(summary), bids_table(summary)]
    per_agent = agents_table(summary)
    if per_agent is not None:
        tables.insert(2, per_agent)
    agent_bids = agent_bids_table(summary)
    if agent_bids is not None:
        tables.append(agent_bids)
    return [*tables, *agent_tables(summary)]


def print_summary(summary: dict[str, Any], console: Console) -> None:
    """The summary as tables: pairs, ratings, bid accuracy (and the tables of the agent
    kinds that report on the run, e.g. the language-model agents' requests)."""
    for table in _tables(summary):
        console.print(table)


def render(summary: dict[str, Any], width: int = 120) -> str:
    """The three tables as plain text, `width` columns wide."""
    buf = io.StringIO()
    print_summary(summary, Console(file=buf, width=width, color_system=None))
    return buf.getvalue()


# ----------------------------------------------------------------------------- result
class TournamentResult(dict):
    """A tournament's summary (a dict: the content of `summary.json`) that prints the
    command line's tables (`print(result)`, `result.show()`) and gives them as pandas data
    frames (`margins`, `ratings`, `bids`). `run_dir` is the run folder (None when built
    from a dict alone)."""

    def __init__(self, summary: dict[str, Any], run_dir: str | Path | None = None) -> None:
        super().__init__(summary)
        self.run_dir = None if run_dir is None else Path(run_dir)

    def __str__(self) -> str:
        return render(self)

    def show(self, console: Console | None = None) -> None:
        """Print the tables on `console` (default: a rich console on standard output)."""
        print_summary(self, console or Console())

    def __rich_console__(self, console, options):  # rich.print(result) draws the tables
        yield from _tables(self)

    @property
    def margins(self) -> pd.DataFrame:
        """One row per pair as the table shows it (leader first): a, b, deals, metric,
        margin (a - b), lo and hi (its 95% CI); in game mode also the win rate of a and
        its CI, the final-score margin and hands per game."""
        import pandas as pd

        out = []
        for p in map(leader_first, self["pairs"]):
            m = p["margin"]
            lo, hi = m["ci"] if m["ci"] is not None else (None, None)
            row = {"a": p["a"], "b": p["b"], "deals": p["deals"], "metric": p["metric"]}
            row.update(margin=m["mean"], lo=lo, hi=hi, sd=m.get("sd"))
            if "win_rate" in p:
                w = p["win_rate"]
                wlo, whi = w["ci"] if w["ci"] is not None else (None, None)
                row.update(win_rate=w["mean"], win_lo=wlo, win_hi=whi)
                row.update(final_margin=p["final_margin"]["mean"])
                row.update(hands_per_game=p["hands_per_game"])
            out.append(row)
        return pd.DataFrame(out)

    @property
    def ratings(self) -> pd.DataFrame:
        """One row per agent, best first: agent, mu, sigma, ordinal (mu - 3 sigma)."""
        import pandas as pd

        return pd.DataFrame(self["ratings"], columns=["agent", "mu", "sigma", "ordinal"])

    @property
    def bids(self) -> pd.DataFrame:
        """One bid-accuracy line per agent (the columns of the `Bid accuracy` table, by
        their summary names: mean_bid, bid_error, signed_error, make_rate, ...)."""
        import pandas as pd

        return pd.DataFrame(self["bids"])
