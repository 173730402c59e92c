"""Keep numba's on-disk cache honest: recompile when any source a kernel uses has changed.

The search kernels (`agents/*_kernel.py`, `agents/dd/`) are compiled with
`numba.njit(cache=True)`. Numba checks a cached kernel against the timestamp of the one
file that defines it, so an edit to a helper it inlines from another file, or to a table
it captured as a constant (`spades_env.cards`' strengths, say), would silently keep the
old machine code. Every kernel module calls `ensure_fresh()` before it defines a kernel:
it hashes the sources of `spades_env/` and `agents/` and, when the hash differs from the
one stamped next to the cache, deletes the cached kernels of `agents/` and `agents/dd/`
so that they compile again from the current sources (tens of seconds, once).

An unwritable install (numba then caches elsewhere) or a cache another process is
rewriting at the same moment only means a recompile; neither is an error.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numba

_AGENTS = Path(__file__).resolve().parent
_SOURCES = (_AGENTS.parent / "spades_env", _AGENTS)
_CACHES = (_AGENTS / "__pycache__", _AGENTS / "dd" / "__pycache__")
_STAMP = _AGENTS / "__pycache__" / "numba-sources.sha256"
_checked = False


def sources_digest() -> str:
    """SHA-256 over the paths and contents of every .py file kernels may depend on."""
    h = hashlib.sha256()
    for root in _SOURCES:
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root.parent)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def ensure_fresh() -> bool:
    """Drop the cached kernels if the sources changed since they were stamped; once per
    process. Returns True when it cleared them."""
    global _checked
    if _checked:
        return False
    _checked = True
    digest = sources_digest()
    try:
        if _STAMP.read_text() == digest:
            return False
    except OSError:
        pass
    for cache in _CACHES:
        for pattern in ("*.nbi", "*.nbc"):
            for path in cache.glob(pattern):
                path.unlink(missing_ok=True)
    try:
        _STAMP.parent.mkdir(exist_ok=True)
        _STAMP.write_text(digest)
    except OSError:
        pass
    return True


#: how every kernel is compiled: cached on disk (checked by `ensure_fresh`); numpy's error
#: model: no zero-division checks (no kernel divides by zero)
jit = numba.njit(cache=True, error_model="numpy")
