"""One table of the web app: a game, its seats, and its agents.

The game logic is the table's shared session (`experiments.table.session.GameSession`,
which `spades play` stands on too): the engine's `SingleGame`, bots asked through the same
replayable seeding, the same trick keeping and the same one-line reasons for an illegal
choice. A web table differs in that any number of seats may be people, and in that no
agent is built or asked in the server: the table's agents live in a child process
(`experiments.web.seats.SeatProcess`), which the table asks for a bot's action or a hint.
An agent that fails there (raises, exits, hangs, answers an illegal action) is a
`SeatError`: the table keeps it as `failure` and changes nothing until a person retries
the seat or replaces its agent.

A table is written to its folder after every action (`experiments.web.records`: game.json,
the hand log, the people's datasets); an action that cannot be saved is not played.
`create_table` starts one, `load_table` replays one from its folder. Nothing here knows
about HTTP: the server (`experiments.web.server`) calls these methods from a worker
thread, one call at a time per table.
"""

from __future__ import annotations

import copy
import logging
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.spec import AgentSpec
from experiments.table.session import Bot, GameSession, Human, Setup, why_illegal
from experiments.table.words import describe, seat_title
from experiments.web.records import (
    GAME_FORMAT,
    GAME_VERSION,
    Decisions,
    SeatInfo,
    log_hand,
    log_row,
    logged_hands,
    new_token,
    read_game,
    read_reviews,
    seat_from_json,
    seat_json,
    token_hash,
    write_game,
)
from experiments.web.seats import Game, SeatError, SeatProcess
from spades_env.cards import NUM_ACTIONS, action_to_str, str_to_action
from spades_env.engine import IllegalActionError, explain_illegal
from spades_env.rules import Rules
from spades_env.single import SingleGame

#: seconds an agent may think over one decision or hint (`spades serve --decision-timeout`)
DECISION_TIMEOUT = 30.0
log = logging.getLogger("spades.web")
#: An agent's name in the server's catalogue -> its spec (TableError if not offered).
Resolver = Callable[[str, Rules], AgentSpec]


class TableError(ValueError):
    """A request the table refuses; the message is one line for the person."""


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
    session: GameSession
    events: list[Event] = field(default_factory=list)
    reviews: dict[int, dict[str, Any]] = field(default_factory=dict)  # hand_no -> review
    lock: threading.Lock = field(default_factory=threading.Lock)
    hint_spec: AgentSpec | None = None  # the table's hint agent
    hint_name: str = ""  # its name in the server's catalogue
    decision_timeout: float = DECISION_TIMEOUT
    #: a seat whose agent failed: {"seat", "agent", "what"}; no bot acts until it is cleared
    failure: dict[str, Any] | None = None
    #: the seats replaced during the game: {"seat", "move", "from", "to"}
    replaced: list[dict[str, Any]] = field(default_factory=list)
    _agents: SeatProcess | None = None
    #: the people's decisions, kept as datasets (an option of the records; None: the
    #: default, kept in the table's folder)
    decisions: Decisions = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        if self.decisions is None:
            self.decisions = Decisions(self.folder)

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
        reason = why_illegal(self.session, action, seat)
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
        write_game(self.folder, self.to_json())
        self.agents.retarget(self._lineup())

    def _apply(self, action: int) -> dict[str, Any] | None:
        g = self.game
        seat, phase = g.to_act, g.phase
        pending = copy.deepcopy(self.decisions.pending)
        self.decisions.collect(self.game, self.seats, action)
        try:
            _, record = self.session.apply(action)
        except IllegalActionError as exc:  # legal_list said yes; never expected
            self.decisions.pending = pending
            raise TableError(str(exc)) from None
        try:
            write_game(self.folder, self.to_json())
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
                log_hand(self.folder, log_row(self.id, self.seats, self.rules, record))
            except OSError as exc:  # game.json holds the move: the next load logs the hand
                log.warning("table %s: hand %s not logged yet: %s", self.id, record["hand_no"], exc)
            try:
                self.decisions.write(record, self.rules, self.seats)
            except OSError as exc:  # the dataset is extra
                log.warning(
                    "table %s: no dataset shard for hand %s: %s", self.id, record["hand_no"], exc
                )
        return record

    def _undo(self, pending: dict[int, list[tuple]]) -> None:
        """Back to before the last action (it could not be saved): the game replayed."""
        actions = self.session.actions[:-1]
        session = GameSession(self.session.setup)
        for _, action in actions:
            session.apply(action)
        self.session = session
        self.decisions.pending = pending

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
            "seats": [seat_json(i) for i in self.seats],
            "hint_agent": self.hint_name,
            "replaced": self.replaced,
            "actions": [[seat, action_to_str(a)] for seat, a in self.session.actions],
            "hands_done": len(self.session.records),
            "scores": list(self.game.scores),
            "game_over": self.game.done,
        }


