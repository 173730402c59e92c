"""The built documentation site: every page of docs/ is reached from the index through the
toctrees, and no page takes a name Sphinx keeps for its own pages (a page `search.md`
became `search.html`, which Sphinx's search page overwrote, without a warning).

The site is the one `.ci/run` builds (its folder in `$SPADES_DOCS_HTML`), or, without it,
one built here (the `docs` extra)."""

from __future__ import annotations

import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from posixpath import normpath
from urllib.parse import urldefrag

import pytest

pytestmark = [pytest.mark.docs]

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: the pages Sphinx writes itself into the root of an HTML build
RESERVED = {"search", "genindex", "py-modindex", "modindex", "objects", "searchindex"}
SKIPPED = {"_build", "_generated"}


def source_pages() -> list[str]:
    """Every page of docs/ by its document name (`environments/index`)."""
    return sorted(
        str(p.relative_to(DOCS).with_suffix("")).replace(os.sep, "/")
        for p in DOCS.rglob("*.md")
        if not SKIPPED & set(p.relative_to(DOCS).parts)
    )


class _ToctreeLinks(HTMLParser):
    """The links of a page's toctree entries (`<li class="toctree-lN">`, in the body's
    toctrees and in the theme's sidebar tree)."""

    def __init__(self) -> None:
        super().__init__()
        self.depth = 0  # open <li class="toctree-l..."> elements
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "li" and any(c.startswith("toctree-l") for c in (a.get("class") or "").split()):
            self.depth += 1
        elif tag == "a" and self.depth and a.get("href"):
            self.links.append(a["href"])

    def handle_endtag(self, tag):
        if tag == "li" and self.depth:
            self.depth -= 1


def toctree_links(html: Path, site: Path) -> set[str]:
    """The document names the toctree entries of `html` point to."""
    parser = _ToctreeLinks()
    parser.feed(html.read_text(encoding="utf-8"))
    base = html.parent.relative_to(site).as_posix()
    out = set()
    for href in parser.links:
        url, _ = urldefrag(href)
        if not url.endswith(".html") or "://" in url:
            continue
        out.add(normpath(f"{base}/{url}" if base != "." else url).removesuffix(".html"))
    return out


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    built = os.environ.get("SPADES_DOCS_HTML")
    if built and (Path(built) / "index.html").is_file():
        return Path(built)
    pytest.importorskip("sphinx")
    pytest.importorskip("myst_parser")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "sphinx", "-q", "-b", "html", str(DOCS), str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    return out


def test_no_page_takes_a_name_sphinx_keeps():
    clashes = [name for name in source_pages() if name in RESERVED]
    assert clashes == [], f"rename these pages, Sphinx writes its own {clashes}"


def test_every_page_is_reached_from_the_index(site):
    reached, todo = {"index"}, ["index"]
    while todo:
        page = site / f"{todo.pop()}.html"
        for name in toctree_links(page, site) - reached:
            if (site / f"{name}.html").is_file():
                reached.add(name)
                todo.append(name)
    missing = sorted(set(source_pages()) - reached)
    assert missing == [], f"pages no toctree leads to: {missing}"


def test_the_search_agents_page_is_its_own_and_sphinx_keeps_its_search(site):
    ours = (site / "search-agents.html").read_text(encoding="utf-8")
    assert "double-dummy" in ours.lower()
    assert "search-agents" in " ".join(toctree_links(site / "index.html", site))
    sphinx_search = (site / "search.html").read_text(encoding="utf-8")
    assert "searchindex.js" in sphinx_search  # Sphinx's own page, not a docs page
