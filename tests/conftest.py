"""Fixtures shared by several test modules."""

from __future__ import annotations

import os

import pytest

# render_mode="human" opens a pygame window: a headless one in the tests.
os.environ.setdefault("SDL_VIDEODRIVER", "dummy")


@pytest.fixture(scope="module")
def local_ray():
    """A local Ray with 2 CPUs (the CI machine's), for one test module; skips without ray."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()
