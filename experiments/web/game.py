"""One table of the web app: a game, its seats, and its records on disk.

The game logic is `spades play`'s (`experiments.play.session.PlaySession`): the engine's
`SingleGame`, bots asked through the same replayable seeding, the same trick keeping and
the same one-line reasons for an illegal choice. A web table differs in that any number
of seats may be people, and in that no agent is built or asked in the server: the
table's agents live in a child process (`experiments.web.seats.SeatProcess`), which the
table asks for a bot's action or a hint. An agent that fails there (raises, exits,
hangs, answers an illegal action) is a `SeatError`: the table keeps it as `failure`
and changes nothing until a person retries the seat or replaces its agent.

On disk a table is a folder `ROOT/web/<id>/`:

- `game.json`: the setup (rules, seed, who sits where: a person's name and the hash of
  their seat token, an agent's name in the server's catalogue) and every action so far,
  written atomically after each action (an action that cannot be saved is not played),
  readable by the server's user only, so a killed server resumes the game exactly where
  it was;
- `log.jsonl`: one row per finished hand in the tournament log format
  (`experiments.tournament.results_log`, rows sealed with their checksum), each holding
  the hand record (`spades_env.records`) and who sat where (`human:NAME` or the agent
  spec), so `spades show`, `spades analyze` and the replay page read web games as they
  read tournaments.

Nothing here knows about HTTP: the server (`experiments.web.server`) calls these
methods from a worker thread, one call at a time per table.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import json
import logging
import os
import secrets
import stat
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.spec import AgentSpec
from experiments.play.session import HUMAN, PlaySession, Setup, why_illegal
from experiments.tournament.results_log import append_unit, read_rows, seal
from experiments.web.seats import Game, SeatError, SeatProcess
from spades_env.cards import NUM_ACTIONS, NUM_CARDS, action_to_str, str_to_action
from spades_env.engine import IllegalActionError, explain_illegal
from spades_env.rules import Rules
from spades_env.scoring import score_hand
from spades_env.single import SingleGame

GAME_FORMAT, GAME_VERSION = "spades-web-game", 1
#: the largest game.json a server reads (a whole game is well under 100 kB)
MAX_GAME_BYTES = 4 << 20
#: seconds an agent may think over one decision or hint (`spades serve --decision-timeout`)
DECISION_TIMEOUT = 30.0
log = logging.getLogger("spades.web")
#: An agent's name in the server's catalogue -> its spec (TableError if not offered).
Resolver = Callable[[str, Rules], AgentSpec]
#: A person's seat in the log: `human:NAME`, so analyses tell people from bots.
HUMAN_PREFIX = "human:"


class TableError(ValueError):
    """A request the table refuses; the message is one line for the person."""


def new_token() -> str:
    """An unguessable seat token (128 bits from the OS's generator)."""
    return secrets.token_urlsafe(16)


def token_hash(token: str) -> str:
    """What a server stores of a seat token: its SHA-256 (a leaked game.json opens no seat)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


class TableSession(PlaySession):
    """`spades play`'s session with people in any number of seats (`HUMAN` in
    `setup.players`); `setup.human` is the first of them. It builds no agent (they live
    in the table's `SeatProcess`)."""

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup, agents=False)

    def as_seat(self, seat: int) -> PlaySession:
        """This session seen from `seat` (shares the game): what `why_illegal` needs."""
        other = copy.copy(self)
        other.setup = Setup(
            self.setup.rules, self.setup.seed, seat, self.setup.players, self.setup.hint_agent
        )
        return other


