"""An agent spec as a value: `AgentSpec`, and the errors of a spec that cannot be one.

A spec's text (`[NAME=]TARGET[:key=value,...]`, see `agents.registry`) is read once, at
the edge where it enters the program (the command line, the Python API, a run's
config.json), by `agents.registry.parse_agent`: taken apart, its options converted to
their types and checked, every path in it made absolute. What comes out is an
`AgentSpec`, a frozen value the rest of the program passes around and trusts: a
tournament's config holds it, its workers receive it (pickled) and build agents from it
without reading the text again. It becomes text again only at the JSON edge
(`AgentSpec.to_json`, read back by `agents.registry.agent_from_json`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["KINDS", "AgentImportError", "AgentSpec", "AgentSpecError", "TeamSpec"]

#: where a spec's agent comes from: the registry's table, an installed plugin, a Python
#: file (`path/to/file.py:Class`, the path absolute) or a module (`package.module:Class`)
KINDS = ("registry", "plugin", "file", "module")


class AgentSpecError(ValueError):
    """An agent spec naming an unknown agent or parameter, or a bad value."""


class AgentImportError(AgentSpecError):
    """The file, module or plugin a spec names cannot be imported here: the spec may be
    right (a run's config is not damaged), the code is missing or broken."""


@dataclass(frozen=True)
class AgentSpec:
    """One agent, parsed and checked (`agents.registry.parse_agent` builds it).

    `label` is the `NAME=` given (None: none), `kind` one of `KINDS`, `target` the
    registered or plugin name, or `/abs/path/file.py:attr`, or `package.module:attr`.
    `options` are the typed options in the order given (a path option absolute).
    `text` is the spec written back with those absolute paths: what a run stores, and
    what any process parses into this same value. `display` is the agent's name in
    tables, logs and ratings: its label, else the spec as the user wrote it (a file by
    its file name alone), so a path made absolute does not rename the agent."""

    label: str | None
    kind: str
    target: str
    options: tuple[tuple[str, Any], ...]
    text: str
    display: str

    @property
    def params(self) -> dict[str, Any]:
        """The options as keyword arguments of the agent's factory."""
        return dict(self.options)

    def to_json(self) -> str | dict[str, str]:
        """The spec as a run's config.json stores it: its text, or, when that text would
        show under another name (`checkpoint:l.pt`, stored with its path absolute),
        `{"spec": text, "name": display}` (`agents.registry.agent_from_json`)."""
        if self.display == self._shown(self.text):
            return self.text
        return {"spec": self.text, "name": self.display}

    def _shown(self, text: str) -> str:
        """The name `text` shows when read without a stored name (as `display` is made)."""
        if self.label is not None:
            return self.label
        if self.kind == "file":
            return self.display  # a file shows by its file name, the same either way
        return text

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class TeamSpec:
    """A partnership of two agents, parsed and checked
    (`agents.registry.parse_entry` of `[NAME=]team(SPEC, SPEC)`): a model with a bot
    partner, two models, a model partnering itself. It plays where a tournament or an
    evaluation seats a team (`spades tournament --agents`, `spades evaluate`); the
    first member holds the team's first seat of each side (North, or East on the
    swapped side), the second its partner's.

    `members` are the two `AgentSpec` values; `text` the spec written back (members'
    texts joined by `;`); `display` the team's name in tables, logs and ratings: its
    label, else the members' names joined by `+`. Each member is its own agent, built
    with its own seed, even when both members have the same spec (a model partnering
    itself draws its answers independently for each seat)."""

    label: str | None
    members: tuple[AgentSpec, AgentSpec]
    text: str
    display: str

    kind = "team"

    def to_json(self) -> dict[str, Any]:
        """The team as a run's config.json stores it: `{"team": [member, member]}` (each
        as `AgentSpec.to_json`), with `"name"` when it has a label."""
        out: dict[str, Any] = {"team": [m.to_json() for m in self.members]}
        if self.label is not None:
            out["name"] = self.label
        return out

    def __str__(self) -> str:
        return self.text
