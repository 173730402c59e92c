"""Agents that misbehave, one way each: the hostile set of tests/faults.

Each class plays like a seeded random agent (the same moves for the same seed) until it
is armed, then does its one wrong thing. Arming is by process-wide count of the hostile
agents built: with `HOSTILE_AFTER=K` the agents built after the first K in a process are
armed (K=0, the default: all), so a tournament finishes its first units before the fault;
with `HOSTILE_OFF=1` none is (the agent "fixed", to resume the run).

`FAULTS` names every misbehaviour that must end a run with one line naming the agent;
`HARMLESS` those that must not change the results (the agent prints, forks). Three
families stand beside them, each a class of fault rather than one case:

- `ESCAPES`: agents that keep the decision time limit's alarm from stopping them, each in
  its own way; a watchdog outside the call must end them, naming the agent;
- `LEFTOVERS`: agents that leave something running when their call returns (a forked
  child, a subprocess, a daemon that double forks, a thread); the run's results must not
  change, and nothing may outlive the call (a process) or keep the command alive (a
  thread);
- `STATE`: agents that change their process (the working folder, the recursion limit,
  signal handlers and mask, the environment, stdout) or raise what the user's Ctrl-C
  raises; each is one line naming the agent, never a failure blamed on another.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import numpy as np

from agents.base import BaseAgent

#: what a run reports for each fault: a fragment of its one line of error
FAULTS = {
    "Raise": "raised ValueError: hostile",
    "RaiseInInit": "could not be built",
    "ReturnNone": "returned None",
    "Recurse": "raised RecursionError",
    "Unpicklable": "raised UnpicklableError",
    "SysExit": "called sys.exit(3)",
    "OsExit": "called os._exit(0)",
    "Fraction": "not a whole number",
    "NumericStrings": "returned",
    "Scalar": "a single action",
    "Column": "an array of shape",
    "Short": "an array of shape",
    "Booleans": "returned",
    "NotANumber": "returned nan, not a whole number",
    "Illegal": "is illegal",
    "OutOfRange": "not an action",
    "Hang": "the decision time limit",
}
HARMLESS = ("Prints", "Forks")
#: agents that defeat the in-process alarm: the error a watchdog outside the call gives
ESCAPES = {
    "IgnoresAlarm": "kept the time limit's alarm from stopping it",
    "CancelsTimer": "kept the time limit's alarm from stopping it",
    "BlocksAlarm": "kept the time limit's alarm from stopping it",
    "OwnAlarmHandler": "kept the time limit's alarm from stopping it",
    "SwallowsTimeout": "kept the time limit's alarm from stopping it",
}
#: agents that leave something running once their call returns (harmless once contained)
LEFTOVERS = ("ForksLate", "SleepSubprocess", "DoubleForks", "LingeringThread")
#: agents that change their process, or raise what Ctrl-C raises: the line that names them
STATE = {
    "Interrupts": "raised KeyboardInterrupt",
    "ExitsBare": "called sys.exit(None)",
    "LegalizesMask": "is illegal",
    "LowersRecursion": "changed the recursion limit",
    "ChangesFolder": "changed the working folder",
    "SetsEnvironment": "changed the environment (PATH)",
    "IgnoresSigterm": "changed the handler of SIGTERM",
    "BlocksSigterm": "changed the blocked signals (SIGTERM)",
    "ReplacesStdout": "changed sys.stdout or sys.stderr",
}
FAULTS.update(STATE)  # each ends a run with one line naming the agent, as the others do
#: seconds a leftover process or thread would live on if nothing ended it
LINGER = 600
#: a fault only a tournament sees (its units are played by processes in any order)
TOURNAMENT_ONLY = {"ClassState": "changed its class attribute ClassState.calls"}

_built = [0]  # hostile agents built in this process (the arming count)


class UnpicklableError(Exception):
    """An exception that cannot cross a process boundary (its constructor wants two
    arguments; pickling keeps one)."""

    def __init__(self, a: int, b: int) -> None:
        super().__init__(f"{a} and {b}")


class Hostile(BaseAgent):
    """Random play, seeded; `misbehave` once armed."""

    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        _built[0] += 1
        after = int(os.environ.get("HOSTILE_AFTER", "0"))
        self.armed = os.environ.get("HOSTILE_OFF") != "1" and _built[0] > after

    def act(self, view, obs, mask):
        good = np.array([self.rng.choice(np.flatnonzero(row)) for row in mask], dtype=np.int64)
        return self.misbehave(good, mask) if self.armed else good

    def misbehave(self, good, mask):
        return good


class Raise(Hostile):
    def misbehave(self, good, mask):
        raise ValueError("hostile")


class RaiseInInit(Hostile):
    def __init__(self, seed: int | None = None) -> None:
        super().__init__(seed)
        if self.armed:
            raise KeyError("no such table")


class ReturnNone(Hostile):
    def misbehave(self, good, mask):
        return None


class Recurse(Hostile):
    def misbehave(self, good, mask):
        def deeper(n: int) -> int:
            return deeper(n + 1) + 1

        return deeper(0)


class Unpicklable(Hostile):
    def misbehave(self, good, mask):
        raise UnpicklableError(1, 2)


class SysExit(Hostile):
    def misbehave(self, good, mask):
        sys.exit(3)


class OsExit(Hostile):
    def misbehave(self, good, mask):
        os._exit(0)


class Fraction(Hostile):
    def misbehave(self, good, mask):
        return good + 0.7


class NumericStrings(Hostile):
    def misbehave(self, good, mask):
        return good.astype(str)


class Scalar(Hostile):
    def misbehave(self, good, mask):
        return int(good[0])


class Column(Hostile):
    def misbehave(self, good, mask):
        return good[:, None]


class Short(Hostile):
    def misbehave(self, good, mask):
        return good[:-1]


class Booleans(Hostile):
    def misbehave(self, good, mask):
        return mask.any(axis=1)


class NotANumber(Hostile):
    def misbehave(self, good, mask):
        return np.full(len(good), np.nan)


class Illegal(Hostile):
    def misbehave(self, good, mask):
        bad = (~mask).argmax(axis=1)  # the first illegal action of each row
        return np.where((~mask).any(axis=1), bad, good)  # a row with all legal: legal


class OutOfRange(Hostile):
    def misbehave(self, good, mask):
        return good + 1000


class Hang(Hostile):
    def misbehave(self, good, mask):
        while True:  # busy, never returning
            pass


class Prints(Hostile):
    def misbehave(self, good, mask):
        print("hostile agent was here")
        return good


class Forks(Hostile):
    def misbehave(self, good, mask):
        pid = os.fork()  # the child returns too; only the parent may play on
        if pid:
            os.waitpid(pid, 0)
        return good


class ClassState(Hostile):
    """Plays the same moves, but counts its calls on the class: state that a rebuilt agent
    in another process would lack."""

    calls = 0

    def misbehave(self, good, mask):
        ClassState.calls += 1
        return good


class Sleeps(Hostile):
    """Slow but correct: within a generous time limit, harmless."""

    def misbehave(self, good, mask):
        time.sleep(0.001)
        return good


# ----------------------------------------------------------------------------- escapes
def _sleep_on() -> None:
    while True:
        time.sleep(0.05)


class IgnoresAlarm(Hostile):
    def misbehave(self, good, mask):
        signal.signal(signal.SIGALRM, signal.SIG_IGN)
        _sleep_on()


class CancelsTimer(Hostile):
    def misbehave(self, good, mask):
        signal.setitimer(signal.ITIMER_REAL, 0)
        _sleep_on()


class BlocksAlarm(Hostile):
    def misbehave(self, good, mask):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
        _sleep_on()


class OwnAlarmHandler(Hostile):
    def misbehave(self, good, mask):
        signal.signal(signal.SIGALRM, lambda signum, frame: None)
        _sleep_on()


class SwallowsTimeout(Hostile):
    def misbehave(self, good, mask):
        while True:
            try:  # noqa: SIM105 (the repro's own words)
                time.sleep(0.05)
            except BaseException:  # the alarm's exception too
                pass


# ----------------------------------------------------------------------------- leftovers
class ForksLate(Hostile):
    """Forks a child that returns into the caller's code long after the call."""

    def misbehave(self, good, mask):
        if os.fork() == 0:
            time.sleep(LINGER)
        return good


