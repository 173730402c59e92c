"""The tests run as on a fresh machine: an empty home of their own (tests/conftest.py),
which `spades` commands run as subprocesses use too, so nothing is read from or written
to the user's home; `.ci/run` runs the README's test command with an empty home."""

from __future__ import annotations

import json
import os
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

from cli_helpers import REPO, spades
from isolated_home import HOME_VARIABLES, PROJECT_CACHE_VARIABLES, REAL_HOME, TEST_HOME

WHERE = """
import json, os
from pathlib import Path
import matplotlib
from agents.dd.cache import default_cache_path
print(json.dumps({"home": str(Path.home()), "dd": str(default_cache_path()),
                  "mpl": matplotlib.get_configdir(),
                  **{v: os.environ.get(v) for v in %r}}))
"""


def inside(path: str | Path, folder: Path) -> bool:
    return Path(path).resolve().is_relative_to(folder)


def test_a_subprocess_sees_the_tests_home_not_the_users():
    code = WHERE % (list(HOME_VARIABLES) + list(PROJECT_CACHE_VARIABLES),)
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr
    seen = json.loads(out.stdout)
    assert TEST_HOME.is_dir() and not inside(TEST_HOME, REAL_HOME)
    for var in PROJECT_CACHE_VARIABLES:
        assert seen.pop(var) is None
    for name, path in seen.items():
        assert inside(path, TEST_HOME), (name, path)
        assert not inside(path, REAL_HOME), (name, path)


def test_dd_table_writes_its_default_cache_in_the_tests_home():
    cache = TEST_HOME / ".cache" / "spades-env" / "dd_tricks.sqlite"
    out = spades("dd-table", "--deals", "1", "--seed", "11", "--workers", "1", "--no-progress")
    assert out.returncode == 0, out.stderr
    named = re.search(r"cache (\S+)$", out.stdout.splitlines()[0])
    assert named and Path(named[1]).resolve() == cache.resolve()
    with sqlite3.connect(cache) as db:  # the answers went there, and nowhere else
        assert db.execute("SELECT COUNT(*) FROM tricks").fetchone()[0] >= 4
    assert os.environ["HOME"] == str(TEST_HOME) != str(REAL_HOME)


def test_ci_runs_the_readme_test_command_with_an_empty_home():
    readme = (REPO / "README.md").read_text()
    command = re.search(
        r"^(?:bash \.ci/setup --all && )?(\.venv/bin/python -m pytest [^#\n]*?)\s*(#.*)?$",
        readme,
        re.M,
    )
    assert command, "the README names its test command"
    script = (REPO / ".ci" / "run").read_text().splitlines()
    assert command[1] in script, "`.ci/run` runs exactly the README's test command"
    before = "\n".join(script[: script.index(command[1])])
    home = re.search(r'^(\w+)="\$\(mktemp -d[^)]*\)"$', before, re.M)
    assert home, "a fresh temporary folder is made before the tests"
    for var in ("HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "XDG_CONFIG_HOME", "MPLCONFIGDIR"):
        assert re.search(rf'\b{var}="\${home[1]}[/"]', before), var
    assert re.search(r"^unset SPADES_DD_CACHE$", before, re.M)
