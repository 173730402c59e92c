"""`spades_env.tooling.files`, the one way the project writes its files: each kind of link at the
path of each way of writing (atomic replace, append, lock), in-process.

A write either leaves the file outside the link as it was (and a dangling link's target
uncreated) or is refused with one line saying what to do; no temporary file is left.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from cli_helpers import REPO
from fault_cases import LINK_KINDS, plant, tmp_files

from spades_env.tooling import files


def _append(path):
    fd = files.open_append(path)
    try:
        files.write_all(fd, b"row\n")
    finally:
        os.close(fd)


def _lock(path):
    with files.lock_folder(path.parent):
        pass


WRITES = {
    "atomic_write": lambda path: files.atomic_write(path, b"new\n"),
    "open_append": _append,
    "lock_folder": _lock,
}


@pytest.mark.parametrize("kind", LINK_KINDS)
@pytest.mark.parametrize("how", sorted(WRITES))
def test_no_write_goes_through_a_link(tmp_path, how, kind):
    folder = tmp_path / "run"
    folder.mkdir()
    path = folder / (files.LOCK_FILE if how == "lock_folder" else "file")
    path.write_bytes(b"old\n")
    planted = plant(path, kind, tmp_path / "outside")
    try:
        WRITES[how](path)
    except files.UnsafeFileError as exc:
        assert "\n" not in str(exc) and "link" in str(exc)
        assert how != "atomic_write", "atomic_write replaces a link: it never needs to refuse"
    else:
        assert how == "atomic_write" and not path.is_symlink() and path.stat().st_nlink == 1
        assert path.read_bytes() == b"new\n"
    assert planted.intact()
    assert not tmp_files(tmp_path)


def test_unshare_gives_a_hard_link_a_copy_of_its_own(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    a.write_bytes(b"rows\n")
    os.link(a, b)
    assert files.unshare(b) and a.stat().st_nlink == 1 and b.read_bytes() == b"rows\n"
    _append(b)
    assert a.read_bytes() == b"rows\n" and b.read_bytes() == b"rows\nrow\n"
    assert not files.unshare(b)  # already its own


def test_a_folder_lock_names_its_holder_and_waits_when_asked(tmp_path):
    code = (
        "import pathlib, sys, time; from spades_env.tooling.files import lock_folder\n"
        "with lock_folder(sys.argv[1]):\n"
        "    print('held', flush=True); time.sleep(2)\n"
        "    pathlib.Path(sys.argv[1], 'done').write_text('x')\n"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True, cwd=REPO
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        refused = pytest.raises(files.FolderLockedError, match=f"in use by pid {holder.pid}")
        with refused, files.lock_folder(tmp_path, "dataset"):
            pass
        with files.lock_folder(tmp_path, wait=True):  # waits for the holder to end
            assert (tmp_path / "done").exists()  # written by the holder before it let go
    finally:
        holder.kill()
        holder.wait()
    assert (tmp_path / files.LOCK_FILE).read_bytes() == b""  # a clean exit names no holder


def test_disk_error_words_the_disk_and_shows_paths_as_text():
    import errno

    line = files.disk_error(OSError(errno.EROFS, "Read-only file system", b"/mnt/r\xc3\xa9"))
    assert line == "'/mnt/ré': the file system is read-only (Read-only file system)"
    assert files.disk_error(ValueError("x")) is None
    assert files.disk_error(OSError(errno.ENOENT, "No such file")) is None
