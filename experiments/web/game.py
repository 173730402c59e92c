"""One table of the web app: a game, its seats, and its records on disk.

The game logic is `spades play`'s (`experiments.play.session.PlaySession`): the engine's
`SingleGame`, bots asked through the same replayable seeding, the same trick keeping and
the same one-line reasons for an illegal choice. A web table differs only in that any
number of seats may be people, so `TableSession` builds a bot for every seat whose
player is an agent spec and none for the people's seats.

On disk a table is a folder `ROOT/web/<id>/`:

- `game.json`: the setup (rules, seed, who sits where) and every action so far, written
  atomically after each action, so a killed server resumes the game exactly where it was;
- `log.jsonl`: one row per finished hand in the tournament log format
  (`experiments.tournament.results_log`, rows sealed with their checksum), each holding
  the hand record (`spades_env.records`) and who sat where (`human:NAME` or the agent
  spec), so `spades show`, `spades analyze` and the replay page read web games as they
  read tournaments.

Nothing here knows about HTTP: the server (`experiments.web.server`) calls these
methods from a worker thread, one call at a time per table.
"""

from __future__ import annotations

import copy
import json
import os
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.registry import canonical_spec, check_agent_rules, display_name, make_agent, split_spec
from experiments.play.session import HUMAN, PlaySession, Setup, bot_seed, why_illegal
from experiments.tournament.results_log import append_unit, read_rows, seal
from spades_env.cards import NUM_ACTIONS, NUM_CARDS, action_to_str, str_to_action
from spades_env.engine import IllegalActionError, explain_illegal
from spades_env.rules import Rules
from spades_env.scoring import score_hand
from spades_env.single import SingleGame

GAME_FORMAT, GAME_VERSION = "spades-web-game", 1
#: A person's seat in the log: `human:NAME`, so analyses tell people from bots.
HUMAN_PREFIX = "human:"


class TableError(ValueError):
    """A request the table refuses; the message is one line for the person."""


def new_token() -> str:
    """An unguessable seat token (128 bits from the OS's generator)."""
    return secrets.token_urlsafe(16)


class TableSession(PlaySession):
    """`spades play`'s session with people in any number of seats (`HUMAN` in
    `setup.players`); `setup.human` is the first of them."""

    def as_seat(self, seat: int) -> PlaySession:
        """This session seen from `seat` (shares the game): what `why_illegal` needs."""
        other = copy.copy(self)
        other.setup = Setup(
            self.setup.rules, self.setup.seed, seat, self.setup.players, self.setup.hint_agent
        )
        return other


@dataclass
class SeatInfo:
    """Who sits in a seat: a person (name, token) or an agent (spec)."""

    kind: str  # "human" | "agent"
    name: str  # the person's name, or the agent spec
    token: str = ""  # a person's seat token (never shown to the other seats)

    @property
    def label(self) -> str:
        """The seat in the log: `human:NAME` or the agent's display name."""
        return HUMAN_PREFIX + self.name if self.kind == "human" else display_name(self.name)


@dataclass
class Event:
    """A public line of the table's running log."""

    text: str
    seat: int = -1


