"""Tables of the docs generated from the code: the observation blocks of every preset,
from `spades_env.core.layout`, the agent registry, from `agents.registry`, and the version
history of `spades_v0`, from `spades_env.spades_v0.VERSION_HISTORY`.

They are written into the pages themselves, between a pair of markers

    <!-- generated: NAME (python docs/_tables.py rewrites it) -->
    ...
    <!-- end generated -->

so that a page reads whole where it is not built (a repository's web view, an editor).
`python docs/_tables.py` rewrites every such block from the code; the docs build fails
(docs/conf.py, a warning under -W) and tests/docs/test_generated_tables.py fails while a
page's copy differs from what the code gives."""

from __future__ import annotations

import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: a generated block of a page: (the opening marker, its name, the table, the closing marker)
BLOCK = re.compile(r"(<!-- generated: (\S+) [^\n]*-->\n)(.*?)(<!-- end generated -->)", flags=re.S)


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


def protocol_table() -> str:
    """The evaluation protocol's ladder, deal set and version history
    (`experiments.tournament.ladder_protocol`)."""
    from experiments.tournament import ladder_protocol

    lines = [
        f"Protocol `{ladder_protocol.PROTOCOL}` version {ladder_protocol.VERSION}: the deal "
        f"set of seed {ladder_protocol.DEAL_SEED}, "
        f"{max(r.deals for r in ladder_protocol.LADDER)} deals, SHA-256 "
        f"`{ladder_protocol.deal_set_hash()}`.",
        "",
        "| rung | opponent | duplicate deals | pilot sd (points per deal) | 95% CI half-width |",
        "|---:|---|---:|---:|---:|",
    ]
    for k, rung in enumerate(ladder_protocol.LADDER, 1):
        half = 1.959963984540054 * rung.pilot_sd / rung.deals**0.5
        lines.append(
            f"| {k} | `{rung.opponent}` | {rung.deals} | {rung.pilot_sd:.2f} | ±{half:.2f} |"
        )
    lines += ["", "Versions:", ""]
    lines += [f"- {v}: {text}." for v, text in ladder_protocol.VERSION_HISTORY]
    return "\n".join(lines) + "\n"


def tables() -> dict[str, str]:
    from spades_env.rules import PRESETS

    out = {f"obs_{p}.md": obs_table(p) for p in PRESETS}
    out["obs_sizes.md"] = preset_sizes()
    out["agents.md"] = agents_table()
    out["spades_v0_versions.md"] = spades_v0_versions()
    out["protocol.md"] = protocol_table()
    return out


def pages() -> list[Path]:
    """Every page of the docs that holds a generated block."""
    return sorted(p for p in DOCS.rglob("*.md") if BLOCK.search(p.read_text(encoding="utf-8")))


def refreshed(text: str, current: dict[str, str]) -> str:
    """`text` with every generated block replaced by its table from `current`."""

    def fill(m: re.Match) -> str:
        if m.group(2) not in current:
            raise KeyError(f"no generated table {m.group(2)!r}: one of {', '.join(current)}")
        return m.group(1) + "\n" + current[m.group(2)] + "\n" + m.group(4)

    return BLOCK.sub(fill, text)


def stale_pages() -> list[Path]:
    """The pages whose generated blocks differ from what the code gives now."""
    current = tables()
    return [p for p in pages() if refreshed(p.read_text("utf-8"), current) != p.read_text("utf-8")]


def write_all() -> list[Path]:
    """Rewrite every generated block of every page from the code; return the pages changed."""
    current = tables()
    changed = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = refreshed(text, current)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    for path in write_all():
        print(f"rewrote {path.relative_to(ROOT)}")
