"""The grammar of an agent spec: its text -> an `AgentSpec`, read once (`parse_agent`).

A spec is `[NAME=]TARGET[:key=value,key=value]` (`agents.registry` says what TARGET may
be). `parse_agent` takes it apart, finds its agent (the table's entry, or a file, module
or plugin imported), converts each option to its declared type within its bounds, runs
the entry's check and makes every path absolute; `split_specs` cuts a list of specs
apart, `agent_from_json` reads one back from a run's config.json, and
`check_agent_rules` refuses rules a parsed spec's agent cannot play.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
import stat
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.adapters.sources import AgentEntry, is_file_target, literal, load_entry, plugin_points
from agents.registry.table import AGENT_NAME, REGISTRY, entry_of, known_names, lazy
from agents.spec import AgentImportError, AgentSpec, AgentSpecError, TeamSpec
from spades_env.rules import Rules, parse_value

#: Bounds of a declared numeric parameter no entry lists: an int32 (what the compiled
#: search kernels hold), a float of at most a million either way. NaN and infinities
#: never pass, nor does a NaN or infinite option of an undeclared type (`literal`).
_DEFAULT_BOUNDS: dict[type, tuple[float, float]] = {
    int: (-(2**31), 2**31 - 1),
    float: (-1e6, 1e6),
}

#: an option that would carry a secret in a spec (seen by process listings, logs, configs),
#: whatever it is called: a key-like option (``api_key=``, a mistyped ``apikey=``), a value
#: shaped like an API key (``sk-...``), or a URL with credentials (``http://user:pw@host``)
_SECRET_OPTION = re.compile(
    r"(?:^|[,:])\s*(?:api[_-]?key|key|token|access[_-]?token|secret|password|passwd)\s*="
    r"|\bsk-[A-Za-z0-9_\-]{6,}"
    r"|://[^/@,;\s]*@",
    re.I,
)


def one_line(exc: BaseException) -> str:
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


# ----------------------------------------------------------------------------- the parts
#: a spec taken apart, nothing imported: (label or None, kind, target, the options' text)
_Parts = tuple[str | None, str, str, str]


def _text(label: str | None, target: str, options: str) -> str:
    """The spec's text again, label included."""
    head = "" if label is None else f"{label}="
    return head + target + (f":{options}" if options else "")


def _shown(label: str | None, kind: str, target: str, options: str) -> str:
    """The agent's name in tables and logs: its label, else its spec, a file shown by its
    file name alone."""
    if label is not None:
        return label
    if kind == "file":
        path, _, attr = target.rpartition(":")
        shown = f"{Path(path).name}:{attr}"
        return shown + (f":{options}" if options else "")
    return target + (f":{options}" if options else "")


def _split(spec: str) -> _Parts:
    """Take a spec apart (nothing is imported): `bot=path/x.py:Cls:depth=2` ->
    label "bot", kind "file", target "path/x.py:Cls", options "depth=2"."""
    text = spec.strip()
    if _SECRET_OPTION.search(text):  # refused without echoing the spec
        raise AgentSpecError(
            "an agent spec never holds an API key or credentials (an option named like a "
            "key, a value shaped like one, a URL with user:password@: it would show in "
            "process listings, logs and the run's config); put the key in an environment "
            "variable and name the variable: api_key_env=VAR"
        )
    label: str | None = None
    head, eq, rest = text.partition("=")
    if eq and ":" not in head and not is_file_target(head):
        label, text = head.strip(), rest.strip()
        if not AGENT_NAME.fullmatch(label):
            raise AgentSpecError(f"agent name {label!r}: use letters, digits, _ . + -")
        if not text:
            raise AgentSpecError(f"agent name {label!r} names no agent: write {label}=SPEC")
    name, _, rest = text.partition(":")
    if name in REGISTRY:
        return label, "registry", name, rest
    _refuse_colon_path(text, name)
    if is_file_target(name):
        attr, _, options = rest.partition(":")
        if not attr.replace(".", "_").isidentifier():
            raise AgentSpecError(
                f"agent {text!r}: name the agent in the file: {name}:Class (or :factory)"
            )
        return label, "file", f"{name}:{attr}", options
    if name in plugin_points():
        return label, "plugin", name, rest
    attr, _, options = rest.partition(":")
    if attr and attr.replace(".", "_").isidentifier() and name.replace(".", "_").isidentifier():
        return label, "module", f"{name}:{attr}", options
    raise AgentImportError(  # an import error too: a plugin not installed here
        f"unknown agent {name!r}; known agents: {', '.join(known_names())}; an installed "
        "plugin's: install its package here; your own: path/to/file.py:Class, "
        "package.module:Class"
    )


