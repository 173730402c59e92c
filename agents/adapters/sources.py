"""Where an agent outside the registry's table comes from, and the registry's row type.

An agent spec (`agents.registry`) names a registered agent, or one of three sources this
module imports: an installed package's plugin (an entry point of `PLUGIN_GROUP`), a
Python file (`path/to/file.py:Class`) or a module (`package.module:Class`). Each
imported object becomes an `AgentEntry`, its options read from its signature, and is
kept for the life of the process. What cannot be imported is an `AgentImportError` that
names the file, module or package and says what to do.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import inspect
import os
import sys
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.spec import AgentImportError, AgentSpecError
from spades_env.rules import parse_value

# AgentSpecError and AgentImportError live with the spec type (agents.spec); they stay
# importable from here, where they were first defined.

#: the entry-point group in which installed packages declare agents (name -> "module:obj")
PLUGIN_GROUP = "spades_env.agents"


@dataclass(frozen=True)
class AgentEntry:
    factory: Callable[..., BaseAgent]
    params: dict[str, type] = field(default_factory=dict)
    help: str = ""
    #: the parameter a bare first item gives: `checkpoint:PATH` is `checkpoint:path=PATH`
    positional: str | None = None
    #: checks the parsed parameters before any game starts (e.g. that a checkpoint loads);
    #: loaded lazily as "module:function" so that listing agents imports nothing heavy
    check: str | None = None
    #: "module:function" called as f(rules, name): raises ValueError or
    #: NotImplementedError for rules the agent cannot play (RULES.md §6 presets)
    rules_check: str | None = None
    #: the factory takes any option (`**kwargs`), typed as `literal` reads it
    any_params: bool = False
    #: (lowest, highest) value of a numeric parameter, checked when the spec is parsed;
    #: a parameter not listed takes the registry's default bounds (the entry's own check narrows it)
    bounds: dict[str, tuple[float, float]] = field(default_factory=dict)
    #: the options whose value is a file's path, as the path of checkpoint:PATH, made
    #: absolute when the spec is parsed: a worker, or a resume from another folder,
    #: finds the same file
    paths: tuple[str, ...] = ()
    #: the options whose value names another agent, with the spec taken when the option is
    #: not given (llm's `fallback=NAME`): the factory builds that agent, with the same
    #: seed, and passes it in the option's place
    agents: dict[str, str] = field(default_factory=dict)
    #: the class of the agents the factory builds, whose run hooks a tournament calls
    #: (`agents.base.BaseAgent.in_run_folder`, `run_summary`, `report_tables`): a class,
    #: or "module:Class" imported when a run asks (so listing agents imports nothing
    #: heavy); None: the factory itself when it is a class, else none
    agent_class: type | str | None = None


#: entries of the plugins, files and modules imported so far in this process
_LOADED: dict[str, AgentEntry] = {}


@functools.cache
def plugin_points() -> dict[str, importlib.metadata.EntryPoint]:
    """The installed packages' agents: entry points of `PLUGIN_GROUP`, by name (a
    registered name wins over a plugin of the same name)."""
    return {ep.name: ep for ep in importlib.metadata.entry_points(group=PLUGIN_GROUP)}


def _plugin_entry(name: str) -> AgentEntry:
    if name not in _LOADED:
        ep = plugin_points()[name]
        dist = getattr(ep, "dist", None)
        owner = f"package {dist.name!r}" if dist is not None else "an installed package"
        try:
            obj = ep.load()
        except Exception as exc:
            raise AgentImportError(
                f"agent {name!r} (entry point {ep.value!r} of {owner}) cannot be loaded: "
                f"{_reason(exc)}; reinstall that package, or fix its entry point"
            ) from None
        _LOADED[name] = entry_for(obj, f"plugin {name!r} ({ep.value})")
    return _LOADED[name]


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__


def _missing_hint(exc: BaseException) -> str:
    if isinstance(exc, ModuleNotFoundError) and exc.name:
        return (
            f"; install the package that provides {exc.name!r}, or add the folder that "
            "holds it to PYTHONPATH"
        )
    return ""


def is_file_target(name: str) -> bool:
    """Does a spec's first part name a Python file (`path/to/file.py`, `./x`)?"""
    return name.endswith(".py") or "/" in name or os.sep in name


def _load_file(path: str) -> ModuleType:
    """Import the file at `path` (absolute) once per process, under a name of its own; its
    folder goes on the end of sys.path, so that it can import the files beside it."""
    modname = "spades_agent_file_" + hashlib.sha1(path.encode()).hexdigest()[:12]
    if modname in sys.modules:
        return sys.modules[modname]
    if not Path(path).is_file():
        raise AgentImportError(
            f"agent file {path!r} does not exist (moved, renamed or deleted?); put it back, "
            "or give the path of the .py file that defines the agent: path/to/file.py:Class"
        )
    folder = str(Path(path).parent)
    if folder not in sys.path:
        sys.path.append(folder)
    spec = importlib.util.spec_from_file_location(modname, path)
    if spec is None or spec.loader is None:
        raise AgentImportError(f"agent file {path!r} is not a Python file Python can import")
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module  # dataclasses and pickle look the module up while it runs
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[modname]
        raise AgentImportError(
            f"agent file {path!r} failed to import ({_reason(exc)}){_missing_hint(exc)}"
        ) from None
    return module


