"""The batched rules engine: `step`, over a compiled loop (spades_env/core/).

`step(state, actions)` applies one action per game (games that are DONE ignore theirs)
and updates `state` in place for speed; `State.copy()` branches a state for search.
Games may sit in different phases. The rules themselves are the compiled core's
(core/rule_functions.py legality, the play and the hand's flow; core/scoring.py; core/deal.py);
core/kernel.py loops over the games of the packed state, and this module is its Python
face: checking actions, building the records of finished hands, and errors.

Flow of a hand (RULES.md §1-§4): deal -> for each seat from left of the dealer, an
optional blind-nil decision (BLIND) then a bid (BID) -> in RULES.md §6 auction, the
highest bidder names trump (TRUMP) -> optional exchange (EXCHANGE) -> the tricks (PLAY)
-> scoring, bags, end-of-game check -> next deal with the next dealer. RULES.md §6
two_player draws the hands from the stock (DRAW) before the bidding.

An illegal action raises `IllegalActionError` naming the game, the seat, the rule and the
legal actions. With `on_illegal="report"` (for RL wrappers that penalise instead), illegal
games are left exactly as they were and flagged in `StepInfo.illegal`; nothing is ever
replaced by another action.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Literal

import numba
import numpy as np
import numpy.typing as npt

from spades_env.auction import TRUMP_STRENGTH
from spades_env.cards import (
    BID_BASE,
    BLIND_NIL,
    NUM_ACTIONS,
    NUM_CARDS,
    SPADES,
    SUIT_NAMES,
    action_array,
    action_to_str,
)
from spades_env.core import kernel as _kernel
from spades_env.core.kernel import HISTORY_SEAT_SHIFT, PHASE_BASE
from spades_env.core.rules_vector import rules_vector
from spades_env.rules import Rules
from spades_env.state import (
    BID,
    BLIND,
    DONE,
    DRAW,
    EXCHANGE,
    PHASE_NAMES,
    TRUMP,
    State,
    field_view,
    index_array,
    one_index,
    seat_rows,
)
from spades_env.variants import describe

__all__ = [
    "HISTORY_SEAT_SHIFT",
    "PHASE_BASE",
    "SEAT_NAMES",
    "STRENGTH",
    "HandResult",
    "IllegalActionError",
    "NoLegalActionError",
    "StepInfo",
    "blind_allowed",
    "explain_illegal",
    "legal_action_mask",
    "legal_actions",
    "random_legal_actions",
    "reset_done",
    "seat_name",
    "start_hand",
    "step",
    "step_random",
    "stop_games",
    "update_legal",
]

SEAT_NAMES = ("North", "East", "South", "West")

#: (NUM_CARDS, NUM_SUITS) int8 strength of a card in a trick led in a suit (RULES.md §3),
#: spades trump: the spades row of `auction.TRUMP_STRENGTH` (built from the core).
STRENGTH = np.ascontiguousarray(TRUMP_STRENGTH[SPADES])


class IllegalActionError(ValueError):
    """An action that the rules forbid; names the game, seat, rule and legal actions."""

    def __init__(self, game: int, seat: int, action: int, reason: str, legal: list[int]):
        self.game, self.seat, self.action, self.reason, self.legal = (
            game,
            seat,
            action,
            reason,
            legal,
        )
        shown = ", ".join(action_to_str(a) for a in legal)
        super().__init__(
            f"game {game}, seat {seat} ({seat_name(seat)}): {_action_name(action)} is "
            f"illegal: {reason}; legal: {shown}"
        )


def seat_name(seat: int) -> str:
    return SEAT_NAMES[seat] if seat < len(SEAT_NAMES) else f"seat {seat}"


def _action_name(action: int) -> str:
    try:
        return action_to_str(action)
    except ValueError:
        return f"action {action}"


@dataclass(frozen=True)
class HandResult:
    """The hands that finished in one step (K of them), for records and rewards."""

    games: npt.NDArray[np.int64]  # (K,) game index in the batch
    seed: npt.NDArray[np.uint64]  # (K,) game seed
    hand_no: npt.NDArray[np.int32]  # (K,) 0-based number of this hand in its game
    dealer: npt.NDArray[np.int8]  # (K,)
    deal: npt.NDArray[np.uint64]  # (K, P) hands as dealt
    bids: npt.NDArray[np.int8]  # (K, P)
    blind: npt.NDArray[np.bool_]  # (K, P)
    history: npt.NDArray[np.int16]  # (K, H) (seat << 7) | action, -1 padded
    history_len: npt.NDArray[np.int16]  # (K,)
    tricks: npt.NDArray[np.int8]  # (K, P) tricks per seat
    trump: npt.NDArray[np.int8]  # (K,) the hand's trump suit (RULES.md §6 auction)
    scores_before: npt.NDArray[np.int32]  # (K, T)
    bags_before: npt.NDArray[np.int32]  # (K, T)
    points: npt.NDArray[np.int32]  # (K, T) hand score before the bag penalty
    bags_gained: npt.NDArray[np.int32]  # (K, T)
    penalty: npt.NDArray[np.int32]  # (K, T) bag penalties applied after this hand
    scores: npt.NDArray[np.int32]  # (K, T) cumulative after the hand
    bags: npt.NDArray[np.int32]  # (K, T) bag counters after the hand
    game_over: npt.NDArray[np.bool_]  # (K,)
    winner: npt.NDArray[np.int8]  # (K,) winning team or -1


@dataclass(frozen=True)
class StepInfo:
    hand_over: npt.NDArray[np.bool_]  # (B,) a hand finished in this step
    hand_points: npt.NDArray[np.int32]  # (B, T) its points, bag penalty included; else 0
    illegal: npt.NDArray[np.bool_]  # (B,) action refused ("report" mode only)
    finished: HandResult | None  # details of the finished hands, None if none


# ----------------------------------------------------------------------------- step
class StepScratch:
    """Per-state buffers the kernel writes into (reused every step), and the entry points
    of the step kernels for this state (made on their first call).

    Most steps end no hand and refuse nothing: they all return `quiet`, one `StepInfo`
    of read-only zeros. A step that has something to report hands its `flags` and
    `points` to its `StepInfo` and takes fresh zeros for the next; the saved rows `fin`
    of a step where every game's hand ended are handed over whole (no copy), and `spare`
    is reused for the next such step once nothing refers to it."""

    def __init__(self, rules: Rules, b: int, row: int) -> None:
        self.rules_vector = rules_vector(rules)
        self.teams = rules.num_teams
        self.fin = np.zeros((b, row), dtype=np.uint8)
        self.spare: npt.NDArray[np.uint8] | None = None
        self.res = np.zeros((b, _kernel.record_width(rules.num_teams)), dtype=np.int32)
        self.key = np.zeros(1, dtype=np.uint64)  # step_random's key of this call
        self.flags = np.zeros((2, b), dtype=bool)  # hand over, illegal / no legal action
        self.points = np.zeros((b, rules.num_teams), dtype=np.int32)
        zeros = np.zeros((3, b), dtype=bool)
        points = np.zeros((b, rules.num_teams), dtype=np.int32)
        for arr in (zeros, points):
            arr.setflags(write=False)
        self.quiet = _make_info(zeros[0], points, zeros[1], None)
        self.buffer: npt.NDArray[np.uint8] | None = None  # the State buffer served
        self.step: Callable[..., int] | None = None
        self.step_random: Callable[..., int] | None = None
        self.entries: dict[str, Callable[..., int]] = {}  # for threads (`_threaded`)

    def take_flags(self) -> tuple[npt.NDArray[np.bool_], npt.NDArray[np.int32]]:
        """The flags and points of this step, for its `StepInfo`; fresh zeros for the next."""
        flags, points = self.flags, self.points
        self.flags = np.zeros(flags.shape, dtype=bool)
        self.points = np.zeros(points.shape, dtype=np.int32)
        return flags, points

    def take_fin(self) -> npt.NDArray[np.uint8]:
        """Every row of `fin` (all the games' hands ended): handed over, not copied; the
        next step writes into the spare buffer if no record refers to it any more."""
        fin, spare = self.fin, self.spare
        # references: self.spare, the local name and getrefcount's argument
        if spare is None or sys.getrefcount(spare) > 3:
            spare = np.empty_like(fin)
        self.fin, self.spare = spare, fin
        return fin


def _make_info(hand_over, hand_points, illegal, finished) -> StepInfo:
    info = object.__new__(StepInfo)  # StepInfo(...) without the frozen-dataclass setattrs
    info.__dict__.update(
        hand_over=hand_over, hand_points=hand_points, illegal=illegal, finished=finished
    )
    return info


def _entry(kernel, *args) -> Callable[..., int]:
    """The compiled code of `kernel` for the types of `args`, to call without numba's
    dispatch: matching the types of seven arrays costs 1-2 us a call, a fifth of a step
    at batch 64. Only for arguments of exactly these types (the engine makes them all
    but the state's buffer, which `_scratch` ties the entry to)."""
    return kernel.compile(tuple(numba.typeof(a) for a in args))


def _scratch(state: State) -> StepScratch:
    d = state.__dict__
    s = d.get("_scratch")
    if s is None or s.buffer is not d["buffer"]:
        s = StepScratch(state.rules, *state.buffer.shape)
        s.buffer = state.buffer
        d["_scratch"] = s
    return s


_INT64 = np.dtype(np.int64)


def step(
    state: State,
    actions: npt.ArrayLike,
    on_illegal: Literal["raise", "report"] = "raise",
    last_hand: bool = False,
    num_threads: int = 1,
) -> StepInfo:
    """Apply one action per game (ignored where the game is DONE); update `state`.

    `last_hand`: a hand that ends in this step stops its game there (phase DONE, no next
    deal; core/rules_vector.py), as the envs' one-hand episodes do. `num_threads=k` steps k
    ranges of the games at once on k threads (ranges of at least `MIN_RANGE` games; the
    results are the same for every k)."""
    scratch = _scratch(state)
    b = scratch.fin.shape[0]
    if type(actions) is np.ndarray and actions.dtype is _INT64 and actions.ndim == 1:
        acts = actions  # the common case, without a conversion
    else:
        acts = action_array(actions).reshape(-1)  # whole numbers only (cards.py)
    if acts.shape[0] != b:
        raise ValueError(f"step needs {b} actions, one per game; got {acts.shape[0]}")
    if on_illegal == "report":
        mode = _kernel.REPORT
    elif on_illegal == "raise":
        mode = _kernel.RAISE
    else:
        raise ValueError(f"on_illegal must be 'raise' or 'report'; got {on_illegal!r}")
    rules = rules_vector(state.rules, True) if last_hand else scratch.rules_vector
    if num_threads != 1:
        if not acts.flags.c_contiguous:
            acts = np.ascontiguousarray(acts)
        if mode == _kernel.RAISE:
            ended = _kernel.first_illegal(rules, state.buffer, acts)
            if ended >= 0:
                _raise_illegal(state, acts, ended)
            mode = _kernel.CHECKED
        ended, parts = _threaded(scratch, "step", _kernel.step_batch, num_threads,
                                 rules, state.buffer, acts, mode)  # fmt: skip
    else:
        parts = None
        args = (rules, state.buffer, acts, mode, scratch.flags, scratch.points,
                scratch.fin, scratch.res, 0, b)  # fmt: skip
        if acts is actions and acts.flags.c_contiguous:  # the entry's types (`_entry`)
            if scratch.step is None:
                scratch.step = _entry(_kernel.step_batch, *args)
            ended = scratch.step(*args)
        else:
            ended = _kernel.step_batch(*args)
    if ended == 0:
        return scratch.quiet
    if ended < 0:
        _raise_illegal(state, acts, -1 - ended)
    return _info(state, scratch, ended & _ENDED, parts)


def _raise_illegal(state: State, acts: npt.NDArray[np.int64], game: int) -> None:
    act = int(acts[game])
    raise IllegalActionError(
        game,
        int(state.to_act[game]),
        act,
        explain_illegal(state, game, act),
        legal_actions(state, game),
    )


def step_random(state: State, rng: np.random.Generator, num_threads: int = 1) -> StepInfo:
    """Every game in play takes a uniformly random legal action: `step` with the random
    agent's choice made inside the same compiled pass, so no action array is built.

    The draws of one call are keyed by one 64-bit word of `rng` (SplitMix64 of the key
    and the game's index), so a seeded `rng` replays the same games, whatever
    `num_threads` (as in `step`). The actions taken are in `state.history`. A game in
    play with no legal action (only a state edited into one) is left as it is, and
    `NoLegalActionError` raised after the others stepped.
    """
    scratch = _scratch(state)
    scratch.key[0] = rng.bit_generator.random_raw()
    if num_threads != 1:
        ended, parts = _threaded(scratch, "step_random", _kernel.step_batch_random, num_threads,
                                 scratch.rules_vector, state.buffer, scratch.key)  # fmt: skip
    else:
        parts = None
        args = (scratch.rules_vector, state.buffer, scratch.key, scratch.flags, scratch.points,
                scratch.fin, scratch.res, 0, scratch.fin.shape[0])  # fmt: skip
        if scratch.step_random is None:
            scratch.step_random = _entry(_kernel.step_batch_random, *args)
        ended = scratch.step_random(*args)
    if ended == 0:
        return scratch.quiet
    if ended < 0:  # -1 - (games stuck): the others stepped
        flags = scratch.flags
        info = _info(state, scratch, int(np.count_nonzero(flags[0])), parts)
        raise NoLegalActionError(np.flatnonzero(flags[1]), info)
    return _info(state, scratch, ended, parts)


#: Fewest games one thread of `step` / `step_random` is given (`num_threads`): below
#: that, handing work to a thread costs more than it saves.
MIN_RANGE = 256
_POOL: list = [None, 0]  # the threads of `_threaded` (started on first use), how many


def thread_ranges(n: int, num_threads: int) -> list[tuple[int, int]]:
    """The ranges of `n` games that `num_threads` threads step (`step`, `step_random`
    and the vector env): about equal, none under `MIN_RANGE` games (so fewer ranges
    than threads on small batches), at least one. A count that is not a whole number
    >= 1 is refused in one line."""
    if isinstance(num_threads, bool) or not isinstance(num_threads, int | np.integer):
        raise ValueError(f"num_threads must be a whole number >= 1; got {num_threads!r}")
    if num_threads < 1:
        raise ValueError(f"num_threads must be at least 1; got {num_threads}")
    k = max(1, min(int(num_threads), n // MIN_RANGE))
    return [(n * i // k, n * (i + 1) // k) for i in range(k)]


def _threaded(
    scratch: StepScratch, name: str, kernel, num_threads: int, *head
) -> tuple[int, list[tuple[int, int]] | None]:
    """Run `kernel(*head, flags, points, fin, res, lo, hi)` over ranges of the games on
    up to `num_threads` threads (the first on this one); returns the kernels' results
    combined (negative: -1 - the games stuck) and where each range packed its records
    ((first row, records) per range; None for one range, which packs them from row 0)."""
    b = scratch.fin.shape[0]
    ranges = thread_ranges(b, num_threads)
    k = len(ranges)
    args = (*head, scratch.flags, scratch.points, scratch.fin, scratch.res)
    entry = scratch.entries.get(name)
    if entry is None:
        entry = scratch.entries[name] = _entry(kernel, *args, 0, b)
    if k == 1:
        return entry(*args, 0, b), None
    if _POOL[1] < k - 1:
        _POOL[:] = ThreadPoolExecutor(k - 1, "spades-engine"), k - 1
    done = [_POOL[0].submit(entry, *args, lo, hi) for lo, hi in ranges[1:]]
    results = [entry(*args, *ranges[0])] + [f.result() for f in done]
    hand_over = scratch.flags[0]
    parts = [(lo, int(np.count_nonzero(hand_over[lo:hi]))) for lo, hi in ranges]
    if any(x < 0 for x in results):  # stuck games (step_random): count them all
        return -1 - sum(-1 - x for x in results if x < 0), parts
    return sum(results), parts


class NoLegalActionError(ValueError):
    """`step_random` met games in play with no legal action (only a state edited into
    one can be). They are left as they were; the other games stepped, and `info` is
    their `StepInfo`."""

    def __init__(self, games: npt.NDArray[np.int64], info: StepInfo):
        self.games, self.info = games, info
        super().__init__(
            f"games {games.tolist()} are in play with no legal action (was the state "
            "edited? engine.update_legal recomputes the legal actions)"
        )


#: `step_batch`'s return value: the hands ended in its low 32 bits, the games refused
#: (report mode) above.
_ENDED = (1 << 32) - 1


def _info(
    state: State, scratch: StepScratch, ended: int, parts: list[tuple[int, int]] | None = None
) -> StepInfo:
    """The `StepInfo` of a step that has something to report (see `StepScratch`)."""
    flags, points = scratch.take_flags()
    finished = finished_rows(state, scratch, ended, parts) if ended else None
    return _make_info(flags[0], points, flags[1], finished)


#: HandResult fields read from the saved rows: field -> the State field it copies.
_SAVED = {
    "seed": "seed", "hand_no": "hand_no", "dealer": "dealer", "deal": "deal",
    "bids": "bids", "blind": "blind", "history": "history", "history_len": "history_len",
    "tricks": "tricks_won", "trump": "trump", "scores_before": "scores",
    "bags_before": "bags",
}  # fmt: skip


class _SavedHands(HandResult):
    """A `HandResult` whose fields are read, on first use, from the rows the kernel saved
    at the end of each hand (most steppers never read most of them)."""

    def __getattr__(self, name: str):
        d = self.__dict__
        if "_saved" not in d:
            raise AttributeError(name)
        t = d["_rules"].num_teams
        res = d["_res"]
        if name in _SAVED:
            value = field_view(d["_rules"], d["_saved"], _SAVED[name]).copy()
        elif name == "points":
            value = res[:, :t].copy()
        elif name == "bags_gained":
            value = res[:, t : 2 * t].copy()
        elif name == "penalty":
            value = res[:, 2 * t : 3 * t].copy()
        elif name == "winner":
            value = res[:, 3 * t].astype(np.int8)
        elif name == "game_over":
            value = res[:, 3 * t] >= 0
        elif name == "games":
            value = res[:, 5 * t + 1].astype(np.int64)
        elif name == "scores":
            value = res[:, 3 * t + 1 : 4 * t + 1].copy()
        elif name == "bags":
            value = res[:, 4 * t + 1 : 5 * t + 1].copy()
        else:
            raise AttributeError(name)
        d[name] = value
        return value


def finished_rows(
    state: State, scratch: StepScratch, ended: int, parts: list[tuple[int, int]] | None = None
) -> HandResult:
    """The records of the hands that ended, which the kernel packed into the first rows
    of `fin` and `res` (of each thread's range: `parts`, see `_threaded`)."""
    out = object.__new__(_SavedHands)
    d = out.__dict__
    d["_rules"] = state.rules
    fin, res = scratch.fin, scratch.res
    if ended == fin.shape[0]:  # every game: the saved rows are handed over whole
        d["_saved"] = scratch.take_fin()
        d["_res"] = res.copy()
        d["games"] = np.arange(ended, dtype=np.int64)
        return out
    if parts is None:
        d["_saved"] = fin[:ended].copy()
        d["_res"] = res[:ended].copy()
    else:
        d["_saved"] = np.concatenate([fin[lo : lo + n] for lo, n in parts])
        d["_res"] = np.concatenate([res[lo : lo + n] for lo, n in parts])
    return out


def reset_done(state: State, rng: np.random.Generator) -> npt.NDArray[np.int64]:
    """Start a fresh game (new seed, scores 0) in every DONE slot; return their indices."""
    rows = np.flatnonzero(state.phase == DONE)
    if rows.size == 0:
        return rows
    seeds = rng.integers(0, np.iinfo(np.uint64).max, size=rows.size, dtype=np.uint64)
    _kernel.new_games(rules_vector(state.rules), state.buffer, rows, seeds)
    return rows


def start_hand(state: State, games: npt.ArrayLike) -> None:
    """Deal hand `hand_no` of these games afresh from their seeds (RULES.md §6
    two_player: lay out the stock) and open the bidding."""
    rows = index_array(games, state.batch_size, "game")
    _kernel.start_hands(rules_vector(state.rules), state.buffer, rows, False)


def stop_games(state: State, games: npt.ArrayLike) -> None:
    """End these games where they stand (e.g. right after their hand was scored, for
    one-hand episodes): phase DONE, no legal action; scores and `winner` are kept."""
    rows = index_array(games, state.batch_size, "game")
    _kernel.stop_games(rules_vector(state.rules), state.buffer, rows)


# ----------------------------------------------------------------------------- legality
def update_legal(state: State) -> None:
    """Recompute `state.legal` for every game (after a caller edited the state)."""
    _kernel.refresh_legal(rules_vector(state.rules), state.buffer)


def blind_allowed(state: State, rows: npt.ArrayLike, seats: npt.ArrayLike) -> npt.NDArray:
    """RULES.md §2 option blind_nil: may `seats` of the games `rows` declare blind nil."""
    rows_a = index_array(rows, state.batch_size, "game")
    seats_a = seat_rows(state.rules, seats, rows_a.size)
    out = np.zeros(rows_a.size, dtype=bool)
    _kernel.blind_allowed_rows(rules_vector(state.rules), state.buffer, rows_a, seats_a, out)
    return out


def _one_game(state: State, game: int) -> int:
    """`game` if it is one game of the batch (an index 0..B-1), else a ValueError."""
    return one_index(game, state.batch_size, "game")


def legal_action_mask(state: State) -> npt.NDArray[np.bool_]:
    """(B, NUM_ACTIONS) bool: the legal actions of the seat to act in each game."""
    mask = np.zeros((state.batch_size, NUM_ACTIONS), dtype=bool)
    _kernel.action_mask(state.legal, state.phase, mask)
    return mask


def legal_actions(state: State, game: int) -> list[int]:
    """The legal actions of the seat to act in game `game` of the batch."""
    game = _one_game(state, game)
    legal, base = int(state.legal[game]), int(PHASE_BASE[state.phase[game]])
    return [base + i for i in range(64) if legal >> i & 1]


def random_legal_actions(
    legal: npt.NDArray[np.uint64], phase: npt.NDArray[np.int8], rng: np.random.Generator
) -> npt.NDArray[np.int64]:
    """One uniformly random legal action per game from the engine's legal bits.

    `legal` is `State.legal` (bit i = action PHASE_BASE[phase] + i); games with no legal
    action (DONE) get action 0, which the engine ignores.
    """
    out = np.empty(legal.shape[0], dtype=np.int64)
    _kernel.random_legal(legal, phase, rng.random(legal.shape[0]), out)
    return out


def explain_illegal(state: State, game: int, action: int) -> str:
    """Name the rule an illegal action breaks (slow path, one game)."""
    game = _one_game(state, game)
    phase = int(state.phase[game])
    seat = int(state.to_act[game])
    a = int(action)
    if phase == BLIND:
        return "first decide blind nil or see hand (RULES.md §2)"
    if phase == DRAW:
        return "keep or discard the top card of the stock (RULES.md §6 two_player)"
    if phase == TRUMP:
        return "name the trump suit: trump spades, hearts, diamonds or clubs (RULES.md §6 auction)"
    if phase == BID:
        if not BID_BASE <= a < BLIND_NIL:
            return "a bid is expected: nil or 1..13 (RULES.md §2)"
        bid = a - BID_BASE
        if not state.rules.min_bid <= bid <= state.rules.max_bid:
            return f"bids are {state.rules.min_bid}..{state.rules.max_bid} (RULES.md §2, §6)"
        if state.rules.bid_constraint != "none":
            return describe(state.rules)
        return (
            f"the bids would total more than max_total_bid={state.rules.max_total_bid} "
            "(RULES.md §2)"
        )
    if not 0 <= a < NUM_CARDS:
        return f"a card is expected in the {PHASE_NAMES[phase]} phase"
    hand = int(state.hands[game, seat]) & ~int(state.played[game])
    if not hand >> a & 1:
        return "that card is not in the seat's hand"
    if phase == EXCHANGE:
        return "that card is already chosen to pass (RULES.md §2)"
    lead = int(state.lead_suit[game])
    if state.trick_size[game] > 0:
        return f"must follow {SUIT_NAMES[lead]} (RULES.md §3)"
    if state.rules.first_lead == "two_of_clubs" and state.tricks_played[game] == 0:
        return "the first lead must be the 2C (RULES.md §3 first_lead=two_of_clubs)"
    if state.rules.trump == "named":
        trump = SUIT_NAMES[int(state.trump[game])]
        return f"{trump} are trump and not broken yet (RULES.md §3, §6 auction)"
    return "spades are not broken yet (RULES.md §3)"