#: a Python file's path inside a spec: up to the first `.py` followed by `:` or the end
_FILE_PATH = re.compile(r"^(?P<path>.*?\.py)(?::|$)")


def _refuse_colon_path(text: str, name: str) -> None:
    """A file spec whose path holds a `:` (`runs/a:b/bot.py:Bot`): the colon ends the
    path in a spec, so the path would be cut there; say so and how to give the file."""
    match = _FILE_PATH.match(text)
    if match is None or ":" not in match["path"]:
        return
    if name in plugin_points() or (not is_file_target(name) and not is_file_target(match["path"])):
        return
    raise AgentSpecError(
        f"agent {text!r}: the file's path {match['path']!r} holds a ':', which a spec reads "
        "as the end of the path; give the file by a path without one: rename the folder, or "
        "link it (ln -s 'FOLDER:WITH:COLON' plainname) and give plainname/FILE.py:Class"
    )


def _absolute_file(parts: _Parts) -> _Parts:
    """A file spec's parts with the file's path made absolute (others as they are)."""
    label, kind, target, options = parts
    if kind != "file":
        return parts
    path, _, attr = target.rpartition(":")
    return label, kind, f"{os.path.abspath(os.path.expanduser(path))}:{attr}", options


def _entry(kind: str, target: str) -> AgentEntry:
    if kind == "registry":
        return REGISTRY[target]
    return load_entry(kind, target, known_names)


# ----------------------------------------------------------------------------- specs
def split_specs(text: str) -> tuple[str, ...]:
    """A list of agent specs -> the specs: `"pimc:worlds=16,policy=greedy,heuristic"` ->
    `("pimc:worlds=16,policy=greedy", "heuristic")`.

    Specs are separated by `;` or by `,`. After a `,`, an item `key=value` (an `=` and no
    `:` before it) continues the previous spec's options when `key` is one of them;
    else it starts a named agent (`NAME=SPEC`) if its value holds a `:` or a path
    (`bot=path/x.py:Cls`) or is an agent's name (`h2=heuristic`), and continues the
    options otherwise (so that an unknown option is named as such). A team,
    `[NAME=]team(SPEC, SPEC)` (`parse_entry`), is one item, whatever its parentheses
    hold."""
    text, teams = _hide_teams(text)
    specs: list[str] = []
    for group in text.split(";"):
        current: list[str] = []
        for item in (p.strip() for p in group.split(",")):
            if not item:
                continue
            _refuse_cut_quote(item)
            key, eq, value = item.partition("=")
            if (
                current
                and eq
                and ":" not in key
                and not _HIDDEN.fullmatch(value.strip())
                and not _starts_agent(current[-1], key, value)
            ):
                current[-1] += "," + item
            else:
                current.append(item)
        specs += current
    return tuple(_HIDDEN.sub(lambda m: teams[int(m.group(1))], s) for s in specs)


# ----------------------------------------------------------------------------- teams
#: where a team starts in a list of specs: at an item's start, `[NAME=]team(`
_TEAM_START = re.compile(r"(?:^|(?<=[,;]))\s*(?:[A-Za-z0-9_][A-Za-z0-9_.+-]*\s*=\s*)?team\s*\(")
#: a team spec: `[NAME=]team(MEMBERS)`
_TEAM = re.compile(r"\s*(?:([^=(]*?)\s*=\s*)?team\s*\((.*)\)\s*", re.S)
#: a team hidden while a list is split (`_hide_teams`)
_HIDDEN = re.compile("\x00([0-9]+)\x00")


def _hide_teams(text: str) -> tuple[str, list[str]]:
    """`text` with each `[NAME=]team(...)` replaced by a mark, and the teams' texts:
    the `,` and `;` between a team's parentheses do not split the list."""
    teams: list[str] = []
    out, pos = [], 0
    while (m := _TEAM_START.search(text, pos)) is not None:
        depth, k = 1, m.end()
        while k < len(text) and depth:
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        if depth:
            raise AgentSpecError(
                f"team {text[m.start() : m.start() + 60].strip()!r}: its ( has no ); write "
                "team(SPEC, SPEC)"
            )
        out.append(text[pos : m.start()] + f"\x00{len(teams)}\x00")
        teams.append(text[m.start() : k].strip())
        pos = k
    out.append(text[pos:])
    return "".join(out), teams


def is_team(text: str) -> bool:
    """Whether a spec's text is a team, `[NAME=]team(SPEC, SPEC)`."""
    return _TEAM.fullmatch(text) is not None


