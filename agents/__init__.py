"""Agents: the shared interface (`agents.base`), the registry of specs (`agents.registry`)
and the one-call wrappers `from_function` / `from_module` (`agents.adapters.functions`)."""

from __future__ import annotations

from typing import Any

__all__ = ["from_function", "from_module"]


def __getattr__(name: str) -> Any:  # loaded on first use: `import agents.x` stays light
    if name in __all__:
        from agents.adapters import functions as wrappers

        return getattr(wrappers, name)
    raise AttributeError(f"module 'agents' has no attribute {name!r}")
