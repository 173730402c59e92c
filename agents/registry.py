"""Build agents from text: `random`, `heuristic:aggression=0.2`, `pimc:worlds=64`, ...

A spec is `[NAME=]TARGET[:key=value,key=value]`. TARGET is

- a registered name (`REGISTRY`, or `register`): `heuristic:aggression=0.2`;
- a plugin's name: an installed package that declares agents in the entry-point group
  `spades_env.agents` (`PLUGIN_GROUP`), e.g. in its pyproject.toml
  `[project.entry-points."spades_env.agents"] lowcard = "mybots.low:LowCard"`;
- `path/to/file.py:Class` or `package.module:Class`, options after a second colon
  (`bots/low.py:LowCard:depth=2`): a class, a factory `(seed=..., **options) -> agent`
  or an agent object; options are typed by the signature's annotations or defaults.

`NAME=` gives the agent its name in tables, logs and ratings (default: the spec; a file
by its file name). Each registered name maps to a factory `(seed, **params) -> Agent`
and the parameters it accepts with their types. An unknown name or parameter is an
`AgentSpecError` that lists the known ones; a file, module or plugin that cannot be
imported is an `AgentImportError` (one of them) that names it and says what to do.
`check_agent_rules` (and `make_agent(..., rules=...)`) refuses, before any game starts,
rules an agent cannot play (an entry's `rules_check`).

A spec's text is read once, where it enters the program, by `parse_agent`: into an
`AgentSpec` (`agents.spec`), a value with its kind, typed options and every path absolute
(a file's, a `checkpoint:`/`sb3:` path), which the rest of the program trusts. A run
stores its text (`AgentSpec.to_json`); a tournament's workers get the value itself, and
`--resume` parses the stored text, in a fresh process: a name that a script registers
(`register`) is not known there, a file, module or plugin spec is.
"""

from __future__ import annotations

import dataclasses
import importlib
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.adapters.sources import (
    PLUGIN_GROUP,
    AgentEntry,
    is_file_target,
    literal,
    load_entry,
    plugin_points,
)
from agents.base import BaseAgent
from agents.heuristic.agent import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.spec import AgentImportError, AgentSpec, AgentSpecError
from spades_env.agent_calls import AgentError, guarded
from spades_env.rules import Rules, parse_value

__all__ = [
    "PLUGIN_GROUP",
    "REGISTRY",
    "AgentEntry",
    "AgentImportError",
    "AgentSpec",
    "AgentSpecError",
    "ParsedSpec",
    "agent_from_json",
    "canonical_spec",
    "check_agent_rules",
    "display_name",
    "entry_of",
    "is_file_target",
    "known_names",
    "make_agent",
    "parse_agent",
    "parse_spec",
    "plugin_names",
    "register",
    "resolve",
    "split_spec",
    "split_specs",
]

#: an agent's name, registered or given as `NAME=` (no `,;:=#` and no spaces)
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


#: Bounds of a declared numeric parameter no entry lists: an int32 (what the compiled
#: search kernels hold), a float of at most a million either way. NaN and infinities
#: never pass, nor does a NaN or infinite option of an undeclared type (`literal`).
_DEFAULT_BOUNDS: dict[type, tuple[float, float]] = {
    int: (-(2**31), 2**31 - 1),
    float: (-1e6, 1e6),
}
_HOUR_MS = 3_600_000.0


def _lazy(target: str) -> Callable[..., Any]:
    """`"module:function"` -> the function, imported on first use (torch stays unloaded)."""
    module, _, name = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


#: the options of a network agent (`checkpoint:` and `learned`; agents.learned.agent)
_NETWORK_OPTIONS: dict[str, type] = {
    "sample": bool,
    "bid": str,
    "model": str,
    "endgame": int,
    "worlds": int,
    "nil": int,
    "nilplay": str,
    "setnil": int,
}