def parse_entry(spec: str | AgentSpec | TeamSpec) -> AgentSpec | TeamSpec:
    """One entry of a tournament's agents: an agent (`parse_agent`) or a team of two,
    `[NAME=]team(SPEC, SPEC)` -> a `TeamSpec`, each member parsed once. The members are
    written as a list of specs (`split_specs`: `,` or `;` between them): `team(llm:
    model=m,temperature=0.7, heuristic)`. A team is two agents, neither of them a team."""
    if isinstance(spec, AgentSpec | TeamSpec):
        return spec
    match = _TEAM.fullmatch(spec)
    if match is None:
        return _parse(spec)
    label, inner = match.group(1), match.group(2)
    if label is not None:
        label = label.strip()
        if not AGENT_NAME.fullmatch(label):
            raise AgentSpecError(f"team name {label!r}: use letters, digits, _ . + -")
    shown = spec.strip()
    if _TEAM_START.search(inner):
        raise AgentSpecError(f"team {shown!r}: a team's members are agents, not teams")
    parts = split_specs(inner)
    if len(parts) != 2:
        raise AgentSpecError(
            f"team {shown!r} has {len(parts)} member(s); a team is two partners: team(SPEC, SPEC)"
        )
    members = (_parse(parts[0]), _parse(parts[1]))
    head = "" if label is None else f"{label}="
    text = f"{head}team({members[0].text};{members[1].text})"
    display = label if label is not None else f"{members[0].display}+{members[1].display}"
    return TeamSpec(label, members, text, display)


def entry_from_json(data: Any) -> AgentSpec | TeamSpec:
    """A tournament's entry as a run's config.json stores it: an agent
    (`agent_from_json`) or a team (`TeamSpec.to_json`: `{"team": [a, b]}`, with `"name"`
    when it has one)."""
    if isinstance(data, dict) and "team" in data:
        members, name = data["team"], data.get("name")
        if (
            set(data) <= {"team", "name"}
            and isinstance(members, list)
            and len(members) == 2
            and (name is None or isinstance(name, str))
        ):
            if name is not None and not AGENT_NAME.fullmatch(name):
                raise AgentSpecError(f"team name {name!r}: use letters, digits, _ . + -")
            a, b = (agent_from_json(m) for m in members)
            head = "" if name is None else f"{name}="
            text = f"{head}team({a.text};{b.text})"
            return TeamSpec(name, (a, b), text, name or f"{a.display}+{b.display}")
        raise ValueError(f"a team must be {{team: [agent, agent], name}}, not {data!r:.80}")
    if isinstance(data, str) and is_team(data):
        return parse_entry(data)
    return agent_from_json(data)


def members_of(entries: Any) -> list[AgentSpec]:
    """The agents of a run's entries, a team's two members in its place, in order."""
    out: list[AgentSpec] = []
    for entry in entries:
        out += list(entry.members) if isinstance(entry, TeamSpec) else [entry]
    return out


def _refuse_cut_quote(item: str) -> None:
    """An item with an unmatched quote: a quoted text that held a `,` or `;` (`'a,b'=x`),
    which the list cut there (quotes do not group in a spec list): say so, rather than
    report an agent named by half of it."""
    for quote in "'\"":
        if item.count(quote) % 2:
            raise AgentSpecError(
                f"{item!r}: a quoted text was cut at a ',' or ';': quotes do not group in an "
                "agent list, every , and ; separates; a name takes letters, digits, _ . + - "
                "(no comma, no quotes)"
            )


def _starts_agent(previous: str, key: str, value: str) -> bool:
    """After `previous`, does the item `key=value` name a new agent (`NAME=SPEC`)? Not
    when `key` is an option of the previous agent (`model=agents/heuristic/data/x.json`)."""
    try:
        _, kind, target, _ = _split(previous)
        entry: AgentEntry | None = _entry(kind, target)
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
    if is_team(spec):
        raise AgentSpecError(
            f"{spec.strip()!r:.80} is a team of two agents: a team plays where a tournament "
            "seats teams (spades tournament --agents, spades evaluate), not as one agent"
        )
    label, kind, target, given = _absolute_file(_split(spec))
    entry = _entry(kind, target)
    name = _shown(label, kind, target, given)
    params: dict[str, Any] = {}
    items: list[str] = []  # the options' text, a path option made absolute
    for i, item in enumerate(filter(None, (p.strip() for p in given.split(",")))):
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
    _refuse_special_files(name, params)
    if entry.check is not None:
        try:
            lazy(entry.check)(params)  # the paths as written: its errors quote them so
        except (ValueError, OSError) as exc:  # OSError: a path too long, a folder, ...
            raise AgentSpecError(f"agent {_cut(spec.strip())!r}: {one_line(exc)}") from None
    options = given
    for k, (key, value) in enumerate(params.items()):
        if key in entry.paths and isinstance(value, str):
            absolute = os.path.abspath(os.path.expanduser(value))
            if absolute != value:
                params[key] = absolute
                items[k] = absolute if items[k] == value else f"{key}={absolute}"
                options = ",".join(items)
    written = kind == "file" or options != given  # else the text as given
    text = _text(label, target, options) if written else spec.strip()
    return AgentSpec(label, kind, target, tuple(params.items()), text, name)


