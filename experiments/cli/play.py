"""`spades play`: play a full game against the bots in the terminal.

The flags define the game (or `--load` resumes one); this module holds the terminal:
the screen at each of the person's turns, the prompt and its commands, the summaries,
and saving on quit, on Ctrl-C and at the end of piped input. The game itself is
`experiments.play.session` (on the table's shared session, `experiments.table`), the
drawing `experiments.play.screen` and `experiments.play.sheets`.
Every table of RULES.md §6 plays: seats 0..4 (`--seat 4` is cutthroat_5's fifth seat),
and `--partner` only where there are partnerships.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from rich.console import Console, RenderableType
from rich.text import Text

from experiments.cli.checks import add_overwrite_input, output_file, spec_files
from experiments.cli.values import add_rules_arguments, agent_limits, build_rules, seed_number
from experiments.play import screen as ui
from experiments.play import sheets
from experiments.play.session import (
    HELP,
    InputError,
    PlayError,
    PlaySession,
    Quit,
    default_save_path,
    load,
    make_setup,
    parse_move,
    prompt_line,
)
from experiments.table.words import hint_label, seat_title
from spades_env.agent_calls import AgentError, current_limits, limits
from spades_env.engine import SEAT_NAMES
from spades_env.rules import Rules
from spades_env.stock_draw import stock_left
from spades_env.tooling.files import disk_error

_GAME_FLAGS = ("seat", "partner", "opponents", "rules", "option", "seed")
_COMMANDS = ("hint", "last", "score", "show", "help", "quit", "save")


def _seat(text: str) -> int:
    t = text.strip().lower()
    for i, name in enumerate(SEAT_NAMES):
        if t in (str(i), name.lower(), name[0].lower()):
            return i
    if t.isdigit() and int(t) < 5:  # RULES.md §6 cutthroat_5: seat 4 has no compass name
        return int(t)
    raise argparse.ArgumentTypeError(f"{text!r} is no seat; use N, E, S, W or 0-4")


def add_parser(sub) -> None:
    p = sub.add_parser(
        "play",
        help="play a game against the bots in the terminal",
        description="Play a full game of Spades against registered agents. Type 'help' at "
        "any prompt. Without a terminal on stdin, reads one answer per line.",
    )
    p.add_argument(
        "--seat", type=_seat, help="your seat: N, E, S, W or 0-4 (default S; N at a table of 2)"
    )
    p.add_argument(
        "--partner",
        metavar="SPEC",
        help="your partner's agent (default heuristic; only with partnerships)",
    )
    p.add_argument(
        "--opponents",
        metavar="SPEC",
        help="every other seat's agent (default heuristic); a SPEC as in spades tournament "
        "--agents: heuristic, path/to/file.py:Class, package.module:Class, NAME=SPEC",
    )
    p.add_argument("--hint-agent", metavar="SPEC", help="agent behind 'hint' (default heuristic)")
    add_rules_arguments(p)
    p.add_argument(
        "--seed", type=seed_number, help="seed of the deals and bots, 0..2**64-1 (default: random)"
    )
    p.add_argument("--save", metavar="FILE", help="save the game here as it goes")
    p.add_argument("--load", metavar="FILE", help="resume a saved game")
    add_overwrite_input(p)
    p.set_defaults(run=run)


# ----------------------------------------------------------------------------- terminal
class Terminal:
    """Rich output and line input; without a terminal on stdin, plain lines both ways."""

    def __init__(self, interactive: bool | None = None) -> None:
        self.interactive = sys.stdin.isatty() if interactive is None else interactive
        console = Console(highlight=False)
        if not console.is_terminal:
            console = Console(highlight=False, width=100)  # a pipe: room for the tables
        self.console = console

    def show(self, thing: RenderableType | str) -> None:
        # A message (a file name, a reason) is never wrapped: scripts read it line by line.
        self.console.print(thing, soft_wrap=isinstance(thing, str))

    def read(self, prompt: str) -> str:
        """One answer; EOFError at the end of input."""
        if self.interactive:
            self.console.print(Text(prompt, style="bold yellow"))
            return self.console.input("> ")
        print(prompt, flush=True)
        line = sys.stdin.readline()
        if not line:
            raise EOFError
        return line.strip()

    def clear(self) -> None:
        if self.interactive:
            self.console.clear()

    def pause(self) -> None:
        if self.interactive:
            self.console.input("[dim]press Enter to go on[/dim] ")


# ----------------------------------------------------------------------------- the game
def _rules_label(rules: Rules) -> str:
    return ", ".join([rules.name, *rules.changed_options()])


def _header(session: PlaySession) -> str:
    s, g = session.setup, session.game
    return (
        f"Spades · {_rules_label(s.rules)} · seed {s.seed} · hand {g.hand_no + 1} · "
        f"you are {seat_title(s.human)}"
    )


def _draw(session: PlaySession, term: Terminal, events: list[str]) -> None:
    term.clear()
    s = session.setup
    term.show(
        ui.screen(
            session.view(),
            s.names,
            s.human,
            _header(session),
            session.last_trick,
            events,
            int(stock_left(session.game.state)[0]),
        )
    )
    term.show(Text("commands: hint · last · score · show · save · help · quit", style="dim"))


def _command(session: PlaySession, term: Terminal, text: str, save_to: Path | None) -> bool:
    """Run a help command; False when the text is no command (so it is a move)."""
    word, _, rest = text.strip().partition(" ")
    cmd = word.lower()
    if cmd not in _COMMANDS or (rest and cmd != "save"):
        return False
    if cmd == "hint":
        action, why = session.hint()
        line = f"hint ({session.setup.hint_agent.display}): {hint_label(action)}"
        term.show(line + (f" — {why}" if why else ""))
    elif cmd == "last":
        term.show(Text.assemble("last ", ui.trick_text(session.last_trick)))
    elif cmd == "score":
        term.show(_sheet(session))
    elif cmd == "show":
        _draw(session, term, [])
    elif cmd == "help":
        term.show(HELP)
    elif cmd == "quit":
        raise Quit
    else:
        path = _try_save(session, term, Path(rest.strip()) if rest.strip() else save_to)
        if path is not None:
            term.show(f"saved to {path}")
    return True


def _try_save(session: PlaySession, term: Terminal, path: Path | None) -> Path | None:
    """Save during the game; a save that fails (a folder, a full or read-only disk) says
    why in one line and the game goes on, with nothing written."""
    target = path or default_save_path()
    try:
        return session.save(target)
    except (OSError, ValueError) as exc:
        reason = disk_error(exc) or (
            f"{exc.strerror}" if isinstance(exc, OSError) and exc.strerror else str(exc)
        )
        term.show(Text(f"not saved to {target}: {reason}; the game goes on", style="bold red"))
        return None


def _human_turn(
    session: PlaySession, term: Terminal, events: list[str], save_to: Path | None
) -> int:
    _draw(session, term, events[-12:])
    while True:
        text = term.read(prompt_line(session))
        if not text.strip() or _command(session, term, text, save_to):
            continue
        try:
            return parse_move(session, text)
        except InputError as exc:
            term.show(Text(str(exc), style="bold red"))


def _loop(session: PlaySession, term: Terminal, save_to: Path | None) -> None:
    s = session.setup
    pending: list[str] = []
    if session.actions:
        pending.append(f"resumed after {len(session.actions)} moves")
        if not term.interactive:
            term.show(pending.pop())
    while not session.game.done:
        human = session.human_to_act
        if human:
            action = _human_turn(session, term, pending, save_to)
            pending = []
        else:
            action = session.bot_action()
        events, record = session.apply(action)
        if term.interactive:
            pending += events  # shown on the next screen
        else:
            for line in events:
                term.show(line)
        if save_to and (human or record):
            _try_save(session, term, save_to)
        if record is not None:
            if pending:
                term.show("\n".join(pending))
                pending = []
            term.show(sheets.hand_summary(record, s.names, s.human, s.rules))
            if not session.game.done:
                term.pause()
    _game_over(session, term)


def _sheet(session: PlaySession) -> RenderableType:
    return sheets.score_sheet(session.records, session.setup.rules, session.setup.human)


def _game_over(session: PlaySession, term: Terminal) -> None:
    g, s = session.game, session.setup
    term.show(_sheet(session))
    term.show(sheets.result_line(s.rules, list(g.scores), g.winner, len(session.records), s.human))


def _first_ctrl_c(signum, frame) -> None:
    """SIGINT during the game: from this press on, further presses are ignored (a key held,
    pressed again), so that the save that follows is written and named; then stop."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    raise KeyboardInterrupt


