"""The first run on a cold kernel cache says, once, that it compiles (spades_env/core/compile.py
`announce_compile`), rather than pausing for a minute in silence."""

from __future__ import annotations

import io

import pytest

from spades_env.core.compile import NOTICE, NOTICE_ENV, announce_compile


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.fixture
def no_notice_yet(monkeypatch):
    monkeypatch.setenv(NOTICE_ENV, "")  # recorded, so that the test's own setting is undone
    monkeypatch.delenv(NOTICE_ENV)


def test_a_cold_cache_prints_the_notice_once(tmp_path, no_notice_yet):
    out = Terminal()
    assert announce_compile([tmp_path], out)
    assert out.getvalue() == NOTICE + "\n"
    assert not announce_compile([tmp_path], out), "a second kernel module of the run is quiet"
    assert out.getvalue().count(NOTICE) == 1


def test_the_worker_processes_inherit_the_silence(tmp_path, no_notice_yet):
    import os

    announce_compile([tmp_path], Terminal())
    assert os.environ[NOTICE_ENV] == "0"


def test_a_warm_cache_is_quiet(tmp_path, no_notice_yet):
    (tmp_path / "kernel.step-1.py311.nbi").write_bytes(b"")
    out = Terminal()
    assert not announce_compile([tmp_path / "missing", tmp_path], out)
    assert out.getvalue() == ""


def test_output_that_is_not_a_terminal_gets_the_notice_too(tmp_path, no_notice_yet):
    out = io.StringIO()  # a pipe, a log file: a silent minute there reads as a hang
    assert announce_compile([tmp_path], out)
    assert out.getvalue() == NOTICE + "\n"


def test_the_variable_silences_it(tmp_path, monkeypatch):
    monkeypatch.setenv(NOTICE_ENV, "0")
    out = Terminal()
    assert not announce_compile([tmp_path], out)
    assert out.getvalue() == ""