@dataclass
class Table:
    """A game in the browser: seats, the session, the folder it is written to."""

    id: str
    folder: Path
    seats: list[SeatInfo]
    session: TableSession
    events: list[Event] = field(default_factory=list)
    reviews: dict[int, dict[str, Any]] = field(default_factory=dict)  # hand_no -> review
    lock: threading.Lock = field(default_factory=threading.Lock)
    _hinters: dict[str, BaseAgent] = field(default_factory=dict)
    #: the people's decisions of the hand in play, per seat (behaviour-cloning rows)
    pending: dict[int, list[tuple]] = field(default_factory=dict)

    # ----------------------------------------------------------------- basic facts
    @property
    def rules(self) -> Rules:
        return self.session.setup.rules

    @property
    def game(self) -> SingleGame:
        return self.session.game

    @property
    def moves(self) -> int:
        """Actions so far: a client's move must name this number (stale clicks refused)."""
        return len(self.session.actions)

    def seat_of(self, token: str) -> int | None:
        """The seat a token opens, compared in constant time."""
        for s, info in enumerate(self.seats):
            if info.kind == "human" and secrets.compare_digest(info.token, token):
                return s
        return None

    def human_seats(self) -> list[int]:
        return [s for s, info in enumerate(self.seats) if info.kind == "human"]

    def trick_just_taken(self) -> bool:
        """A trick was completed and the next has no card yet."""
        s, g = self.session, self.game
        last = s.last_trick
        return s.trick is None and last is not None and g.tricks_played == last.number

    def bot_to_act(self) -> bool:
        g = self.game
        return not g.done and self.seats[g.to_act].kind == "agent"

    # ----------------------------------------------------------------- moves
    def act(self, seat: int, action: Any, move: Any) -> dict[str, Any] | None:
        """A person's action; refused (TableError, nothing changed) when it is not that
        seat's turn, the move number is stale, or the action is not legal now."""
        g = self.game
        if g.done:
            raise TableError("the game is over")
        if g.to_act != seat:
            raise TableError("it is not your turn")
        if move != self.moves:
            raise TableError("that move is out of date: the table has moved on")
        if not isinstance(action, int) or isinstance(action, bool):
            raise TableError("an action is a whole number")
        if not 0 <= action < NUM_ACTIONS:
            raise TableError(f"there is no action {action}")
        if action not in g.legal_list():
            raise TableError(self.illegal_reason(seat, action))
        return self._apply(action)

    def illegal_reason(self, seat: int, action: int) -> str:
        """Why `action` is illegal for `seat` now, in the person's words, with the rule's
        RULES.md section where the engine names one."""
        reason = why_illegal(self.session.as_seat(seat), action)
        g = self.game
        try:
            rule = explain_illegal(g.state, 0, action)
        except (ValueError, IndexError):
            rule = ""
        where = rule[rule.rfind("(RULES.md") :] if "(RULES.md" in rule else ""
        return f"{reason} {where}".strip()

    def bot_move(self) -> dict[str, Any] | None:
        """Let the bot whose turn it is act."""
        if not self.bot_to_act():
            raise TableError("no bot is to act")
        return self._apply(self.session.bot_action())

    def _apply(self, action: int) -> dict[str, Any] | None:
        from experiments.play.session import describe

        g = self.game
        seat, phase = g.to_act, g.phase
        self._collect(action)
        try:
            _, record = self.session.apply(action)
        except IllegalActionError as exc:  # legal_list said yes; never expected
            raise TableError(str(exc)) from None
        # the public line: never a card a seat passes or draws (describe's bot wording)
        self.events.append(Event(describe(seat, phase, action, False), seat))
        trick = self.session.last_trick
        if trick is not None and trick.plays[-1] == (seat, action) and trick.winner is not None:
            self.events.append(Event(f"{seat_title(trick.winner)} wins trick {trick.number}"))
        del self.events[:-60]
        self.save()
        if record is not None:
            self._log_hand(record)
            self._write_bc(record)
        return record

    # ----------------------------------------------------------------- people's decisions
    def _collect(self, action: int) -> None:
        """Keep a person's decision that had a choice: the seat's encoding, the legal
        mask, the action and the phase (a behaviour-cloning row)."""
        g = self.game
        seat = g.to_act
        if self.seats[seat].kind != "human":
            return
        mask = g.legal_mask().astype(bool)
        if mask.sum() > 1:
            self.pending.setdefault(seat, []).append((g.observe(seat), mask, action, g.phase))

    def bc_folder(self, seat: int) -> Path:
        return self.folder / f"bc-seat{seat}"

    def _write_bc(self, record: dict[str, Any]) -> None:
        """Write each person's decisions of a finished hand as one shard of a
        behaviour-cloning dataset (`training.bc_data`): `spades train bc --extra-data
        ROOT/web/<table>/bc-seatN` trains on them. The value target is the hand's points
        of the person's team minus the other team's, bag penalty included."""
        from training.bc_data import DatasetSpec, open_dataset, shard_path, write_shard

        rules, hand = self.rules, record["hand_no"]
        base = Rules.preset(rules.name).to_dict()
        options = ",".join(f"{k}={v}" for k, v in rules.to_dict().items() if base.get(k) != v)
        net = [p - q for p, q in zip(record["points"], record["penalty"], strict=True)]
        for seat, rows in self.pending.items():
            team = rules.team_of(seat)
            outcome = net[team] - max(net[k] for k in range(len(net)) if k != team)
            spec = DatasetSpec(
                teacher=self.seats[seat].label,
                rules=options,
                seed=0,
                shards=hand + 1,
                hands_per_shard=1,
                preset=rules.name,
            )
            folder = open_dataset(self.bc_folder(seat), spec)
            for k in range(hand):  # hands where this person had no choice: empty shards
                if not shard_path(folder, k).exists():
                    write_shard(folder, spec, k, _bc_rows([], 0.0, rules))
            write_shard(folder, spec, hand, _bc_rows(rows, float(outcome), rules))
        self.pending = {}

    # ----------------------------------------------------------------- hints
    def hint(self, seat: int, spec: str | None) -> dict[str, Any]:
        """What an agent would do for `seat` now, with its per-action values and reasons
        where the agent gives them."""
        g = self.game
        if g.done or g.to_act != seat:
            raise TableError("a hint is for your turn")
        spec = (spec or self.session.setup.hint_agent).strip()
        agent = self._hinters.get(spec)
        if agent is None:
            check_agent_rules(spec, self.rules)
            if len(self._hinters) >= 4:
                self._hinters.clear()
            agent = self._hinters[spec] = make_agent(spec, bot_seed(self.session.setup.seed, 99))
        if hasattr(agent, "last_values"):
            agent.last_values = {}
        action = self.session._ask(agent, seat)
        values = getattr(agent, "last_values", None) or {}
        reasons = getattr(agent, "last_reasons", None)
        if not reasons and hasattr(agent, "explain"):
            from spades_env.observation import seat_view

            reasons = agent.explain(seat_view(g.state))
        return {
            "agent": display_name(spec),
            "action": int(action),
            "values": {str(int(a)): round(float(v), 3) for a, v in values.items()},
            "reason": reasons[0] if reasons else None,
        }

    # ----------------------------------------------------------------- disk
    def to_json(self) -> dict[str, Any]:
        s = self.session.setup
        return {
            "format": GAME_FORMAT,
            "version": GAME_VERSION,
            "table": self.id,
            "rules": s.rules.to_dict(),
            "seed": s.seed,
            "seats": [
                {"kind": i.kind, "name": i.name, "token": i.token, "label": i.label}
                for i in self.seats
            ],
            "hint_agent": s.hint_agent,
            "actions": [[seat, action_to_str(a)] for seat, a in self.session.actions],
            "hands_done": len(self.session.records),
            "scores": list(self.game.scores),
            "game_over": self.game.done,
        }

    def save(self) -> None:
        """Write game.json atomically: a killed server never leaves half a file. (Not
        fsynced: a killed process loses nothing the kernel holds, and a sync per move
        would cost more than the move; each finished hand's log row is fsynced.)"""
        self.folder.mkdir(parents=True, exist_ok=True)
        path = self.folder / "game.json"
        tmp = path.with_name("game.json.tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(json.dumps(self.to_json(), separators=(",", ":")))  # the C encoder
        os.replace(tmp, path)

    def log_row(self, record: dict[str, Any]) -> dict[str, Any]:
        """A finished hand as a tournament log row (its checksum added)."""
        rules = self.rules
        labels = [i.label for i in self.seats]
        t = rules.num_teams
        hs = score_hand(rules, [record["bids"]], [record["blind"]], [record["tricks"]])
        teams = [
            " & ".join(dict.fromkeys(labels[s] for s in team_seats(rules, k))) for k in range(t)
        ]
        winner = record["winner"]
        row = {
            "tournament": f"web-{self.id}",
            "unit": record["hand_no"],
            "unit_rows": 1,
            "mode": "game",
            "deal": 0,
            "side": 0,
            "hand": record["hand_no"],
            "seats": labels,
            "teams": teams,
            "players": [{"kind": i.kind, "name": i.name} for i in self.seats],
            "rules": record["rules"],
            "dealer": record["dealer"],
            "bids": record["bids"],
            "blind": record["blind"],
            "tricks": record["tricks"],
            "contract": hs.contract[0].tolist(),
            "made": hs.made[0].tolist(),
            "hand_score": [record["scores"][k] - record["scores_before"][k] for k in range(t)],
            "bags_gained": record["bags_gained"],
            "bags": record["bags"],
            "scores": record["scores"],
            "game_over": record["game_over"],
            "winner": winner,
            "winner_agent": teams[winner] if winner >= 0 else None,
            "record": record,
        }
        return seal(row)

    def _log_hand(self, record: dict[str, Any]) -> None:
        append_unit(self.folder / "log.jsonl", [self.log_row(record)])

    def logged_hands(self) -> int:
        path = self.folder / "log.jsonl"
        return len(read_rows(path)) if path.exists() else 0


def seat_title(seat: int) -> str:
    from experiments.play.screen import seat_title as title

    return title(seat)


def team_seats(rules: Rules, team: int) -> tuple[int, ...]:
    return tuple(s for s in range(rules.num_players) if rules.team_of(s) == team)


# ----------------------------------------------------------------------------- setup
def check_spec(spec: str, rules: Rules, allow_code: bool) -> str:
    """An agent spec a client asked for, checked: it must name an agent that plays these
    rules, and, unless `allow_code`, a registered or plugin agent (a file or module spec
    runs that code on the server)."""
    if not isinstance(spec, str) or not spec.strip() or len(spec) > 300:
        raise TableError("an agent spec is a non-empty text of at most 300 characters")
    spec = spec.strip()
    parsed = split_spec(spec)
    if parsed.kind in ("file", "module") and not allow_code:
        raise TableError(
            f"agent {spec!r}: this server takes registered agents only (a file or module "
            "agent runs code on the server; start it on loopback to use one)"
        )
    spec = canonical_spec(spec)
    check_agent_rules(spec, rules)
    return spec


def create_table(
    folder: Path,
    rules: Rules,
    seats: list[SeatInfo],
    seed: int | None = None,
    hint_agent: str = "heuristic",
    table_id: str | None = None,
) -> Table:
    """A new table written to `folder` (which must not hold a game yet)."""
    if len(seats) != rules.num_players:
        raise TableError(f"{rules.name} has {rules.num_players} seats, not {len(seats)}")
    if not any(i.kind == "human" for i in seats):
        raise TableError("at least one seat is a person's")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    players = tuple(HUMAN if i.kind == "human" else i.name for i in seats)
    first = next(s for s, i in enumerate(seats) if i.kind == "human")
    setup = Setup(rules, seed, first, players, hint_agent)
    for info in seats:
        if info.kind == "human" and not info.token:
            info.token = new_token()
    table = Table(table_id or folder.name, folder, seats, TableSession(setup))
    if (folder / "game.json").exists():
        raise TableError(f"{folder} already holds a game")
    table.save()
    return table


class ResumeError(ValueError):
    """A game folder that cannot be resumed; one line naming the file."""


def load_table(folder: Path) -> Table:
    """A table from its folder: the setup and actions of game.json replayed through the
    engine; any finished hand the log lacks (a kill between the two writes) is logged."""
    path = folder / "game.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("format") != GAME_FORMAT or data.get("version") != GAME_VERSION:
            raise ResumeError(f"{path}: not a web game of this version")
        rules = Rules.from_dict(data["rules"])
        seats = [SeatInfo(d["kind"], d["name"], d.get("token", "")) for d in data["seats"]]
        players = tuple(HUMAN if i.kind == "human" else i.name for i in seats)
        first = next(s for s, i in enumerate(seats) if i.kind == "human")
        setup = Setup(rules, int(data["seed"]), first, players, data.get("hint_agent", "heuristic"))
        table = Table(data.get("table", folder.name), folder, seats, TableSession(setup))
        actions = data["actions"]
    except (OSError, ValueError, KeyError, TypeError, StopIteration) as exc:
        raise ResumeError(f"{path}: cannot be resumed ({exc})") from None
    logged = table.logged_hands()
    for k, (seat, text) in enumerate(actions):
        g = table.game
        if g.done or g.to_act != seat:
            raise ResumeError(f"{path}: action {k + 1} is not seat {seat}'s turn; damaged")
        try:
            action = str_to_action(text)
            table._collect(action)
            _, record = table.session.apply(action)
        except (ValueError, IllegalActionError) as exc:
            raise ResumeError(f"{path}: action {k + 1}: {exc}") from None
        if record is not None and record["hand_no"] >= logged:
            table._log_hand(record)
            logged += 1
        if record is not None:
            table._write_bc(record)  # rewrites the same shards; writes one a kill lost
    table.events.append(Event(f"resumed after {len(actions)} moves"))
    return table


def _bc_rows(rows: list[tuple], outcome: float, rules: Rules) -> dict[str, np.ndarray]:
    """The columns of a behaviour-cloning shard (`training.bc_data.COLUMNS`)."""
    from spades_env.observation import obs_size

    k = len(rows)
    obs = np.array([r[0] for r in rows], dtype=np.int16).reshape(k, obs_size(rules))
    mask = np.array([r[1] for r in rows], dtype=bool).reshape(k, NUM_ACTIONS)
    return {
        "obs": obs,
        "mask": np.packbits(mask, axis=1),
        "action": np.array([r[2] for r in rows], dtype=np.int16),
        "phase": np.array([r[3] for r in rows], dtype=np.int8),
        "outcome": np.full(k, outcome, dtype=np.float32),
    }


def card_list(mask: int) -> list[int]:
    from experiments.play.screen import sort_hand

    return [c for c in sort_hand(int(mask)) if c < NUM_CARDS]