def _llm_agent(seed: int | None = None, fallback: str = "heuristic", **options: Any) -> Any:
    """`llm:`: the language-model agent (agents.llm.agent), its fallback built by name."""
    return _lazy("agents.llm.agent:LLMAgent")(
        seed, fallback=make_agent(fallback, seed=seed), **options
    )


REGISTRY: dict[str, AgentEntry] = {
    "random": AgentEntry(RandomAgent, {}, "uniformly random legal actions"),
    "heuristic": AgentEntry(
        HeuristicAgent,
        {
            "aggression": float,
            "nil_risk": float,
            "blind_deficit": int,
            "bid": str,
            "model": str,
            "bag_cost": float,
            "set_tricks": int,
        },
        "rule text 000's rule-based strategy; bids of highest expected score under the fitted "
        "trick model (bid=model, model=PATH a model file, bag_cost the cost of a bag) or by "
        "rule text 000's count (bid=rules; "
        "aggression shades those bids, nil_risk their nils); blind_deficit the deficit for "
        "blind nil; set_tricks: once the contract is made, take tricks while that many set "
        "the opponents (3; 2 the play before)",
        check="agents.heuristic.agent:check_params",
        bounds={
            "aggression": (-13.0, 13.0),  # tricks a bid is shaded by
            "nil_risk": (-13.0, 13.0),
            "bag_cost": (-1000.0, 1000.0),  # points; below 0: none
            "blind_deficit": (-(10**6), 10**6),  # points (scores stay within +-10**6)
        },
    ),
    "checkpoint": AgentEntry(
        _lazy("agents.learned.agent:checkpoint_agent"),
        {"path": str, "device": str, **_NETWORK_OPTIONS},
        "a trained network: checkpoint:PATH (greedy) or checkpoint:PATH,sample=true; "
        "endgame=K,worlds=W: an exact solve of the last K tricks (agents.learned.endgame), "
        "nil=N of the last N for a live nil of the team, nilplay=heuristic; "
        "bid=model|rules: the heuristic decides before card play (the fitted trick "
        "model | rule text 000's count), the network plays the cards",
        positional="path",
        check="agents.adapters.foreign_files:check_checkpoint",
        paths=("path",),
    ),
    "sb3": AgentEntry(
        _lazy("agents.adapters.sb3:SB3Agent"),
        {"path": str, "algo": str, "sample": bool, "device": str},
        "a Stable-Baselines3 / sb3-contrib model trained on the Gym env: sb3:PATH.zip "
        "(PPO, A2C, MaskablePPO, DQN; algo=NAME when the file does not say); it plays the "
        "legal action of highest probability (sample=true: drawn) or Q-value",
        positional="path",
        check="agents.adapters.sb3:check_params",
        paths=("path",),
    ),
    "pimc": AgentEntry(
        _lazy("agents.search.pimc:PIMCAgent"),
        {
            "worlds": int,
            "rollouts": int,
            "evaluator": str,
            "policy": str,
            "time_ms": float,
            "weight": str,
            "objective": str,
            "bid": str,
        },
        "PIMC search: sampled worlds x legal actions, rollouts (policy heuristic|greedy|"
        "random) or evaluator=dd; best mean team hand-score margin; bid=heuristic|model: "
        "the heuristic bids (rule text 000's count | the fitted trick model), search plays",
        check="agents.search.pimc:check_params",
        bounds={"worlds": (1, 100_000), "rollouts": (1, 10_000), "time_ms": (0.0, _HOUR_MS)},
    ),
    "search": AgentEntry(
        _lazy("agents.netsearch.agent:SearchAgent"),
        {
            "worlds": int,
            "bid": str,
            "weight": str,
            "solve": int,
            "solve_worlds": int,
            "nil": int,
            "setnil": int,
        },
        "search with the learned network: the network's bids (bid=net; search|heuristic), "
        "PIMC card play over worlds=K sampled worlds (weight=bids|none), and an exact solve "
        "of the last solve=K tricks over solve_worlds=W worlds, of the last nil=N while a nil "
        "of its team is alive, of the last setnil=N to set the opponents' live nil "
        "(agents.netsearch.agent)",
        check="agents.netsearch.agent:check_params",
        bounds={"worlds": (1, 100_000)},
    ),
    "ismcts": AgentEntry(
        _lazy("agents.search.ismcts:ISMCTSAgent"),
        {"iterations": int, "time_ms": float, "c": float, "policy": str, "bid": str},
        "Information Set MCTS (one determinization per iteration, availability UCB); "
        "policy random|greedy; bid=heuristic|model: the heuristic bids (rule text 000's count | "
        "the fitted trick model), search plays",
        check="agents.search.ismcts:check_params",
        bounds={"iterations": (0, 10**7), "time_ms": (0.0, _HOUR_MS), "c": (0.0, 100.0)},
    ),
    "learned": AgentEntry(
        _lazy("agents.learned.agent:learned_agent"),
        dict(_NETWORK_OPTIONS),
        "the strongest learned agent: agents/learned/checkpoints/learned.pt (distilled from the "
        "heuristic, then fine-tuned; recipe in learned.json) for the bids and the first "
        "tricks, and an exact solve of the last endgame=K tricks over worlds=W sampled "
        "worlds (agents.learned.endgame; endgame=0: the network alone), and of the last nil=N "
        "tricks for a live nil of its team (nilplay=heuristic: the heuristic plays the "
        "team's cards while its nil is alive); bid=model|rules: the "
        "heuristic bids (trick model, model=PATH another model file | rule text 000's count), "
        "the network plays the cards",
        check="agents.learned.agent:check_learned",
    ),
    "learned2": AgentEntry(
        _lazy("agents.learned.agent:learned2_agent"),
        dict(_NETWORK_OPTIONS),
        "the strongest network alone (no search by default): agents/learned/checkpoints/"
        "learned2.pt, learned's network fine-tuned by PPO against learned (its endgame "
        "solver included; recipe in learned2.json); endgame=K, nil=N, setnil=N add the "
        "solver as for learned",
        check="agents.learned.agent:check_learned2",
    ),
    "ppo": AgentEntry(
        _lazy("agents.learned.agent:shipped_agent"),
        {"sample": bool, "bid": str, "model": str},
        "the PPO checkpoint shipped in agents/learned/checkpoints/ppo_small.pt (bid as learned)",
        check="agents.learned.agent:check_shipped",
    ),
    "llm": AgentEntry(
        _llm_agent,
        {
            "model": str,
            "base_url": str,
            "api_key_env": str,
            "temperature": float,
            "max_tokens": int,
            "timeout": float,
            "retries": int,
            "reasks": int,
            "backoff": float,
            "concurrency": int,
            "list_legal": bool,
            "template": str,
            "fallback": str,
            "store": str,
        },
        "a language model through an OpenAI-compatible chat endpoint (the llm extra): "
        "llm:model=NAME,base_url=URL; the key from the variable api_key_env names "
        "(OPENAI_API_KEY), temperature, max_tokens, timeout, retries (transport), reasks "
        "(refused answers), backoff, concurrency (requests in flight), list_legal, "
        "template=FILE, fallback=NAME (plays refused decisions; heuristic), store=DIR "
        "(agents.llm.agent)",
        check="agents.llm.agent:check_params",
        paths=("template", "store"),
        bounds={
            "temperature": (0.0, 2.0),
            "max_tokens": (1, 1_000_000),
            "timeout": (0.001, 3600.0),
            "retries": (0, 100),
            "reasks": (0, 20),
            "backoff": (0.0, 600.0),
            "concurrency": (1, 1024),
        },
    ),
}

