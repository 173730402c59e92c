"""What the guarded call (`spades_env.agent_calls.call_agent`) holds an agent to, and what it
leaves to others: a variable of the environment the agent changes or removes is put back and
named, one it adds (as a library does when it loads) is kept; the caller's own Ctrl-C
handling during a call is the caller's, not the agent's; and `spades` called from someone's
Python leaves that process as it was (only the command's own process adopts orphans)."""

from __future__ import annotations

import ctypes
import os
import signal
import sys
import threading

import numpy as np
import pytest

from experiments.cli.app import main
from spades_env.agent_calls import AgentError, call_agent, limits

PR_GET_CHILD_SUBREAPER = 37
MASK = np.zeros((1, 70), dtype=bool)
MASK[0, 5] = True


class Acts:
    """An agent whose `act` runs `effect()`, then plays the one legal action."""

    name = "acts"

    def __init__(self, effect) -> None:
        self.effect = effect

    def act(self, view, obs, mask):
        self.effect()
        return np.array([5], dtype=np.int64)


def act_once(effect) -> np.ndarray:
    return call_agent(Acts(effect), None, None, MASK.copy())


@pytest.fixture
def variable(monkeypatch):
    monkeypatch.setenv("SPADES_TEST_VARIABLE", "before")
    return "SPADES_TEST_VARIABLE"


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(lambda k: os.environ.__setitem__(k, "after"), id="set"),
        pytest.param(lambda k: os.environ.__setitem__(k, ""), id="emptied"),
        pytest.param(lambda k: os.environ.pop(k), id="removed"),
        pytest.param(lambda k: os.environ.__setitem__(k, "x" * 10_000), id="long"),
    ],
)
def test_a_variable_the_process_had_changed_by_an_agent_is_put_back_and_named(change, variable):
    with pytest.raises(AgentError, match=rf"agent 'acts'.*changed the environment \({variable}\)"):
        act_once(lambda: change(variable))
    assert os.environ[variable] == "before"
    assert act_once(lambda: None).tolist() == [5]  # the next call is not blamed for it


def test_a_variable_an_agent_adds_is_kept_as_a_library_setting(monkeypatch):
    name = "SPADES_TEST_ADDED"
    monkeypatch.delenv(name, raising=False)
    assert act_once(lambda: os.environ.__setitem__(name, "lib")).tolist() == [5]
    assert os.environ[name] == "lib"
    assert act_once(lambda: None).tolist() == [5]  # nor is it blamed on a later call


@pytest.mark.parametrize("to_stderr", [False, True], ids=["as-is", "prints-to-stderr"])
@pytest.mark.parametrize("stream", ["stdout", "stderr"])
def test_an_agent_that_replaces_an_output_stream_is_named(stream, to_stderr, tmp_path):
    """Also where the command sends an agent's prints to stderr (the redirect would put
    the stream back by itself, and hide the fault)."""
    before = getattr(sys, stream)
    with (
        limits(stdout_to_stderr=to_stderr),
        open(tmp_path / "sink", "w") as sink,
        pytest.raises(AgentError, match=r"changed sys\.stdout or sys\.stderr"),
    ):
        act_once(lambda: setattr(sys, stream, sink))
    assert getattr(sys, stream) is before


def test_the_callers_ctrl_c_during_a_call_is_the_callers_and_its_handling_stays(monkeypatch):
    """A SIGINT during the call runs the caller's handler, which may change how further
    presses are handled (here: ignored from the first one on); that is not the agent's."""

    def first_press(signum, frame):
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, first_press)
    try:
        with pytest.raises(KeyboardInterrupt):
            act_once(lambda: (os.kill(os.getpid(), signal.SIGINT), threading.Event().wait(5)))
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="prctl is Linux's")
def test_spades_called_from_python_leaves_the_callers_process_as_it_was(tmp_path, capsys):
    """Not a subreaper afterwards (orphans of other code would become its zombies), and a
    thread the caller runs does not end the caller's process at the command's end."""
    libc = ctypes.CDLL(None, use_errno=True)
    flag = ctypes.c_int(-1)
    waiting = threading.Event()
    caller_thread = threading.Thread(target=waiting.wait, daemon=False)
    caller_thread.start()
    try:
        assert main(["demo", "--hands", "1", "--agents", "random"]) == 0
        assert libc.prctl(PR_GET_CHILD_SUBREAPER, ctypes.byref(flag), 0, 0, 0) == 0
        assert flag.value == 0
    finally:
        waiting.set()
        caller_thread.join()
    assert "Traceback" not in capsys.readouterr().err
