"""`spades play`: a person at the table with the bots, in the terminal.

The game is a `SingleGame` on the chosen rules; the person answers for one seat, the
registered agents for the others. Everything that happened is the list of actions since
the start, so a saved game is the setup (rules, seed, players) plus that list, and
loading replays it through the engine. Each bot decision draws from a generator seeded
by (game seed, seat, move number), so a loaded game goes on exactly as it would have
without the break, whatever the bots.

Input: bids `4`, `nil`, `blind nil` (and `see` to decline blind nil), cards `QH`, `10h`,
`q♥` or their number in the shown hand, in RULES.md §6 auction the trump suit
(`trump hearts`, `hearts`, `h`, `♥`), in `two_player`'s draw `keep`/`k` or `discard`/`d`;
commands `hint`, `last`, `score`, `save [FILE]`,
`show`, `help`, `quit`. A wrong input gets a one-line reason and the game goes on.

Any table of RULES.md §6 (2..5 seats, partnerships or one-player teams): with one-player
teams nobody is a partner, every other seat gets the `opponents` agent, and asking for a
partner is refused (one line) rather than silently ignored.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

from agents.base import BaseAgent
from agents.registry import agent_from_json, make_agent, parse_agent
from agents.spec import AgentSpec
from experiments.table.session import (
    HUMAN,
    SAVE_FORMAT,
    SAVE_VERSION,
    Bot,
    GameSession,
    Human,
    Setup,
    ask_agent,
    bot_seed,
    why_illegal,
)
from experiments.table.words import action_label, card_label, seat_title
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    DRAW_DISCARD,
    DRAW_KEEP,
    NAME_TRUMP,
    NUM_CARDS,
    ActionParseError,
    action_to_str,
    str_to_action,
    str_to_card,
    str_to_suit,
)
from spades_env.engine import IllegalActionError, seat_name
from spades_env.observation import seat_view
from spades_env.rules import Rules
from spades_env.state import BID, BLIND, DRAW, EXCHANGE, PLAY, TRUMP
from spades_env.tooling.files import atomic_write

HELP = """\
bids: a number (4), nil, blind nil; when offered blind nil: blind nil or see
cards: QH, 10h, q♥, or the card's number in your hand (1 = leftmost)
trump (auction, when you bid highest): trump hearts, hearts, h or ♥
draw (two_player): keep (k) the card you see, or discard (d) it and take the next
hint   what the hint agent would do, and why
last   the previous trick
score  the score sheet so far
show   draw the table again
save [FILE]  save the game (default: the --save file)
help   this text
quit   save and leave (resume with spades play --load FILE)"""


class PlayError(ValueError):
    """A save file or setup that cannot be played; one line for the user."""


class InputError(ValueError):
    """A wrong input at a prompt: the message is the one-line reason."""


class Quit(Exception):  # noqa: N818 (a request, not an error)
    """The person typed quit."""


def make_setup(
    rules: Rules,
    seed: int,
    human: int | None = None,
    partner: str | AgentSpec | None = None,
    opponents: str | AgentSpec = "heuristic",
    hint_agent: str | AgentSpec = "heuristic",
) -> Setup:
    """The seats' players: the person at `human` (default South, or North at a table of
    two), the partner's agent at the partner's seat (RULES.md §1), the opponents'
    elsewhere; `partner` defaults to heuristic and is refused without partnerships."""
    p = rules.num_players
    if human is None:
        human = 2 if p > 2 else 0
    if not 0 <= human < p:
        names = ", ".join(f"{seat_title(s)} ({s})" for s in range(p))
        raise PlayError(f"seat {human} is not at this table of {p}: the seats are {names}")
    if partner is not None and not rules.partnerships:
        raise PlayError(
            f"{rules.name} has one-player teams, so there is no partner: drop --partner "
            "(--opponents sets every other seat)"
        )
    # each spec read once (a text: here; a file's path made absolute, so that a saved game
    # loads from another folder): an unknown agent, or one that cannot play these rules,
    # fails before the game starts
    mate, others, hint = (
        parse_agent(x, rules) for x in (partner or "heuristic", opponents, hint_agent)
    )
    team = rules.team_of(human)
    players = tuple(
        Human() if s == human else Bot(mate if rules.team_of(s) == team else others)
        for s in range(p)
    )
    return Setup(rules, seed, human, players, hint)


class PlaySession(GameSession):
    """`spades play`'s game: the table's session with the bots and the hint agent built."""

    def __init__(self, setup: Setup) -> None:
        super().__init__(setup)
        self.bots: dict[int, BaseAgent] = {
            s: make_agent(p.spec, bot_seed(setup.seed, s))
            for s, p in enumerate(setup.players)
            if s != setup.human and isinstance(p, Bot) and p.spec is not None
        }
        self.hinter = make_agent(setup.hint_agent, bot_seed(setup.seed, len(setup.players)))

    def _ask(self, agent: BaseAgent, seat: int) -> int:
        return ask_agent(self.game, agent, seat, self.setup.seed, len(self.actions))

    def bot_action(self) -> int:
        seat = self.game.to_act
        return self._ask(self.bots[seat], seat)

    def hint(self) -> tuple[int, str | None]:
        """The hint agent's choice for the person, and its reason when it gives one."""
        agent = self.hinter
        action = self._ask(agent, self.setup.human)
        reasons = getattr(agent, "last_reasons", None)
        if not reasons and hasattr(agent, "explain"):
            reasons = agent.explain(seat_view(self.game.state))
        return action, (reasons[0] if reasons else None)

    # ----------------------------------------------------------------- save / load
    def to_json(self) -> dict[str, Any]:
        s, g = self.setup, self.game
        return {
            "format": SAVE_FORMAT,
            "version": SAVE_VERSION,
            "rules": s.rules.to_dict(),
            "seed": s.seed,
            "human_seat": s.human,
            "players": [HUMAN if isinstance(p, Human) else p.spec.to_json() for p in s.players],
            "hint_agent": s.hint_agent.to_json(),
            "actions": [[seat, action_to_str(a)] for seat, a in self.actions],
            "hands_done": len(self.records),
            "scores": list(g.scores),
            "bags": list(g.bags),
            "game_over": g.done,
        }

    def save(self, path: str | Path) -> Path:
        """Write the save file atomically (a crash or a full disk never leaves half a file,
        and the temporary file is made in the save's own folder and removed on failure).
        A folder is refused (`PlayError`)."""
        path = Path(path)
        if path.is_dir():
            raise PlayError(f"{path} is a folder; give a file name to save to")
        path.parent.mkdir(parents=True, exist_ok=True)
        lines = [
            f" {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}"
            for k, v in self.to_json().items()
        ]
        return atomic_write(path, "{\n" + ",\n".join(lines) + "\n}\n")