#: an option that would carry a secret in a spec (seen by process listings, logs, configs)
_SECRET_OPTION = re.compile(r"(?:^|[,:])\s*(?:api_key|key|token|secret|password)\s*=", re.I)


def register(
    name: str,
    factory: Callable[..., Any],
    params: dict[str, type] | None = None,
    help: str = "",
    *,
    positional: str | None = None,
) -> None:
    """Give an agent a registry name, so that `name` and `name:key=value,...` build it.

    `factory(seed=seed, **params)` returns the agent: usually the agent class itself.
    `params` maps each option the spec may set to its type (int, float, bool, str), and
    `positional` names the option a bare first item sets (`name:VALUE`). `help` is the
    line `spades` shows for it.

    **The agent contract** (see `agents.base.BaseAgent`, the class to subclass): an agent
    has a `name` and `act(view, obs, mask) -> actions`, called on a batch of B games at
    once (bids and card plays may be mixed); it returns (B,) int64, one legal action per
    game (`mask[b, action]` is True). `obs` is the RL encoding, (B, obs_size) int16,
    passed only when the class sets `needs_obs = True` (else None: building it costs
    time). `view` is the `spades_env.observation.SeatView` of the acting seats. The seed
    passed to the factory decides all of the agent's randomness (a tournament seeds each
    unit's agents from the unit alone, so rows do not depend on the process that plays
    them).

    **Registration lives in the process that calls it.** A tournament's workers are new
    processes (`spawn`, and Ray's), so a name registered by a user's script is unknown
    there, and to `--resume`. For an agent of your own use a spec the workers rebuild by
    themselves: `path/to/file.py:Class` or `package.module:Class` (each with
    `:key=value` options), or ship it as a plugin: an installed package that declares
    `name = "module:Class"` in the entry-point group `spades_env.agents`
    (`PLUGIN_GROUP`), found by name in every process with no import in your script.
    """
    if not _NAME.fullmatch(name):
        raise AgentSpecError(f"agent name {name!r}: use letters, digits, _ . + -")
    REGISTRY[name] = AgentEntry(factory, dict(params or {}), help, positional)


