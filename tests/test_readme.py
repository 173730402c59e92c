"""Every Python example of the README's "Environments" section runs as written."""

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
    assert len(examples) == 3
    assert "spades_v0" in examples[0] and "gym.make(" in examples[1] and "make_vec" in examples[2]


@pytest.mark.parametrize("index", range(3), ids=["pettingzoo", "gymnasium", "vector"])
def test_readme_example_runs(index, capsys):
    code = environment_examples()[index]
    exec(compile(code, f"README.md environment example {index + 1}", "exec"), {})
    assert capsys.readouterr().out.strip(), "the example prints its result"
