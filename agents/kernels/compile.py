"""How the agents' kernels are compiled, and numba's on-disk cache of them.

They inline the rules core and tables of `spades_env`, so their cache is dropped when any
source of `spades_env/` or `agents/` changes (the check itself is
`spades_env.core.compile.refresh`).
"""

from __future__ import annotations

from pathlib import Path

import numba

from spades_env.core.compile import announce_compile, refresh

__all__ = ["ensure_fresh", "jit", "jit_inline", "jit_unref"]

_AGENTS = Path(__file__).resolve().parent.parent
_SOURCES = (_AGENTS.parent / "spades_env", _AGENTS)
#: every agent package's compiled kernels
_CACHES = (
    _AGENTS / "__pycache__",
    *(p.parent / "__pycache__" for p in sorted(_AGENTS.glob("*/__init__.py"))),
)
_STAMP = Path(__file__).resolve().parent / "__pycache__" / "numba-sources.sha256"
_checked = False


def ensure_fresh() -> bool:
    """Drop the agents' cached kernels if the sources changed since they were stamped;
    once per process. Returns True when it cleared them."""
    global _checked
    if _checked:
        return False
    _checked = True
    cleared = refresh(_SOURCES, _CACHES, _STAMP)
    announce_compile(_CACHES)  # once per run: spades_env's notice silences this one
    return cleared


#: how every kernel is compiled: cached on disk (checked by `ensure_fresh`); numpy's error
#: model: no zero-division checks (no kernel divides by zero)
jit = numba.njit(cache=True, error_model="numpy")
#: the searches' top-level loops: compiled without numba's reference counting. They
#: allocate nothing (scratch comes from the caller or `stack_array`) and take every array
#: through `borrow`, so neither they nor the helpers they call count references
#: (spades_env/core/borrow.py; in the helpers a null count is a call that returns at once)
jit_unref = numba.njit(cache=True, error_model="numpy", _nrt=False)
#: their helpers: inlined into them, so compiled without reference counting with them
jit_inline = numba.njit(cache=True, error_model="numpy", inline="always")
