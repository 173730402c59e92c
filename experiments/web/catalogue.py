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

import contextlib
import dataclasses
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agents.registry import REGISTRY, AgentSpecError, check_agent_rules, parse_agent, split_specs
from agents.spec import AgentSpec
from experiments.web.game import TableError
from spades_env.rules import OPTION_BOUNDS as _BOUNDS
from spades_env.rules import OPTION_CHOICES as _CHOICES
from spades_env.rules import OPTIONAL_INT_OPTIONS as _OPTIONAL_INT
from spades_env.rules import PRESETS, Rules

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
#: the project's leaderboard (`spades leaderboard`), read once when a server starts: the
#: lobby shows each agent's row, where it has one
LEADERBOARD = Path(__file__).resolve().parents[2] / "docs" / "results" / "leaderboard.md"

#: the lobby's line on each preset of RULES.md §6
PRESET_LINES: dict[str, str] = {
    "standard": "4 players, partners sit opposite; bids, nil and blind nil, bags; to 500",
    "family": "4 players, each alone; 1 point a trick and 5 more for the exact bid; no nil; to 25",
    "jokers": "standard with the two jokers in (above the ace of spades), the 2♥ and 2♦ out",
    "suicide": "standard, but in every partnership exactly one partner bids nil",
    "mirror": "standard, but every bid is the number of spades you hold",
    "whiz": "standard, but every bid is nil or the number of spades you hold",
    "three_player": "3 players, each alone, 17 cards each (the 2♣ out); to 300",
    "cutthroat": "4 players, each alone; otherwise standard",
    "cutthroat_3": "3 players, each alone, 17 cards each (the 2♣ out); to 300",
    "cutthroat_5": "5 players, each alone, 10 cards each (the 2♣ and 2♦ out)",
    "two_player": "2 players; no deal: each builds a hand by keeping or discarding from the stock",
    "auction": "standard, but the highest bidder names the trump suit for the hand",
}
#: the options a person changes in the lobby, with what each means and, for a choice,
#: what each value means (RULES.md §2 to §6). The other options (the table's shape:
#: players, cards, deck, partnerships, scoring, bid rule, trump) are the preset's.
OPTION_LINES: dict[str, tuple[str, dict[str, str]]] = {
    "target": ("the score that ends the game", {}),
    "blind_nil": (
        "when a player may bid nil before looking at the cards (worth double)",
        {
            "never": "never",
            "when_behind_100": "only when the team is 100 or more points behind",
            "always": "always",
        },
    ),
    "blind_nil_exchange": (
        "after a blind nil, the bidder and the partner swap two cards",
        {"false": "no", "true": "yes"},
    ),
    "nil_tricks": (
        "how a nil bidder's tricks count for the team",
        {
            "bags": "each is a bag (+1); the partner's tricks judge the contract",
            "count": "they count toward the team's contract",
        },
    ),
    "first_lead": (
        "who leads the first trick",
        {
            "left_of_dealer": "the player left of the dealer",
            "two_of_clubs": "the holder of the two of clubs, leading it",
        },
    ),
    "nil_value": ("points for a nil made (lost when it fails)", {}),
    "blind_nil_value": ("points for a blind nil made (lost when it fails)", {}),
    "bag_limit": ("bags (tricks over the contract) that cost the bag penalty", {}),
    "bag_penalty": ("points lost each time the bags reach the limit", {}),
    "thirteen_bid_doubles": (
        "a team that bids 13 and takes all 13 tricks scores its contract double",
        {"false": "no", "true": "yes"},
    ),
    "ten_for_two_hundred": (
        "a contract of 10 or more scores +200 made, -200 set (instead of 10 a trick)",
        {"false": "no", "true": "yes"},
    ),
    "max_total_bid": ("the most all bids together may add up to (empty: no cap)", {}),
    "max_hands": ("the game stops after this many hands (empty: no limit)", {}),
    "lose_at": ("a team at or below this score ends the game (empty: off)", {}),
    "open_hands": (
        "every player sees every hand (to learn; needs blind nil set to never)",
        {"false": "no", "true": "yes"},
    ),
}
#: the agents' lines in the lobby, in a person's words (the registry's help otherwise)
AGENT_LINES: dict[str, str] = {
    "random": "plays a random legal card or bid: a warm-up",
    "heuristic": "plays by rules of thumb (rule text 000's strategy); answers at once",
    "pimc": "searches many sampled deals of the unseen cards at each move (slower)",
    "ismcts": "a tree search over the unseen cards at each move (slower)",
    "search": "the learned network with search and an endgame solver; the strongest here",
    "learned": "a network trained by self-play, with an endgame solver",
    "learned2": "a newer network alone, without search; answers at once",
    "ppo": "a small network trained with PPO",
}


