"""Writing the project's files safely: whole or not at all, never through a link, one
clear line when the disk refuses.

Every file a command writes (a run folder's log, config and summary, a checkpoint, a
dataset shard, a saved game, a table) goes through these functions:

- `atomic_write(path, data)` writes a temporary file in `path`'s own folder (a unique
  name, `NAME.XXXXXXXX.tmp`), flushes and fsyncs it, then renames it over `path`. A kill
  or a full disk leaves either the old file or the new one, never half of one, and the
  temporary file is removed whenever the write fails. The rename replaces the folder
  entry: a symbolic or hard link at `path` is replaced by the new file, and what it
  pointed to is left as it was.
- `open_append(path)` opens a file that is extended in place (a tournament's log)
  without following a symbolic link, and refuses a file with other names (a hard link),
  whose other copies the append would change too.
- `refuse_link(path)` refuses a symbolic link or a hard link where a file is modified in
  place.
- `disk_error(exc)` words an `OSError` of the disk (full, read-only, not permitted) as
  one line, so that it is not mistaken for a damaged file.
- `new_folder(parent, name)` makes a folder that no other process has: two runs started
  in the same second get `name` and `name-2`.
- `open_input(path, what)` opens a file a command reads, refusing a named pipe, a device
  or a folder (which would block or never end).
- `check_output(path, inputs, run_folders)` refuses an output that is one of a
  command's inputs or lies inside a run folder it reads (unless the user says so).
- `lock_folder(folder)` takes an exclusive lock on `folder/.lock` for one process at a
  time (`FolderLockedError` names the holder), refusing a linked lock file.
"""

from __future__ import annotations

import errno
import fcntl
import os
import re
import socket
import stat
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

#: The lock file `lock_folder` holds in a folder.
LOCK_FILE = ".lock"

#: Errors of the disk rather than of a file's content: reported as such, never as damage.
DISK_ERRNOS = {
    errno.ENOSPC: "no space left on the device",
    errno.EDQUOT: "disk quota exceeded",
    errno.EROFS: "the file system is read-only",
    errno.EACCES: "permission denied",
    errno.EPERM: "operation not permitted",
}


class UnsafeFileError(ValueError):
    """A file that cannot be written safely (a link, a folder); the message says what to do."""


class FolderLockedError(ValueError):
    """Another live process holds the folder's lock."""


def tmp_name(path: str | Path) -> str:
    """The pattern of the temporary files `atomic_write` makes for `path` (for a glob)."""
    return f"{Path(path).name}.*.tmp"


def is_tmp_of(name: str, target: str) -> bool:
    """Whether the file name `name` is one of `atomic_write`'s temporary files for `target`
    (or the fixed `target.tmp` that earlier releases used)."""
    return (
        name == target + ".tmp" or re.fullmatch(re.escape(target) + r"\.\w+\.tmp", name) is not None
    )


def atomic_write(
    path: str | Path, data: bytes | memoryview | str | Callable[[IO[bytes]], None]
) -> Path:
    """Write `data` (bytes, text as UTF-8, or a function that writes to a binary file) to
    `path` atomically: all of it or, on any failure, nothing, and no temporary file left.
    A link at `path` is replaced, not written through. Returns `path`."""
    path = Path(path)
    if path.is_dir() and not path.is_symlink():
        raise UnsafeFileError(f"{str(path)!r} is a folder; give a file")
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if callable(data):
                data(f)
            else:
                f.write(data.encode() if isinstance(data, str) else data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o666 & ~_UMASK)  # mkstemp makes 0600; a file as open() would
        os.replace(tmp, path)
    except BaseException as exc:
        with suppress(OSError):
            os.unlink(tmp)
        if isinstance(exc, OSError) and exc.filename is None and exc.errno is not None:
            raise OSError(exc.errno, exc.strerror, str(path)) from None  # say which file
        raise
    _sync_folder(path.parent)
    return path


def _read_umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


_UMASK = _read_umask()  # read once, at import: os.umask is not thread-safe


