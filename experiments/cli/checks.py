"""Checks of output paths that commands make before any work, so a bad `--out` is one
line at once rather than after minutes of solving or playing."""

from __future__ import annotations

import os
from pathlib import Path


def _nearest_existing(path: Path) -> Path:
    probe = path.absolute()
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


def output_folder(path: str | Path, flag: str = "--out") -> Path:
    """`path` as a folder that exists or can be made, and written to; else ValueError."""
    path = Path(path)
    if path.exists() and not path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a file; give a folder")
    base = _nearest_existing(path)
    if not base.is_dir():
        raise ValueError(f"{flag} {str(path)!r}: {str(base)!r} is a file, not a folder")
    if not os.access(base, os.W_OK | os.X_OK):
        raise ValueError(f"{flag} {str(path)!r}: the folder {str(base)!r} is not writable")
    return path


def output_file(path: str | Path, flag: str = "--out") -> Path:
    """`path` as a file that can be written (its folder exists or can be made); else
    ValueError."""
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a folder; give a file")
    output_folder(path.parent, flag=f"{flag} {str(path)!r}: its folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{flag} {str(path)!r} is not writable")
    return path
