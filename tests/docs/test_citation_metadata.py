"""What a paper cites: CITATION.cff agrees with the package's metadata (name, version,
license, the addresses where there are any), and the evaluation protocol has a page of its
own that names what a reported row must."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

yaml = pytest.importorskip("yaml")
pytestmark = [pytest.mark.docs]

ROOT = Path(__file__).resolve().parents[2]


def cff() -> dict:
    return yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))


def project() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def test_the_citation_matches_the_package():
    c, p = cff(), project()
    assert c["cff-version"] == "1.2.0" and c["type"] == "software"
    assert str(c["version"]) == p["version"]
    assert c["license"] == p["license"]
    assert c["title"].startswith(p["name"] + ":")
    assert c["abstract"].strip() and len(c["keywords"]) >= 3
    assert c["authors"] and c["date-released"]


def test_the_addresses_agree_where_there_are_any():
    """A repository or home page named in one place is named in the other (the project
    has none published yet: neither names one, rather than a placeholder)."""
    c, urls = cff(), project().get("urls", {})
    cited = {c[k] for k in ("repository-code", "url", "repository") if k in c}
    assert cited == {
        u for k, u in urls.items() if k.lower() in ("repository", "homepage", "source")
    }
    for url in cited:
        assert url.startswith("https://") and "example" not in url and "TODO" not in url


def test_the_protocol_has_its_own_page():
    from experiments.tournament import ladder_protocol

    page = (ROOT / "docs" / "results" / "protocol.md").read_text(encoding="utf-8")
    for heading in ("## What it measures", "## The deal set and the ladder", "## Reporting a row"):
        assert heading in page
    assert ladder_protocol.deal_set_hash() in page
    assert f"version {ladder_protocol.VERSION}" in page
    assert [v for v, _ in ladder_protocol.VERSION_HISTORY] == list(
        range(1, ladder_protocol.VERSION + 1)
    )
    index = (ROOT / "docs" / "results" / "index.md").read_text(encoding="utf-8")
    assert "\nprotocol\n" in index, "the protocol page is in the results' toctree"
