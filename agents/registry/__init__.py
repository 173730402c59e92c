"""Build agents from text: `random`, `heuristic:aggression=0.2`, `pimc:worlds=64`, ...

A spec is `[NAME=]TARGET[:key=value,key=value]`. TARGET is

- a registered name (`REGISTRY`, or `register`): `heuristic:aggression=0.2`;
- a plugin's name: an installed package that declares agents in the entry-point group
  `spades_env.agents` (`PLUGIN_GROUP`), e.g. in its pyproject.toml
  `[project.entry-points."spades_env.agents"] lowcard = "mybots.low:LowCard"`;
- `path/to/file.py:Class` or `package.module:Class`, options after a second colon
  (`bots/low.py:LowCard:depth=2`): a class, a factory `(seed=..., **options) -> agent`
  or an agent object; options are typed by the signature's annotations or defaults.

`NAME=` gives the agent its name in tables, logs and ratings (default: the spec; a file
by its file name). Each registered name maps to a factory `(seed, **params) -> Agent`
and the parameters it accepts with their types. An unknown name or parameter is an
`AgentSpecError` that lists the known ones; a file, module or plugin that cannot be
imported is an `AgentImportError` (one of them) that names it and says what to do.
`check_agent_rules` (and `make_agent(..., rules=...)`) refuses, before any game starts,
rules an agent cannot play (an entry's `rules_check`).

A spec's text is read once, where it enters the program, by `parse_agent`: into an
`AgentSpec` (`agents.spec`), a value with its kind, typed options and every path absolute
(a file's, a `checkpoint:`/`sb3:` path), which the rest of the program trusts. A run
stores its text (`AgentSpec.to_json`); a tournament's workers get the value itself, and
`--resume` parses the stored text, in a fresh process: a name that a script registers
(`register`) is not known there, a file, module or plugin spec is.

This package is the one door: its names are the public API. Inside, the table
(`table`: `REGISTRY`, `register`, `known_names`, `plugin_names`, `entry_of`), the grammar
(`grammar`: the text -> `AgentSpec`, `split_specs`, `parse_agent`, `agent_from_json`,
`check_agent_rules`; a tournament's team of two agents, `team(SPEC, SPEC)` -> a
`TeamSpec`: `parse_entry`, `entry_from_json`, `members_of`), the factory (`factory`:
`make_agent`, which takes an `AgentSpec` only) and the agent classes of a run, whose
run hooks a tournament calls (`kinds`: `agent_classes`, `summary_sections`).
"""

from __future__ import annotations

from agents.adapters.sources import PLUGIN_GROUP, AgentEntry, is_file_target
from agents.registry.factory import make_agent
from agents.registry.grammar import (
    ParsedSpec,
    agent_from_json,
    canonical_spec,
    check_agent_rules,
    display_name,
    entry_from_json,
    is_team,
    members_of,
    parse_agent,
    parse_entry,
    parse_spec,
    resolve,
    split_spec,
    split_specs,
)
from agents.registry.kinds import agent_class, agent_classes, summary_sections
from agents.registry.table import REGISTRY, entry_of, known_names, plugin_names, register
from agents.spec import AgentImportError, AgentSpec, AgentSpecError, TeamSpec

# ParsedSpec, canonical_spec, display_name, parse_spec, resolve and split_spec are
# deprecated (each warns when called) and go in the next release: use parse_agent.
__all__ = [
    "PLUGIN_GROUP",
    "REGISTRY",
    "AgentEntry",
    "AgentImportError",
    "AgentSpec",
    "AgentSpecError",
    "ParsedSpec",
    "TeamSpec",
    "agent_class",
    "agent_classes",
    "agent_from_json",
    "canonical_spec",
    "check_agent_rules",
    "display_name",
    "entry_from_json",
    "entry_of",
    "is_file_target",
    "is_team",
    "known_names",
    "make_agent",
    "members_of",
    "parse_agent",
    "parse_entry",
    "parse_spec",
    "plugin_names",
    "register",
    "resolve",
    "split_spec",
    "split_specs",
    "summary_sections",
]