def _one_line(exc: BaseException) -> str:
    """An error's text on one line: a path or a value it quotes may hold a line break."""
    return str(exc).replace("\r", "\\r").replace("\n", "\\n")


def _convert(name: str, key: str, raw: str, kind: Any, entry: AgentEntry | None = None) -> Any:
    """The value of parameter `key` from its text: a bool, an int or a finite float within
    the entry's `bounds` (NaN, infinities and numbers beyond the bounds are refused, so
    that no agent is built with a value it would overflow or loop on), else the text."""
    if kind is literal:
        value = literal(raw)
        if isinstance(value, float) and not math.isfinite(value):
            raise AgentSpecError(f"agent {name!r}: parameter {key}={raw!r} is not finite")
        return value
    try:
        value = parse_value(raw, kind)
    except ValueError:
        raise AgentSpecError(
            f"agent {name!r}: parameter {key}={raw!r} is not a valid {kind.__name__}"
        ) from None
    if kind in _DEFAULT_BOUNDS:
        bounds = entry.bounds if entry is not None else {}
        lo, hi = bounds.get(key, _DEFAULT_BOUNDS[kind])
        if not lo <= value <= hi:  # False for NaN too
            raise AgentSpecError(
                f"agent {name!r}: parameter {key}={raw!r} is out of range: "
                f"{kind(lo)!r}..{kind(hi)!r}"
            )
    return value


def plugin_names() -> list[str]:
    """The names installed packages declare in `PLUGIN_GROUP` (nothing is imported)."""
    return sorted(set(plugin_points()) - set(REGISTRY))


def known_names() -> list[str]:
    """Every agent name a spec may start with: the registry's and the plugins'."""
    return sorted({*REGISTRY, *plugin_points()})


