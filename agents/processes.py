"""Worker processes that end with the process that started them.

A command that spreads its work over worker processes (a tournament's pool, the
double-dummy tables, the distillation datasets) or runs its steps as child commands (a
training recipe) must not leave them behind when it is killed: a driver ended by
`kill -9` or `SIGTERM` runs no cleanup of its own, and its workers, blocked on a queue
whose other end they hold themselves, would wait (or go on writing) for ever.

- `exit_with_parent(parent)`, called first thing in a worker (a pool's `initializer`,
  a process's target): the worker ends itself within `PARENT_CHECK_SECONDS` once
  `parent` is gone (a watching thread; a worker is re-parented when its driver dies).
- `child_exits_with_parent` (a `preexec_fn` for `subprocess`): the child command gets
  `SIGTERM` from the kernel when this process ends (Linux `PR_SET_PDEATHSIG`; the
  grandchildren, its own workers, then follow it through `exit_with_parent`).

A worker ends itself with `spades_env.agent_calls.hard_exit`, `os._exit` itself, which
works even while an agent's call has `os._exit` refused.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
import threading
import time

from spades_env.agent_calls import hard_exit  # os._exit itself, whatever an agent does

#: Seconds between a worker's checks that its parent is still alive.
PARENT_CHECK_SECONDS = 0.5

_PR_SET_PDEATHSIG = 1


def exit_with_parent(parent: int | None = None) -> None:
    """In a worker: end this process as soon as `parent` (default: the current parent) is
    gone. Safe to call more than once."""
    parent = os.getppid() if parent is None else parent
    if os.getppid() != parent:  # the parent died before we got here
        hard_exit(1)

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_SECONDS)
        hard_exit(1)

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()


def child_exits_with_parent() -> None:
    """A `preexec_fn` for `subprocess.Popen`/`run`: the child gets SIGTERM when the process
    that started it ends (Linux; elsewhere nothing). The parent must start the child from
    a thread that lives as long as the child (the kernel ties the signal to that thread):
    the main thread, as `subprocess.run` there does."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)


#: Worker processes per core beyond which more only cost memory (each worker holds the
#: engine, its kernels and the agents: about 230 MB) and bring no speed.
WORKERS_PER_CORE = 4

#: The resident memory of one worker process, in bytes, as measured (about 230 MB).
WORKER_BYTES = 230 * 2**20


def available_memory() -> int | None:
    """The memory the system can still give, in bytes (Linux `MemAvailable`; else None)."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        pass
    return None


def check_workers(workers: int, flag: str = "--workers") -> int:
    """`workers` if this machine can hold that many worker processes, else a one-line
    `ValueError`: more than `WORKERS_PER_CORE` per core, or more than the available
    memory holds at `WORKER_BYTES` each."""
    cores = os.cpu_count() or 1
    cap = WORKERS_PER_CORE * cores
    if workers > cap:
        raise ValueError(
            f"{flag} {workers}: at most {cap} ({WORKERS_PER_CORE} per core on this machine's "
            f"{cores}); more processes only cost memory (about {WORKER_BYTES >> 20} MB each)"
        )
    free = available_memory()
    if free is not None and workers > 1 and workers * WORKER_BYTES > free:
        fits = max(1, free // WORKER_BYTES)
        raise ValueError(
            f"{flag} {workers}: the workers need about {workers * WORKER_BYTES / 2**30:.1f} GB "
            f"(about {WORKER_BYTES >> 20} MB each) and this machine has "
            f"{free / 2**30:.1f} GB available; use {flag} {fits} or fewer"
        )
    return workers
