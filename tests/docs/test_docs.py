"""Every code block of README.md and docs/ runs as written, and every relative link resolves.

- ```python blocks run in order, one namespace per page, in a temporary working directory
  with a temporary home (caches, run folders);
- ```console and ```bash blocks run in the same directory, through bash, each command
  starting with `spades` or `python -m` (run with this checkout's code);
- a block that cannot run in a test (an installation, an hour-long recipe) carries a
  comment just before it, `% notest: reason` (MyST) or `<!-- notest: reason -->`;
  `slow: reason` marks one that runs only with `-m slow`. `test_the_blocks_left_out` lists
  them all, so none hides;
- `% file: NAME` before a ```python block: the block is a file the reader saves as NAME;
  the test writes it into the working directory, then runs it like the others.

Links: every relative link and `#anchor` of those files must resolve to a file and a
heading. External links cannot be checked offline and are not. Cross-references inside
the Sphinx build are checked by `sphinx-build -W` (.ci/run).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("mdit_py_plugins")  # the docs extra (myst-parser)
from markdown_it import MarkdownIt
from mdit_py_plugins.anchors.index import slugify

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SKIPPED = {"_generated", "_build"}
PAGES = [
    ROOT / "README.md",
    *sorted(p for p in DOCS.rglob("*.md") if not SKIPPED & set(p.relative_to(DOCS).parts)),
]
#: files whose links are checked (the pages, and the files they include)
LINKED = [*PAGES, ROOT / "CONTRIBUTING.md", ROOT / "CHANGELOG.md", ROOT / "RULES.md"]
SHELL = ("console", "bash", "sh", "shell")
MARK = re.compile(r"^(?:%|<!--)\s*(notest|slow|file):\s*(.+?)\s*(?:-->)?$")
#: blocks that are no code to run (MyST directives, program output)
NOT_CODE = ("text", "{")

#: the blocks left out of the default run, per page: adding one is a visible change here
LEFT_OUT = {
    "README.md": {"notest": 3, "slow": 1},
    "docs/getting-started.md": {"notest": 2},
    "docs/tournaments.md": {"notest": 2},
    "docs/training.md": {"notest": 6, "slow": 1},
    "docs/play.md": {"notest": 2},
    "docs/benchmark.md": {"notest": 1},
    "docs/llm.md": {"notest": 4},
    "docs/results/protocol.md": {"notest": 2},
    "docs/web.md": {"notest": 2},
}


@dataclass
class Block:
    page: Path
    line: int  # 1-based, the fence
    lang: str
    code: str
    mark: str | None  # "notest", "slow" or None
    reason: str

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def _tokens(path: Path):
    return MarkdownIt("commonmark").parse(path.read_text(encoding="utf-8"))


def blocks(page: Path) -> list[Block]:
    lines = page.read_text(encoding="utf-8").splitlines()
    out = []
    for tok in _tokens(page):
        if tok.type != "fence":
            continue
        lang = tok.info.strip().split()[0] if tok.info.strip() else ""
        if not lang or lang.startswith(NOT_CODE):
            continue
        start = tok.map[0]
        before = next((lines[i].strip() for i in range(start - 1, -1, -1) if lines[i].strip()), "")
        match = MARK.match(before)
        mark, reason = (match.group(1), match.group(2)) if match else (None, "")
        out.append(Block(page, start + 1, lang, tok.content, mark, reason))
    return out


def shell_commands(code: str, lang: str) -> list[str]:
    """The commands of a shell block: `$ ` lines of a console block (with `\\` continuations),
    every line but comments of a bash block."""
    out: list[str] = []
    pending = ""
    for raw in code.splitlines():
        line = raw.rstrip()
        if pending:
            pending += "\n" + line
        elif lang == "console":
            if not line.startswith("$ "):
                continue  # output
            pending = line[2:]
        elif line.strip() and not line.lstrip().startswith("#"):
            pending = line
        else:
            continue
        if not pending.endswith("\\"):
            out.append(pending)
            pending = ""
    return out


def _runnable(command: str) -> bool:
    first = command.lstrip()
    return first.startswith("spades ") or first.startswith("python -m ")


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A working directory and a home of its own; this checkout's code first on the path."""
    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CACHE_HOME", str(home / ".cache"))
    monkeypatch.setenv("SPADES_DD_CACHE", str(tmp_path / "dd_tricks.sqlite"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    paths = [str(ROOT), *filter(None, os.environ.get("PYTHONPATH", "").split(os.pathsep))]
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(paths))
    monkeypatch.chdir(work)
    # a block may import a file the page saved, as a python started in that folder would
    monkeypatch.syspath_prepend(str(work))
    return work


def run_shell(block: Block, cwd: Path) -> None:
    commands = shell_commands(block.code, block.lang)
    script = "\n".join(
        [
            "set -euo pipefail",
            'spades() { "$PY" -m experiments.cli "$@"; }',
            'python() { "$PY" "$@"; }',
            *commands,
        ]
    )
    env = {**os.environ, "PY": sys.executable}
    done = subprocess.run(
        ["bash", "-c", script], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    tail = f"{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    assert done.returncode == 0, f"{block.where}: exit {done.returncode}\n{script}\n{tail}"


def run_page(page: Path, cwd: Path, with_slow: bool) -> int:
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for block in blocks(page):
        if block.mark == "notest" or (block.mark == "slow" and not with_slow):
            continue
        if block.lang == "python":
            if block.mark == "file":
                (cwd / block.reason).write_text(block.code, encoding="utf-8")
                sys.modules.pop(Path(block.reason).stem, None)  # not another test's copy
            exec(compile(block.code, block.where, "exec"), namespace)
        elif block.lang in SHELL:
            run_shell(block, cwd)
        else:
            raise AssertionError(f"{block.where}: a ```{block.lang} block; mark it or make it run")
        ran += 1
    return ran


def _ids(pages):
    return [str(p.relative_to(ROOT)) for p in pages]


@pytest.mark.parametrize("page", PAGES, ids=_ids(PAGES))
@pytest.mark.cli
def test_the_code_blocks_run(page, sandbox, capsys):
    run_page(page, sandbox, with_slow=False)


SLOW_PAGES = [p for p in PAGES if any(b.mark == "slow" for b in blocks(p))]


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW_PAGES, ids=_ids(SLOW_PAGES))
@pytest.mark.cli
def test_the_code_blocks_run_slow_ones_included(page, sandbox):
    run_page(page, sandbox, with_slow=True)


def test_every_shell_block_runs_or_says_why_not():
    wrong = [
        f"{b.where}: {c}"
        for page in PAGES
        for b in blocks(page)
        if b.lang in SHELL and b.mark != "notest"
        for c in shell_commands(b.code, b.lang)
        if not _runnable(c)
    ]
    assert wrong == [], "commands other than spades / python -m need a notest mark"


def test_the_blocks_left_out():
    found: dict[str, dict[str, int]] = {}
    listing = []
    for page in PAGES:
        for b in blocks(page):
            if b.mark in ("notest", "slow"):
                assert b.reason, f"{b.where}: {b.mark} without a reason"
                counts = found.setdefault(str(page.relative_to(ROOT)), {})
                counts[b.mark] = counts.get(b.mark, 0) + 1
                listing.append(f"{b.where} {b.mark}: {b.reason}")
    print("\n".join(listing))
    assert found == LEFT_OUT, "\n".join(listing)


def test_the_pages_have_code_that_runs():
    runnable = sum(1 for p in PAGES for b in blocks(p) if b.mark in (None, "file"))
    assert runnable >= 20
    assert all(b.mark in (None, "file") for b in blocks(DOCS / "add-an-agent.md")), (
        "the add-an-agent page is tested by following it whole"
    )


def test_the_marker_and_command_readers():
    assert shell_commands("$ spades a \\\n  --b\nout\n$ spades c\n", "console") == [
        "spades a \\\n  --b",
        "spades c",
    ]
    assert shell_commands("# note\nspades x  # y\n\n", "bash") == ["spades x  # y"]
    assert MARK.match("% notest: needs a cluster").groups() == ("notest", "needs a cluster")
    assert MARK.match("<!-- slow: a PPO run -->").groups() == ("slow", "a PPO run")
    assert MARK.match("% file: lowcards.py").groups() == ("file", "lowcards.py")


# ----------------------------------------------------------------------------- links


def _anchors(path: Path) -> set[str]:
    tokens = _tokens(path)
    return {
        slugify(tokens[i + 1].content)
        for i, tok in enumerate(tokens)
        if tok.type == "heading_open" and int(tok.tag[1]) <= 3
    }


def links(path: Path) -> list[str]:
    out = []
    for tok in _tokens(path):
        for child in tok.children or []:
            if child.type == "link_open":
                out.append(child.attrs["href"])
            elif child.type == "image":
                out.append(child.attrs["src"])
    return out


@pytest.mark.parametrize("path", LINKED, ids=_ids(LINKED))
def test_every_relative_link_resolves(path):
    broken = []
    for href in links(path):
        if re.match(r"^[a-z][a-z0-9+.-]*:", href):  # http:, https:, mailto: offline: unchecked
            continue
        target, _, anchor = href.partition("#")
        file = (path.parent / target).resolve() if target else path
        if not file.exists():
            broken.append(f"{href}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in _anchors(file):
            broken.append(f"{href}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert broken == []


def test_the_link_checker_finds_a_broken_link(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Top\n\n[a](missing.md) [b](#top) [c](#nowhere) [d](https://x.org)\n")
    assert links(page) == ["missing.md", "#top", "#nowhere", "https://x.org"]
    assert _anchors(page) == {"top"}