@contextmanager
def _one_ctrl_c() -> Iterator[None]:
    """The game's Ctrl-C handling (`_first_ctrl_c`) for the block, in the main thread;
    the handler before it is put back afterwards."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, _first_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def play(session: PlaySession, term: Terminal, save_to: Path | None) -> int:
    """Play to the end, or until quit, Ctrl-C or the end of input; saves on the way out
    (to `save_to`, else to a new file in the current folder, named in one line), and
    before a bot that no alarm stops ends the process (`Limits.on_stuck`)."""
    outer = current_limits().on_stuck

    def stuck(err: AgentError) -> None:  # in the watchdog's thread; the game is between moves
        try:
            path = session.save(save_to or default_save_path())
            os.write(1, f"saved to {path}; resume with: spades play --load {path}\n".encode())
        finally:
            if outer is not None:
                outer(err)
            else:
                os.write(2, f"{err}\n".encode(errors="replace"))

    with _one_ctrl_c(), limits(on_stuck=stuck):
        return _play(session, term, save_to)


def _play(session: PlaySession, term: Terminal, save_to: Path | None) -> int:
    try:
        _loop(session, term, save_to)
    except (KeyboardInterrupt, Quit) as exc:
        path = session.save(save_to or default_save_path())  # further Ctrl-Cs are ignored
        term.show(f"\nsaved to {path}; resume with: spades play --load {path}")
        return 130 if isinstance(exc, KeyboardInterrupt) else 0
    except EOFError:  # like quit: the game is saved, to a new file without --save
        path = session.save(save_to or default_save_path())
        term.show(f"end of input: saved to {path}; resume with: spades play --load {path}")
        return 0
    except AgentError:  # a bot failed: the game so far is saved, then the one line of error
        path = session.save(save_to or default_save_path())
        term.show(f"saved to {path}; resume with: spades play --load {path}")
        raise
    if save_to:
        session.save(save_to)
    return 0


# ----------------------------------------------------------------------------- command
def _new_session(args: argparse.Namespace) -> PlaySession:
    rules = build_rules(args.rules or "standard", args.option or [])
    seed = args.seed
    if seed is None:  # fresh entropy, shown in the header so the game can be replayed
        seed = int(np.random.SeedSequence().generate_state(1)[0])
    setup = make_setup(
        rules,
        seed,
        human=args.seat,
        partner=args.partner,
        opponents=args.opponents or "heuristic",
        hint_agent=args.hint_agent or "heuristic",
    )
    return PlaySession(setup)


def run(args: argparse.Namespace) -> int:
    if sys.stdin is None or sys.stdin.closed:
        raise PlayError("stdin is closed; spades play reads the moves from it")
    save_to = Path(args.save) if args.save else None
    if args.load:
        given = [f for f in _GAME_FLAGS if getattr(args, f) is not None]
        if given:
            flag = "--" + given[0].replace("_", "-")
            raise PlayError(f"--load takes the game from the file; drop {flag}")
        session = load(args.load, args.hint_agent)
        save_to = save_to or Path(args.load)
    else:
        if save_to and save_to.exists():
            raise PlayError(
                f"--save {save_to} exists; resume it with --load {save_to}, or pick another name"
            )
        session = _new_session(args)
    if save_to:
        setup = session.setup  # never over an agent's file (the game file itself: resumed)
        specs = [b.spec for b in setup.players if getattr(b, "spec", None) is not None]
        output_file(
            save_to,
            "--save",
            inputs=spec_files([*specs, setup.hint_agent]),
            allow=args.overwrite_input,
        )
    with agent_limits(args):  # a bot that hangs is stopped; its prints go to stderr
        return play(session, Terminal(), save_to)
