"""The agents a server offers: what a client may seat or ask for a hint, and nothing else.

A client never names code, a file, a URL or an environment variable. It names an agent of
the server's catalogue, fixed when the server starts:

- the registry's built-in agents that need no file of the user's (`random`, `heuristic`,
  the search agents, the shipped networks), with the options a person may set: numbers
  within bounds (`WEB_BOUNDS`: worlds, rollouts, iterations, depth, time), booleans, and
  words (`[a-z][a-z0-9_-]*`: no path, URL or spec fits one). Options that name a file, an
  endpoint, a variable or another agent (`DENIED`) are never a client's;
- the agents the person starting the server lists (`spades serve --agents
  mine=bots/x.py:Mine,gpt=llm:model=...`): any spec, parsed once at start, seated by their
  name alone, with no options from a client.

`Catalogue.spec(text)` turns a client's text into the `AgentSpec` to build, or refuses it
(`TableError`, one line) before anything is imported or built.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from agents.registry import REGISTRY, AgentSpecError, check_agent_rules, parse_agent, split_specs
from agents.spec import AgentSpec
from experiments.web.game import TableError
from spades_env.rules import Rules

#: options a client never sets: they name a file, an endpoint, a variable or another agent
DENIED = frozenset(
    {"path", "model", "device", "base_url", "api_key_env", "template", "store", "fallback"}
)
#: registry entries a client never seats by their own name: they need the user's files or
#: endpoints (the person starting the server lists such agents with --agents)
NOT_OFFERED = frozenset({"checkpoint", "sb3", "llm"})
#: bounds of a client's numeric options, tighter than the registry's: a web seat or hint
#: stays a few seconds of thinking (the decision time limit ends any longer one)
WEB_BOUNDS: dict[str, tuple[float, float]] = {
    "worlds": (1, 256),
    "rollouts": (1, 64),
    "iterations": (0, 20_000),
    "time_ms": (0.0, 5_000.0),
    "solve": (0, 13),
    "solve_worlds": (1, 256),
    "endgame": (0, 13),
    "nil": (0, 13),
    "setnil": (0, 13),
    "set_tricks": (0, 13),
    "blind_deficit": (0, 10_000),
}
_WORD = re.compile(r"[a-z][a-z0-9_-]{0,31}")
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]{0,39}")
#: the most characters a client's agent text may have
MAX_SPEC = 200


@dataclass(frozen=True)
class Offer:
    """One agent of the catalogue: its name, what it is, and the options a client may set
    (name -> type; none for an agent the server's owner listed)."""

    name: str
    help: str
    options: dict[str, type] = field(default_factory=dict)
    listed: AgentSpec | None = None  # an agent from --agents: built exactly as listed

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "help": self.help,
            "options": {k: t.__name__ for k, t in self.options.items()},
            "listed": self.listed is not None,
        }


def _builtin_offers() -> tuple[dict[str, Offer], dict[str, AgentSpec]]:
    """The registry's agents a client may seat, and each one's spec (parsed here, once)."""
    offers, parsed = {}, {}
    for name, entry in REGISTRY.items():
        if name in NOT_OFFERED or (entry.positional and entry.positional in entry.paths):
            continue
        try:  # an agent whose extra is missing here (torch) is not offered
            parsed[name] = parse_agent(name)
        except (AgentSpecError, ImportError):
            continue
        options = {
            k: t
            for k, t in entry.params.items()
            if k not in DENIED and k not in entry.paths and t in (int, float, bool, str)
        }
        offers[name] = Offer(name, entry.help.split(";")[0].split(":")[0].strip(), options)
    return offers, parsed


