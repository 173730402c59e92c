"""The double-dummy solver: exact tricks and exact hand scores with every hand visible.

`DDSolver.tricks(pos)` is the most tricks the team of the seat to act can take from
`pos` (the trick in progress included) against best defence. `DDSolver.score(pos, obj)`
is the best value of a `ScoreObjective` (hand score with nil and bags) the objective's
team can force. `DDSolver.move_values` gives either for every legal card, which is
what a PIMC agent averages over its sampled worlds. `DDSolver.judge` gives, for one card
played, the best value, the card's value and the best cards, for less than
`move_values` (what a review of a played hand asks, card after card). `tricks_table`
gives, for a full deal, what each team makes double dummy with each seat on lead.
`node_limit` makes a call give up (`SearchLimitError`) past that many nodes.

Each answer is found by the kernel's yes/no searches (`agents.dd.kernel`): the first at a
guess (a playout of the move ordering's first cards, or a related answer: another
leader's in `tricks_table`), then one step at a time toward the answer (MTD(f)), and
bisection after a few steps. The transposition table keeps the bounds every search learns, for every
position alike where it mattered (partition search), so later questions about the same
position (other thresholds, other moves) and about similar ones are cheap.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from agents.dd import kernel
from agents.dd.objective import ScoreObjective
from agents.dd.position import Position
from agents.dd.transposition import (
    ENTRY,
    NUM_PARAMS,
    P_GEN,
    P_KILL,
    P_LIMIT,
    P_MASK,
    P_MAXT,
    P_MODE,
    P_NODES,
)
from spades_env.rules import Rules

_DUMMY_VAL = np.zeros(1)
_DUMMY_F = np.zeros((1, 1))
_DUMMY_T = np.zeros((1, 1, 1))
_ZERO_COEF = np.zeros(4, dtype=np.int64)
_STEPS = 4  # questions stepped from the guess before bisection takes over
_NO_LIMIT = np.iinfo(np.int64).max


class SearchLimitError(Exception):
    """A call visited more than its `node_limit` nodes and gave up (no answer)."""


@dataclass
class _Root:
    """A position in the kernel's arrays."""

    H: npt.NDArray[np.int64]  # (4, 4) [seat, suit] 13-bit masks
    TP: npt.NDArray[np.int64]  # (4,) cards of the trick in progress per suit
    k: int
    leader: int
    lead: int
    wseat: int
    wstr: int
    broken: bool
    r: int  # tricks left, the current one included


def _root(pos: Position) -> _Root:
    H = np.zeros((4, 4), dtype=np.int64)
    for seat, hand in enumerate(pos.hands):
        for s in range(4):
            H[seat, s] = (hand >> (13 * s)) & 0x1FFF
    TP = np.zeros(4, dtype=np.int64)
    lead, wseat, wstr = -1, -1, -1
    for j, c in enumerate(pos.trick):
        s, rk = divmod(c, 13)
        TP[s] |= 1 << rk
        if j == 0:
            lead = s
        st = 32 + rk if s == 0 else (rk if s == lead else -1)
        if st > wstr:
            wseat, wstr = (pos.leader + j) % 4, st
    return _Root(H, TP, len(pos.trick), pos.leader, lead, wseat, wstr, pos.broken, pos.tricks_left)