# ----------------------------------------------------------------------------- specs
@dataclass(frozen=True)
class ParsedSpec:
    """An agent spec taken apart: `label=` (None: none given), the target (a registered
    name, `path/file.py:Class` or `package.module:Class`), the options' text and kind."""

    label: str | None
    target: str
    options: str
    kind: str  # "registry" | "plugin" | "file" | "module"

    @property
    def spec(self) -> str:
        """The spec text again, label included."""
        head = "" if self.label is None else f"{self.label}="
        return head + self.target + (f":{self.options}" if self.options else "")

    @property
    def display(self) -> str:
        """The agent's name in tables and logs: its label, else its spec, a file shown by
        its file name alone."""
        if self.label is not None:
            return self.label
        if self.kind == "file":
            path, _, attr = self.target.rpartition(":")
            shown = f"{Path(path).name}:{attr}"
            return shown + (f":{self.options}" if self.options else "")
        return self.target + (f":{self.options}" if self.options else "")


def split_spec(spec: str) -> ParsedSpec:
    """Take a spec apart (nothing is imported): `bot=path/x.py:Cls:depth=2` ->
    label "bot", target "path/x.py:Cls", options "depth=2", kind "file"."""
    text = spec.strip()
    if _SECRET_OPTION.search(text):  # refused without echoing the spec
        raise AgentSpecError(
            "an agent spec never holds an API key (it would show in process listings, logs "
            "and the run's config); put the key in an environment variable and name the "
            "variable: api_key_env=VAR"
        )
    label: str | None = None
    head, eq, rest = text.partition("=")
    if eq and ":" not in head and not is_file_target(head):
        label, text = head.strip(), rest.strip()
        if not _NAME.fullmatch(label):
            raise AgentSpecError(f"agent name {label!r}: use letters, digits, _ . + -")
        if not text:
            raise AgentSpecError(f"agent name {label!r} names no agent: write {label}=SPEC")
    name, _, rest = text.partition(":")
    if name in REGISTRY:
        return ParsedSpec(label, name, rest, "registry")
    if is_file_target(name):
        attr, _, options = rest.partition(":")
        if not attr.replace(".", "_").isidentifier():
            raise AgentSpecError(
                f"agent {text!r}: name the agent in the file: {name}:Class (or :factory)"
            )
        return ParsedSpec(label, f"{name}:{attr}", options, "file")
    if name in plugin_points():
        return ParsedSpec(label, name, rest, "plugin")
    attr, _, options = rest.partition(":")
    if attr and attr.replace(".", "_").isidentifier() and name.replace(".", "_").isidentifier():
        return ParsedSpec(label, f"{name}:{attr}", options, "module")
    raise AgentImportError(  # an import error too: a plugin not installed here
        f"unknown agent {name!r}; known agents: {', '.join(known_names())}; an installed "
        "plugin's: install its package here; your own: path/to/file.py:Class, "
        "package.module:Class"
    )


def canonical_spec(spec: str) -> str:
    """The spec with a file's path made absolute (so that another process finds it); any
    other spec stripped, as given; nothing is imported. (`parse_agent(spec).text` also
    makes a `checkpoint:`/`sb3:` path absolute.)"""
    parsed = split_spec(spec)
    if parsed.kind != "file":
        return spec.strip()
    path, _, attr = parsed.target.rpartition(":")
    absolute = os.path.abspath(os.path.expanduser(path))
    return dataclasses.replace(parsed, target=f"{absolute}:{attr}").spec


def display_name(spec: str) -> str:
    """The name an agent of `spec` shows in tables, logs and ratings (`ParsedSpec.display`)."""
    return split_spec(spec).display


def _entry(parsed: ParsedSpec) -> AgentEntry:
    if parsed.kind == "registry":
        return REGISTRY[parsed.target]
    return load_entry(parsed.kind, parsed.target, known_names)


