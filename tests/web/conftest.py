"""tests/web: a browser test that skipped fails the run where a browser is required.

.ci/run installs the OS's Chromium and sets SPADES_REQUIRE_BROWSER=1: there, a test marked
`browser` that skipped (no Playwright, no Chromium) is reported as a failure, so the
browser tests cannot silently stop running in CI.
"""

from __future__ import annotations

import os

import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    required = os.environ.get("SPADES_REQUIRE_BROWSER") == "1"
    if required and report.skipped and item.get_closest_marker("browser") is not None:
        report.outcome = "failed"
        report.longrepr = f"browser test skipped where a browser is required: {report.longrepr}"


@pytest.fixture(scope="module")
def browser():
    """The OS's Chromium, one per test module (`web_helpers.chromium`; skips where it or
    Playwright is missing, which `SPADES_REQUIRE_BROWSER=1` turns into a failure)."""
    from web_helpers import chromium

    pw, b = chromium()
    yield b
    b.close()
    pw.stop()
