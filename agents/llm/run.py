"""The `llm:` agent in a tournament's run folder: what `agents.llm.agent.LLMAgent`'s run
hooks (`agents.base.BaseAgent`) do.

- `run_dir_env`: while the units are played, `RUN_DIR_ENV` names the run folder (worker
  processes inherit it), so each agent writes its exchanges and its response cache there
  (`agents.llm.store`);
- `SECTION`, `run_stats`: the summary's ``llm`` section, per agent
  (`agents.llm.store.summarize_records`): decisions, re-asks, illegal and unreadable
  answers, ``fallback_share`` and ``not_understood_share``, ``invalid`` with its
  ``invalid_reason``, tokens paid and replayed, ``dollars``, seconds (also what a rung
  of ``spades evaluate`` keeps of an ``llm:`` candidate);
- `stats_table`: the report's table of that section.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.base import ReportTable
from agents.llm.store import RUN_DIR_ENV, run_stats

__all__ = ["SECTION", "run_dir_env", "run_stats", "stats_table"]

#: the key of the llm agents' section in a run's summary.json
SECTION = "llm"


@contextmanager
def run_dir_env(run_dir: Path) -> Iterator[None]:
    """`RUN_DIR_ENV` names the run folder for the block (worker processes inherit it)."""
    old = os.environ.get(RUN_DIR_ENV)
    os.environ[RUN_DIR_ENV] = str(Path(run_dir).resolve())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(RUN_DIR_ENV, None)
        else:
            os.environ[RUN_DIR_ENV] = old


def stats_table(stats: dict[str, dict[str, Any]]) -> ReportTable:
    """Language-model agents (`llm:`): the fallback share and the share of answers not
    understood (the two numbers that say whether a margin is the model's), re-asks and
    illegal answers per decision, tokens paid and replayed from the cache, dollars where
    prices are known, wall seconds per decision, and INVALID where the fallback share
    passed its limit."""
    columns = ("agent", "decisions", "fallback", "not und.", "re-asks", "illegal",
               "tok in", "tok out", "replayed", "$", "s/dec", "valid")  # fmt: skip
    rows = tuple(
        (
            agent,
            str(s["decisions"]),
            f"{s.get('fallback_share', s['fallbacks_per_decision']):.1%}",
            f"{s.get('not_understood_share', 0.0):.1%}",
            f"{s['reasks_per_decision']:.2f}",
            f"{s['illegal_per_decision']:.2f}",
            str(s["tokens_in"]),
            str(s["tokens_out"]),
            str(s.get("replayed_tokens_in", 0)),
            "-" if s.get("dollars") is None else f"{s['dollars']:.4f}",
            f"{s['seconds_per_decision']:.2f}",
            "INVALID" if s.get("invalid") else "yes",
        )
        for agent, s in stats.items()
    )
    return ReportTable(
        title="Language-model agents",
        columns=columns,
        rows=rows,
        caption="fallback: share of decisions the fallback agent played (INVALID past "
        "max_fallback_share); not und.: share of answers the reader did not understand; "
        "re-asks, illegal: per decision; tok in/out: tokens paid (sent to the model); "
        "replayed: prompt tokens replayed from the response cache, not paid again; $: paid "
        "tokens at the agent's prices; s/dec: wall seconds per decision, retries and waits "
        "included",
        left=("agent",),
    )
