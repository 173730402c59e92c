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

A cold cache (a fresh checkout or install, or sources just edited) costs about a minute of
compiling before the first game moves, so `ensure_fresh` says so once on stderr
(`announce_compile`), instead of leaving a silent pause: on a terminal and in a pipe or
a log alike (CI, nohup, a notebook), where a silent minute reads as a hang. `spades
--quiet` (or `SPADES_COMPILE_NOTICE=0`) silences it.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import TextIO

_PACKAGE = Path(__file__).resolve().parent.parent
_SOURCES = (_PACKAGE,)
_CACHES = (_PACKAGE / "__pycache__", _PACKAGE / "core" / "__pycache__")
_STAMP = _PACKAGE / "core" / "__pycache__" / "numba-sources.sha256"
_checked = False

#: set to "0" to silence the compile notice; set to "0" by the notice itself, so that the
#: worker processes of the same run (which inherit the environment) stay quiet
NOTICE_ENV = "SPADES_COMPILE_NOTICE"
NOTICE = (
    "spades-env: compiling the numba kernels, once per checkout or install (a minute or more; "
    "later runs load them from the cache)"
)


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


def announce_compile(caches: Iterable[Path], stream: TextIO | None = None) -> bool:
    """Print `NOTICE` to `stream` (stderr) when none of `caches` holds a compiled kernel
    (numba's `.nbi` index files), once per run, whether `stream` is a terminal or not.
    Returns True when it printed."""
    if os.environ.get(NOTICE_ENV) == "0":
        return False
    if any(next(Path(cache).glob("*.nbi"), None) is not None for cache in caches):
        return False
    stream = sys.stderr if stream is None else stream
    print(NOTICE, file=stream, flush=True)
    os.environ[NOTICE_ENV] = "0"
    return True


def ensure_fresh() -> bool:
    """`refresh` for spades_env's own kernels, once per process (and the compile notice)."""
    global _checked
    if _checked:
        return False
    _checked = True
    cleared = refresh(_SOURCES, _CACHES, _STAMP)
    announce_compile(_CACHES)
    return cleared