def _sync_folder(folder: Path) -> None:
    """Make a rename in `folder` durable (best effort: some file systems refuse)."""
    with suppress(OSError):
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _describe_link(path: Path) -> str:
    with suppress(OSError):
        return f"a symbolic link to {os.readlink(path)!r}"
    return "a symbolic link"


_COPY = "replace it with a copy of the file (or remove it)"


def refuse_link(path: str | Path, what: str = "", advice: str = _COPY) -> None:
    """Refuse (`UnsafeFileError`) a symbolic link at `path`, or a file with more than one
    name (a hard link): a file changed in place would change what the link points to. A
    missing file is fine."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return
    label = what or repr(str(path))
    if stat.S_ISLNK(st.st_mode):
        raise UnsafeFileError(
            f"{label} is {_describe_link(path)}; files are never written through a link: {advice}"
        )
    if stat.S_ISREG(st.st_mode) and st.st_nlink > 1:
        raise UnsafeFileError(
            f"{label} is a hard link (the file has {st.st_nlink} names); writing it would "
            f"change the other copies too: {advice}"
        )


def unshare(path: str | Path) -> bool:
    """If `path` is a hard link (a file with other names), give it a copy of its own, so
    that changing it in place leaves the other names as they were. Returns whether it
    copied."""
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    if not stat.S_ISREG(st.st_mode) or st.st_nlink <= 1:
        return False
    atomic_write(path, path.read_bytes())
    return True


def open_append(path: str | Path) -> int:
    """A descriptor to append to `path` (made if missing), refusing a symbolic link
    (`UnsafeFileError`, nothing created through a dangling one) and a hard link."""
    path = Path(path)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(path)
        raise
    try:
        _check_own_file(fd, path)
    except BaseException:
        os.close(fd)
        raise
    return fd


def _check_own_file(fd: int, path: Path) -> None:
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise UnsafeFileError(f"{str(path)!r} is not a regular file")
    if st.st_nlink > 1:
        refuse_link(path)


def write_all(fd: int, data: bytes) -> None:
    """Write all of `data` to `fd` (a short write is continued), then fsync."""
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]
    os.fsync(fd)


def disk_error(exc: BaseException) -> str | None:
    """One line for an error of the disk (full, read-only, no permission), or None for
    any other error. The path is shown as text, never as bytes."""
    if not isinstance(exc, OSError) or exc.errno not in DISK_ERRNOS:
        return None
    name = exc.filename
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    where = f"{name!r}: " if name else ""
    return f"{where}{DISK_ERRNOS[exc.errno]} ({exc.strerror or os.strerror(exc.errno)})"


def new_folder(parent: str | Path, name: str) -> Path:
    """Make and return a new folder `parent/name`, or `name-2`, `name-3`, ... when that
    exists: made with `mkdir` that fails on an existing folder, so two processes never
    get the same one."""
    parent = Path(parent)
    parent.mkdir(parents=True, exist_ok=True)
    for k in range(1, 10_000):
        folder = parent / (name if k == 1 else f"{name}-{k}")
        try:
            folder.mkdir()
        except FileExistsError:
            continue
        return folder
    raise FileExistsError(errno.EEXIST, "no free folder name", str(parent / name))


@contextmanager
def lock_folder(
    folder: str | Path, what: str = "folder", hint: str = "wait for it to end", wait: bool = False
) -> Iterator[None]:
    """Hold an exclusive `flock` on `folder/.lock` for the block, writing the holder (pid,
    host, start time) into it; another process is refused at once with a
    `FolderLockedError` naming the holder. The kernel drops the lock when its process
    ends, however it ends, so a lock file left behind never blocks the next run. With
    `wait`, a second process waits for the first to finish instead. A
    symbolic or hard link in the lock file's place is refused (`UnsafeFileError`): the
    holder's line would be written into what it points to."""
    path = Path(folder) / LOCK_FILE
    what_lock = f"the lock file {str(path)!r}"
    advice = "remove it (a lock file holds only the name of the process at work there)"
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(path, what_lock, advice)
        raise
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_nlink > 1:
            refuse_link(path, what_lock, advice)
            raise UnsafeFileError(f"{what_lock} is not a regular file; {advice}")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            raise FolderLockedError(
                f"{what} {str(folder)!r} is in use by {_holder(fd)}; {hint}"
            ) from None
        since = datetime.now(UTC).isoformat(timespec="seconds")
        text = f"pid {os.getpid()} on {socket.gethostname()} since {since}\n".encode()
        try:
            os.pwrite(fd, text, 0)
            os.ftruncate(fd, len(text))
        except OSError as exc:  # a full disk: named, as an open's error is
            raise OSError(exc.errno, exc.strerror, str(path)) from None
        try:
            yield
        finally:
            with suppress(OSError):  # a read-only or full disk: the lock goes anyway
                os.ftruncate(fd, 0)  # a clean exit leaves no holder behind
    finally:
        os.close(fd)  # releases the lock


