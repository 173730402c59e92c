"""examples/llm_local_server.py runs as a user runs it (a subprocess), its stand-in model
started by --tiny, and prints the dry run and the language-model agents' table."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("openai")
pytestmark = [pytest.mark.cli, pytest.mark.docs]
REPO = Path(__file__).resolve().parents[2]


def test_llm_example_plays_through_a_local_server(tmp_path):
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, str(REPO / "examples" / "llm_local_server.py"), "--tiny"],
        cwd=REPO, capture_output=True, text=True, timeout=600, env=env,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "dry run: model (model standin): 56 decisions" in out.stdout
    assert "Language-model agents" in out.stdout
    (folder,) = tmp_path.glob("llm-local-*")
    assert (folder / "llm_exchanges.jsonl").stat().st_size > 0
