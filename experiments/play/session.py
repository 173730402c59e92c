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
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.registry import (
    canonical_spec,
    check_agent_rules,
    display_name,
    make_agent,
    parse_spec,
)
from experiments.play import screen as ui
from spades_env.agent_calls import AgentError, call_agent
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    DRAW_DISCARD,
    DRAW_KEEP,
    NAME_TRUMP,
    NUM_CARDS,
    SEE_HAND,
    SUIT_NAMES,
    SUIT_SYMBOLS,
    ActionParseError,
    action_to_str,
    str_to_action,
    str_to_card,
    str_to_suit,
)
from spades_env.core.rule_functions import partner_of
from spades_env.engine import IllegalActionError, blind_allowed, explain_illegal, seat_name
from spades_env.files import atomic_write
from spades_env.observation import SeatView, seat_view
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import BID, BLIND, DRAW, EXCHANGE, PLAY, TRUMP

SAVE_FORMAT, SAVE_VERSION = "spades-play", 1
HUMAN = "human"
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


@dataclass(frozen=True)
class Setup:
    """Everything that defines a game besides the actions."""

    rules: Rules
    seed: int
    human: int  # the person's seat
    players: tuple[str, ...]  # agent spec per seat; HUMAN at the person's seat
    hint_agent: str = "heuristic"

    @property
    def names(self) -> list[str]:
        """Each seat's name on the screen: an agent's `NAME=` (or spec), HUMAN."""
        return [p if p == HUMAN else display_name(p) for p in self.players]


def make_setup(
    rules: Rules,
    seed: int,
    human: int | None = None,
    partner: str | None = None,
    opponents: str = "heuristic",
    hint_agent: str = "heuristic",
) -> Setup:
    """The seats' players: the person at `human` (default South, or North at a table of
    two), the partner's agent at the partner's seat (RULES.md §1), the opponents'
    elsewhere; `partner` defaults to heuristic and is refused without partnerships."""
    p = rules.num_players
    if human is None:
        human = 2 if p > 2 else 0
    if not 0 <= human < p:
        names = ", ".join(f"{ui.seat_title(s)} ({s})" for s in range(p))
        raise PlayError(f"seat {human} is not at this table of {p}: the seats are {names}")
    if partner is not None and not rules.partnerships:
        raise PlayError(
            f"{rules.name} has one-player teams, so there is no partner: drop --partner "
            "(--opponents sets every other seat)"
        )
    # a file's path absolute, so that a saved game loads from another folder
    partner, opponents, hint_agent = (
        canonical_spec(x) for x in (partner or "heuristic", opponents, hint_agent)
    )
    for spec in (partner, opponents, hint_agent):
        parse_spec(spec)  # an unknown agent fails here, before the game starts
        check_agent_rules(spec, rules)  # so does one that cannot play these rules
    team = rules.team_of(human)
    players = tuple(
        HUMAN if s == human else partner if rules.team_of(s) == team else opponents
        for s in range(p)
    )
    return Setup(rules, seed, human, players, hint_agent)


def bot_seed(seed: int, seat: int) -> int:
    """The seed of seat `seat`'s bot in a game of seed `seed` (the web's tables use it too)."""
    return int(np.random.SeedSequence([seed, seat]).generate_state(1)[0])


def ask_agent(game: SingleGame, agent: BaseAgent, seat: int, seed: int, moves: int) -> int:
    """`agent`'s action for `seat` in `game` after `moves` actions of a game of seed
    `seed`: one guarded, checked call (spades_env.agent_calls), its randomness drawn from
    (seed, seat, moves), so a replayed game asks the same (see the module docstring)."""
    if hasattr(agent, "rng"):
        agent.rng = np.random.default_rng([seed, seat, moves])
    obs = game.observe(seat)[None] if agent.needs_obs else None
    mask = game.legal_mask().astype(bool)[None]
    try:
        actions = call_agent(
            agent, seat_view(game.state), obs, mask, seats=[seat], state=game.state
        )
    except AgentError as exc:
        raise exc.relocated(f"hand {int(game.hand_no) + 1}") from None
    return int(actions[0])


