"""The docs read whole where they are not built (a repository's web view): the tables the
code defines are written into the pages (docs/_tables.py), not included at build time,
and each page's copy is what the code gives now."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

pytestmark = [pytest.mark.docs]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _tables():
    spec = importlib.util.spec_from_file_location("docs_tables", DOCS / "_tables.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_page_includes_a_file_that_only_the_build_makes():
    for page in DOCS.rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert not re.search(r"\{include\}\s+\S*_generated/", text), page.relative_to(ROOT)


def test_every_generated_table_is_in_a_page_and_current():
    tables = _tables()
    current = tables.tables()
    found: dict[str, str] = {}
    for page in tables.pages():
        for m in tables.BLOCK.finditer(page.read_text(encoding="utf-8")):
            found[m.group(2)] = m.group(3).strip("\n") + "\n"
    for name in (
        "agents.md",
        "obs_sizes.md",
        "obs_standard.md",
        "spades_v0_versions.md",
        "protocol.md",
    ):
        assert name in found, f"no page shows the generated {name}"
    for name, text in found.items():
        assert text == current[name], f"{name} differs from the code: run python docs/_tables.py"
    assert tables.stale_pages() == []


def test_a_stale_copy_is_found_and_rewritten(tmp_path):
    tables = _tables()
    page = "intro\n<!-- generated: obs_sizes.md (x) -->\n| old |\n<!-- end generated -->\nend\n"
    new = tables.refreshed(page, tables.tables())
    assert "| old |" not in new and tables.tables()["obs_sizes.md"] in new
    assert new.startswith("intro\n") and new.endswith("<!-- end generated -->\nend\n")
    assert tables.refreshed(new, tables.tables()) == new
