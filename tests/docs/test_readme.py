"""The README is a front page: its first commands are the setup and the test command CI
runs, and it stays short. The environment examples it used to hold are in docs/environments/
(run by tests/docs/test_docs.py); the "Where each rule lives" table is in docs/architecture.md,
and every function it names exists where it says."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
ARCHITECTURE = ROOT / "docs" / "architecture.md"
COMMANDS = (
    "bash .ci/setup && .venv/bin/spades tournament"
    "   # set up, then random vs heuristic, duplicate\n"
    "bash .ci/setup --all && .venv/bin/python -m pytest -n 2 --dist loadfile"
    "  # every extra, then the tests\n"
)


def test_the_two_commands_come_first():
    first = re.search(r"```bash\n(.*?)```", README.read_text(encoding="utf-8"), flags=re.S)
    assert first and first.group(1) == COMMANDS


def test_ci_runs_the_readmes_test_command():
    setup, test_command = COMMANDS.splitlines()[1].split("#")[0].strip().split(" && ")
    lines = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert lines[-1] == test_command
    assert setup in lines, "CI installs every extra as the README says"
    assert any(line.startswith(".venv/bin/sphinx-build -W") for line in lines), "docs build first"


def test_the_readme_is_a_front_page():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 200


def test_the_environment_pages_have_an_example_per_interface():
    pages = {
        "spades_v0.md": "spades_v0.env(",
        "spades-v0.md": "gym.make(",
        "vector.md": "make_vec",
    }
    for page, call in pages.items():
        text = (ROOT / "docs" / "environments" / page).read_text(encoding="utf-8")
        assert call in "".join(re.findall(r"```python\n(.*?)```", text, flags=re.S)), page
    vector = (ROOT / "docs" / "environments" / "vector.md").read_text(encoding="utf-8")
    assert 'obs_format="bits"' in vector


def rule_places() -> list[tuple[str, str]]:
    """(file, function) of every row of the "Where each rule lives" table."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    match = re.search(r"^## Where each rule lives\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match, "docs/architecture.md has no '## Where each rule lives' section"
    out = []
    for row in re.findall(r"^\|.*\| (.*) \|$", match.group(1), flags=re.M):
        path = None
        for name in re.findall(r"`([^`]+)`", row):
            if name.endswith(".py"):
                path = name
            else:
                out.append((path, name))
    return out


def test_the_rule_table_names_functions_that_exist():
    places = rule_places()
    assert len(places) >= 20
    root = ROOT / "spades_env"
    for path, name in places:
        assert path is not None, f"{name}: no file named before it"
        source = (root / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(name)}\(", source, flags=re.M), f"{path} {name}"