def load(path: str | Path, hint_agent: str | AgentSpec | None = None) -> PlaySession:
    """Rebuild a saved game by replaying its actions through the engine."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise PlayError(f"{path}: no such file") from None
    except json.JSONDecodeError as exc:
        raise PlayError(f"{path}: not a saved game ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != SAVE_FORMAT:
        raise PlayError(f"{path}: not a saved game of spades play")
    if data.get("version") != SAVE_VERSION:
        raise PlayError(f"{path}: save version {data.get('version')}; this reads {SAVE_VERSION}")
    try:
        session, actions = _saved_session(data, hint_agent)
    except PlayError as exc:
        raise PlayError(f"{path}: {exc}") from None
    except (KeyError, TypeError, ValueError, OverflowError) as exc:
        what = f"lacks {exc}" if isinstance(exc, KeyError) else f"holds a bad value ({exc})"
        raise PlayError(f"{path}: not a valid saved game: it {what}; the file is damaged") from None
    _replay(session, actions, path)
    if list(session.game.scores) != data.get("scores", list(session.game.scores)):
        raise PlayError(f"{path}: the replayed scores differ from the saved ones")
    return session


def _saved_session(
    data: dict[str, Any], hint_agent: str | AgentSpec | None
) -> tuple[PlaySession, list]:
    """The session a save starts from, and its actions as (seat, text) pairs."""
    seed, seat = data["seed"], data["human_seat"]
    for name, value in (("seed", seed), ("human_seat", seat)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            raise PlayError(f"{name} must be a non-negative integer, got {value!r}")
    actions = data["actions"]
    if not isinstance(actions, list) or not all(
        isinstance(a, list) and len(a) == 2 and isinstance(a[0], int) and isinstance(a[1], str)
        for a in actions
    ):
        raise PlayError("actions must be [seat, action] pairs")
    players = data["players"]
    if not isinstance(players, list):
        raise PlayError("players must be a list")
    # each stored spec read once, here
    setup = Setup(
        Rules.from_dict(data["rules"]),
        seed,
        seat,
        tuple(Human() if p == HUMAN else Bot(agent_from_json(p)) for p in players),
        parse_agent(hint_agent)
        if hint_agent is not None
        else agent_from_json(data.get("hint_agent", "heuristic")),
    )
    return PlaySession(setup), actions


def _replay(session: PlaySession, actions: list, path: str | Path) -> None:
    for k, (seat, text) in enumerate(actions):
        g = session.game
        where = f"{path}: action {k + 1} ({seat_name(seat)} {text})"
        if g.done or g.to_act != seat:
            raise PlayError(f"{where}: it is not that seat's turn; the file is damaged")
        try:
            session.apply(str_to_action(text))
        except (ActionParseError, IllegalActionError) as exc:
            raise PlayError(f"{where}: {exc}") from None


def default_save_path() -> Path:
    """A new file in the current folder, named by the time (never an existing one)."""
    stamp = f"spades-play-{datetime.now():%Y%m%d-%H%M%S}"
    path, k = Path(f"{stamp}.json"), 1
    while path.exists():
        k += 1
        path = Path(f"{stamp}-{k}.json")
    return path


# ----------------------------------------------------------------------------- input
def prompt_line(session: PlaySession) -> str:
    """The question for the person, ending with every legal choice."""
    g = session.game
    legal = g.legal_list()
    if g.phase in (PLAY, EXCHANGE):
        order = {c: i for i, c in enumerate(session.hand())}
        legal.sort(key=lambda c: order.get(c, NUM_CARDS))
    choices = ", ".join(action_label(a) for a in legal)
    if g.phase == DRAW:  # RULES.md §6 two_player: the top card of the stock
        top = card_label(int(session.view().looking[0]))
        question = f"You see {top}: keep it, or discard it and take the next card"
    else:
        question = {
            BLIND: "Blind nil? Decide before you look at your cards",
            BID: "Your bid",
            EXCHANGE: "Pass a card to your partner",
            PLAY: "Your card (type it or its number)",
            TRUMP: "You bid highest: name the trump suit (hearts, h or ♥)",
        }[g.phase]
    return f"{question} — legal: {choices}"


_DRAW_WORDS = {"keep": DRAW_KEEP, "k": DRAW_KEEP, "discard": DRAW_DISCARD, "d": DRAW_DISCARD}


def parse_move(session: PlaySession, text: str) -> int:
    """The legal action a typed answer names, or an InputError with the reason."""
    g = session.game
    t = text.strip()
    if g.phase in (PLAY, EXCHANGE):
        hand = session.hand()
        if t.isdigit():
            k = int(t)
            if not 1 <= k <= len(hand):
                raise InputError(f"there is no card {k}: your cards are numbered 1 to {len(hand)}")
            action = hand[k - 1]
        else:
            try:
                action = str_to_card(t)
            except ActionParseError:
                raise InputError(
                    f"{t!r} is not a card: type it like QH, 10h or q♥, or its number"
                ) from None
    elif g.phase == DRAW:  # RULES.md §6 two_player: `keep`/`k`, `discard`/`d`
        action = _DRAW_WORDS.get(t.lower(), -1)
        if action < 0:
            raise InputError(
                f"{t!r} is not a draw: type keep (k) to keep the card you see, "
                "or discard (d) to take the next"
            )
    elif g.phase == TRUMP:  # RULES.md §6 auction: `trump hearts`, `hearts`, `h`, `♥`
        try:
            named = t.lower().startswith("trump")
            action = str_to_action(t) if named else NAME_TRUMP + str_to_suit(t)
        except ActionParseError:
            raise InputError(f"{t!r} is not a suit: type hearts, h or ♥, or trump hearts") from None
    else:
        try:
            action = str_to_action(t)
        except ActionParseError:
            raise InputError(f"{t!r} is not a bid: type nil, a number, or blind nil") from None
        top = session.setup.rules.max_bid
        if g.phase == BID and BID_BASE + top < action < BLIND_NIL:
            raise InputError(f"bids go from nil to {top}")
    if action not in g.legal_list():
        raise InputError(why_illegal(session, action))
    return action
