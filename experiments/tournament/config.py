"""What a tournament is: its config, id and seeds (see `experiments.tournament.runner`).

`TournamentConfig` holds everything that decides a tournament's rows; `RunContext` is
what a process needs to play its units (`experiments.tournament.units`).
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np

from agents.registry import (
    AgentSpec,
    TeamSpec,
    check_agent_rules,
    entry_from_json,
    members_of,
    parse_entry,
)
from experiments.tournament import deals as deals_mod
from experiments.tournament.deals import DealSet
from spades_env.rules import MAX_HANDS, Rules

MODES = ("hand", "game")


class TournamentError(ValueError):
    """A tournament that cannot be set up or resumed; the message says how to fix it."""


#: Seeds are 64-bit: a game's deals are a function of its uint64 seed (RULES.md §1).
MAX_SEED = 2**64 - 1
#: The most deals one tournament plays (and `dd-table` solves): a duplicate set's seeds,
#: hands and deals.json cost about 150 bytes a deal, so a million is 150 MB; the largest
#: run the project documents plays 20,000.
MAX_DEALS = 1_000_000


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that decides a tournament's rows (and nothing that does not).

    `agents` are `AgentSpec` values, or `TeamSpec` values (a team of two agents as
    partners, `team(SPEC, SPEC)`), and `rules` a `Rules`: each given as text (a spec) or
    a dict (the rules) is parsed and checked here, once; a value is trusted as it is.
    The config becomes text only at the JSON edge (`to_dict`, read back by `from_dict`),
    so a worker that receives it, and a resume that reads it, check nothing twice."""

    agents: tuple[AgentSpec, ...] = ("random", "heuristic")  # type: ignore[assignment]
    mode: str = "hand"
    rules: Rules = field(default_factory=Rules)
    seed: int = 0
    deals: int = 300
    chunk: int = 50
    hand_cap: int = 100

    def __post_init__(self) -> None:
        self._check_types()
        if len(self.agents) < 2:
            raise TournamentError(f"--agents needs at least two agents, got {len(self.agents)}")
        # text parsed once into values (AgentSpecError names an unknown agent or
        # parameter); every path absolute: workers, and a resume from another folder,
        # find the same files
        object.__setattr__(self, "agents", tuple(parse_entry(s) for s in self.agents))
        if isinstance(self.rules, dict):  # the Python API may give the JSON form
            object.__setattr__(self, "rules", Rules.from_dict(self.rules))
        elif not isinstance(self.rules, Rules):
            raise TournamentError(f"rules must be a Rules, got {type(self.rules).__name__}")
        shown = [a.display for a in self.agents]
        named = {a.label for a in self.agents} - {None}
        for name in sorted(n for n in named if shown.count(n) > 1):
            raise TournamentError(
                f"--agents: the name {name!r} is given to more than one agent; give each its own"
            )
        self._check_names()
        if self.has_teams and not (self.rules.partnerships and self.rules.num_teams == 2):
            raise TournamentError(
                "--agents: a team of two agents (team(A, B)) needs partnerships of four "
                "players (RULES.md §1); these rules seat one player per team"
            )
        for spec in members_of(self.agents):
            check_agent_rules(spec, self.rules)  # e.g. pimc refuses RULES.md §6 auction
        if self.mode not in MODES:
            raise TournamentError(f"--mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if not 0 <= self.seed <= MAX_SEED:
            raise TournamentError(f"--seed must be 0..2**64-1 (a 64-bit seed), got {self.seed}")
        if not 1 <= self.deals <= MAX_DEALS:
            raise TournamentError(f"--deals must be 1..{MAX_DEALS:,}, got {self.deals}")
        if self.chunk < 1:
            raise TournamentError(f"--chunk must be at least 1, got {self.chunk}")
        if not 1 <= self.hand_cap <= MAX_HANDS:  # it becomes the rules' max_hands
            raise TournamentError(
                f"--hand-cap must be 1..{MAX_HANDS:,} (RULES.md §6, bounds of the numeric "
                f"options), got {self.hand_cap}"
            )

    def _check_types(self) -> None:
        """Values of the wrong type (from the Python API or a hand-edited config.json), in
        one line each, before they fail deep in numpy: `deals=2.5`, `agents="a,b"`."""
        if isinstance(self.agents, str) or not isinstance(self.agents, list | tuple):
            raise TournamentError(
                f"agents must be a list of agent specs, e.g. ['random', 'heuristic'], not "
                f"{type(self.agents).__name__} {self.agents!r:.60}"
            )
        for spec in self.agents:
            if not isinstance(spec, str | AgentSpec | TeamSpec):
                raise TournamentError(
                    f"agents: each agent is a spec string or an AgentSpec, not {spec!r:.60}"
                )
        for name in ("seed", "deals", "chunk", "hand_cap"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | np.integer):
                raise TournamentError(
                    f"{name} must be a whole number, got {type(value).__name__} {value!r:.60}"
                )
            object.__setattr__(self, name, int(value))
        if not isinstance(self.mode, str):
            raise TournamentError(f"mode must be one of {', '.join(MODES)}, got {self.mode!r:.60}")

    @property
    def labels(self) -> list[str]:
        """Agent names for the log, tables and ratings: each agent's `NAME=`, else its spec
        (a file by its file name), with repeats numbered (`random#2`)."""
        shown = [a.display for a in self.agents]
        out: list[str] = []
        for name in shown:
            k = shown[: len(out)].count(name)
            out.append(name if k == 0 else f"{name}#{k + 1}")
        return out

    def _check_names(self) -> None:
        """One name, one agent: a team's members are named in the per-agent tables by
        their own names, so a name may not stand for two different agents, nor for a team
        and an agent."""
        named: dict[str, str] = {}

        def claim(name: str, what: str) -> None:
            if named.setdefault(name, what) != what:
                raise TournamentError(
                    f"--agents: the name {name!r} stands for two different agents or teams "
                    f"({named[name]!r:.60} and {what!r:.60}); give each its own NAME="
                )

        for label, entry in zip(self.labels, self.agents, strict=True):
            claim(label, entry.text)
            if isinstance(entry, TeamSpec):
                for member in entry.members:
                    claim(member.display, member.text)

    @property
    def has_teams(self) -> bool:
        """Whether an entry is a team of two agents (`TeamSpec`)."""
        return any(isinstance(a, TeamSpec) for a in self.agents)

    def seat_names(self, k: int) -> tuple[str, str]:
        """The names of entry `k`'s two seats, its first member's and its partner's: a
        team's members by their own names, an agent's both seats by its label."""
        entry = self.agents[k]
        if isinstance(entry, TeamSpec):
            return entry.members[0].display, entry.members[1].display
        return self.labels[k], self.labels[k]

    @property
    def agent_names(self) -> list[str]:
        """Every name that holds a seat (`seat_names`), each once, in order: the agents of
        the per-agent tables. Without teams, `labels`."""
        return list(dict.fromkeys(n for k in range(len(self.agents)) for n in self.seat_names(k)))

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return list(combinations(range(len(self.agents)), 2))

    @property
    def num_chunks(self) -> int:
        return -(-self.deals // self.chunk)

    @property
    def num_units(self) -> int:
        return self.num_chunks * len(self.pairs)

    def play_rules(self) -> Rules:
        """The rules the engine plays (game mode may add the hand cap, see the module doc),
        built once per config."""
        return self._play_rules

    @functools.cached_property
    def _play_rules(self) -> Rules:
        rules = self.rules
        if self.mode == "game" and rules.max_hands is None and rules.lose_at is None:
            rules = rules.replace(max_hands=self.hand_cap)
        return rules

    def to_dict(self) -> dict[str, Any]:
        """The config as config.json and summary.json hold it (the JSON edge)."""
        return {
            "agents": [a.to_json() for a in self.agents],
            "mode": self.mode,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "deals": self.deals,
            "chunk": self.chunk,
            "hand_cap": self.hand_cap,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TournamentConfig:
        """A stored config (`to_dict`, or an older release's: agents as text) -> the
        config, each agent and the rules parsed and checked once."""
        d = dict(d)
        d["agents"] = tuple(entry_from_json(a) for a in d["agents"])
        d["rules"] = Rules.from_dict(d["rules"])
        return cls(**d)


def tournament_id(config: TournamentConfig | dict[str, Any], deal_set: DealSet) -> str:
    """A content hash: the same tournament (config and deals) always has the same id.
    `config` may be its stored dict (a resume checks the id against the file as written)."""
    data = config.to_dict() if isinstance(config, TournamentConfig) else config
    blob = json.dumps([data, deals_mod.to_dict(deal_set)], sort_keys=True)
    return "t-" + hashlib.sha1(blob.encode()).hexdigest()[:12]


def agent_seed(seed: int, agent: int, opponent: int, chunk: int, member: int = 0) -> int:
    """The seed of `agent` in its unit against `opponent`: fixed by the unit alone. A
    team's second member (`member=1`) has a seed of its own."""
    key = [seed, agent, opponent, chunk] + ([member] if member else [])
    return int(np.random.SeedSequence(key).generate_state(1)[0])


@dataclass(frozen=True)
class RunContext:
    """What a process needs to play units: the config, its id and the deal set."""

    config: TournamentConfig
    tournament: str
    deal_set: DealSet
