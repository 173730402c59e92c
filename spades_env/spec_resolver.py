"""How the envs turn an opponent given as a spec string into an agent, without importing
a later package.

The envs take agents (objects with `act(view, obs, mask)`). A spec string
(`"heuristic"`, `"pimc:worlds=16"`, `"path/to/bot.py:Class"`) is resolved by the layer
above them, the `agents` package, which makes itself known in two ways, so that nothing
here names it:

- it declares its resolver in the entry-point group `GROUP` (pyproject.toml), found on
  the first string an env is given in a process that has not imported `agents` yet
  (`gymnasium.make("spades_env/Spades-v0", opponents="heuristic")` in a fresh process);
- importing any module of `agents` registers the same resolver at once (`set_resolver`).

A resolver is `(spec, rules) -> agent`.
"""

from __future__ import annotations

import importlib.metadata
from collections.abc import Callable
from typing import Any

#: the entry-point group where a package declares the resolver of opponent spec strings
GROUP = "spades_env.spec_resolvers"

Resolver = Callable[[str, Any], Any]
_RESOLVER: list[Resolver] = []


def set_resolver(resolve: Resolver) -> None:
    """Make `resolve(spec, rules) -> agent` the resolver of opponent spec strings."""
    _RESOLVER[:] = [resolve]


def resolve(spec: str, rules: Any) -> Any:
    """The agent that opponent spec `spec` names, built for `rules` by the resolver."""
    if not _RESOLVER:
        points = sorted(importlib.metadata.entry_points(group=GROUP), key=lambda ep: ep.name)
        if not points:
            raise TypeError(
                f"opponent {spec!r}: no installed package builds agents from spec strings "
                f"(entry-point group {GROUP}; reinstall spades-env: pip install -e .); "
                "import agents first, or pass an agent object with act(view, obs, mask)"
            )
        found = points[0].load()  # (loading agents registers the same one first)
        if not _RESOLVER:
            _RESOLVER.append(found)
    return _RESOLVER[0](spec, rules)
