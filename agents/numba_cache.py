"""The agents' kernels (`agents/*_kernel.py`, `agents/dd/`) and numba's on-disk cache.

They inline the rules core and tables of `spades_env`, so their cache is dropped when any
source of `spades_env/` or `agents/` changes (the check itself is
`spades_env.numba_cache.refresh`).
"""

from __future__ import annotations

from pathlib import Path

import numba

from spades_env.numba_cache import refresh, sources_digest

__all__ = ["ensure_fresh", "jit", "sources_digest"]

_AGENTS = Path(__file__).resolve().parent
_SOURCES = (_AGENTS.parent / "spades_env", _AGENTS)
_CACHES = (_AGENTS / "__pycache__", _AGENTS / "dd" / "__pycache__")
_STAMP = _AGENTS / "__pycache__" / "numba-sources.sha256"
_checked = False


def ensure_fresh() -> bool:
    """Drop the agents' cached kernels if the sources changed since they were stamped;
    once per process. Returns True when it cleared them."""
    global _checked
    if _checked:
        return False
    _checked = True
    return refresh(_SOURCES, _CACHES, _STAMP)


#: how every kernel is compiled: cached on disk (checked by `ensure_fresh`); numpy's error
#: model: no zero-division checks (no kernel divides by zero)
jit = numba.njit(cache=True, error_model="numpy")
