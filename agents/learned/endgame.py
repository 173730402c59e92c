"""The endgame of a network agent: a determinized exact solve of the last tricks.

`learned:endgame=K,worlds=W` plays the last K tricks of a hand (RULES.md §3 card play,
`tricks_played >= hand_size - K`) by determinized double-dummy search, as Spades-AI pairs
its policy network with an exact solver for the last tricks. For each such decision:

- W worlds (the hidden hands) are drawn uniformly among those consistent with what the
  seat knows (`agents.montecarlo.sampling.knowledge`: counts, voids, the exchange): by the compiled
  rejection sampler of `agents.dd.endgame_kernel` (a uniform deal of the unseen cards, kept
  if it agrees), or by the exact sampler of `agents.montecarlo.sampling` where the rules constrain
  spade counts (RULES.md §6 mirror / whiz) or rejection runs out of tries;
- every legal card is valued exactly in every world (`agents.dd.endgame_kernel`, tested
  against the double-dummy solver `agents.dd`) under the relative SCORE objective of the
  seat's team (`agents.dd.hand_values`: its RULES.md §4 hand score, nil bids and bags
  included, minus the other team's), which values ducking as a nil bidder and covering
  a partner's nil;
- the card of best mean value is played. Cards within `TIE` of the best are ties, and the
  network's own preference breaks them (the solver sees many cards as equal where the
  network, reading the whole hand's history, still prefers one).

`setnil=N` does the same for the opponents' nil (N > K): while a nil bid of the other
team is alive and none of the seat's team, the last N tricks are solved for that nil, the
seat's side now trying to make the nil seat take a trick (the value: the share of worlds
where it can be forced to).

`nil=N` also solves the last N tricks (N > K) of a hand while a nil bid of the seat's team
is alive (the seat's own, else its partner's: RULES.md §4, no trick taken yet), for that
nil alone: the share of worlds in which the nil seat can be kept from taking a trick
against the best defence, a search that ends as soon as the nil seat takes one
(`agents.dd.endgame_kernel`, values 0 or 1); the network breaks ties as above. The last K
tricks keep the score objective, which counts the nil with everything else.

Two root cards of the seat with no unplayed card between them have the same value in
every world (the set of unplayed cards is what the seat knows), so one is solved and the
value copied; and the search cuts a subtree once every way its remaining tricks can fall
lies outside its window (the table's reachable values). Both leave every value exact.

Earlier decisions (bids, the first tricks) are the network's, and so is every decision
with a single legal card. The random draws come from the agent's generator, so a seeded
agent plays the same cards on the same games. All decisions of one batch are solved in
one compiled call.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import numpy.typing as npt

from agents.dd.endgame_kernel import sample_rows, solve_rows
from agents.dd.objective import hand_values
from agents.dd.position import check_rules
from agents.kernels.streams import new_stream
from agents.montecarlo.sampling import knowledge, sample_worlds
from spades_env.engine import PHASE_BASE
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import PLAY

#: mean values (points) closer than this to the best are ties for the network to break
TIE = 1e-6
MAX_TRICKS = 13
MAX_WORLDS = 4096
_TABLES = 512  # value tables kept (one per bids, blind bids and team)


def check_endgame(tricks: int, worlds: int, nil: int = 0) -> None:
    """Valid endgame options (ValueError, one line)."""
    if not 0 <= tricks <= MAX_TRICKS:
        raise ValueError(f"endgame={tricks}: the solved tricks at the end, 0 (off) to {MAX_TRICKS}")
    if not 1 <= worlds <= MAX_WORLDS:
        raise ValueError(f"worlds={worlds}: sampled worlds per decision, 1 to {MAX_WORLDS}")
    if not 0 <= nil <= MAX_TRICKS:
        raise ValueError(
            f"nil={nil}: the last tricks solved for a live nil of the team, 0 (off) to {MAX_TRICKS}"
        )


def live_nil(view: SeatView) -> npt.NDArray[np.int64]:
    """(B,) the seat of the deciding seat's team whose nil bid is still kept (no trick
    taken yet; the seat itself first, then its partner), -1 where none. RULES.md §4:
    a nil (or blind nil) is kept if its seat takes no trick."""
    rows = np.arange(view.batch_size)
    out = np.full(view.batch_size, -1, dtype=np.int64)
    if not (view.rules.partnerships and view.rules.num_players == 4):
        return out
    seat = view.seat.astype(np.int64)
    for s in ((seat + 2) % 4, seat):  # the seat's own nil wins where both are alive
        alive = (view.bids[rows, s] == 0) & (view.tricks_won[rows, s] == 0)
        out[alive] = s[alive]
    return out


def opponent_live_nil(view: SeatView) -> npt.NDArray[np.int64]:
    """(B,) the seat of the other team whose nil bid is still kept (the seat after the
    deciding seat first, then the one before it), -1 where none: the nil to set."""
    rows = np.arange(view.batch_size)
    out = np.full(view.batch_size, -1, dtype=np.int64)
    if not (view.rules.partnerships and view.rules.num_players == 4):
        return out
    seat = view.seat.astype(np.int64)
    for s in ((seat + 3) % 4, (seat + 1) % 4):  # the next seat's nil wins where both are
        alive = (view.bids[rows, s] == 0) & (view.tricks_won[rows, s] == 0)
        out[alive] = s[alive]
    return out


class EndgameSolver:
    """Determinized exact card play for the last `tricks` tricks (module doc); with
    `nil`, also the last `nil` tricks of a hand where the seat's team has a live nil."""

    def __init__(
        self, tricks: int, worlds: int, rng: np.random.Generator, nil: int = 0, setnil: int = 0
    ) -> None:
        check_endgame(tricks, worlds, nil)
        check_endgame(tricks, worlds, setnil)
        self.tricks, self.worlds, self.rng = int(tricks), int(worlds), rng
        self.nil, self.setnil = int(nil), int(setnil)
        self._tables: OrderedDict[tuple, int] = OrderedDict()
        self._table_rows = np.zeros((_TABLES, 14, 14, 14))  # filled as keys come
        self.solves = 0  # worlds solved (distinct worlds of each decision), for reports

    def games(self, view: SeatView) -> npt.NDArray[np.bool_]:
        """(B,) the games whose decision is the solver's: card play in the last
        `tricks` tricks, with more than one legal card."""
        if self.tricks == 0 and self.nil == 0 and self.setnil == 0:
            return np.zeros(view.batch_size, dtype=bool)
        late = view.tricks_played >= view.rules.hand_size - self.tricks
        if self.nil > self.tricks or self.setnil > self.tricks:
            own = live_nil(view)
        if self.nil > self.tricks:
            nil_late = view.tricks_played >= view.rules.hand_size - self.nil
            late |= nil_late & (own >= 0)
        if self.setnil > self.tricks:
            set_late = view.tricks_played >= view.rules.hand_size - self.setnil
            late |= set_late & (opponent_live_nil(view) >= 0) & (own < 0)
        several = np.bitwise_count(view.legal) > 1
        return (view.phase == PLAY) & late & several

    def _nil_seats(self, view: SeatView, games: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """(G,) the live nil each game is solved for (before the last `tricks` tricks,
        whose score objective counts nils itself), -1 for the score objective."""
        out = np.full(len(games), -1, dtype=np.int64)
        if self.nil <= self.tricks and self.setnil <= self.tricks:
            return out  # every game is in the last `tricks`: the score objective
        h, sub = view.rules.hand_size, view.take(games)
        early = view.tricks_played[games] < h - self.tricks
        own = live_nil(sub)
        if self.setnil > self.tricks:  # the opponents' nil, where the team has none alive
            want = early & (view.tricks_played[games] >= h - self.setnil) & (own < 0)
            out[want] = opponent_live_nil(sub)[want]
        if self.nil > self.tricks:
            want = early & (view.tricks_played[games] >= h - self.nil) & (own >= 0)
            out[want] = own[want]
        return out

    def values(self, view: SeatView, games: npt.ArrayLike) -> list[dict[int, float]]:
        """Per game of `games`: the mean value of each legal card over the sampled worlds
        (the team's relative hand score, `agents.dd.hand_values`; before the last
        `tricks` tricks, in a hand with a live nil of the team, the share of worlds where
        the nil is kept)."""
        check_rules(view.rules)
        games_a = np.asarray(games, dtype=np.int64)
        g_count, w_count = len(games_a), self.worlds
        worlds = self._worlds(view, games_a)  # (G * W, 4)
        own = np.repeat(np.arange(g_count), w_count)
        g_row = games_a[own]
        self.solves += len(own)
        per_game = [_bits(int(view.legal[g])) for g in games_a.tolist()]
        cards = np.full((g_count, 13), -1, dtype=np.int64)
        for i, c in enumerate(per_game):
            cards[i, : len(c)] = c
        table_of = np.array([self._table(view, g) for g in games_a.tolist()], dtype=np.int64)
        info = np.stack(
            [
                view.leader[g_row], view.trick_size[g_row], view.lead_suit[g_row],
                view.broken[g_row], view.tricks_played[g_row], table_of[own],
                self._nil_seats(view, games_a)[own],
            ],
            axis=1,
        ).astype(np.int64)  # fmt: skip
        out = solve_rows(
            worlds,
            view.trick[g_row].astype(np.int64),
            view.tricks_won[g_row].astype(np.int64),
            info,
            cards[own],
            self._table_rows,
            view.rules.hand_size,
            view.rules.first_lead == "two_of_clubs",
        )
        mean = out.reshape(g_count, w_count, -1).mean(axis=1)
        base = int(PHASE_BASE[PLAY])
        return [
            {base + int(card): float(v) for card, v in zip(c, mean[i], strict=False)}
            for i, c in enumerate(per_game)
        ]

    def _worlds(self, view: SeatView, games: npt.NDArray[np.int64]) -> npt.NDArray[np.int64]:
        """(G * W, 4) int64: W worlds per game, uniform among those consistent with what
        the seat knows (`agents.montecarlo.sampling.knowledge`): the compiled rejection sampler, or
        the exact sampler of `agents.montecarlo.sampling` where that one has too few tries or the
        rules constrain spade counts (RULES.md §6 mirror / whiz)."""
        p, w = view.rules.num_players, self.worlds
        know = [knowledge(view, g) for g in games.tolist()]
        known = np.array([k.known for k in know], dtype=np.int64).reshape(-1, p)
        need = np.array([k.need for k in know], dtype=np.int64).reshape(-1, p)
        allowed = np.array([k.allowed for k in know], dtype=np.int64).reshape(-1, p)
        free_cards = [_bits(k.free) for k in know]
        free = np.full((len(know), max(map(len, free_cards), default=0) + 1), -1, dtype=np.int64)
        for i, c in enumerate(free_cards):
            free[i, : len(c)] = c
        out = sample_rows(known, free, need, allowed, w, new_stream(self.rng))
        for i, k in enumerate(know):
            rows = slice(i * w, (i + 1) * w)
            if k.discards or max(k.spades, default=-1) >= 0 or (out[rows] < 0).any():
                exact = sample_worlds(view, w, self.rng, game=int(games[i]))
                out[rows] = exact.astype(np.int64)
        return out

    def _table(self, view: SeatView, g: int) -> int:
        """Row of `_table_rows` holding game g's value table (built once per key)."""
        team = view.rules.team_of(int(view.seat[g]))
        key = (view.rules, tuple(view.bids[g].tolist()), tuple(view.blind[g].tolist()), team)
        row = self._tables.get(key)
        if row is not None:
            self._tables.move_to_end(key)
            return row
        table = value_table(view.rules, view.bids[g], view.blind[g], team)
        if len(self._tables) < _TABLES:
            row = len(self._tables)
        else:  # reuse the least recently used row
            _, row = self._tables.popitem(last=False)
        self._table_rows[row] = table
        self._tables[key] = row
        return row

    def choose(
        self, view: SeatView, prefs: npt.NDArray[np.float32], games: npt.NDArray[np.int64]
    ) -> npt.NDArray[np.int64]:
        """The action of each of `games` (rows of `view` and of `prefs`, the network's
        (B, A) preferences over actions): the best card by the solver, ties broken by
        the network."""
        out = np.zeros(len(games), dtype=np.int64)
        for i, (g, vals) in enumerate(zip(games.tolist(), self.values(view, games), strict=True)):
            acts = np.array(list(vals), dtype=np.int64)
            v = np.array(list(vals.values()))
            best = acts[v >= v.max() - TIE]
            out[i] = best[int(np.argmax(prefs[g, best]))]
        return out


def value_table(rules: Rules, bids, blind, team: int) -> npt.NDArray[np.float64]:
    """(14, 14, 14): the value to `team` of the final tricks of seats 0, 1, 2 (seat 3
    takes the rest): its RULES.md §4 hand score minus the other team's, each less a cost
    per bag (`agents.dd.hand_values`, relative); 0 where the tricks exceed the hand."""
    h = rules.hand_size
    t = np.stack(np.meshgrid(*[np.arange(14)] * 3, indexing="ij"), axis=-1).reshape(-1, 3)
    t = t[t.sum(axis=1) <= h]
    finals = np.concatenate([t, h - t.sum(axis=1, keepdims=True)], axis=1)
    out = np.zeros((14, 14, 14))
    out[t[:, 0], t[:, 1], t[:, 2]] = hand_values(
        rules, np.asarray(bids, dtype=np.int64), blind, finals, team, relative=True
    )
    return out


def _bits(mask: int) -> list[int]:
    return [i for i in range(64) if mask >> i & 1]
