"""Checks of output paths that commands make before any work, so a bad `--out` is one
line at once rather than after minutes of solving or playing, and an output that is one
of the command's inputs (a log, a cache, an agent's file, a deal file) or lies inside a
run folder it reads is refused unless the user says so (`--overwrite-input`,
`spades_env.tooling.files.check_output`): no command writes over what it reads."""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterable
from pathlib import Path

from spades_env.tooling.files import OVERWRITE_INPUT_FLAG, check_output


def add_overwrite_input(p: argparse.ArgumentParser) -> None:
    """`--overwrite-input`: write the output even where it is one of the command's inputs
    or inside a run folder it reads (refused by default)."""
    p.add_argument(
        OVERWRITE_INPUT_FLAG,
        action="store_true",
        help="write the output even where it is one of this command's inputs or inside a "
        "run folder it reads (refused by default: the input would be lost)",
    )


def spec_files(specs: Iterable[object]) -> dict[str, Path]:
    """{"the agent file of SPEC": path} for each file an agent spec reads: a
    `file.py:Class` spec's file and each path option (`checkpoint:PATH`, `model=`,
    `template=`), from the parsed `AgentSpec`s; a spec of another kind reads none."""
    from agents.registry import AgentImportError, entry_of

    files: dict[str, Path] = {}
    for spec in specs:
        kind, target = getattr(spec, "kind", None), str(getattr(spec, "target", ""))
        if kind == "file":
            files[f"the agent file of {spec}"] = Path(target.rsplit(":", 1)[0])
        try:
            paths = entry_of(spec).paths if kind == "registry" else ()  # type: ignore[arg-type]
        except AgentImportError:
            paths = ()
        for key, value in getattr(spec, "options", ()):
            if key in paths or key in ("model", "path"):
                files[f"the {key} file of agent {spec}"] = Path(str(value))
    return files


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


def output_file(
    path: str | Path,
    flag: str = "--out",
    inputs: dict[str, str | Path | None] | None = None,
    run_folders: dict[str, str | Path | None] | None = None,
    allow: bool = False,
) -> Path:
    """`path` as a file that can be written (its folder exists or can be made), and that
    is none of `inputs` and lies in none of `run_folders` (`check_output`; `allow`: the
    user gave --overwrite-input); else ValueError."""
    path = Path(path)
    check_output(path, inputs, run_folders, flag=flag, allow=allow)
    if path.is_dir():
        raise ValueError(f"{flag} {str(path)!r} is a folder; give a file")
    output_folder(path.parent, flag=f"{flag} {str(path)!r}: its folder")
    if path.exists() and not os.access(path, os.W_OK):
        raise ValueError(f"{flag} {str(path)!r} is not writable")
    return path
