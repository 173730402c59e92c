"""Sphinx configuration of the spades-env documentation (MyST Markdown, the furo theme).

Build: ``sphinx-build -W --keep-going -b html docs build/docs`` (CI does, warnings as
errors). Tables that the code defines (the observation blocks of each preset, the agent
registry) are written into the pages by ``python docs/_tables.py``, so that they read whole
unbuilt too; the build fails while one differs from the code.
"""

from __future__ import annotations

import sys
from pathlib import Path

DOCS = Path(__file__).resolve().parent
ROOT = DOCS.parent
sys.path.insert(0, str(ROOT))  # document this checkout, not whatever is installed
sys.path.insert(0, str(DOCS))

import _tables  # noqa: E402  (docs/_tables.py, needs the path above)

project = "spades-env"
author = "the spades-env authors"
copyright = "2026, the spades-env authors"
release = version = _tables.project_version()

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.napoleon",
    "sphinx.ext.viewcode",
]
source_suffix = {".md": "markdown"}
master_doc = "index"
exclude_patterns = ["_build", "_generated", "Thumbs.db", ".DS_Store"]
myst_enable_extensions = ["colon_fence", "deflist"]
myst_heading_anchors = 3
suppress_warnings = ["myst.header"]  # RULES.md, included whole, numbers its own sections

html_theme = "furo"
html_title = f"spades-env {release}"

autodoc_mock_imports = ["torch", "ray", "tensorboard"]
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "description"
autodoc_inherit_docstrings = False  # the libraries' own docstrings are not ours to build
autosummary_generate = False
nitpicky = False
napoleon_google_docstring = True
napoleon_numpy_docstring = False


def _check_tables(app) -> None:
    """A page whose generated table differs from the code fails the strict build."""
    from sphinx.util import logging

    for page in _tables.stale_pages():
        logging.getLogger(__name__).warning(
            "%s: a generated table differs from the code; run python docs/_tables.py",
            page.relative_to(ROOT),
        )


def setup(app):
    app.connect("builder-inited", _check_tables)