def _load_module(name: str, known_names: Callable[[], list[str]]) -> ModuleType:
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name and (name == exc.name or name.startswith(exc.name + ".")):
            lead = (
                f"agent module {name!r} cannot be imported (no module named {exc.name!r})"
                if "." in name
                else f"unknown agent {name!r}: no registered agent or plugin of that name, "
                "and no importable module"
            )
            raise AgentImportError(
                f"{lead}; install the package that provides it or add the folder that holds "
                "it to PYTHONPATH, or name the file: path/to/file.py:Class (known agents: "
                f"{', '.join(known_names())})"
            ) from None
        raise AgentImportError(
            f"agent module {name!r} failed to import ({_reason(exc)}){_missing_hint(exc)}"
        ) from None
    except Exception as exc:
        raise AgentImportError(f"agent module {name!r} failed to import ({_reason(exc)})") from None


def _is_agent_object(obj: Any) -> bool:
    return not isinstance(obj, type) and callable(getattr(obj, "act", None))


def _attribute(module: ModuleType, attr: str, where: str) -> Any:
    obj: Any = module
    for part in attr.split("."):
        if not hasattr(obj, part):
            found = sorted(
                n
                for n, v in vars(module).items()
                if not n.startswith("_")
                and (_is_agent_object(v) or (isinstance(v, type) and hasattr(v, "act")))
                and getattr(v, "__module__", module.__name__) == module.__name__
            )
            raise AgentImportError(
                f"{where} defines no {attr!r} (renamed?); the agents it defines: "
                f"{', '.join(found) or 'none'}"
            )
        obj = getattr(obj, part)
    return obj


_SIMPLE = {"int": int, "float": float, "bool": bool, "str": str}


def literal(raw: str) -> Any:
    """An option of an undeclared type: a yes/no word, a whole number, a number, or text
    (`spades_env.rules.parse_value`, the grammar of every option)."""
    return parse_value(raw, None)


def _signature(obj: Any) -> tuple[dict[str, Any], bool, bool, str | None]:
    """A factory's options from its signature: {name: type}, whether it takes any keyword
    (**kwargs), whether it takes `seed`, and its one required option (positional)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError):
        return {}, True, True, None
    try:
        hints = typing.get_type_hints(obj.__init__ if isinstance(obj, type) else obj)
    except Exception:  # an annotation that does not evaluate: fall back on the defaults
        hints = {}
    params: dict[str, Any] = {}
    any_kw = takes_seed = False
    required: list[str] = []
    for p in sig.parameters.values():
        if p.kind is p.VAR_KEYWORD:
            any_kw = True
        elif p.kind is p.VAR_POSITIONAL or p.name == "self":
            continue
        elif p.name == "seed":
            takes_seed = True
        else:
            kind = hints.get(p.name, p.annotation)
            if isinstance(kind, str):
                kind = _SIMPLE.get(kind.split("|")[0].strip())
            if kind not in (int, float, bool, str):
                default = type(p.default)
                kind = default if default in (int, float, bool, str) else literal
            params[p.name] = kind
            if p.default is p.empty:
                required.append(p.name)
    return params, any_kw, takes_seed or any_kw, required[0] if len(required) == 1 else None


def entry_for(obj: Any, where: str) -> AgentEntry:
    """An imported object as a registry entry: an `AgentEntry`, an agent class or factory
    (called with the seed and the spec's options), or an agent object (copied and
    reseeded for each use; it takes no options)."""
    if isinstance(obj, AgentEntry):
        return obj
    if _is_agent_object(obj):

        def copy_of(seed: int | None = None) -> Any:
            agent = copy.copy(obj)
            if isinstance(agent, BaseAgent):
                agent.seed, agent.rng = seed, np.random.default_rng(seed)
            return agent

        return AgentEntry(copy_of, {}, _doc(obj), agent_class=type(obj))
    if isinstance(obj, type) and not callable(getattr(obj, "act", None)):
        raise AgentSpecError(f"{where} is a class without act(view, obs, mask): not an agent")
    if not callable(obj):
        raise AgentSpecError(
            f"{where} is a {type(obj).__name__}, not an agent class, factory or agent object"
        )
    params, any_kw, takes_seed, positional = _signature(obj)

    def build(seed: int | None = None, **kw: Any) -> Any:
        return obj(seed=seed, **kw) if takes_seed else obj(**kw)

    kind = obj if isinstance(obj, type) else None
    return AgentEntry(build, params, _doc(obj), positional, any_params=any_kw, agent_class=kind)


def _doc(obj: Any) -> str:
    return (inspect.getdoc(obj) or "").split("\n\n")[0].replace("\n", " ")


def load_entry(kind: str, target: str, known_names: Callable[[], list[str]]) -> AgentEntry:
    """The entry of a plugin's name, or of `path/file.py:attr` / `package.module:attr`
    (kind "plugin", "file" or "module"), imported once per process. `known_names` lists
    the agent names for the message of a name that is neither (`AgentImportError`)."""
    if kind == "plugin":
        return _plugin_entry(target)
    key = kind + ":" + target
    if key not in _LOADED:
        where, _, attr = target.rpartition(":")
        if kind == "file":
            path = os.path.abspath(os.path.expanduser(where))
            module, where = _load_file(path), f"agent file {path!r}"
        else:
            module, where = _load_module(where, known_names), f"agent module {where!r}"
        _LOADED[key] = entry_for(_attribute(module, attr, where), f"{where}: {attr!r}")
    return _LOADED[key]
