"""Tables of the docs generated from the code at build time (docs/conf.py calls
`write_all`): the observation blocks of every preset, from `spades_env.core.layout`, the
agent registry, from `agents.registry`, and the version history of `spades_v0`, from
`spades_env.spades_v0.VERSION_HISTORY`. tests/docs/test_docs.py checks the pages include them."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def project_version() -> str:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]


def obs_table(preset: str) -> str:
    """The block table of the int16 encoding under a preset: name, size, first index."""
    from spades_env.core.layout import obs_blocks, obs_size
    from spades_env.rules import Rules

    rules = Rules.preset(preset)
    lines = ["| block | size | indices |", "|---|---:|---|"]
    start = 0
    for name, size in obs_blocks(rules):
        if size:
            lines.append(f"| `{name}` | {size} | {start}..{start + size - 1} |")
        start += size
    lines.append(f"| **total** | **{obs_size(rules)}** | |")
    return "\n".join(lines) + "\n"


def preset_sizes() -> str:
    """Per preset: players, observation size, packed size."""
    from spades_env.core.layout import obs_size
    from spades_env.obs_bits import bits_size
    from spades_env.rules import PRESETS, Rules

    lines = ['| preset | players | `observation` (int16) | `obs_format="bits"` (uint8) |']
    lines.append("|---|---:|---:|---:|")
    for name in PRESETS:
        rules = Rules.preset(name)
        lines.append(f"| `{name}` | {rules.num_players} | {obs_size(rules)} | {bits_size(rules)} |")
    return "\n".join(lines) + "\n"


def agents_table() -> str:
    """Every registered agent, its parameters and its help line."""
    from agents.registry import REGISTRY

    lines = ["| name | parameters | what it is |", "|---|---|---|"]
    for name, entry in REGISTRY.items():
        params = ", ".join(f"`{k}` ({t.__name__})" for k, t in entry.params.items()) or "none"
        text = entry.help.replace("|", "\\|")
        lines.append(f"| `{name}` | {params} | {text} |")
    return "\n".join(lines) + "\n"


def spades_v0_versions() -> str:
    """The version history of `spades_v0`, the list its module docstring ends with."""
    from spades_env.spades_v0 import version_history

    return version_history()


def tables() -> dict[str, str]:
    from spades_env.rules import PRESETS

    out = {f"obs_{p}.md": obs_table(p) for p in PRESETS}
    out["obs_sizes.md"] = preset_sizes()
    out["agents.md"] = agents_table()
    out["spades_v0_versions.md"] = spades_v0_versions()
    return out


def write_all(folder: Path) -> None:
    """Write every table into `folder`, rewriting only what changed (no needless rebuild)."""
    folder.mkdir(exist_ok=True)
    for name, text in tables().items():
        path = folder / name
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
