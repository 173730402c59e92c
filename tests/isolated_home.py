"""The tests' own home: imported first by tests/conftest.py, before any test module.

HOME and every cache, data and config location the project or its libraries use (the XDG
homes, matplotlib's, torch's) point into a fresh temporary folder of this test session,
and `$SPADES_DD_CACHE` is dropped. A module of its own (not conftest.py, whose name
several folders' conftest files share) so that tests/cli/test_fresh_home.py can import
these names in any selection of test folders.
"""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

#: The user's home as it was before the tests replaced it (only to prove it is untouched).
REAL_HOME = Path(os.path.expanduser("~")).resolve()

#: Where HOME and each cache variable point during the tests (relative to the test home).
HOME_VARIABLES = {
    "HOME": ".",
    "XDG_CACHE_HOME": ".cache",
    "XDG_DATA_HOME": ".local/share",
    "XDG_CONFIG_HOME": ".config",
    "XDG_STATE_HOME": ".local/state",
    "MPLCONFIGDIR": ".config/matplotlib",
    "TORCH_HOME": ".cache/torch",
}
#: Project variables that name a file in the user's home; unset during the tests.
PROJECT_CACHE_VARIABLES = ("SPADES_DD_CACHE",)

TEST_HOME = Path(tempfile.mkdtemp(prefix="spades-tests-home-")).resolve()
for _var, _sub in HOME_VARIABLES.items():
    (TEST_HOME / _sub).mkdir(parents=True, exist_ok=True)
    os.environ[_var] = str(TEST_HOME / _sub)
for _var in PROJECT_CACHE_VARIABLES:
    os.environ.pop(_var, None)
atexit.register(shutil.rmtree, TEST_HOME, ignore_errors=True)