def _holder(fd: int) -> str:
    """The holder as its lock file names it. The holder writes its name just after taking
    the lock, so for a moment the file may still be empty or name a dead process (a
    killed earlier holder): read again briefly until it names a live one."""
    text = ""
    for _ in range(50):
        text = os.pread(fd, 512, 0).decode(errors="replace").strip()
        if text and not _names_a_dead_process(text):
            return text
        time.sleep(0.01)
    return text or "another process"


def _names_a_dead_process(text: str) -> bool:
    match = re.match(r"pid (\d+) on (\S+)", text)
    if match is None or match[2] != socket.gethostname():
        return False
    try:
        os.kill(int(match[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, another user's
        return False
    return False


#: The flag with which a user says that a command may write where it reads.
OVERWRITE_INPUT_FLAG = "--overwrite-input"


class OverwritesInputError(UnsafeFileError):
    """An output that is one of the command's inputs, or inside a run folder it reads."""


def _same_place(a: Path, b: Path) -> bool:
    """Whether two paths name the same file: the same inode when both exist (a link, a
    `./x` and an `x`), else the same resolved path."""
    with suppress(OSError):
        if a.exists() and b.exists():
            return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def check_output(
    output: str | Path,
    inputs: dict[str, str | Path | None] | None = None,
    run_folders: dict[str, str | Path | None] | None = None,
    *,
    flag: str = "--out",
    allow: bool = False,
) -> Path:
    """Refuse (`OverwritesInputError`, one line) an `output` path that is one of the
    command's `inputs` ({what: path}, e.g. {"the log": ...}) or lies inside one of the
    `run_folders` it reads ({what: folder}): writing it would destroy what the command
    reads, and a failure half-way would leave neither. `allow` (the user gave
    `--overwrite-input`) lets it through. A None input is skipped. Returns `output`."""
    out = Path(output)
    if allow:
        return out
    way_out = f"give another path, or add {OVERWRITE_INPUT_FLAG} to write there anyway"
    for what, path in (inputs or {}).items():
        if path is not None and _same_place(out, Path(path)):
            raise OverwritesInputError(
                f"{flag} {str(out)!r} is {what} this command reads ({str(path)!r}); "
                f"writing it would destroy it: {way_out}"
            )
    for what, folder in (run_folders or {}).items():
        if folder is None:
            continue
        inside = out.resolve().is_relative_to(Path(folder).resolve())
        if inside or _same_place(out, Path(folder)):
            raise OverwritesInputError(
                f"{flag} {str(out)!r} is inside {what} this command reads ({str(folder)!r}); "
                f"{way_out}"
            )
    return out


_NOT_REGULAR = (
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def open_input(path: str | Path, what: str = "file", mode: str = "rb") -> IO[Any]:
    """Open a file a command reads, refusing (`UnsafeFileError`, one line naming `what`)
    anything but a regular file: a named pipe would block the open or the read forever,
    and a device such as /dev/zero never ends. The open itself does not block (a FIFO with
    no writer). `FileNotFoundError` passes through for the caller to word."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    try:
        st = os.fstat(fd)
        for test, kind in _NOT_REGULAR:
            if test(st.st_mode):
                raise UnsafeFileError(f"{what} {str(path)!r} is {kind}, not a file; give a file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, mode)
    except BaseException:
        os.close(fd)
        raise
