"""The stubs left at an old import path after a module moved: each warns once, when it is
imported, and re-exports the public names of the module at the new path. Product code
never imports a stub (tests/project/test_import_layers.py); a stub goes after one
release."""

from __future__ import annotations
import __future__

import warnings
from types import ModuleType
from typing import Any

#: the type of a `from __future__` feature (`annotations`), no public name
FUTURE_FEATURE = type(__future__.annotations)


def public_names(module: ModuleType) -> list[str]:
    """A module's public names: its `__all__`, or else every name without a leading
    underscore that is not a module or a `from __future__` feature."""
    names = getattr(module, "__all__", None)
    if names is not None:
        return list(names)
    return [
        name
        for name, value in vars(module).items()
        if not name.startswith("_") and not isinstance(value, ModuleType | FUTURE_FEATURE)
    ]


def renamed(stub: dict[str, Any], new: ModuleType) -> None:
    """Make the stub module whose globals are `stub` re-export `new`'s public names, and
    warn (DeprecationWarning, at the line that imported the stub) that it moved."""
    old = stub["__name__"]
    warnings.warn(
        f"{old} is renamed {new.__name__}: import that instead ({old} goes in the next release)",
        DeprecationWarning,
        stacklevel=3,
    )
    names = public_names(new)
    stub.update({name: getattr(new, name) for name in names})
    stub["__all__"] = names