@dataclass
class SeatInfo:
    """Who sits in a seat: a person (name, token) or an agent (its name in the server's
    catalogue, `experiments.web.catalogue`, and the spec it stands for)."""

    kind: str  # "human" | "agent"
    name: str  # the person's name, or the agent as a client named it
    token: str = ""  # a new person's seat token: in memory only, for their link
    spec: AgentSpec | None = None  # an agent's spec (None: not offered by this server now)
    token_sha: str = ""  # what is stored of a person's token

    def __post_init__(self) -> None:
        if self.token and not self.token_sha:
            self.token_sha = token_hash(self.token)

    @property
    def label(self) -> str:
        """The seat in the log: `human:NAME` or the agent's display name."""
        if self.kind == "human":
            return HUMAN_PREFIX + self.name
        return self.spec.display if self.spec is not None else self.name


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
    hint_spec: AgentSpec | None = None  # the table's hint agent
    decision_timeout: float = DECISION_TIMEOUT
    #: a seat whose agent failed: {"seat", "agent", "what"}; no bot acts until it is cleared
    failure: dict[str, Any] | None = None
    #: the seats replaced during the game: {"seat", "move", "from", "to"}
    replaced: list[dict[str, Any]] = field(default_factory=list)
    _agents: SeatProcess | None = None
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
        """The seat a token opens (its hash compared in constant time)."""
        given = token_hash(token)
        for s, info in enumerate(self.seats):
            if info.kind == "human" and secrets.compare_digest(info.token_sha, given):
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
        """A bot is to act and may (no seat's failure is waiting for the person)."""
        g = self.game
        return not g.done and self.seats[g.to_act].kind == "agent" and self.failure is None

    # ----------------------------------------------------------------- the agents' process
    @property
    def agents(self) -> SeatProcess:
        """The child process of this table's agents (`experiments.web.seats`)."""
        if self._agents is None:
            self._agents = SeatProcess(self._lineup(), self.decision_timeout)
        return self._agents

    def _lineup(self) -> Game:
        specs = tuple(i.spec if i.kind == "agent" else None for i in self.seats)
        return Game(self.rules, self.session.setup.seed, specs)

    @property
    def agents_started(self) -> SeatProcess | None:
        """The agents' process object if one was made (None: no agent asked yet)."""
        return self._agents

    def close(self) -> None:
        """End the agents' process (the table leaves memory, or the server stops)."""
        if self._agents is not None:
            self._agents.close()

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

    def bot_decide(self) -> tuple[int, int]:
        """(move number, action) of the bot whose turn it is, asked in the agents'
        process; the table is not changed (the caller need not hold it while the agent
        thinks). SeatError when the agent fails, TableError when no bot may act."""
        if not self.bot_to_act():
            raise TableError("no bot is to act")
        seat, moves = self.game.to_act, self.moves
        info = self.seats[seat]
        if info.spec is None:
            raise SeatError(seat, info.name, "is not an agent this server offers now")
        return moves, self.agents.ask("act", list(self.session.actions), seat)

    def bot_apply(self, moves: int, action: int) -> dict[str, Any] | None:
        """Play a bot's action decided at move `moves` (refused if the table moved on)."""
        if moves != self.moves or not self.bot_to_act():
            raise TableError("the table moved on while the bot was thinking")
        if action not in self.game.legal_list():  # checked in the child too; never trusted
            seat = self.game.to_act
            raise SeatError(seat, self.seats[seat].label, f"answered an illegal action {action}")
        return self._apply(action)

    def bot_move(self) -> dict[str, Any] | None:
        """Let the bot whose turn it is act (decide, then play): SeatError if it fails."""
        try:
            return self.bot_apply(*self.bot_decide())
        except SeatError as exc:
            self.fail(exc)
            raise

    def fail(self, exc: SeatError) -> None:
        """Keep a seat's failure for the person (no bot acts until it is cleared)."""
        seat = exc.seat
        self.failure = {"seat": seat, "agent": exc.agent, "what": exc.what}
        self.events.append(Event(f"{seat_title(seat)} ({exc.agent}) failed: {exc.what}", seat))
        log.warning("table %s, seat %s: agent %r %s", self.id, seat, exc.agent, exc.what)

    def retry(self) -> None:
        """Clear a seat's failure: its agent is asked again, in a new process."""
        if self.failure is None:
            raise TableError("no seat has failed")
        self.failure = None
        self.agents.retarget(self._lineup())

    def replace(self, seat: int, name: str, spec: AgentSpec) -> None:
        """Seat another agent (`spec`, a client's `name` for it) in a bot's seat."""
        if not 0 <= seat < len(self.seats) or self.seats[seat].kind != "agent":
            raise TableError("only an agent's seat can be given to another agent")
        old = self.seats[seat].label
        self.seats[seat] = SeatInfo("agent", name, spec=spec)
        self.replaced.append({"seat": seat, "move": self.moves, "from": old, "to": spec.display})
        if self.failure is not None and self.failure["seat"] == seat:
            self.failure = None
        self.session.setup = Setup(
            self.rules,
            self.session.setup.seed,
            self.session.setup.human,
            _players(self.seats),
            self.session.setup.hint_agent,
        )
        self.events.append(Event(f"{seat_title(seat)}: {spec.display} now plays for {old}", seat))
        self.save()
        self.agents.retarget(self._lineup())

    def _apply(self, action: int) -> dict[str, Any] | None:
        from experiments.play.session import describe

        g = self.game
        seat, phase = g.to_act, g.phase
        pending = copy.deepcopy(self.pending)
        self._collect(action)
        try:
            _, record = self.session.apply(action)
        except IllegalActionError as exc:  # legal_list said yes; never expected
            self.pending = pending
            raise TableError(str(exc)) from None
        try:
            self.save()
        except OSError as exc:  # a full or read-only disk: the move is not played
            self._undo(pending)
            raise TableError(
                f"the server cannot save the game ({exc.strerror or exc}); the move was not "
                "played: try again once it can"
            ) from None
        # the public line: never a card a seat passes or draws (describe's bot wording)
        self.events.append(Event(describe(seat, phase, action, False), seat))
        trick = self.session.last_trick
        if trick is not None and trick.plays[-1] == (seat, action) and trick.winner is not None:
            self.events.append(Event(f"{seat_title(trick.winner)} wins trick {trick.number}"))
        del self.events[:-60]
        if record is not None:
            try:
                self._log_hand(record)
            except OSError as exc:  # game.json holds the move: the next load logs the hand
                log.warning("table %s: hand %s not logged yet: %s", self.id, record["hand_no"], exc)
            try:
                self._write_bc(record)
            except OSError as exc:  # the dataset is extra
                log.warning(
                    "table %s: no dataset shard for hand %s: %s", self.id, record["hand_no"], exc
                )
        return record

    def _undo(self, pending: dict[int, list[tuple]]) -> None:
        """Back to before the last action (it could not be saved): the game replayed."""
        actions = self.session.actions[:-1]
        session = TableSession(self.session.setup)
        for _, action in actions:
            session.apply(action)
        self.session, self.pending = session, pending

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
    def hint(self, seat: int, spec: AgentSpec | None = None) -> dict[str, Any]:
        """What an agent (`spec`, default the table's hint agent) would do for `seat` now,
        with its per-action values and reasons where it gives them; asked in the agents'
        process (a failing hint agent is a TableError for the asker alone)."""
        g = self.game
        if g.done or g.to_act != seat:
            raise TableError("a hint is for your turn")
        spec = spec or self.hint_spec
        if spec is None:
            raise TableError("this table has no hint agent")
        try:
            return self.agents.ask("hint", list(self.session.actions), seat, spec)
        except SeatError as exc:
            raise TableError(f"no hint: agent {exc.agent!r} {exc.what}") from None

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
                {"kind": i.kind, "name": i.name, "token_sha256": i.token_sha, "label": i.label}
                if i.kind == "human"
                else {"kind": i.kind, "name": i.name, "label": i.label}
                for i in self.seats
            ],
            "hint_agent": s.hint_agent,
            "replaced": self.replaced,
            "actions": [[seat, action_to_str(a)] for seat, a in self.session.actions],
            "hands_done": len(self.session.records),
            "scores": list(self.game.scores),
            "game_over": self.game.done,
        }

    def save(self) -> None:
        """Write game.json atomically: a killed server never leaves half a file. (Not
        fsynced: a killed process loses nothing the kernel holds, and a sync per move
        would cost more than the move; each finished hand's log row is fsynced.)"""
        self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        path = self.folder / "game.json"
        tmp = path.with_name("game.json.tmp")
        text = json.dumps(self.to_json(), separators=(",", ":"))  # the C encoder
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            with open(fd, "w", encoding="utf-8") as f:
                os.fchmod(f.fileno(), 0o600)
                f.write(text)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                tmp.unlink()
            raise

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
        path = self.folder / "log.jsonl"
        append_unit(path, [self.log_row(record)])
        os.chmod(path, 0o600)

    def logged_hands(self) -> int:
        path = self.folder / "log.jsonl"
        return len(read_rows(path)) if path.exists() else 0


