"""Every Python example of the README's "Environments" section runs as written, and every
function its "Where each rule lives" table names exists where it says."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parent.parent / "README.md"


def environment_examples() -> list[str]:
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Environments\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match, "README.md has no '## Environments' section"
    return re.findall(r"```python\n(.*?)```", match.group(1), flags=re.S)


def test_the_section_has_an_example_per_interface():
    examples = environment_examples()
    assert len(examples) == 4
    assert "spades_v0" in examples[0] and "gym.make(" in examples[1] and "make_vec" in examples[2]
    assert 'obs_format="bits"' in examples[3]


@pytest.mark.parametrize("index", range(4), ids=["pettingzoo", "gymnasium", "vector", "packed"])
def test_readme_example_runs(index, capsys):
    code = environment_examples()[index]
    exec(compile(code, f"README.md environment example {index + 1}", "exec"), {})
    assert capsys.readouterr().out.strip(), "the example prints its result"


def rule_places() -> list[tuple[str, str]]:
    """(file, function) of every row of the README's "Where each rule lives" table."""
    text = README.read_text(encoding="utf-8")
    match = re.search(r"^## Where each rule lives\n(.*?)(?=^## )", text, flags=re.S | re.M)
    assert match, "README.md has no '## Where each rule lives' section"
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
    root = README.parent / "spades_env"
    for path, name in places:
        assert path is not None, f"{name}: no file named before it"
        source = (root / path).read_text(encoding="utf-8")
        assert re.search(rf"^def {re.escape(name)}\(", source, flags=re.M), f"{path} {name}"
