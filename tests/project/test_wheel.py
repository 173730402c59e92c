"""The wheel carries the license and the rule book (pyproject license-files, setup.py)."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.cli

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
def test_the_wheel_ships_license_and_rules(tmp_path):
    pytest.importorskip("setuptools", minversion="77")  # PEP 639 license-files, offline
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-w",
         str(tmp_path), str(ROOT)],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert build.returncode == 0, build.stderr[-3000:]
    (wheel,) = tmp_path.glob("spades_env-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert "spades_env/RULES.md" in names
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), names
    rules = zipfile.ZipFile(wheel).read("spades_env/RULES.md").decode()
    assert rules == (ROOT / "RULES.md").read_text(encoding="utf-8")
    assert "agents/learned/checkpoints/learned.pt" in names
    assert not any(n.startswith(("tests/", "docs/")) for n in names)
