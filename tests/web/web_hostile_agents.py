"""Agents that misbehave in ways only a web table's agents' process has to survive.

Each subclasses the tournament's `Hostile` (tests/faults/hostile_agents.py): seeded random
play until armed (`HOSTILE_AFTER`, `HOSTILE_OFF`), then its one wrong thing. With
`WEB_HOSTILE_PIDS=DIR` in the environment each writes, when it misbehaves, an empty file
`DIR/CLASS.PID` for its own process and for every process it starts, so that a test can
check that none of them is left once the seat has failed.

`WEB_FAULTS` maps each class to a fragment of the seat's `failure["what"]`.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

_HOSTILE = Path(__file__).resolve().parents[1] / "faults" / "hostile_agents.py"
_NAME = "web_hostile_base_agents"  # a name of its own: no clash with another import of it


def _tournament_hostile():
    module = sys.modules.get(_NAME)
    if module is None:
        spec = importlib.util.spec_from_file_location(_NAME, _HOSTILE)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[_NAME] = module
        spec.loader.exec_module(module)
    return module


Hostile = _tournament_hostile().Hostile

#: what a seat's failure says for each of these agents: a fragment of its `what`
WEB_FAULTS = {
    "Interrupt": "raised KeyboardInterrupt",
    "IgnoresAlarm": "the decision time limit",
    "ExitInInit": "could not be built: called os._exit(0)",
    "SpawnsAndHangs": "the decision time limit",
    "ForksAndHangs": "the decision time limit",
    "ForksAndRaises": "raised RuntimeError: hostile fork",
    "KillsItself": "ended its process",
    "CorruptsReply": "garbled its process's reply",
    "SpawnsSessionAndHangs": "the decision time limit",
}
#: the agents that start processes of their own (which must not outlive the failure)
SPAWNING = ("SpawnsAndHangs", "ForksAndHangs", "ForksAndRaises", "SpawnsSessionAndHangs")


def _record(kind: str, pid: int) -> None:
    folder = os.environ.get("WEB_HOSTILE_PIDS")
    if folder:
        Path(folder, f"{kind}.{pid}").touch()


def _sleep_forever() -> None:
    while True:
        time.sleep(3600)


class Interrupt(Hostile):
    """Raises KeyboardInterrupt (as if Ctrl-C reached the agent's process)."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        raise KeyboardInterrupt


class IgnoresAlarm(Hostile):
    """Turns off SIGALRM (the in-process decision timer) and sleeps for good."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        time.sleep(10**6)
        return good


class ExitInInit(Hostile):
    """Calls os._exit while it is being built."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        if self.armed:
            _record(type(self).__name__, os.getpid())
            os._exit(0)


class SpawnsAndHangs(Hostile):
    """Starts `sleep 300` (a process of its own), then never returns."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        sleeper = subprocess.Popen(["sleep", "300"])
        _record(type(self).__name__, sleeper.pid)
        _sleep_forever()


def _hanging_child(kind: str) -> int:
    """Fork a child that ignores SIGTERM/SIGINT/SIGHUP and sleeps for good; its pid."""
    pid = os.fork()
    if pid == 0:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
            signal.signal(sig, signal.SIG_IGN)
        _sleep_forever()
    _record(kind, pid)
    return pid


class ForksAndHangs(Hostile):
    """Forks a child that hangs, and waits for it (so never returns)."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        pid = _hanging_child(type(self).__name__)
        os.waitpid(pid, 0)
        return good


class ForksAndRaises(Hostile):
    """Forks a child that hangs, then raises at once (the seat fails without a timeout,
    the hanging child must still go)."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        _hanging_child(type(self).__name__)
        raise RuntimeError("hostile fork")


class KillsItself(Hostile):
    """Ends its own process with SIGKILL (a crash no `os._exit` guard sees)."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        os.kill(os.getpid(), signal.SIGKILL)
        time.sleep(10)
        return good


class SpawnsSessionAndHangs(Hostile):
    """Starts `sleep 300` in a session (and process group) of its own, then never returns."""

    def misbehave(self, good, mask):
        _record(type(self).__name__, os.getpid())
        sleeper = subprocess.Popen(["sleep", "300"], start_new_session=True)
        _record(type(self).__name__, sleeper.pid)
        _sleep_forever()


class CorruptsReply(Hostile):
    """Writes bytes that are not a pickle into its process's pipe to the server (found
    among the live objects), then answers a legal action."""

    def misbehave(self, good, mask):
        import gc
        from multiprocessing.connection import Connection

        for conn in [o for o in gc.get_objects() if isinstance(o, Connection)]:
            conn.send_bytes(b"not a pickle")
        return good
