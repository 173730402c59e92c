"""A process and everything it started: listed, ended, and kept from escaping.

Whatever an agent starts (a forked child, a `sleep 45` subprocess, a daemon that double
forks) must end with the call that started it, and with the run: the guarded call
(`spades_env.agent_calls`) ends the children a call leaves behind, a tournament's driver
ends each worker's whole tree, a web table's server its child's. Linux only (`/proc`,
`prctl`); elsewhere each function does what it can (the process alone).

- `process_tree(pid)`: `pid` and every process below it.
- `end_tree(pid)`: SIGKILL them all, stopped first so that none forks away meanwhile.
- `become_subreaper()`: a process whose descendants are orphaned (their own parent
  ended) gets them as children, so they stay in its tree rather than escape to init.
- `children_since(mark)`: the children of this process started since `mark`
  (`pid_mark()`), cheaply: nothing is listed while no process was made.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading

_PR_SET_CHILD_SUBREAPER = 36


def process_tree(pid: int) -> list[int]:
    """`pid` and every process under it (children, their children, ...), from the parent
    ids of /proc/*/stat (Linux; `[pid]` elsewhere)."""
    children: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            try:
                with open(f"/proc/{entry.name}/stat", "rb") as f:
                    text = f.read()
            except OSError:  # ended meanwhile
                continue
            # "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses
            ppid = int(text[text.rfind(b")") + 2 :].split()[1])
            children.setdefault(ppid, []).append(int(entry.name))
    tree, todo = [], [pid]
    while todo:
        p = todo.pop()
        tree.append(p)
        todo += children.get(p, [])
    return tree


def end_tree(pid: int, *, include_root: bool = True) -> set[int]:
    """SIGKILL `pid` and every process below it (only those below with `include_root`
    False): stopped first, so none forks away while the tree is walked. Where `pid` is a
    subreaper (`become_subreaper`), a process whose own parent ended, or that left the
    session, is still below it. Returns the processes killed."""
    stopped: set[int] = set()
    for _ in range(20):
        fresh = [p for p in process_tree(pid) if p not in stopped and (include_root or p != pid)]
        if not fresh:
            break
        for p in fresh:
            with contextlib.suppress(OSError):
                os.kill(p, signal.SIGSTOP)
            stopped.add(p)
    if include_root:
        with contextlib.suppress(OSError):
            os.killpg(pid, signal.SIGKILL)  # where it leads its own group
        stopped.add(pid)
    for p in stopped:
        with contextlib.suppress(OSError):
            os.kill(p, signal.SIGKILL)
    return stopped


def become_subreaper() -> None:
    """Linux: this process adopts its orphaned descendants (`PR_SET_CHILD_SUBREAPER`), so
    that `end_tree` of it reaches everything started below it."""
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


# ----------------------------------------------------------------------------- new children
_last_pid_fd: list[int | None] = []


def pid_mark() -> int | None:
    """The last process id the system gave out (Linux `ns_last_pid`), read in a few
    microseconds: `children_since` lists nothing while it has not moved. None where it
    cannot be read."""
    if not _last_pid_fd:
        try:
            _last_pid_fd.append(os.open("/proc/sys/kernel/ns_last_pid", os.O_RDONLY))
        except OSError:
            _last_pid_fd.append(None)
    fd = _last_pid_fd[0]
    if fd is None:
        return None
    try:
        return int(os.pread(fd, 32, 0))
    except (OSError, ValueError):
        return None


def children() -> list[int]:
    """The children of this process: those of each of its Python threads (a child belongs
    to the thread that started it), from /proc."""
    out: list[int] = []
    for thread in threading.enumerate():
        tid = thread.native_id
        if tid is None:
            continue
        try:
            with open(f"/proc/self/task/{tid}/children", "rb") as f:
                out += [int(p) for p in f.read().split()]
        except OSError:
            continue
    return out


_children_fds: dict[int, int] = {}


def thread_children() -> list[int]:
    """The children this thread started (Linux `/proc/self/task/TID/children`), read
    again through a file kept open (a fresh open of a /proc file costs far more)."""
    tid = threading.get_native_id()
    fd = _children_fds.get(tid)
    try:
        if fd is None:
            fd = _children_fds[tid] = os.open(f"/proc/self/task/{tid}/children", os.O_RDONLY)
        return [int(p) for p in os.pread(fd, 65536, 0).split()]
    except OSError:  # a thread id of an ended thread, reused: open it again next time
        _children_fds.pop(tid, None)
        return children()


def children_since(mark: int | None, *, this_thread: bool = False) -> list[int]:
    """The children of this process (with `this_thread`, of this thread: one read instead
    of one per thread) started after `pid_mark()` gave `mark`: those whose ids were given
    out since (ids wrap around at `pid_max`; ids given before the mark, the caller's own
    children, are never listed). Empty where `mark` is None."""
    if mark is None:
        return []
    now = pid_mark()
    if now is None or now == mark:
        return []
    kids = thread_children() if this_thread else children()
    if now > mark:
        return [p for p in kids if mark < p <= now]
    return [p for p in kids if p > mark or p <= now]  # wrapped around


def end_children(pids: list[int]) -> None:
    """End each of `pids` (children of this process) with everything below it, and reap
    those that are (or, orphaned, became) children of this process, so that none is left
    running. The caller's other children are never waited for."""
    killed: set[int] = set()
    for pid in pids:
        killed |= end_tree(pid)
    for pid in sorted(killed, key=lambda p: p not in pids):  # the direct children first
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(pid, 0)
