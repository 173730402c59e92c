"""The packages import one way (spades_env -> agents -> training -> experiments), no module
imports itself through others (lazy imports inside functions and TYPE_CHECKING imports
included, and the doors `import` statements do not show: an import string
`"pkg.mod:attr"` loaded with importlib, a `-m pkg.mod` module run as a subprocess), the
compiled core imports only itself and the two leaf definitions it is built from, and
agents/ is layered by concept. No module is excepted."""

from __future__ import annotations

import ast
import itertools
import re
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LAYERS = ("spades_env", "agents", "training", "experiments")


def _modules() -> dict[str, Path]:
    out = {}
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            out[name.removesuffix(".__init__")] = path
    return out


#: an import string, "pkg.mod:attr" (what importlib or an entry point loads)
_IMPORT_STRING = re.compile(rf"^((?:{'|'.join(LAYERS)})(?:\.\w+)*):\w+$")
#: a module run with `python -m pkg.mod` written in one string
_DASH_M = re.compile(rf"(?:^|\s)-m\s+((?:{'|'.join(LAYERS)})(?:\.\w+)*)")


def _string_modules(tree: ast.AST) -> set[str]:
    """Modules named by the strings of a module (docstrings aside): import strings
    `"pkg.mod:attr"`, `"... -m pkg.mod ..."`, and `"-m", "pkg.mod"` side by side in an
    argument list (a subprocess's argv)."""
    docs = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docs:
            for pattern in (_IMPORT_STRING, _DASH_M):
                found |= {m.group(1) for m in pattern.finditer(node.value)}
        items = node.elts if isinstance(node, ast.List | ast.Tuple) else None
        if isinstance(node, ast.Call):
            items = node.args
        for a, b in itertools.pairwise(items or []):
            if (
                isinstance(a, ast.Constant)
                and a.value == "-m"
                and isinstance(b, ast.Constant)
                and isinstance(b.value, str)
            ):
                found.add(b.value)
    return found


def _deps(tree: ast.AST, mods: set[str]) -> set[str]:
    """The modules of `mods` that a module's syntax tree imports, in any of the ways above."""
    deps: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            subs = {f"{node.module}.{a.name}" for a in node.names} & mods
            if len(subs) < len(node.names) and node.module in mods:
                deps.add(node.module)  # a name defined in the module (or package) itself
            deps |= subs
        elif isinstance(node, ast.Import):
            deps |= {a.name for a in node.names} & mods
    return deps | (_string_modules(tree) & mods)


@cache
def _graph() -> dict[str, set[str]]:
    mods = _modules()
    return {
        name: _deps(ast.parse(path.read_text()), set(mods)) - {name} for name, path in mods.items()
    }


def test_no_package_imports_a_later_one():
    rank = {layer: k for k, layer in enumerate(LAYERS)}
    wrong = [
        (a, b)
        for a, deps in _graph().items()
        for b in deps
        if rank[b.split(".")[0]] > rank[a.split(".")[0]]
    ]
    assert wrong == []


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
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
    return cycles


def test_no_package_has_an_import_cycle():
    assert _cycles(_graph()) == []


def test_a_cycle_is_found():
    """The cycle search on a graph with one circle (so the test above can fail)."""
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]


#: what spades_env/core may import besides itself: the cards and the rule options (`Rules`,
#: spades_env/rules.py, not the compiled core/rule_functions.py), which import nothing else
#: from the package (so the core never reaches up to a face of its own)
CORE_LEAVES = {"spades_env.cards", "spades_env.rules"}


def test_the_core_imports_only_the_core():
    graph = _graph()
    outside = {
        (a, b)
        for a, deps in graph.items()
        if a.startswith("spades_env.core")
        for b in deps
        if not b.startswith("spades_env.core") and b not in CORE_LEAVES
    }
    assert outside == set()
    assert all(graph[leaf] <= CORE_LEAVES for leaf in CORE_LEAVES)


