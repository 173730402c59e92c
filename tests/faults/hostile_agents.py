"""Agents that misbehave, one way each: the hostile set of tests/faults.

Each class plays like a seeded random agent (the same moves for the same seed) until it
is armed, then does its one wrong thing. Arming is by process-wide count of the hostile
agents built: with `HOSTILE_AFTER=K` the agents built after the first K in a process are
armed (K=0, the default: all), so a tournament finishes its first units before the fault;
with `HOSTILE_OFF=1` none is (the agent "fixed", to resume the run).

`FAULTS` names every misbehaviour that must end a run with one line naming the agent;
`HARMLESS` those that must not change the results (the agent prints, forks).
"""

from __future__ import annotations

import os
import sys
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
