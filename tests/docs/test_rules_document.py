"""RULES.md, the rule book the code cites: every cited section exists, and it names every
option and every preset of `spades_env.rules`."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from spades_env.rules import PRESETS, Rules

ROOT = Path(__file__).resolve().parents[2]
RULES_MD = ROOT / "RULES.md"
#: `RULES.md §6`, `RULES.md §1-§5`, `RULES.md §1/§6`, `RULES.md §4, §5`.
CITATION = re.compile(r"RULES\.md\s*(§\s*\d+(?:\s*[-/,]\s*§?\s*\d+)*)")
SOURCES = ("spades_env", "agents", "training", "experiments", "tests", "notebooks", "docs")


def _headings() -> set[int]:
    return {int(m) for m in re.findall(r"^## §(\d+) ", RULES_MD.read_text(), flags=re.M)}


def _cited(text: str) -> set[int]:
    """The section numbers a text cites, ranges expanded."""
    out: set[int] = set()
    for match in CITATION.finditer(text):
        spec = match.group(1).replace("§", "").replace(" ", "")
        for part in re.split(r"[/,]", spec):
            lo, _, hi = part.partition("-")
            out.update(range(int(lo), int(hi or lo) + 1))
    return out


def _files() -> list[Path]:
    files = [ROOT / "README.md"]
    for folder in SOURCES:
        files += [p for p in (ROOT / folder).rglob("*") if p.suffix in (".py", ".md", ".ipynb")]
    return files


def test_the_citation_pattern_reads_ranges_and_lists():
    assert _cited("RULES.md §6 and RULES.md §1-§3, RULES.md §4/§6, RULES.md §2") == {1, 2, 3, 4, 6}


def test_every_cited_section_is_a_heading_of_the_rule_book():
    headings = _headings()
    assert headings == set(range(1, 8))
    missing = {
        f"{path.relative_to(ROOT)}: §{n}"
        for path in _files()
        for n in _cited(path.read_text(encoding="utf-8"))
        if n not in headings
    }
    assert missing == set()
    assert sum(bool(_cited(p.read_text(encoding="utf-8"))) for p in _files()) > 50


@pytest.mark.parametrize("option", Rules.option_names())
def test_the_rule_book_names_every_option(option):
    assert f"`{option}`" in RULES_MD.read_text()


@pytest.mark.parametrize("preset", PRESETS)
def test_the_rule_book_names_every_preset(preset):
    section6 = RULES_MD.read_text().split("## §6 ")[1].split("## §7 ")[0]
    assert f"`{preset}`" in section6


def test_every_allowed_option_value_is_named():
    text = RULES_MD.read_text()
    from spades_env.rules import _CHOICES

    missing = [f"{k}={v}" for k, values in _CHOICES.items() for v in values if f"`{v}`" not in text]
    assert missing == []


def test_the_readme_links_the_rule_book():
    assert "](RULES.md)" in (ROOT / "README.md").read_text()
