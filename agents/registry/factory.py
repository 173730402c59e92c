"""The factory: a parsed spec (`AgentSpec`) -> its agent, seeded (`make_agent`).

Nothing here reads a spec's text: `agents.registry.parse_agent` does, once, where the
text enters the program; a `str` given here is a `TypeError` that says so.
"""

from __future__ import annotations

from typing import Any

from agents.base import BaseAgent
from agents.registry.grammar import check_agent_rules, parse_agent
from agents.registry.table import entry_of
from agents.spec import AgentSpec, AgentSpecError
from spades_env.agent_calls import AgentError, guarded
from spades_env.rules import Rules


def make_agent(spec: AgentSpec, seed: int | None = None, rules: Rules | None = None) -> BaseAgent:
    """Build the agent a parsed spec names, seeded; with `rules`, refuse rules it cannot
    play (`check_agent_rules`).

    `spec` is an `AgentSpec` (`parse_agent` of `[NAME=]TARGET[:key=value,...]`), built as
    it says, nothing read again: TARGET a registered name, a plugin's name,
    `path/to/file.py:Class` or `package.module:Class` (a class, a factory
    `(seed=..., **options) -> agent`, or an agent object). The agent's `name` is NAME,
    else the spec (`AgentSpec.display`). The agent's own code failing (its constructor
    raising, exiting, hanging) is one `AgentError` naming it."""
    if not isinstance(spec, AgentSpec):
        raise TypeError(
            "make_agent takes an AgentSpec: parse the text once with agents.registry.parse_agent"
        )
    if rules is not None:
        check_agent_rules(spec, rules)
    entry = entry_of(spec)

    def build() -> Any:
        params = spec.params
        for key, default in entry.agents.items():  # an option naming another agent
            params[key] = make_agent(parse_agent(params.get(key, default)), seed=seed)
        return entry.factory(seed=seed, **params)

    try:  # the agent's own code: whatever it does wrong is one line naming it
        agent = guarded(build, spec.display, passthrough=(AgentSpecError,))
    except AgentError as exc:
        raise AgentError(exc.agent, f"could not be built: {exc.what}") from None
    if not callable(getattr(agent, "act", None)):
        raise AgentSpecError(
            f"agent {spec.display!r}: {spec.target} built a {type(agent).__name__}, "
            "which has no act(view, obs, mask)"
        )
    if not hasattr(agent, "needs_obs"):
        agent.needs_obs = True  # an agent of unknown needs gets the encoding
    agent.name = spec.display
    return agent
