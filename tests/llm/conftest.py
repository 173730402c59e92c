"""The fake OpenAI-compatible server of tests/llm (fake_llm_server.py), started per test
on 127.0.0.1 as a process of its own, and read back through its /stats."""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = Path(__file__).with_name("fake_llm_server.py")
#: the key the tests' agents read from the environment (never written by them anywhere)
FAKE_KEY = "sk-fake-test-key-h38-7d1f9a2c"


class FakeServer:
    def __init__(self, faults: bool) -> None:
        args = [sys.executable, str(SERVER), *(["--faults"] if faults else [])]
        self.proc = subprocess.Popen(args, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        self.port = int(line.split()[1])
        self.base_url = f"http://127.0.0.1:{self.port}/v1"

    def stats(self) -> dict:
        with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/stats", timeout=30) as r:
            return json.loads(r.read())

    def url(self, mode: str = "") -> str:
        """The base URL of the good endpoint, or of a misbehaving one (fake_llm_server.MODES)."""
        return f"http://127.0.0.1:{self.port}/m/{mode}/v1" if mode else self.base_url

    def spec(self, label: str = "llm", mode: str = "", **options: object) -> str:
        opts = {
            "model": "fake",
            "base_url": self.url(mode),
            "api_key_env": "FAKE_LLM_KEY",
            "backoff": 0.01,
            "timeout": 10,
            **options,
        }
        return f"{label}=llm:" + ",".join(f"{k}={v}" for k, v in opts.items())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait(timeout=30)


@pytest.fixture
def llm_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("FAKE_LLM_KEY", FAKE_KEY)
    return FAKE_KEY


@pytest.fixture
def fake_server() -> Iterator[FakeServer]:
    server = FakeServer(faults=True)
    yield server
    server.close()


@pytest.fixture
def make_server() -> Iterator:
    servers: list[FakeServer] = []

    def make(faults: bool = True) -> FakeServer:
        servers.append(FakeServer(faults))
        return servers[-1]

    yield make
    for s in servers:
        s.close()
