"""Fixtures shared by several test modules, and the tests' own home.

Tests never read or write the user's home (tests/isolated_home.py, imported here before
any test module): HOME and every cache, data and config location the project or its
libraries use (the XDG homes, matplotlib's, torch's) point into a fresh temporary folder
of this test session, and `$SPADES_DD_CACHE` is dropped (the double-dummy cache then
lives in that folder's `.cache`). Subprocesses inherit the environment, so a `spades`
command run by a test sees the same empty home. The folder is removed when the session
ends.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest
from isolated_home import TEST_HOME  # noqa: F401  (first: the tests' own home)

# render_mode="human" opens a pygame window: a headless one in the tests.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


#: The folder of tests/ a test lives in -> the markers every test there carries (what the
#: folder's tests need beyond the core install; pyproject.toml registers the markers).
FOLDER_MARKERS = {
    "cli": ("cli",),
    "docs": ("docs",),
    "training": ("torch",),
}
#: A fixture -> the markers of every test that uses it.
FIXTURE_MARKERS = {
    "local_ray": ("ray",),
    "small_run": ("cli",),
}
#: A marker -> the module (and its extra) without which a test carrying it skips.
MARKER_NEEDS = {"torch": ("torch", "train"), "ray": ("ray", "ray")}
TESTS = Path(__file__).resolve().parent


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Mark each test by its folder and by the fixtures it uses, so that `-m "not cli"` and
    the like select by what a test needs, without a marker in every file."""
    for item in items:
        path = item.path.resolve()
        parts = path.relative_to(TESTS).parts if path.is_relative_to(TESTS) else ()
        names = list(FOLDER_MARKERS.get(parts[0], ())) if len(parts) > 1 else []
        for fixture in getattr(item, "fixturenames", ()):
            names += FIXTURE_MARKERS.get(fixture, ())
        for name in dict.fromkeys(names):
            item.add_marker(name)


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip a test marked `torch` or `ray` where that extra is not installed (a core-only
    install), rather than fail on the import deep inside the code it runs."""
    for marker, (module, extra) in MARKER_NEEDS.items():
        if item.get_closest_marker(marker) and importlib.util.find_spec(module) is None:
            pytest.skip(f"needs {module} (the {extra} extra)")


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with 2 CPUs (the CI machine's), for one test module; skips without ray."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="session")
def small_run(tmp_path_factory) -> Path:
    """A finished 4-deal tournament, random against the heuristic, shared by every module of
    a session (or of an xdist worker) that only reads it: copy it before changing it."""
    from cli_helpers import finished_run  # here: after the test home above is in place

    args = ["--agents", "random,heuristic", "--deals", "4", "--chunk", "2", "--workers", "1"]
    return finished_run(tmp_path_factory.mktemp("small") / "run", *args, "--no-progress")
