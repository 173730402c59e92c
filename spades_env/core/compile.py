"""Keep numba's on-disk cache honest: recompile when any source a kernel uses has changed.

Kernels are compiled with `numba.njit(cache=True)`. Numba checks a cached kernel against
the timestamp of the one file that defines it, so an edit to a helper it inlines from
another file, or to a table it captured as a constant (`spades_env.cards`' masks, say),
would silently keep the old machine code. Every kernel module calls `ensure_fresh()` (or
`refresh` with its own sources) before it defines a kernel: it hashes the sources and,
when the hash differs from the one stamped next to the cache, deletes the cached kernels
so that they compile again from the current sources (tens of seconds, once).

`spades_env`'s kernels (`spades_env/core/`) depend on `spades_env/` only; `agents`'
kernels call `refresh` with `spades_env/` and `agents/` (agents/kernels/compile.py).

An unwritable install (numba then caches elsewhere) or a cache another process is
rewriting at the same moment only means a recompile; neither is an error.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent.parent
_SOURCES = (_PACKAGE,)
_CACHES = (_PACKAGE / "__pycache__", _PACKAGE / "core" / "__pycache__")
_STAMP = _PACKAGE / "core" / "__pycache__" / "numba-sources.sha256"
_checked = False


def sources_digest(sources: Iterable[Path]) -> str:
    """SHA-256 over the paths and contents of every .py file under `sources`."""
    h = hashlib.sha256()
    for root in sources:
        for path in sorted(root.rglob("*.py")):
            h.update(str(path.relative_to(root.parent)).encode())
            h.update(path.read_bytes())
    return h.hexdigest()


def refresh(sources: Iterable[Path], caches: Iterable[Path], stamp: Path) -> bool:
    """Drop the cached kernels in `caches` if `sources` changed since `stamp` was written.
    Returns True when it cleared them."""
    digest = sources_digest(sources)
    try:
        if stamp.read_text() == digest:
            return False
    except OSError:
        pass
    for cache in caches:
        for pattern in ("*.nbi", "*.nbc"):
            for path in cache.glob(pattern):
                path.unlink(missing_ok=True)
    try:
        stamp.parent.mkdir(parents=True, exist_ok=True)
        stamp.write_text(digest)
    except OSError:
        pass
    return True


def ensure_fresh() -> bool:
    """`refresh` for spades_env's own kernels, once per process."""
    global _checked
    if _checked:
        return False
    _checked = True
    return refresh(_SOURCES, _CACHES, _STAMP)