@dataclass(frozen=True)
class Offer:
    """One agent of the catalogue: its name, what it is, and the options a client may set
    (name -> type; none for an agent the server's owner listed)."""

    name: str
    help: str
    options: dict[str, type] = field(default_factory=dict)
    listed: AgentSpec | None = None  # an agent from --agents: built exactly as listed
    strength: str | None = None  # its leaderboard row, in words, where it has one

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "help": self.help,
            "options": {k: t.__name__ for k, t in self.options.items()},
            "listed": self.listed is not None,
            "strength": self.strength,
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
        line = AGENT_LINES.get(name) or entry.help.split(";")[0].split(":")[0].strip()
        offers[name] = Offer(name, line, options)
    return offers, parsed


def read_leaderboard(path: Path) -> dict[str, dict[str, float]]:
    """The leaderboard page's main table: agent spec -> {opponent: margin in points per
    deal}, in the page's order (best first); {} where the page is missing or unreadable
    (the lobby then shows no strengths)."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return {}
    rows: dict[str, dict[str, float]] = {}
    opponents: list[str] = []
    for line in lines:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| agent |") and any(c.startswith("vs ") for c in cells):
            opponents = [c.removeprefix("vs ").strip("`") for c in cells[1:]]
            continue
        if not opponents:
            continue
        if not line.startswith("|"):
            if rows:
                break  # the main table ended
            continue
        if set(cells[0]) <= set("-: "):
            continue
        margins = {}
        for opponent, cell in zip(opponents, cells[1:], strict=False):
            with contextlib.suppress(ValueError, IndexError):
                margins[opponent] = float(cell.split()[0])
        if margins:
            rows[cells[0].strip("`")] = margins
    return rows


def strength_line(name: str, rows: dict[str, dict[str, float]]) -> str | None:
    """An agent's leaderboard row in words: its rank, and its margin against the
    heuristic (against random for the heuristic itself); None without a row (a variant
    with options that has one is named instead)."""
    spec = name if name in rows else next((r for r in rows if r.startswith(name + ":")), None)
    if spec is None:
        return None
    margins = rows[spec]
    rank = list(rows).index(spec) + 1
    versus = "heuristic" if "heuristic" in margins and spec != "heuristic" else "random"
    shown = "" if spec == name else f" (as {spec})"
    margin = margins.get(versus)
    against = f"; {margin:+.1f} points a deal against {versus}" if margin is not None else ""
    return f"leaderboard: {rank} of {len(rows)}{shown}{against}"


def rules_catalogue() -> dict[str, Any]:
    """What the lobby offers of the rules: each preset with its line and options, and
    each option a person changes with its meaning, kind and values (RULES.md §6)."""
    options = {}
    for name, (meaning, values) in OPTION_LINES.items():
        if name in _CHOICES or values:
            kind = "choice"
        elif name in _OPTIONAL_INT:
            kind = "optional_int"
        else:
            kind = "int"
        low, high = _BOUNDS.get(name, (0, 10_000))
        options[name] = {
            "meaning": meaning,
            "kind": kind,
            "values": values,
            "min": low,
            "max": high,
        }
    presets = {
        name: {"line": PRESET_LINES.get(name, ""), "defaults": Rules.preset(name).to_dict()}
        for name in PRESETS
    }
    return {"presets": presets, "options": options}


class Catalogue:
    """The agents a server offers (see the module docstring)."""

    def __init__(
        self, listed: str | None = None, builtins: bool = True, leaderboard: Path = LEADERBOARD
    ) -> None:
        self.offers: dict[str, Offer] = {}
        self._parsed: dict[str, AgentSpec] = {}  # a client's text -> its spec, read once
        if builtins:
            self.offers, self._parsed = _builtin_offers()
            rows = read_leaderboard(leaderboard)
            for name, offer in self.offers.items():
                offer_strength = strength_line(name, rows)
                if offer_strength is not None:
                    self.offers[name] = dataclasses.replace(offer, strength=offer_strength)
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
