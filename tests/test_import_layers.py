"""The packages import one way (spades_env -> agents -> training -> experiments), and
training/ and experiments/ hold no import cycle, lazy imports inside functions included."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("spades_env", "agents", "training", "experiments")


def _modules() -> dict[str, Path]:
    out = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


@cache
def _graph() -> dict[str, set[str]]:
    mods = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                subs = {f"{node.module}.{a.name}" for a in node.names} & mods.keys()
                if len(subs) < len(node.names) and node.module in mods:
                    deps.add(node.module)  # a name defined in the module (or package) itself
                deps |= subs
            elif isinstance(node, ast.Import):
                deps |= {a.name for a in node.names} & mods.keys()
        graph[name] = deps - {name}
    return graph


def test_no_package_imports_a_later_one():
    rank = {layer: k for k, layer in enumerate(LAYERS)}
    wrong = [
        (a, b)
        for a, deps in _graph().items()
        for b in deps
        if rank[b.split(".")[0]] > rank[a.split(".")[0]]
    ]
    assert wrong == []


def test_training_and_experiments_have_no_import_cycle():
    graph = {
        a: {b for b in deps if b.split(".")[0] in ("training", "experiments")}
        for a, deps in _graph().items()
        if a.split(".")[0] in ("training", "experiments")
    }
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, [*stack, nxt])
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [node])
    assert cycles == []


def test_the_checker_sees_imports_inside_functions():
    """The graph counts an import inside a function (where the two cycles used to hide)."""
    graph = _graph()
    assert "experiments.tournament.ray_backend" in graph["experiments.tournament.runner"]
    assert "training.ray_rollout" in graph["training.session"]