def split_specs(text: str) -> tuple[str, ...]:
    """A list of agent specs -> the specs: `"pimc:worlds=16,policy=greedy,heuristic"` ->
    `("pimc:worlds=16,policy=greedy", "heuristic")`.

    Specs are separated by `;` or by `,`. After a `,`, an item `key=value` (an `=` and no
    `:` before it) continues the previous spec's options when `key` is one of them;
    else it starts a named agent (`NAME=SPEC`) if its value holds a `:` or a path
    (`bot=path/x.py:Cls`) or is an agent's name (`h2=heuristic`), and continues the
    options otherwise (so that an unknown option is named as such)."""
    specs: list[str] = []
    for group in text.split(";"):
        current: list[str] = []
        for item in (p.strip() for p in group.split(",")):
            if not item:
                continue
            key, eq, value = item.partition("=")
            if current and eq and ":" not in key and not _starts_agent(current[-1], key, value):
                current[-1] += "," + item
            else:
                current.append(item)
        specs += current
    return tuple(specs)


def _starts_agent(previous: str, key: str, value: str) -> bool:
    """After `previous`, does the item `key=value` name a new agent (`NAME=SPEC`)? Not
    when `key` is an option of the previous agent (`model=agents/heuristic/data/x.json`)."""
    try:
        entry: AgentEntry | None = _entry(split_spec(previous))
    except AgentSpecError:
        entry = None
    if entry is not None and key.strip() in entry.params:
        return False
    value = value.strip()
    if ":" in value or is_file_target(value):
        return True
    return value in REGISTRY or value in plugin_points()


def parse_agent(spec: str | AgentSpec, rules: Rules | None = None) -> AgentSpec:
    """A spec's text -> its `AgentSpec`, parsed and checked once: the agent is found
    (a file, module or plugin imported), its options converted to their types and checked
    (`AgentSpecError`, `AgentImportError`: one line), every path made absolute. An
    `AgentSpec` is returned as it is: a value is trusted, never read again. With `rules`,
    rules the agent cannot play are refused too (`check_agent_rules`)."""
    value = spec if isinstance(spec, AgentSpec) else _parse(spec)
    if rules is not None:
        check_agent_rules(value, rules)
    return value


def _parse(spec: str) -> AgentSpec:
    """The one place a spec's text is read (see `parse_agent`)."""
    parsed = split_spec(spec)
    if parsed.kind == "file":
        path, _, attr = parsed.target.rpartition(":")
        absolute = os.path.abspath(os.path.expanduser(path))
        parsed = dataclasses.replace(parsed, target=f"{absolute}:{attr}")
    entry = _entry(parsed)
    name = parsed.display
    params: dict[str, Any] = {}
    items: list[str] = []  # the options' text, a path option made absolute
    for i, item in enumerate(filter(None, (p.strip() for p in parsed.options.split(",")))):
        key, eq, raw = item.partition("=")
        positional = i == 0 and not eq and entry.positional is not None
        if positional:
            key, eq, raw = entry.positional, "=", item
        if key not in entry.params and not entry.any_params:
            known = ", ".join(sorted(entry.params)) or "none"
            raise AgentSpecError(f"agent {name!r} has no parameter {key!r}; known: {known}")
        if not eq:
            raise AgentSpecError(f"agent {name!r}: write parameters as {key}=VALUE")
        if key in params:
            raise AgentSpecError(f"agent {name!r}: parameter {key} is given twice; give it once")
        params[key] = _convert(name, key, raw, entry.params.get(key, literal), entry)
        items.append(item)
    if entry.check is not None:
        try:
            _lazy(entry.check)(params)  # the paths as written: its errors quote them so
        except ValueError as exc:
            raise AgentSpecError(f"agent {spec.strip()!r}: {_one_line(exc)}") from None
    options = parsed.options
    for k, (key, value) in enumerate(params.items()):
        if key in entry.paths and isinstance(value, str):
            absolute = os.path.abspath(os.path.expanduser(value))
            if absolute != value:
                params[key] = absolute
                items[k] = absolute if items[k] == value else f"{key}={absolute}"
                options = ",".join(items)
    if parsed.kind == "file" or options != parsed.options:
        text = dataclasses.replace(parsed, options=options).spec
    else:
        text = spec.strip()
    return AgentSpec(parsed.label, parsed.kind, parsed.target, tuple(params.items()), text, name)


