"""Agents: the shared interface (`agents.base`), the registry of specs (`agents.registry`)
and the one-call wrappers `from_function` / `from_module` (`agents.adapters.functions`)."""

from __future__ import annotations

from typing import Any

from spades_env import spec_resolver as _spec_resolver

__all__ = ["from_function", "from_module"]


def __getattr__(name: str) -> Any:  # loaded on first use: `import agents.x` stays light
    if name in __all__:
        from agents.adapters import functions as wrappers

        return getattr(wrappers, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")


def _build_opponent(spec: str, rules: Any) -> Any:
    """The envs' opponent spec strings, resolved by `agents.opponents` (loaded on use)."""
    from agents.opponents import build

    return build(spec, rules)


_spec_resolver.set_resolver(_build_opponent)  # any import of agents makes it known
