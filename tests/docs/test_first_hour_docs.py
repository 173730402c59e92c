"""The docs as a new user follows them: the README's PettingZoo snippet prints the same
thing on every run, and every block of "Add an agent" runs on its own, as written, in a
fresh interpreter (a reader saves one as a script, or pastes it into a new session)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

pytestmark = [pytest.mark.docs, pytest.mark.cli]

ROOT = Path(__file__).resolve().parents[2]
FILE_MARK = re.compile(r"^%\s*file:\s*(\S+)\s*$")


def python_blocks(page: Path) -> list[tuple[str | None, str]]:
    """(the file name a `% file: NAME` mark gives it, or None; the code) of every ```python
    block of `page`, in order."""
    text = page.read_text(encoding="utf-8")
    lines = text.splitlines()
    out = []
    for tok in MarkdownIt("commonmark").parse(text):
        if tok.type != "fence" or tok.info.strip() != "python":
            continue
        before = next((lines[i] for i in range(tok.map[0] - 1, -1, -1) if lines[i].strip()), "")
        mark = FILE_MARK.match(before.strip())
        out.append((mark.group(1) if mark else None, tok.content))
    return out


def run_alone(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """`code` in a new interpreter started in `cwd` (this checkout's code on the path)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run(
        [sys.executable, "-c", code], cwd=cwd, env=env, capture_output=True, text=True, timeout=600
    )


def test_the_readmes_pettingzoo_snippet_prints_the_same_twice(tmp_path):
    blocks = python_blocks(ROOT / "README.md")
    snippet = next(code for _, code in blocks if "spades_v0.env(" in code)
    first, second = run_alone(snippet, tmp_path), run_alone(snippet, tmp_path)
    assert first.returncode == 0, first.stderr
    assert first.stdout.startswith("hand over; last reward")
    assert first.stdout == second.stdout


def test_every_add_an_agent_block_runs_on_its_own(tmp_path):
    blocks = python_blocks(ROOT / "docs" / "add-an-agent.md")
    saved = [(name, code) for name, code in blocks if name]
    assert [name for name, _ in saved] == ["lowcards.py"]
    for name, code in saved:  # step 1: the reader saves the file
        (tmp_path / name).write_text(code, encoding="utf-8")
    for i, (name, code) in enumerate(blocks):
        cwd = tmp_path / f"block{i}"
        cwd.mkdir()
        for saved_name, saved_code in saved:
            (cwd / saved_name).write_text(saved_code, encoding="utf-8")
        done = run_alone(code, cwd)
        assert done.returncode == 0, f"block {i} ({name or 'python'}) alone:\n{done.stderr[-2000:]}"
