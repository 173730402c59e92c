"""Everything is in pyproject.toml but one step: the wheel carries RULES.md, the rule book
the code and its errors cite, as spades_env/RULES.md."""

from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithRules(build_py):
    def run(self) -> None:
        super().run()
        target = Path(self.build_lib) / "spades_env" / "RULES.md"
        self.mkpath(str(target.parent))
        self.copy_file("RULES.md", str(target))


setup(cmdclass={"build_py": BuildPyWithRules})