class SleepSubprocess(Hostile):
    def misbehave(self, good, mask):
        subprocess.Popen(["sleep", str(LINGER)])  # never waited for
        return good


class DoubleForks(Hostile):
    """A daemon: the child forks a grandchild in a session of its own, then exits, so the
    grandchild is orphaned at once."""

    def misbehave(self, good, mask):
        pid = os.fork()
        if pid == 0:
            if os.fork() == 0:
                os.setsid()
                time.sleep(LINGER)
            os._exit(0)
        os.waitpid(pid, 0)
        return good


class LingeringThread(Hostile):
    """Starts a thread (not a daemon) that outlives the call: Python waits for it at exit."""

    def misbehave(self, good, mask):
        threading.Thread(target=time.sleep, args=(LINGER,), daemon=False).start()
        return good


# ----------------------------------------------------------------------------- state
class Interrupts(Hostile):
    def misbehave(self, good, mask):
        raise KeyboardInterrupt


class ExitsBare(Hostile):
    def misbehave(self, good, mask):
        raise SystemExit


class LegalizesMask(Hostile):
    """Makes every action legal in the mask it was given, then plays an illegal one."""

    def misbehave(self, good, mask):
        illegal = np.where((~mask).any(axis=1), (~mask).argmax(axis=1), good)
        mask[:] = True
        return illegal


class LowersRecursion(Hostile):
    """Leaves a recursion limit just above its own depth: the next agent called deeper
    would fail for it."""

    def misbehave(self, good, mask):
        depth, frame = 0, sys._getframe()
        while frame is not None:
            depth, frame = depth + 1, frame.f_back
        sys.setrecursionlimit(depth + 20)
        return good


class ChangesFolder(Hostile):
    def misbehave(self, good, mask):
        os.chdir("/")
        return good


class SetsEnvironment(Hostile):
    """Changes a variable the process had (one it adds is a library's own, and kept)."""

    def misbehave(self, good, mask):
        os.environ["PATH"] = os.environ.get("PATH", "") + os.pathsep + "/nonexistent-hostile"
        return good


class IgnoresSigterm(Hostile):
    def misbehave(self, good, mask):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        return good


class BlocksSigterm(Hostile):
    def misbehave(self, good, mask):
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
        return good


class ReplacesStdout(Hostile):
    def misbehave(self, good, mask):
        sys.stdout = open(os.devnull, "w")  # noqa: SIM115 (left open: the fault)
        return good
