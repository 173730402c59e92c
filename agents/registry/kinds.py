"""The agent classes of a run, whose class-level run hooks (`agents.base.BaseAgent`:
`in_run_folder`, `run_section` and `run_summary`, `report_tables`) the tournament's
driver, its report and the evaluation ladder call: none of them knows an agent kind by
name.

An entry's class is its `agent_class` (a class, or "module:Class" imported here, on
first use), else its factory when that is a class; a factory function gives none. Only
subclasses of `BaseAgent` have the hooks.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import Any

from agents.adapters.sources import AgentEntry
from agents.base import BaseAgent
from agents.registry.grammar import entry_from_json, members_of
from agents.registry.table import entry_of
from agents.spec import AgentSpec, AgentSpecError, TeamSpec


def agent_class(entry: AgentEntry) -> type[BaseAgent] | None:
    """The class of the agents `entry` builds, when it is a `BaseAgent` (None: unknown)."""
    kind: Any = entry.agent_class
    if kind is None:
        kind = entry.factory
    elif isinstance(kind, str):
        module, _, name = kind.partition(":")
        kind = getattr(importlib.import_module(module), name)
    return kind if isinstance(kind, type) and issubclass(kind, BaseAgent) else None


def agent_classes(
    agents: Iterable[AgentSpec | TeamSpec | str | dict[str, Any]],
) -> list[type[BaseAgent]]:
    """The classes of the agents of a run, each once, in order. `agents` are parsed specs
    (`AgentSpec`, or a `TeamSpec`: its members), or specs as a run's config.json stores
    them (`AgentSpec.to_json`), which are parsed here; one this process cannot parse or
    import is left out."""
    found: list[type[BaseAgent]] = []
    for agent in agents:  # a team (`TeamSpec`, or as config.json stores it): its members
        if isinstance(agent, AgentSpec | TeamSpec):
            entries = [entry_of(m) for m in members_of([agent])]
        else:
            try:
                entries = [entry_of(m) for m in members_of([entry_from_json(agent)])]
            except (AgentSpecError, ValueError):
                continue
        for entry in entries:
            kind = agent_class(entry)
            if kind is not None and kind not in found:
                found.append(kind)
    return found


def summary_sections(
    agents: Iterable[AgentSpec | TeamSpec | str | dict[str, Any]],
) -> dict[str, type[BaseAgent]]:
    """{section key: the agent class that writes it} for the agents of a run
    (`agent_classes`; the first class of a key wins), in the agents' order."""
    out: dict[str, type[BaseAgent]] = {}
    for kind in agent_classes(agents):
        if kind.run_section is not None:
            out.setdefault(kind.run_section, kind)
    return out