class DDSolver:
    """A double-dummy solver with its own transposition table (2**tt_bits slots).

    Tables are reused across calls only where that is sound: bounds on tricks are facts
    about a position whatever was asked, so `reuse_tricks=True` keeps them between
    calls (faster for many related solves, e.g. one world's moves); score bounds
    depend on the objective, so by default each score solve starts a fresh table, and
    `reuse_score=True` keeps them while the calls pass the same objective object (the
    cards of one hand, `judge`).
    """

    def __init__(
        self, tt_bits: int = 20, reuse_tricks: bool = False, reuse_score: bool = False
    ) -> None:
        n = 1 << tt_bits
        # One 80-byte entry per slot, the table starting on a cache line; TF views it as
        # float64.
        raw = np.zeros(n * ENTRY + 8, dtype=np.int64)
        skip = (-raw.ctypes.data % 64) // 8
        self._TT = raw[skip : skip + n * ENTRY].reshape(n, ENTRY)
        self._TF = self._TT.view(np.float64)
        self._SG = np.zeros(n, dtype=np.int64)  # per slot: generation, key hash, top holders
        self._P = np.zeros(NUM_PARAMS, dtype=np.int64)
        self._P[P_MASK] = n - 1
        self._P[P_LIMIT] = _NO_LIMIT
        self._FR = np.zeros((kernel.MAX_DEPTH, kernel.NUM_FIELDS), dtype=np.int64)
        self._MV = np.zeros((kernel.MAX_DEPTH, 16), dtype=np.int64)
        self._SC = np.zeros((kernel.MAX_DEPTH, 16), dtype=np.int64)
        self._gen = 0
        self._mode = -1
        self.reuse_tricks = reuse_tricks
        self.reuse_score = reuse_score
        #: nodes one public call may visit before it gives up with `SearchLimitError` (None:
        #: no limit); what finished searches proved stays in the table
        self.node_limit: int | None = None
        self._objective: ScoreObjective | None = None  # the one the table's score bounds are of
        self.nodes = 0  # kernel nodes visited by the last public call

    # ------------------------------------------------------------------ plumbing
    def _start(self, mode: int, fresh: bool) -> None:
        if fresh or mode != self._mode:
            self._gen += 1
            self._P[P_GEN] = self._gen
        self._mode = mode
        self._P[P_MODE] = mode
        self._P[P_NODES] = 0
        self._P[P_LIMIT] = _NO_LIMIT if self.node_limit is None else self.node_limit
        self._P[P_KILL:] = -1

    def _ask(self, root: _Root, maxt: int, need: int, acc: int, thr: float, obj) -> bool:
        self._P[P_MAXT] = maxt
        coef, val, fmin, fmax, tmin, tmax = (
            (_ZERO_COEF, _DUMMY_VAL, _DUMMY_F, _DUMMY_F, _DUMMY_T, _DUMMY_T)
            if obj is None
            else (obj.coef, obj.values, obj.fmin, obj.fmax, obj.tmin, obj.tmax)
        )
        yes = bool(
            kernel.search(
                root.H, root.TP, root.k, root.leader, root.lead, root.wseat, root.wstr,
                root.broken, need, acc, thr,
                self._P, coef, self._FR, self._MV, self._SC, self._TT, self._TF, self._SG,
                val, fmin, fmax, tmin, tmax,
            )
        )  # fmt: skip
        if self._P[P_NODES] >= self._P[P_LIMIT]:
            self.nodes = int(self._P[P_NODES])
            raise SearchLimitError(
                f"the search gave up after {self.nodes} nodes (node_limit {self.node_limit})"
            )
        return yes

    def _tricks(self, pos: Position, team: int, guess: int | None = None) -> int:
        """Most tricks `team` can take from `pos`, by bisection over yes/no searches."""
        if pos.first_lead >= 0 and not pos.trick:
            return self._tricks(pos.play(pos.first_lead), team, guess)
        root = _root(pos)
        lo, hi = 0, root.r
        g = self._playout(root, team) if guess is None else guess
        steps = 0
        while lo < hi:
            # MTD(f): from the guess one step at a time toward the answer (questions near
            # the answer are the costly ones, and the guess is usually within a trick or
            # two); bisection once the guess has proved far off.
            mid = min(max(g, lo + 1), hi) if steps < _STEPS else (lo + hi + 1) // 2
            steps += 1
            if self._ask(root, team, mid, 0, 0.0, None):
                lo, g = mid, mid + 1
            else:
                hi, g = mid - 1, mid - 1
        return lo

    def _playout(self, root: _Root, team: int) -> int:
        """Tricks `team` takes if every seat plays the kernel's first-ordered card."""
        return int(
            kernel.playout(
                root.H, root.TP, root.k, root.leader, root.lead, root.wseat, root.wstr,
                root.broken, team, _ZERO_COEF, self._FR, self._MV, self._SC,
            )
        )  # fmt: skip

    def _score(
        self,
        pos: Position,
        obj: ScoreObjective,
        guess: float | None = None,
        at_least: float | None = None,
        at_most: float | None = None,
    ) -> float:
        """Best value of `obj` from `pos`: bisection over the values reachable, or, with a
        `guess`, MTD(f) steps from it first; `at_least` / `at_most` are bounds the caller
        knows (e.g. a child's value), so they are not asked again."""
        if pos.first_lead >= 0 and not pos.trick:
            return self._score(pos.play(pos.first_lead), obj, guess, at_least, at_most)
        root = _root(pos)
        acc = obj.acc_of(pos.tricks_won)
        lo_v, hi_v = obj.fmin[acc, root.r], obj.fmax[acc, root.r]
        vals = np.unique(obj.values[(obj.values >= lo_v) & (obj.values <= hi_v)])
        lo, hi = 0, len(vals) - 1  # answer is vals[lo]; vals[0] is always reachable
        if at_least is not None:
            lo = max(lo, int(np.searchsorted(vals, at_least, side="right")) - 1)
        if at_most is not None:
            hi = min(hi, int(np.searchsorted(vals, at_most, side="right")) - 1)
        g = None if guess is None else int(np.searchsorted(vals, guess))
        steps = 0
        while lo < hi:
            if g is not None and steps < _STEPS:
                mid = min(max(g, lo + 1), hi)
            else:
                mid = (lo + hi + 1) // 2
            steps += 1
            if self._ask(root, obj.team, 0, acc, float(vals[mid]), obj):
                lo, g = mid, mid + 1
            else:
                hi, g = mid - 1, mid - 1
        return float(vals[lo])

    def _reaches(self, pos: Position, obj: ScoreObjective, thr: float) -> bool:
        """Can `obj`'s team force a value of at least `thr` from `pos`? (one search)"""
        if pos.first_lead >= 0 and not pos.trick:
            return self._reaches(pos.play(pos.first_lead), obj, thr)
        return self._ask(_root(pos), obj.team, 0, obj.acc_of(pos.tricks_won), thr, obj)

    def _start_score(self, objective: ScoreObjective) -> None:
        same = self.reuse_score and objective is self._objective
        self._start(kernel.SCORE, fresh=not same)
        self._objective = objective

    # ------------------------------------------------------------------ public
    def tricks(self, pos: Position, team: int | None = None) -> int:
        """Most tricks `team` (default: the team to act) takes from here, trick in
        progress included, tricks already won not included."""
        self._start(kernel.TRICKS, fresh=not self.reuse_tricks)
        t = pos.to_act % 2 if team is None else team
        out = self._tricks(pos, t)
        self.nodes = int(self._P[P_NODES])
        return out

    def score(self, pos: Position, objective: ScoreObjective) -> float:
        """Best value of `objective` its team can force from here (tricks won count)."""
        self._start_score(objective)
        out = self._score(pos, objective)
        self.nodes = int(self._P[P_NODES])
        return out

    def move_values(
        self, pos: Position, objective: ScoreObjective | None = None
    ) -> dict[int, float]:
        """Value of each legal card of the seat to act.

        Without an objective: the tricks the mover's team takes from `pos` (the trick
        in progress included) if it plays that card. With one: the objective's value.
        Equivalent cards (adjacent among the cards in play) share one search.
        """
        team = pos.to_act % 2
        if objective is None:
            self._start(kernel.TRICKS, fresh=not self.reuse_tricks)
        else:
            self._start_score(objective)
        out: dict[int, float] = {}
        guess = None
        for group in equivalent_groups(pos):
            child = pos.play(group[0])
            if objective is not None:
                value = self._score(child, objective)
            else:
                done = len(child.trick) == 0  # the card completed a trick
                gained = 1 if done and child.leader % 2 == team else 0
                value = gained + self._tricks(child, team, guess)
                guess = int(value) - gained
            for c in group:
                out[c] = float(value)
        self.nodes = int(self._P[P_NODES])
        return out

    def interrupt(self) -> None:
        """Make the search under way (in another thread: the kernel runs without Python's
        lock) give up at once, as past its `node_limit`: its call raises
        `SearchLimitError`. What the table holds stays sound; a call that starts later is
        not affected."""
        self._P[P_LIMIT] = 0

    def judge(
        self,
        pos: Position,
        objective: ScoreObjective,
        card: int,
        played: float | None = None,
        most: int | None = None,
    ) -> tuple[float, float, list[int]]:
        """(value, played, best) of `card` played from `pos`: the objective's best value
        from `pos`, its value after `card`, and the legal cards that reach the best value
        (in card order, the first `most` of them), the values as `move_values` gives.

        Cheaper than `move_values` for judging the card a player chose: the best value
        is one search from `pos` that starts from the card's value (a bound, and usually
        the answer), and each other card is asked one yes/no question (does it reach
        the best value?) rather than solved. `played`, when the caller knows it (the
        value of the position after `card`, e.g. from judging the next card of the same
        line), is not solved again. With `reuse_score` and the same objective, the
        cards of one line share the table, so judging a hand from its last card back
        solves each position mostly from what the later ones proved.
        """
        self._start_score(objective)
        groups = sorted(equivalent_groups(pos), key=min)  # disjoint runs: card order
        own = next((g for g in groups if card in g), None)
        if own is None:
            raise ValueError(f"judge: card {card} is not a legal card of seat {pos.to_act}")
        maxing = pos.to_act % 2 == objective.team
        if played is None:
            played = self._score(pos.play(card), objective)
        if len(groups) == 1:  # every legal card the same
            value = played
        elif maxing:
            value = self._score(pos, objective, guess=played, at_least=played)
        else:
            value = self._score(pos, objective, guess=played, at_most=played)
        finite = objective.values[~np.isnan(objective.values)]
        above = finite[finite > value]
        best: list[int] = []
        for group in groups:
            if most is not None and len(best) >= most:
                break
            if group is own:
                hit = played == value
            elif maxing:
                hit = self._reaches(pos.play(group[0]), objective, value)
            else:  # the least value: the card does not reach the next value above it
                hit = not above.size or not self._reaches(
                    pos.play(group[0]), objective, float(above.min())
                )
            if hit:
                best.extend(sorted(group))
        self.nodes = int(self._P[P_NODES])
        return value, float(played), best[:most]