def _players(seats: list[SeatInfo]) -> tuple[str, ...]:
    """`Setup.players` of a web table: a person, or an agent (its spec, or its name while
    this server does not offer it)."""
    return tuple(Human(i.name) if i.kind == "human" else Bot(i.spec, i.name) for i in seats)


def create_table(
    folder: Path,
    rules: Rules,
    seats: list[SeatInfo],
    seed: int | None = None,
    hint: tuple[str, AgentSpec] | None = None,
    table_id: str | None = None,
    decision_timeout: float = DECISION_TIMEOUT,
    datasets: bool = True,
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
    setup = Setup(rules, seed, first, _players(seats), hint_spec)
    table = Table(table_id or folder.name, folder, seats, GameSession(setup))
    table.decisions.keep = datasets
    table.hint_spec, table.hint_name = hint_spec, hint_name
    table.decision_timeout = decision_timeout
    if (folder / "game.json").exists():
        raise TableError("that table already exists")
    write_game(table.folder, table.to_json())
    return table


class ResumeError(ValueError):
    """A game folder that cannot be resumed; one line naming the file (relative to the
    server's root) and what is damaged."""


def load_table(
    folder: Path,
    resolve: Resolver | None = None,
    decision_timeout: float = DECISION_TIMEOUT,
    shown: str | None = None,
    datasets: bool = True,
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
        seats = [seat_from_json(d, s, rules, resolve) for s, d in enumerate(raw_seats)]
        first = next(s for s, i in enumerate(seats) if i.kind == "human")
        seed = data["seed"]
        if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**64:
            raise ValueError("the seed is not a 64-bit whole number")
        hint_name = data.get("hint_agent", "heuristic")
        if not isinstance(hint_name, str):
            raise ValueError("hint_agent is not a text")
        setup = Setup(rules, seed, first, _players(seats))
        table_id = data.get("table", folder.name)
        if not isinstance(table_id, str):
            raise ValueError("table is not a text")
        table = Table(table_id, folder, seats, GameSession(setup))
        table.decisions.keep = datasets
        table.decision_timeout, table.hint_name = decision_timeout, hint_name
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
        logged = logged_hands(table.folder)
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
            table.decisions.collect(table.game, table.seats, action)
            _, record = table.session.apply(action)
        except (ValueError, IllegalActionError) as exc:
            raise ResumeError(f"{where}: damaged: action {k + 1}: {exc}") from None
        if record is not None and record["hand_no"] >= logged:
            log_hand(table.folder, log_row(table.id, table.seats, table.rules, record))
            logged += 1
        if record is not None:
            # rewrites the same shards; writes one a kill lost
            table.decisions.write(record, table.rules, table.seats)
    # the reviews made before the restart (a hand that has none is reviewed again)
    table.reviews = {
        h: r for h, r in read_reviews(folder).items() if h < len(table.session.records)
    }
    table.events.append(Event(f"resumed after {len(actions)} moves"))
    return table