def _cut(text: str, most: int = 200) -> str:
    """A spec as an error quotes it: at most `most` characters (a 10,000-character
    option stays one readable line)."""
    return text if len(text) <= most else text[: most - 3] + "..."


def _refuse_special_files(name: str, params: dict[str, Any]) -> None:
    """An option that names a named pipe, a device or a socket (`model=/dev/zero`): any
    agent that read it would block or never end, so it is refused here, for every agent
    and option alike, before any agent's own check opens it."""
    for key, value in params.items():
        if not isinstance(value, str) or not value:
            continue
        try:
            mode = os.stat(value).st_mode
        except (OSError, ValueError):  # missing, a name too long, a NUL: the agent's check
            continue
        if stat.S_ISFIFO(mode) or stat.S_ISCHR(mode) or stat.S_ISBLK(mode) or stat.S_ISSOCK(mode):
            raise AgentSpecError(
                f"agent {name!r}: parameter {key}={_cut(value, 60)!r} is a named pipe or a "
                "device, not a file; give a file"
            )


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


def check_agent_rules(spec: AgentSpec, rules: Rules) -> None:
    """Refuse rules the agent of `spec` cannot play (AgentSpecError, one line)."""
    if not isinstance(spec, AgentSpec):
        raise TypeError(
            "check_agent_rules takes an AgentSpec: parse the text once with "
            "agents.registry.parse_agent"
        )
    entry = entry_of(spec)
    if entry.rules_check is None:
        return
    try:
        lazy(entry.rules_check)(rules, spec.target)
    except (ValueError, NotImplementedError) as exc:  # e.g. RulesError
        raise AgentSpecError(f"agent {spec.text!r}: {one_line(exc)}") from None


# ----------------------------------------------------------------------------- deprecated
# The text helpers of the release before `AgentSpec`, kept for one release: each warns.
def _deprecated(old: str, new: str) -> None:
    warnings.warn(
        f"agents.registry.{old} is deprecated and will be removed in the next release; use {new}",
        DeprecationWarning,
        stacklevel=3,
    )


@dataclass(frozen=True)
class ParsedSpec:
    """Deprecated (`split_spec`'s result): use `parse_agent(...)`, an `AgentSpec`."""

    label: str | None
    target: str
    options: str
    kind: str  # "registry" | "plugin" | "file" | "module"

    @property
    def spec(self) -> str:
        """The spec text again, label included."""
        return _text(self.label, self.target, self.options)

    @property
    def display(self) -> str:
        """The agent's name in tables and logs (`AgentSpec.display`)."""
        return _shown(self.label, self.kind, self.target, self.options)


def split_spec(spec: str) -> ParsedSpec:
    """Deprecated: use `parse_agent(spec)` (an `AgentSpec`: label, kind, target, options)."""
    _deprecated("split_spec", "parse_agent(...), an AgentSpec")
    label, kind, target, options = _split(spec)
    return ParsedSpec(label, target, options, kind)


def canonical_spec(spec: str) -> str:
    """Deprecated: use `parse_agent(spec).text`."""
    _deprecated("canonical_spec", "parse_agent(...).text")
    parts = _split(spec)
    if parts[1] != "file":
        return spec.strip()
    label, _, target, options = _absolute_file(parts)
    return _text(label, target, options)


def display_name(spec: str) -> str:
    """Deprecated: use `parse_agent(spec).display`."""
    _deprecated("display_name", "parse_agent(...).display")
    return _shown(*_split(spec))


def parse_spec(spec: str | AgentSpec) -> tuple[str, dict[str, Any]]:
    """Deprecated: use `parse_agent(spec)`: its `target` and `params`."""
    _deprecated("parse_spec", "parse_agent(...).target and .params")
    value = parse_agent(spec)
    return value.target, value.params


def resolve(spec: str | AgentSpec) -> tuple[ParsedSpec, AgentEntry, dict[str, Any]]:
    """Deprecated: use `parse_agent(spec)` and `entry_of` of it."""
    _deprecated("resolve", "parse_agent(...) and entry_of(...)")
    value = parse_agent(spec)
    label, kind, target, options = _split(value.text)
    return ParsedSpec(label, target, options, kind), entry_of(value), value.params