def seat_title(seat: int) -> str:
    from experiments.play.screen import seat_title as title

    return title(seat)


def team_seats(rules: Rules, team: int) -> tuple[int, ...]:
    return tuple(s for s in range(rules.num_players) if rules.team_of(s) == team)


# ----------------------------------------------------------------------------- setup
def _players(seats: list[SeatInfo]) -> tuple[str, ...]:
    """`Setup.players` of a web table: HUMAN for a person, else the agent's name."""
    return tuple(HUMAN if i.kind == "human" else i.label for i in seats)


def create_table(
    folder: Path,
    rules: Rules,
    seats: list[SeatInfo],
    seed: int | None = None,
    hint: tuple[str, AgentSpec] | None = None,
    table_id: str | None = None,
    decision_timeout: float = DECISION_TIMEOUT,
) -> Table:
    """A new table written to `folder` (which must not hold a game yet). Agent seats
    carry their spec (`SeatInfo.spec`, from the server's catalogue); `hint` is the hint
    agent as (its name, its spec)."""
    if len(seats) != rules.num_players:
        raise TableError(f"{rules.name} has {rules.num_players} seats, not {len(seats)}")
    if not any(i.kind == "human" for i in seats):
        raise TableError("at least one seat is a person's")
    if any(i.kind == "agent" and i.spec is None for i in seats):
        raise TableError("every agent seat needs an agent")
    if seed is None:
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    first = next(s for s, i in enumerate(seats) if i.kind == "human")
    for info in seats:
        if info.kind == "human" and not info.token_sha:
            info.token = new_token()
            info.token_sha = token_hash(info.token)
    hint_name, hint_spec = hint if hint is not None else ("", None)
    setup = Setup(rules, seed, first, _players(seats), hint_name)
    table = Table(table_id or folder.name, folder, seats, TableSession(setup))
    table.hint_spec, table.decision_timeout = hint_spec, decision_timeout
    if (folder / "game.json").exists():
        raise TableError("that table already exists")
    table.save()
    return table