class Catalogue:
    """The agents a server offers (see the module docstring)."""

    def __init__(self, listed: str | None = None, builtins: bool = True) -> None:
        self.offers: dict[str, Offer] = {}
        self._parsed: dict[str, AgentSpec] = {}  # a client's text -> its spec, read once
        if builtins:
            self.offers, self._parsed = _builtin_offers()
        for text in split_specs(listed or ""):
            spec = parse_agent(text)  # AgentSpecError: the flag's error, at start
            if spec.label is None:
                raise AgentSpecError(
                    f"--agents {text!r}: give each listed agent a name a client uses: NAME={text}"
                )
            if spec.label in self.offers and self.offers[spec.label].listed is not None:
                raise AgentSpecError(f"--agents: {spec.label!r} is listed twice")
            self.offers[spec.label] = Offer(
                spec.label, f"listed by the server: {spec.display}", {}, spec
            )

    def names(self) -> list[str]:
        return list(self.offers)

    def to_json(self) -> list[dict[str, Any]]:
        return [o.to_json() for o in self.offers.values()]

    def spec(self, text: Any, rules: Rules, what: str = "agent") -> AgentSpec:
        """The agent a client's `text` names (`NAME` or `NAME:key=value,...`), checked
        against this catalogue and `rules`; TableError (one line) otherwise. Nothing is
        imported or built for a text the catalogue does not hold."""
        if not isinstance(text, str) or not text.strip() or len(text) > MAX_SPEC:
            raise TableError(f"{what}: an agent's name, at most {MAX_SPEC} characters")
        name, _, options = text.strip().partition(":")
        offer = self.offers.get(name.strip())
        if offer is None or not _NAME.fullmatch(name.strip()):
            raise TableError(
                f"{what}: {_shown(name)} is not an agent of this server; it offers "
                f"{', '.join(self.offers)}"
            )
        items = [i.strip() for i in options.split(",") if i.strip()]
        if offer.listed is not None:
            if items:
                raise TableError(f"{what}: {offer.name} is seated as the server lists it")
            spec = offer.listed
        else:
            seen: set[str] = set()
            for item in items:
                key, eq, raw = item.partition("=")
                key, raw = key.strip(), raw.strip()
                if not eq or key not in offer.options:
                    known = ", ".join(offer.options) or "none"
                    raise TableError(
                        f"{what}: {offer.name} takes no option {_shown(key)} here; its "
                        f"options: {known}"
                    )
                if key in seen:
                    raise TableError(f"{what}: {offer.name}: {key} is given twice")
                seen.add(key)
                _check_value(what, offer.name, key, raw, offer.options[key])
            text = offer.name + (":" + ",".join(items) if items else "")
            spec = self._parsed.get(text)
            if spec is None:  # each text read once per server
                try:
                    spec = self._parsed[text] = parse_agent(text)
                except AgentSpecError as exc:
                    raise TableError(f"{what}: {exc}") from None
        try:
            check_agent_rules(spec, rules)
        except AgentSpecError as exc:
            raise TableError(f"{what}: {exc}") from None
        return spec


def _shown(text: str) -> str:
    """A client's text, short and on one line, for an error message."""
    text = text.strip()
    return repr(text[:40] + ("..." if len(text) > 40 else ""))


def _check_value(what: str, agent: str, key: str, raw: str, kind: type) -> None:
    if kind is str:
        if not _WORD.fullmatch(raw):
            raise TableError(f"{what}: {agent}: {key} is a word of a-z, 0-9, _ and -")
        return
    if kind is bool:
        if raw.lower() not in ("true", "false", "1", "0", "yes", "no"):
            raise TableError(f"{what}: {agent}: {key} is true or false")
        return
    try:
        value = int(raw) if kind is int else float(raw)
    except ValueError:
        word = "a whole number" if kind is int else "a number"
        raise TableError(f"{what}: {agent}: {key} is {word}") from None
    lo, hi = WEB_BOUNDS.get(key, (-1000.0, 1000.0))
    if not lo <= value <= hi:  # False for NaN
        raise TableError(f"{what}: {agent}: {key} is {kind(lo)!r} to {kind(hi)!r} here")
