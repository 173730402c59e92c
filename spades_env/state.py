"""The batched game state and how a batch of games starts (`init`).

The state is one dataclass of arrays whose first axis is the batch (B games, P seats,
T teams, C = NUM_CARDS card slots, H = longest action history of a hand). Every game in
the batch advances independently, each in its own phase.

Deals are reproducible per game: game `g` carries a 64-bit `seed`, and the deal of its
`h`-th hand is a pure function of `(seed, h)`. So the same game gives the same deals
whatever batch it is played in, and duplicate tournaments can replay a deal sequence.

Storage: all the fields of one game live in one row of a (B, ROW) uint8 buffer
(`State.buffer`); each field is a numpy view into it with its own dtype and shape
(core/rules_vector.py lays the row out), so the compiled engine (core/kernel.py) takes one array
whatever the rules. Assigning a field (`state.phase = ...`) writes into the buffer.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from typing import NoReturn

import numpy as np
import numpy.typing as npt
from numba import njit

from spades_env.cards import CARD_BIT, DECKS, NUM_CARDS
from spades_env.core import deal as _deal
from spades_env.core import kernel as _kernel
from spades_env.core.layout import BID as BID
from spades_env.core.layout import BLIND as BLIND
from spades_env.core.layout import DONE as DONE
from spades_env.core.layout import DRAW as DRAW
from spades_env.core.layout import EXCHANGE as EXCHANGE
from spades_env.core.layout import NUM_PHASES as NUM_PHASES
from spades_env.core.layout import PHASE_NAMES as PHASE_NAMES
from spades_env.core.layout import PLAY as PLAY
from spades_env.core.layout import TRUMP as TRUMP
from spades_env.core.rules_vector import FIELD_NAMES, FIELDS, layout, rules_vector
from spades_env.core.rules_vector import max_history as max_history
from spades_env.rules import MAX_POSITION_BAGS, MAX_POSITION_SCORE, Rules

U64 = npt.NDArray[np.uint64]
I8 = npt.NDArray[np.int8]


def _fields_from_spec(cls: type) -> type:
    """`cls` as a dataclass of `rules` and one array per `FIELDS` entry (core/rules_vector.py, the
    one place a field's name, dtype, width and meaning are written), in that order, with
    the fields listed in its docstring."""
    cls.__annotations__ = {
        "rules": Rules,
        **{f.name: npt.NDArray[f.dtype] for f in FIELDS},
    }
    lines = [
        f"- ``{f.name}`` ({'(B,)' if f.width == '1' else f'(B, {f.width})'} "
        f"{np.dtype(f.dtype).name}): {f.meaning}"
        for f in FIELDS
    ]
    cls.__doc__ = "\n".join([inspect.cleandoc(cls.__doc__ or ""), "", *lines, ""])
    return dataclass(cls)


@_fields_from_spec
class State:
    """A batch of Spades games. `step` updates it in place; `copy()` branches it.

    Fields: ``rules`` (the `Rules` of every game of the batch), then one array per entry
    of `core.rules_vector.FIELDS`, first axis the batch (B games, P seats, T teams, C card slots,
    H the longest action history of a hand):
    """

    def __post_init__(self) -> None:
        """Pack the given arrays into one buffer (see the module doc)."""
        b = int(np.shape(self.phase)[0])
        row, _ = layout(self.rules)
        buf = np.zeros((b, row), dtype=np.uint8)
        values = {name: self.__dict__[name] for name in FIELD_NAMES}
        _bind(self, self.rules, buf)
        for name, value in values.items():
            getattr(self, name)[...] = value

    def __setattr__(self, name: str, value: object) -> None:
        if name in _FIELD_SET and "buffer" in self.__dict__:
            getattr(self, name)[...] = value  # keep the field a view of the buffer
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name: str):
        if name in _FIELD_SET and "buffer" in self.__dict__:
            view = field_view(self.rules, self.buffer, name)
            self.__dict__[name] = view
            return view
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def __getstate__(self) -> dict:
        return {"rules": self.rules, "buffer": self.buffer}

    def __setstate__(self, saved: dict) -> None:
        _bind(self, saved["rules"], saved["buffer"])

    @classmethod
    def wrap(cls, rules: Rules, buffer: npt.NDArray[np.uint8]) -> State:
        """A State whose fields are views into `buffer` ((B, ROW) uint8, no copy)."""
        self = cls.__new__(cls)
        _bind(self, rules, buffer)
        return self

    @property
    def batch_size(self) -> int:
        return int(self.buffer.shape[0])

    def copy(self) -> State:
        return State.wrap(self.rules, self.buffer.copy())

    def take(self, games: npt.ArrayLike) -> State:
        """A new state holding the given games of this batch (copies)."""
        rows = index_array(games, self.batch_size, "game")
        return State.wrap(self.rules, self.buffer[rows])


_FIELD_SET = frozenset(FIELD_NAMES)
_SCALAR = frozenset(f.name for f in FIELDS if f.width == "1")


def _bind(state: State, rules: Rules, buffer: npt.NDArray[np.uint8]) -> None:
    """Make `state` a view of `buffer`; its fields are made on first use (`__getattr__`)."""
    d = state.__dict__
    for name in FIELD_NAMES:
        d.pop(name, None)
    d["rules"] = rules
    d["buffer"] = buffer


def field_view(rules: Rules, buffer: npt.NDArray[np.uint8], name: str) -> npt.NDArray:
    """The view of field `name` in a (B, ROW) uint8 buffer of packed rows."""
    dtype, offset, width = _PLACES[rules][name]
    b, row = buffer.shape
    if width == 0:  # a scalar field: (B,)
        return np.ndarray((b,), dtype, buffer, offset, (row,))
    itemsize = np.dtype(dtype).itemsize
    return np.ndarray((b, width), dtype, buffer, offset, (row, itemsize))


class _Places(dict):
    """rules -> {field: (dtype, byte offset, width or 0 for a scalar)}."""

    def __missing__(self, rules: Rules) -> dict:
        out = {
            name: (dtype, offset, 0 if name in _SCALAR else width)
            for name, dtype, offset, width in layout(rules)[1]
        }
        self[rules] = out
        return out


_PLACES = _Places()


def deck_mask(rules: Rules) -> np.uint64:
    """RULES.md §1: the 52-card deck, no jokers; §6: the preset's deck (`Rules.deck`)."""
    return DECKS[rules.deck]


# ----------------------------------------------------------------------------- indices
def index_array(values: npt.ArrayLike, size: int, what: str) -> npt.NDArray[np.int64]:
    """`values` (one whole number or any array of them) as a flat int64 array of indices
    into `size` items, each checked to lie in 0..size-1. The compiled kernels index rows
    and seats without bounds checks, so an index outside the batch would write outside
    it (a crash, or another game changed); numpy would wrap a negative one. Anything else
    (a float, a bool, a string, an index out of range) is a `ValueError` that names the
    valid range, e.g. "game indices must be whole numbers 0..3 (4 games); got 50"."""
    if type(values) is np.ndarray and values.dtype == np.int64:
        arr = values.reshape(-1)  # the common case: no conversion
    else:
        try:
            raw = np.asarray(values)
        except (ValueError, TypeError, OverflowError):  # ragged or odd input
            _index_error(what, size, values)
        if raw.size == 0 and raw.dtype.kind in "fiu":
            return np.zeros(0, dtype=np.int64)
        if raw.dtype.kind == "O":  # Python ints too big for int64 (or other objects)
            flat = raw.reshape(-1).tolist()
            bad = [x for x in flat if not _whole_in(x, size)]
            if bad or not flat:
                _index_error(what, size, bad[0] if bad else values)
            return np.array(flat, dtype=np.int64)
        if raw.dtype.kind not in "iu":
            _index_error(what, size, raw.reshape(-1)[0].item() if raw.size else raw)
        if raw.dtype.kind == "u" and raw.size and raw.max() >= size:  # before int64 wraps
            _index_error(what, size, raw.reshape(-1)[int(np.argmax(raw))].item())
        arr = raw.astype(np.int64, copy=False).reshape(-1)
    if arr.size:
        lo, hi = arr.min(), arr.max()
        if lo < 0 or hi >= size:
            _index_error(what, size, int(lo if lo < 0 else hi))
    return arr


def one_index(value: object, size: int, what: str) -> int:
    """One index 0..size-1 (a game or a seat), checked as `index_array` checks them."""
    if type(value) is int and 0 <= value < size:
        return value
    try:
        scalar = np.ndim(value) == 0
    except ValueError:  # a ragged list
        scalar = False
    if not scalar:
        raise ValueError(f"give one {what} index 0..{size - 1}; got {shown(value)}")
    return int(index_array(value, size, what)[0])


def seat_rows(rules: Rules, seats: npt.ArrayLike, n: int) -> npt.NDArray[np.int64]:
    """(n,) int64 seats from one seat or one per game, each checked to be a seat of the
    table (0..num_players-1; `index_array`)."""
    arr = index_array(seats, rules.num_players, "seat")
    if arr.size == n:
        return arr if arr.base is None and arr.flags.writeable else arr.copy()
    if arr.size == 1:
        return np.full(n, arr[0], dtype=np.int64)
    raise ValueError(f"give one seat or {n} seats, one per game; got {arr.size}")


def shown(value: object, limit: int = 60) -> str:
    """`value` for a one-line error: an array as its list, long text cut short."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    text = repr(value).replace("\n", " ")
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _whole_in(x: object, size: int) -> bool:
    return isinstance(x, int | np.integer) and not isinstance(x, bool) and 0 <= x < size


def _index_error(what: str, size: int, bad: object) -> NoReturn:
    if size <= 0:
        raise ValueError(f"{what} indices: there are none to index (0 {what}s); got {shown(bad)}")
    raise ValueError(
        f"{what} indices must be whole numbers 0..{size - 1} ({size} {what}s); got {shown(bad)}"
    )


# ----------------------------------------------------------------------------- dealing
def splitmix64(x: npt.ArrayLike) -> U64:
    """The SplitMix64 finaliser (core/deal.py), over an array of uint64."""
    arr = np.asarray(x, dtype=np.uint64)
    return _splitmix_all(arr.reshape(-1)).reshape(arr.shape)


def deal_hands(rules: Rules, seed: npt.ArrayLike, hand_no: npt.ArrayLike) -> U64:
    """(B, P) uint64: hand `hand_no` of each game, dealt from its seed (core/deal.py)."""
    seeds = np.atleast_1d(np.asarray(seed, dtype=np.uint64))
    nos = np.broadcast_to(np.asarray(hand_no, dtype=np.int64), seeds.shape).copy()
    out = np.zeros((seeds.size, rules.num_players), dtype=np.uint64)
    _deal_all(DECKS[rules.deck], seeds, nos, rules.num_players, rules.hand_size, out)
    return out


def first_dealer(rules: Rules, seed: npt.ArrayLike) -> I8:
    """RULES.md §1: the first dealer is drawn from the game's seed (core/deal.py)."""
    seeds = np.atleast_1d(np.asarray(seed, dtype=np.uint64))
    return _dealers(seeds, rules.num_players)


@njit(cache=True)
def _splitmix_all(x):
    out = np.empty_like(x)
    for i in range(x.size):
        out[i] = _deal.splitmix64(x[i])
    return out


@njit(cache=True)
def _deal_all(deck, seeds, hand_no, p, k, out):
    for i in range(seeds.size):
        _deal.deal(deck, seeds[i], hand_no[i], p, k, out[i])


@njit(cache=True)
def _dealers(seeds, p):
    out = np.empty(seeds.size, dtype=np.int8)
    for i in range(seeds.size):
        out[i] = _deal.first_dealer(seeds[i], p)
    return out


# ----------------------------------------------------------------------------- init
class DealError(ValueError):
    """A given starting position is not a valid deal."""


def parse_deals(rules: Rules, deals: npt.ArrayLike, batch: int) -> U64:
    """Accept (B, P) uint64 masks or (B, P, hand_size) card indices; check them."""
    arr = np.asarray(deals)
    p, k = rules.num_players, rules.hand_size
    if arr.ndim == 3 and arr.shape[1:] == (p, k):
        if arr.min() < 0 or arr.max() >= NUM_CARDS:
            raise DealError(f"deal card indices must be 0..{NUM_CARDS - 1}")
        masks = np.bitwise_or.reduce(CARD_BIT[arr.astype(np.int64)], axis=2)
    elif arr.ndim == 2 and arr.shape[1] == p:
        masks = arr.astype(np.uint64)
    else:
        raise DealError(
            f"deals must have shape (B, {p}) of uint64 masks or (B, {p}, {k}) of cards; "
            f"got {arr.shape}"
        )
    if masks.shape[0] != batch:
        raise DealError(f"{masks.shape[0]} deals given for a batch of {batch}")
    counts = np.bitwise_count(masks)
    union = np.bitwise_or.reduce(masks, axis=1)
    bad = np.flatnonzero(
        (counts != k).any(axis=1)
        | (np.bitwise_count(union) != p * k)
        | ((union & ~deck_mask(rules)) != 0)
    )
    if bad.size:
        g = int(bad[0])
        raise DealError(
            f"deal of game {g} is not {p} disjoint hands of {k} cards from the deck "
            f"(hand sizes {counts[g].tolist()})"
        )
    return masks


def _fill(
    value: npt.ArrayLike | None,
    shape: tuple[int, ...],
    dtype: type,
    default: int,
    what: str,
    bounds: tuple[int, int] | None = None,
):
    """`value` broadcast to `shape` as `dtype`; a value that does not fit (`dtype`'s range,
    or `bounds`) is a `DealError` (never a wrapped integer: a score of 1e20 must not
    become -2**31)."""
    if value is None:
        return np.full(shape, default, dtype=dtype)
    try:
        raw = np.asarray(value)
    except (ValueError, TypeError, OverflowError):
        raise DealError(f"{what} must be whole numbers; got {value!r}") from None
    if raw.dtype.kind == "O":  # Python ints beyond int64: out of every range here
        try:
            raw = np.asarray(value, dtype=np.float64)
        except (ValueError, TypeError, OverflowError):
            raise DealError(f"{what} must be whole numbers; got {value!r}") from None
    if raw.dtype.kind not in "iuf":
        raise DealError(f"{what} must be integers; got {value!r}")
    info = np.iinfo(dtype)
    lo, hi = bounds if bounds is not None else (info.min, info.max)
    with np.errstate(invalid="ignore"):
        fits = np.isfinite(raw) & (raw == np.round(raw)) & (raw >= lo) & (raw <= hi)
    if not fits.all():
        bad = raw.reshape(-1)[np.flatnonzero(~fits.reshape(-1))[0]].item()
        why = " (RULES.md §6, bounds of the numeric options)" if bounds is not None else ""
        raise DealError(f"{what} must be whole numbers in {lo}..{hi}{why}; got {bad!r}")
    try:
        arr = np.broadcast_to(raw.astype(dtype), shape)
    except ValueError:
        shown = f"{shape[-1:]} or {shape}"
        raise DealError(f"{what} must have shape {shown}; got {raw.shape}") from None
    return arr.copy()


_U64_MAX = (1 << 64) - 1
#: The most games one State holds: 16.7 million rows of a few hundred bytes each (some
#: GB); a larger batch is refused before its buffer is allocated (an allocation beyond
#: memory may succeed and then be killed when the first hands are dealt into it).
MAX_BATCH = 1 << 24


def seed_array(seeds: npt.ArrayLike, b: int) -> U64:
    """(b,) uint64 game seeds from whole numbers 0..2**64-1 (one, or one per game); a
    negative, fractional or larger seed is a `ValueError`, never wrapped (a seed of
    2**64 must not play the games of seed 0)."""
    try:
        raw = np.asarray(seeds)
    except (ValueError, TypeError, OverflowError):
        raw = np.asarray([None])
    flat = raw.reshape(-1)
    if raw.dtype.kind == "u":
        ok = True
    elif raw.dtype.kind == "i":
        ok = not flat.size or flat.min() >= 0
    elif raw.dtype.kind == "O":
        ok = all(
            isinstance(x, int | np.integer) and not isinstance(x, bool) and 0 <= x <= _U64_MAX
            for x in flat.tolist()
        )
    else:
        ok = False
    if not ok or flat.size == 0:
        raise ValueError(f"seeds must be whole numbers 0..2**64-1; got {shown(seeds)}")
    if raw.dtype.kind == "O":
        arr = np.array(flat.tolist(), dtype=np.uint64).reshape(raw.shape)
    else:
        arr = raw.astype(np.uint64, copy=False)
    try:
        return np.broadcast_to(arr, (b,)).copy()
    except ValueError:
        raise ValueError(f"give one seed or {b} seeds; got shape {raw.shape}") from None


def init(
    rules: Rules,
    batch_size: int,
    rng: np.random.Generator | None = None,
    *,
    seeds: npt.ArrayLike | None = None,
    deals: npt.ArrayLike | None = None,
    dealer: npt.ArrayLike | None = None,
    scores: npt.ArrayLike | None = None,
    bags: npt.ArrayLike | None = None,
) -> State:
    """Start `batch_size` games at the first decision of their first hand.

    Either `rng` (a `numpy.random.Generator`) or `seeds` ((B,) uint64 per-game keys) gives
    the randomness. `deals` fixes the first hand's cards, `dealer` the first dealer,
    `scores` and `bags` ((T,) or (B, T)) the position of the game; later hands are dealt
    from the seeds.
    """
    if not isinstance(rules, Rules):
        raise TypeError(
            f"init needs a Rules value first; got {rules!r} (a preset by name: Rules.preset(name))"
        )
    if isinstance(batch_size, bool) or not isinstance(batch_size, int | np.integer):
        raise ValueError(f"batch_size must be a whole number >= 1; got {batch_size!r}")
    if not 1 <= batch_size <= MAX_BATCH:
        raise ValueError(f"batch_size must be 1..{MAX_BATCH:,}; got {batch_size}")
    b, t = int(batch_size), rules.num_teams
    if seeds is None:
        if rng is None:
            raise ValueError("init needs rng (a numpy.random.Generator) or seeds")
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"rng must be a numpy.random.Generator; got {rng!r}")
        seed = rng.integers(0, np.iinfo(np.uint64).max, size=b, dtype=np.uint64, endpoint=True)
    else:
        seed = seed_array(seeds, b)
    p = rules.num_players
    if dealer is None:
        first = first_dealer(rules, seed)
    else:
        first = _fill(dealer, (b,), np.int8, 0, "dealer")
    if ((first < 0) | (first >= p)).any():
        raise DealError(f"dealer must be a seat 0..{p - 1}")
    given = None if deals is None else parse_deals(rules, deals, b)
    state = State.wrap(rules, np.zeros((b, layout(rules)[0]), dtype=np.uint8))
    state.seed[:] = seed
    state.dealer[:] = first
    # a position by hand lies within the bounds that keep every score inside int32
    score_range = (-MAX_POSITION_SCORE, MAX_POSITION_SCORE)
    state.scores[:] = _fill(scores, (b, t), np.int32, 0, "scores", score_range)
    state.bags[:] = _fill(bags, (b, t), np.int32, 0, "bags", (0, MAX_POSITION_BAGS))
    state.winner[:] = -1
    state.stock[:] = -1
    if given is not None:
        state.deal[:] = given
    _kernel.start_hands(rules_vector(rules), state.buffer, np.arange(b), given is not None)
    return state


_ARANGE = np.arange(0, dtype=np.int64)


def arange_cached(n: int) -> npt.NDArray[np.int64]:
    """A cached arange(n): the hot path indexes it with a slice or rows every step."""
    global _ARANGE
    if _ARANGE.size < n:
        _ARANGE = np.arange(max(n, 2 * _ARANGE.size), dtype=np.int64)
    return _ARANGE[:n]