class PlaySession:
    """The game, the bots, and what the screen needs to remember (tricks, hand records)."""

    def __init__(self, setup: Setup, agents: bool = True) -> None:
        """`agents=False`: the game alone, no agent built (the web table's server, whose
        agents live in another process: `experiments.web.seats`)."""
        self.setup = setup
        self.game = SingleGame(setup.rules, seed=setup.seed)
        self.bots: dict[int, BaseAgent] = {}
        self.hinter: BaseAgent | None = None
        if agents:
            self.bots = {
                s: make_agent(spec, bot_seed(setup.seed, s))
                for s, spec in enumerate(setup.players)
                if s != setup.human and spec != HUMAN  # (the web seats people in several)
            }
            self.hinter = make_agent(setup.hint_agent, bot_seed(setup.seed, len(setup.players)))
        self.actions: list[tuple[int, int]] = []  # (seat, action) since the start
        self.records: list[dict[str, Any]] = []  # hand records of the finished hands
        self.trick: ui.Trick | None = None  # the trick on the table
        self.last_trick: ui.Trick | None = None

    @property
    def human_to_act(self) -> bool:
        return not self.game.done and self.game.to_act == self.setup.human

    def view(self) -> SeatView:
        """What the person's seat knows."""
        return seat_view(self.game.state, np.array([self.setup.human]))

    def hand(self) -> list[int]:
        """The person's cards in screen order (empty while face down for blind nil)."""
        return ui.visible_hand(self.view())

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

    def apply(self, action: int) -> tuple[list[str], dict[str, Any] | None]:
        """Play the action of the seat to act; the event lines and any finished hand."""
        g = self.game
        seat, phase, before = g.to_act, g.phase, list(g.tricks_won)
        number = g.tricks_played + 1
        mine = seat == self.setup.human
        drawn = self._draw_cards(action) if phase == DRAW and mine else (-1, -1)
        info = g.step(action)  # raises IllegalActionError; nothing changes then
        self.actions.append((seat, action))
        events = [describe(seat, phase, action, mine, *drawn)]
        record = None
        if info.finished is not None:
            record = hand_records(self.setup.rules, info.finished)[0]
            self.records.append(record)
        if phase != PLAY:
            return events, record
        trick = self.trick = self.trick or ui.Trick(number, [])
        trick.plays.append((seat, action))
        if len(trick.plays) == self.setup.rules.num_players:
            # the winner is the seat whose trick count the engine raised
            after = record["tricks"] if record else g.tricks_won
            trick.winner = next(s for s in range(len(after)) if after[s] != before[s])
            self.last_trick, self.trick = trick, None
            events.append(f"{ui.seat_title(trick.winner)} wins trick {number}")
        return events, record

    def _draw_cards(self, action: int) -> tuple[int, int]:
        """RULES.md §6 two_player: (the card the person looks at, the card they get)."""
        state = self.game.state
        top = int(state.stock[0, int(state.stock_pos[0])])
        nxt = int(state.stock[0, int(state.stock_pos[0]) + 1])
        return top, top if action == DRAW_KEEP else nxt

    # ----------------------------------------------------------------- save / load
    def to_json(self) -> dict[str, Any]:
        s, g = self.setup, self.game
        return {
            "format": SAVE_FORMAT,
            "version": SAVE_VERSION,
            "rules": s.rules.to_dict(),
            "seed": s.seed,
            "human_seat": s.human,
            "players": list(s.players),
            "hint_agent": s.hint_agent,
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


def load(path: str | Path, hint_agent: str | None = None) -> PlaySession:
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


def _saved_session(data: dict[str, Any], hint_agent: str | None) -> tuple[PlaySession, list]:
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
    setup = Setup(
        Rules.from_dict(data["rules"]),
        seed,
        seat,
        tuple(data["players"]),
        hint_agent or data.get("hint_agent", "heuristic"),
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
def action_label(action: int) -> str:
    """How a prompt lists the action, which is also how it may be typed."""
    if 0 <= action < NUM_CARDS:
        return ui.card_label(action)
    return "see" if action == SEE_HAND else action_to_str(action)


def hint_label(action: int) -> str:
    if 0 <= action < NUM_CARDS:
        return f"play {ui.card_label(action)}"
    if action == SEE_HAND:
        return "see your cards (no blind nil)"
    if action >= NAME_TRUMP:  # RULES.md §6 auction
        return f"name {SUIT_NAMES[action - NAME_TRUMP]} trump"
    if action == DRAW_KEEP:  # RULES.md §6 two_player
        return "keep the card you see"
    if action == DRAW_DISCARD:
        return "discard the card you see and take the next"
    return action_to_str(action) if action == BLIND_NIL else f"bid {action_to_str(action)}"


def describe(
    seat: int, phase: int, action: int, human: bool, looked: int = -1, taken: int = -1
) -> str:
    """One event line. A draw (RULES.md §6 two_player) names cards only to the drawer:
    `looked` is the card they looked at, `taken` the one that went to their hand."""
    who = "You" if human else ui.seat_title(seat)
    if phase == DRAW:
        if not human:
            return f"{who} draws"
        if action == DRAW_KEEP:
            return f"You keep {ui.card_label(looked)}"
        drop, take = ui.card_label(looked), ui.card_label(taken)
        return f"You discard {drop} and take the next card ({take})"
    if phase == BLIND:
        return f"{who}: blind nil!" if action == BLIND_NIL else f"{who}: no blind nil"
    if phase == BID:
        return f"{who} bid{'' if human else 's'} {action_to_str(action)}"
    if phase == EXCHANGE:
        return f"{who} pass{'' if human else 'es'} a card to partner"
    if phase == TRUMP:  # RULES.md §6 auction
        suit = action - NAME_TRUMP
        return f"{who} name{'' if human else 's'} {SUIT_SYMBOLS[suit]} {SUIT_NAMES[suit]} trump"
    return f"{who} play{'' if human else 's'} {ui.card_label(action)}"


def prompt_line(session: PlaySession) -> str:
    """The question for the person, ending with every legal choice."""
    g = session.game
    legal = g.legal_list()
    if g.phase in (PLAY, EXCHANGE):
        order = {c: i for i, c in enumerate(session.hand())}
        legal.sort(key=lambda c: order.get(c, NUM_CARDS))
    choices = ", ".join(action_label(a) for a in legal)
    if g.phase == DRAW:  # RULES.md §6 two_player: the top card of the stock
        top = ui.card_label(int(session.view().looking[0]))
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


def _blind_reason(session: PlaySession) -> str:
    """Why blind nil is not on offer now (RULES.md §2 option blind_nil, §6 suicide): the
    engine decides (`engine.blind_allowed`), this only words it."""
    rules, g, seat = session.setup.rules, session.game, session.setup.human
    if rules.blind_nil == "never":
        return "blind nil is not played under these rules"
    if blind_allowed(g.state, [0], [seat])[0]:
        return "blind nil must be declared before you look at your cards"
    if rules.bid_constraint == "suicide" and g.bids[partner_of(seat, rules.num_players)] == 0:
        return "your partner bid nil, and under suicide a partnership has one nil"
    if not rules.partnerships:
        return "blind nil is only allowed when you trail a player by 100"
    return "blind nil is only allowed when your team trails by 100"


def why_illegal(session: PlaySession, action: int) -> str:
    """The one-line reason a parsed action is illegal now, in the person's words."""
    g = session.game
    card = 0 <= action < NUM_CARDS
    if g.phase == BLIND:
        return "first decide: type 'blind nil' to bid it unseen, or 'see' to look at your cards"
    if g.phase == TRUMP:
        return "name the trump suit first: type trump hearts, hearts, h or ♥"
    if g.phase == DRAW:  # RULES.md §6 two_player
        return "you are drawing from the stock: type keep (k) or discard (d)"
    if action in (DRAW_KEEP, DRAW_DISCARD):
        return "keep and discard are for drawing from the stock, which is over"
    if action >= NAME_TRUMP:
        return "only the highest bidder names trump, once the bidding is over"
    if g.phase == BID and action == BLIND_NIL:
        return _blind_reason(session)
    if g.phase == BID and (action == SEE_HAND or card):
        return "it is your turn to bid: type nil or a number"
    if g.phase != BID and not card:
        return "a card is expected: type it like QH, 10h or q♥, or its number in your hand"
    if card and action not in session.hand():
        return f"you do not hold {ui.card_label(action)}"
    reason = re.sub(r" \(RULES\.md[^)]*\)$", "", explain_illegal(g.state, 0, action))
    return "you " + reason if reason.startswith("must ") else reason


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
