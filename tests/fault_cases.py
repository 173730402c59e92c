"""Shared pieces of the fault suites of `tests/faults/`: links planted in a run folder,
small file systems that fill up or turn read-only, a command run from a folder of the
test's choosing, and the checks every case ends with (nothing outside changed, no
temporary file left)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from cli_helpers import REPO

#: The kinds of link a case plants where a command reads or writes a file.
LINK_KINDS = ("symlink", "dangling", "hardlink")


@dataclass
class Planted:
    """A link planted at `at`, pointing to (or sharing its data with) `outside`, a file
    the command must never change (or, for a dangling link, never create)."""

    at: Path
    outside: Path
    kind: str
    before: bytes | None

    def intact(self) -> bool:
        if self.before is None:
            return not self.outside.exists()
        return self.outside.exists() and self.outside.read_bytes() == self.before


def plant(at: Path, kind: str, outside_dir: Path) -> Planted:
    """Replace the file `at` (or its absence) by a link of `kind` to a file in
    `outside_dir`, which holds what `at` held (or a line of its own when `at` is missing
    or empty: something a write through the link would visibly change)."""
    outside_dir.mkdir(parents=True, exist_ok=True)
    outside = outside_dir / f"precious-{at.parent.name}-{at.name.lstrip('.')}"
    content = at.read_bytes() if at.is_file() else b""
    if at.exists() or at.is_symlink():
        at.unlink()
    if kind == "dangling":
        at.symlink_to(outside)
        return Planted(at, outside, kind, None)
    outside.write_bytes(content or b"precious: not the command's\n")
    if kind == "symlink":
        at.symlink_to(outside)
    else:
        os.link(outside, at)
    return Planted(at, outside, kind, outside.read_bytes())


def error_line(out: subprocess.CompletedProcess[str] | tuple[int, str]) -> str:
    """The one line of error a refused command ends with: exit status 2, no traceback, the
    last line of stderr (a run may print a line as it starts, before it is stopped). `out`
    is a finished process or (exit status, stderr)."""
    code, err = (out.returncode, out.stderr) if hasattr(out, "returncode") else out
    assert code == 2, err
    assert "Traceback" not in err, err
    line = err.strip().splitlines()[-1]
    assert line.startswith("spades ") and ": error: " in line, err
    return line


def tmp_files(*folders: Path) -> list[Path]:
    """Temporary files (`*.tmp`) left anywhere below `folders`."""
    return [p for f in folders if f.exists() for p in f.rglob("*.tmp")]


def command(*args: str, cwd: Path | None = None, stdin: str | None = None, timeout: float = 600):
    """`spades ARGS` run from `cwd` (default the repository), this checkout's code first."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.run(
        [sys.executable, "-m", "experiments.cli", *args],
        cwd=cwd or REPO,
        capture_output=True,
        text=True,
        input=stdin,
        timeout=timeout,
        env=env,
    )


def start_command(*args: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    """`command` started in the background (its input, output and errors piped)."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")]),
    }
    return subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", *args],
        cwd=cwd or REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


# ----------------------------------------------------------------------------- small disks
def _mount(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["mount", *args], capture_output=True, text=True)


@contextmanager
def small_disk(folder: Path, size: str = "4m") -> Iterator[Path]:
    """A tmpfs of `size` mounted at `folder` for the block (skips the test where mounting
    is not permitted: it needs root), unmounted after."""
    folder.mkdir(parents=True, exist_ok=True)
    done = _mount("-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(folder))
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here ({done.stderr.strip()[:80]}): needs root")
    try:
        yield folder
    finally:
        subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def set_read_only(mount: Path, read_only: bool = True) -> None:
    """Remount a `small_disk` read-only (or writable again)."""
    done = _mount("-o", f"remount,{'ro' if read_only else 'rw'}", str(mount))
    if done.returncode != 0:
        pytest.skip(f"cannot remount a tmpfs read-only here ({done.stderr.strip()[:80]})")


def free_bytes(mount: Path) -> int:
    st = os.statvfs(mount)
    return st.f_bavail * st.f_frsize


def fill(mount: Path, leave: int) -> Path:
    """Fill `mount` with one file, leaving about `leave` bytes free; returns the file (delete
    it to free the space again)."""
    filler = mount / "filler.bin"
    size = max(0, free_bytes(mount) - leave)
    with open(filler, "wb") as f:
        chunk = b"\0" * (1 << 20)
        while size > 0:
            try:
                size -= f.write(chunk[: min(size, len(chunk))])
            except OSError:
                break
    return filler