def equivalent_groups(pos: Position) -> list[list[int]]:
    """Legal cards of the seat to act, grouped into runs of equivalent cards.

    Two cards of one seat and suit are equivalent when no card between them is still
    held by anyone or lies on the table: they then win and lose the same tricks.
    """
    legal = pos.legal_mask()
    present = 0
    for h in pos.hands:
        present |= h
    for c in pos.trick:
        present |= 1 << c
    groups: list[list[int]] = []
    for s in range(4):
        run: list[int] = []
        for rank in range(12, -1, -1):
            c = 13 * s + rank
            if not present >> c & 1:
                continue  # gone in an earlier trick: separates nothing
            if legal >> c & 1:
                run.append(c)
            elif run:
                groups.append(run)
                run = []
        if run:
            groups.append(run)
    return groups


_DEFAULT: DDSolver | None = None


def default_solver() -> DDSolver:
    """One module-wide solver, so callers need not hold the table themselves."""
    global _DEFAULT
    if _DEFAULT is None:
        _DEFAULT = DDSolver()
    return _DEFAULT


def solve_tricks(pos: Position, team: int | None = None) -> int:
    return default_solver().tricks(pos, team)


def solve_score(pos: Position, objective: ScoreObjective) -> float:
    return default_solver().score(pos, objective)


def tricks_table(
    deal: npt.ArrayLike, rules: Rules | None = None, broken: bool = False
) -> npt.NDArray[np.int8]:
    """(4, 2) int8: tricks each team makes double dummy with each seat on lead.

    Row `leader` is the first trick's leader (RULES.md §3: left of the dealer, so the
    dealer is `leader - 1`); column `team` (RULES.md §1: seats 0/2 and 1/3). A trick
    game is zero-sum, so each row sums to 13. With `first_lead=two_of_clubs` the holder
    of 2C always leads, and every row is the same.
    """
    rules = rules or Rules()
    solver = default_solver()
    # One table for the four leads: bounds on tricks are facts about positions (the
    # leader is part of every key), and the four searches share most of their endings.
    solver._start(kernel.TRICKS, fresh=True)
    out = np.zeros((4, 2), dtype=np.int8)
    t = None
    for leader in range(4):
        pos = Position.from_deal(deal, leader, broken, rules)
        t = solver._tricks(pos, 0, t)  # the last leader's answer as the first guess
        out[leader] = (t, rules.hand_size - t)
    solver.nodes = int(solver._P[P_NODES])
    return out
