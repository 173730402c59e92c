"""The game at a table, shared by the terminal (`spades play`) and the browser
(`spades serve`): who sits where (`Human` or `Bot`, values), the game and its history
(`GameSession`), a bot's seeded decision (`ask_agent`), and the reason a person's action
is illegal, in their words (`why_illegal`).

Everything that happened is the list of actions since the start, so a game is its setup
(rules, seed, seats) plus that list, and replaying it through the engine rebuilds it.
Each bot decision draws from a generator seeded by (game seed, seat, move number), so a
replayed game goes on exactly as it would have without the break, whatever the bots.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.base import BaseAgent
from agents.spec import AgentSpec
from experiments.table.words import Trick, card_label, describe, seat_title, visible_hand
from spades_env.agent_calls import AgentError, call_agent, described
from spades_env.cards import BLIND_NIL, DRAW_DISCARD, DRAW_KEEP, NAME_TRUMP, NUM_CARDS, SEE_HAND
from spades_env.core.rule_functions import partner_of
from spades_env.engine import blind_allowed, explain_illegal
from spades_env.observation import SeatView, seat_view
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.single import SingleGame
from spades_env.state import BID, BLIND, DRAW, PLAY, TRUMP

#: a person's seat in a save file's players and in `Setup.names`
HUMAN = "human"
#: the file `spades play --save` writes (the browser's replays read it too)
SAVE_FORMAT, SAVE_VERSION = "spades-play", 1


@dataclass(frozen=True)
class Human:
    """A person's seat (`name`: how tables and logs show them)."""

    name: str = HUMAN


@dataclass(frozen=True)
class Bot:
    """An agent's seat: its spec, parsed once where it entered (None: an agent the program
    cannot build now, shown by `label`)."""

    spec: AgentSpec | None
    label: str = ""

    @property
    def name(self) -> str:
        return self.spec.display if self.spec is not None else self.label


#: who sits in a seat
Seat = Human | Bot


@dataclass(frozen=True)
class Setup:
    """Everything that defines a game besides the actions."""

    rules: Rules
    seed: int
    human: int  # the person's seat
    players: tuple[Seat, ...]  # who sits in each seat
    hint_agent: AgentSpec | None = None  # what the person's hints ask

    @property
    def names(self) -> list[str]:
        """Each seat's name on the screen: an agent's `NAME=` (or spec), HUMAN."""
        return [HUMAN if isinstance(p, Human) else p.name for p in self.players]


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
    hand = f"hand {int(game.hand_no) + 1}"
    try:
        with described(lambda _game: hand):  # (a watchdog's words)
            actions = call_agent(
                agent, seat_view(game.state), obs, mask, seats=[seat], state=game.state
            )
    except AgentError as exc:
        raise exc.relocated(hand) from None
    return int(actions[0])


class GameSession:
    """The game and what a table remembers of it: the actions, the finished hands'
    records, the trick on the table and the last one. `setup.human` is the seat whose
    words the event lines use ("You ..."). It builds no agent."""

    def __init__(self, setup: Setup) -> None:
        self.setup = setup
        self.game = SingleGame(setup.rules, seed=setup.seed)
        self.actions: list[tuple[int, int]] = []  # (seat, action) since the start
        self.records: list[dict[str, Any]] = []  # hand records of the finished hands
        self.trick: Trick | None = None  # the trick on the table
        self.last_trick: Trick | None = None

    @property
    def human_to_act(self) -> bool:
        return not self.game.done and self.game.to_act == self.setup.human

    def view(self, seat: int | None = None) -> SeatView:
        """What `seat` (default the person's) knows."""
        seat = self.setup.human if seat is None else seat
        return seat_view(self.game.state, np.array([seat]))

    def hand(self, seat: int | None = None) -> list[int]:
        """The seat's cards in screen order (empty while face down for blind nil)."""
        return visible_hand(self.view(seat))

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
        trick = self.trick = self.trick or Trick(number, [])
        trick.plays.append((seat, action))
        if len(trick.plays) == self.setup.rules.num_players:
            # the winner is the seat whose trick count the engine raised
            after = record["tricks"] if record else g.tricks_won
            trick.winner = next(s for s in range(len(after)) if after[s] != before[s])
            self.last_trick, self.trick = trick, None
            events.append(f"{seat_title(trick.winner)} wins trick {number}")
        return events, record

    def _draw_cards(self, action: int) -> tuple[int, int]:
        """RULES.md §6 two_player: (the card the person looks at, the card they get)."""
        state = self.game.state
        top = int(state.stock[0, int(state.stock_pos[0])])
        nxt = int(state.stock[0, int(state.stock_pos[0]) + 1])
        return top, top if action == DRAW_KEEP else nxt


def _blind_reason(session: GameSession, seat: int) -> str:
    """Why blind nil is not on offer now (RULES.md §2 option blind_nil, §6 suicide): the
    engine decides (`engine.blind_allowed`), this only words it."""
    rules, g = session.setup.rules, session.game
    if rules.blind_nil == "never":
        return "blind nil is not played under these rules"
    if blind_allowed(g.state, [0], [seat])[0]:
        return "blind nil must be declared before you look at your cards"
    if rules.bid_constraint == "suicide" and g.bids[partner_of(seat, rules.num_players)] == 0:
        return "your partner bid nil, and under suicide a partnership has one nil"
    if not rules.partnerships:
        return "blind nil is only allowed when you trail a player by 100"
    return "blind nil is only allowed when your team trails by 100"


def why_illegal(session: GameSession, action: int, seat: int | None = None) -> str:
    """The one-line reason a parsed action is illegal now for `seat` (default the
    person's), in their words."""
    g = session.game
    seat = session.setup.human if seat is None else seat
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
        return _blind_reason(session, seat)
    if g.phase == BID and (action == SEE_HAND or card):
        return "it is your turn to bid: type nil or a number"
    if g.phase != BID and not card:
        return "a card is expected: type it like QH, 10h or q♥, or its number in your hand"
    if card and action not in session.hand(seat):
        return f"you do not hold {card_label(action)}"
    reason = re.sub(r" \(RULES\.md[^)]*\)$", "", explain_illegal(g.state, 0, action))
    return "you " + reason if reason.startswith("must ") else reason