class ResumeError(ValueError):
    """A game folder that cannot be resumed; one line naming the file (relative to the
    server's root) and what is damaged."""


def read_game(path: Path) -> dict[str, Any]:
    """game.json's data: a regular file of at most MAX_GAME_BYTES, never followed out
    through a link, never blocking on a FIFO."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > MAX_GAME_BYTES:
            raise ValueError(f"{info.st_size} bytes, over the {MAX_GAME_BYTES} a game may have")
        with open(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_GAME_BYTES + 1)
    finally:
        os.close(fd)
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def _seat_of(d: Any, s: int, rules: Rules, resolve: Resolver | None) -> SeatInfo:
    if not isinstance(d, dict) or d.get("kind") not in ("human", "agent"):
        raise ValueError(f"seat {s} is not a person or an agent")
    name = d.get("name")
    if not isinstance(name, str):
        raise ValueError(f"seat {s} has no name")
    if d["kind"] == "human":
        sha = d.get("token_sha256")
        if not isinstance(sha, str) and isinstance(d.get("token"), str):
            sha = token_hash(d["token"])  # a game written before tokens were hashed
        if not isinstance(sha, str) or len(sha) != 64:
            raise ValueError(f"seat {s} has no seat token")
        return SeatInfo("human", name, token_sha=sha)
    spec = None
    if resolve is not None:
        try:
            spec = resolve(name, rules)
        except (TableError, ValueError) as exc:  # not offered now: the seat fails at its turn
            log.warning("seat %s agent %r is not offered by this server: %s", s, name, exc)
    return SeatInfo("agent", name, spec=spec)


def load_table(
    folder: Path,
    resolve: Resolver | None = None,
    decision_timeout: float = DECISION_TIMEOUT,
    shown: str | None = None,
) -> Table:
    """A table from its folder: the setup and actions of game.json replayed through the
    engine; any finished hand the log lacks (a kill between the two writes) is logged.
    `resolve` gives each agent seat its spec from the server's catalogue (a seat whose
    agent is not offered any more fails at its turn); `shown` names the file in errors
    (default its path)."""
    path = folder / "game.json"
    where = shown or str(path)
    try:
        data = read_game(path)
        if data.get("format") != GAME_FORMAT or data.get("version") != GAME_VERSION:
            raise ResumeError(f"{where}: not a web game of this version")
        rules = Rules.from_dict(data["rules"])
        raw_seats = data["seats"]
        if not isinstance(raw_seats, list) or len(raw_seats) != rules.num_players:
            raise ValueError(f"{rules.num_players} seats are needed for {rules.name}")
        seats = [_seat_of(d, s, rules, resolve) for s, d in enumerate(raw_seats)]
        first = next(s for s, i in enumerate(seats) if i.kind == "human")
        seed = data["seed"]
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
            raise ValueError("the seed is not a 64-bit whole number")
        hint_name = data.get("hint_agent", "heuristic")
        if not isinstance(hint_name, str):
            raise ValueError("hint_agent is not a text")
        setup = Setup(rules, seed, first, _players(seats), hint_name)
        table_id = data.get("table", folder.name)
        if not isinstance(table_id, str):
            raise ValueError("table is not a text")
        table = Table(table_id, folder, seats, TableSession(setup))
        table.decision_timeout = decision_timeout
        if resolve is not None and hint_name:
            try:
                table.hint_spec = resolve(hint_name, rules)
            except (TableError, ValueError):
                table.hint_spec = None
        replaced = data.get("replaced", [])
        table.replaced = replaced if isinstance(replaced, list) else []
        actions = data["actions"]
        if not isinstance(actions, list):
            raise ValueError("actions is not a list")
    except ResumeError:
        raise
    except (OSError, ValueError, KeyError, TypeError, StopIteration, RecursionError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ResumeError(f"{where}: damaged, cannot be resumed ({why})") from None
    try:
        logged = table.logged_hands()
    except (OSError, ValueError) as exc:  # LogError included: its text holds the full path
        log_name = f"{Path(where).parent}/log.jsonl"
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else "a line is damaged"
        raise ResumeError(
            f"{log_name}: damaged ({why}); the game cannot go on, and its finished hands "
            "stay readable in the replay"
        ) from None
    for k, item in enumerate(actions):
        g = table.game
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[1], str)):
            raise ResumeError(f"{where}: damaged: action {k + 1} is not [seat, action]")
        seat, text = item
        if g.done or g.to_act != seat:
            raise ResumeError(f"{where}: damaged: action {k + 1} is not seat {seat}'s turn")
        try:
            action = str_to_action(text)
            table._collect(action)
            _, record = table.session.apply(action)
        except (ValueError, IllegalActionError) as exc:
            raise ResumeError(f"{where}: damaged: action {k + 1}: {exc}") from None
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