#: agents/ by concept, lowest first: a package imports only those before it. `base` (the
#: agent interface) and `spec` (an agent spec's value and errors) come first; the adapters
#: of agents from outside the project, then the registry, the play loop and the envs'
#: opponents from spec strings, sit on top of them all; above everything, the stubs left at
#: an old path, which nothing imports (`test_nothing_imports_a_stub`).
AGENT_LAYERS = (
    ("agents.base", "agents.random_agent", "agents.spec", "agents.processes"),
    ("agents.kernels",),
    ("agents.dd",),
    ("agents.heuristic",),
    ("agents.montecarlo",),
    ("agents.learned",),
    ("agents.netsearch",),
    ("agents.adapters",),
    ("agents.llm",),
    ("agents.registry", "agents.play_loop", "agents.opponents"),
    ("agents.search",),  # the warning stubs of agents.montecarlo's old path (below)
)


def _agent_package(module: str) -> str:
    return ".".join(module.split(".")[:2])


def test_agents_import_down_their_layers():
    rank = {pkg: k for k, layer in enumerate(AGENT_LAYERS) for pkg in layer}
    graph = _graph()
    packages = {_agent_package(m) for m in graph if m.startswith("agents.")}
    assert packages == set(rank)  # every package of agents/ has its place
    wrong = [
        (a, b)
        for a, deps in graph.items()
        if a.startswith("agents.")
        for b in deps
        if b.startswith("agents.") and rank[_agent_package(b)] > rank[_agent_package(a)]
    ]
    assert wrong == []


def test_no_private_name_is_imported_across_modules():
    """A name another module needs is public: no `from x import _name` between modules."""
    private = []
    for name, path in _modules().items():
        for node in ast.walk(ast.parse(path.read_text())):
            if (
                isinstance(node, ast.ImportFrom)
                and node.module
                and node.module.split(".")[0] in LAYERS
            ):
                private += [
                    (name, node.module, a.name)
                    for a in node.names
                    if a.name.startswith("_") and not a.name.startswith("__")
                ]
    assert private == []


def test_the_checker_sees_imports_inside_functions():
    """The graph counts an import inside a function (where the two cycles used to hide)."""
    graph = _graph()
    assert "experiments.tournament.ray_backend" in graph["experiments.tournament.schedule"]
    assert "training.ray_rollout" in graph["training.session"]


def test_the_checker_sees_import_strings_and_dash_m_modules():
    """An import string and a `-m` module count as imports, written any of three ways;
    a docstring that shows a command does not."""
    mods = {"agents.registry", "experiments.cli", "experiments.recipe"}
    source = """
\"\"\"Run it: python -m experiments.recipe NAME.\"\"\"
FACTORY = "agents.registry:make_agent"
subprocess.run([sys.executable, "-m", "experiments.cli", "tournament"])
"""
    assert _deps(ast.parse(source), mods) == {"agents.registry", "experiments.cli"}
    assert _deps(ast.parse('os.system("python -m experiments.recipe x")'), mods) == {
        "experiments.recipe"
    }


def _stubs() -> set[str]:
    """The stubs left at an old import path: the modules that call
    `spades_env.tooling.renamed.renamed`."""
    return {name for name, deps in _graph().items() if "spades_env.tooling.renamed" in deps}


def test_nothing_imports_a_stub():
    """A module moved is imported from its new path; only a stub leads to another stub
    (`agents.search.pimc`'s package is the stub `agents.search`)."""
    stubs = _stubs()
    assert {"agents.search.pimc", "spades_env.stock_draw"} & stubs == {"agents.search.pimc"}
    importers = {(a, b) for a, deps in _graph().items() if a not in stubs for b in deps & stubs}
    assert importers == set()


def test_every_stub_only_warns_and_re_exports():
    """A stub imports its new module and the helper, and does nothing else: a docstring,
    two imports and the call."""
    for name in _stubs():
        body = ast.parse(_modules()[name].read_text()).body
        kinds = [type(node).__name__ for node in body]
        assert kinds == ["Expr", "ImportFrom", "ImportFrom", "Expr"], name