def agent_from_json(data: Any) -> AgentSpec:
    """A spec as a run's config.json stores it (`AgentSpec.to_json`: its text, or
    `{"spec": text, "name": shown}`) -> the `AgentSpec`, parsed and checked once."""
    if isinstance(data, str):
        return _parse(data)
    if isinstance(data, dict) and set(data) == {"spec", "name"}:
        spec, shown = data["spec"], data["name"]
        if isinstance(spec, str) and isinstance(shown, str) and shown:
            return dataclasses.replace(_parse(spec), display=shown)
    raise ValueError(f"an agent must be a spec's text or {{spec, name}}, not {data!r}")


def entry_of(spec: AgentSpec) -> AgentEntry:
    """The registry entry of a parsed spec (a file, module or plugin imported once per
    process); nothing is parsed or checked again."""
    if spec.kind == "registry":
        try:
            return REGISTRY[spec.target]
        except KeyError:  # registered by a script of another process (see `register`)
            raise AgentImportError(
                f"unknown agent {spec.target!r} (registered in another process?); known "
                f"agents: {', '.join(known_names())}"
            ) from None
    return load_entry(spec.kind, spec.target, known_names)


def resolve(spec: str | AgentSpec) -> tuple[ParsedSpec, AgentEntry, dict[str, Any]]:
    """A spec -> its parts, its registry entry (importing a file, module or plugin) and
    its options, converted and checked (`AgentSpecError`, `AgentImportError`)."""
    value = parse_agent(spec)
    return split_spec(value.text), entry_of(value), value.params


def parse_spec(spec: str | AgentSpec) -> tuple[str, dict[str, Any]]:
    """`"heuristic:aggression=0.2"` -> ("heuristic", {"aggression": 0.2}); the target of
    a file or module spec is `path/x.py:Class` or `package.module:Class`."""
    value = parse_agent(spec)
    return value.target, value.params


def check_agent_rules(spec: str | AgentSpec, rules: Rules) -> None:
    """Refuse rules the agent of `spec` cannot play (AgentSpecError, one line)."""
    value = parse_agent(spec)
    entry = entry_of(value)
    if entry.rules_check is None:
        return
    try:
        _lazy(entry.rules_check)(rules, value.target)
    except (ValueError, NotImplementedError) as exc:  # e.g. RulesError
        raise AgentSpecError(f"agent {value.text!r}: {_one_line(exc)}") from None


def make_agent(
    spec: str | AgentSpec, seed: int | None = None, rules: Rules | None = None
) -> BaseAgent:
    """Build the agent a spec names, seeded; with `rules`, refuse rules it cannot play.

    `spec` is an `AgentSpec` (built as it says, nothing read again), or its text
    `[NAME=]TARGET[:key=value,...]` (parsed here, `parse_agent`): TARGET a registered
    name, a plugin's name, `path/to/file.py:Class` or `package.module:Class` (a class, a
    factory `(seed=..., **options) -> agent`, or an agent object). The agent's `name`
    is NAME, else the spec (`AgentSpec.display`). The agent's own code failing (its
    constructor raising, exiting, hanging) is one `AgentError` naming it."""
    value = parse_agent(spec, rules)
    entry = entry_of(value)
    try:  # the agent's own code: whatever it does wrong is one line naming it
        agent = guarded(
            lambda: entry.factory(seed=seed, **value.params),
            value.display,
            passthrough=(AgentSpecError,),
        )
    except AgentError as exc:
        raise AgentError(exc.agent, f"could not be built: {exc.what}") from None
    if not callable(getattr(agent, "act", None)):
        raise AgentSpecError(
            f"agent {value.display!r}: {value.target} built a {type(agent).__name__}, "
            "which has no act(view, obs, mask)"
        )
    if not hasattr(agent, "needs_obs"):
        agent.needs_obs = True  # an agent of unknown needs gets the encoding
    agent.name = value.display
    return agent
