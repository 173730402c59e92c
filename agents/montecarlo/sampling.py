"""Determinization: sample the hidden hands of a game, exactly uniformly over what a seat knows.

What a seat knows about where the cards it cannot see are (`knowledge`):

- its own hand, and every card played and who played it (they are in no hand now);
- how many cards each seat still holds: the hand size minus the cards it has played
  (the RULES.md §2 exchange swaps two cards for two, so it changes no count);
- voids: a seat that failed to follow suit holds no card of that suit; a seat that led a
  spade before spades were broken held only spades then (RULES.md §3), and as nobody
  gains a card during play, it holds none of the other suits now (the engine records
  both in `SeatView.voids`);
- the exchange (RULES.md §2 `blind_nil_exchange`): the cards it passed are in its
  partner's hand unless the partner has played them; the cards it received are in its
  own hand or played;
- RULES.md §3 `first_lead=two_of_clubs`: at the first lead the seat to act holds 2♣;
- RULES.md §6 `mirror` / `whiz`: a bid (other than a whiz nil or a blind nil) is the
  number of spades the bidder was dealt (jokers are spades), so the spades it holds now
  are that many less those it has played (and, for the observer's partner, corrected
  by the exchange; a seat whose unseen exchange could have moved spades is not held to
  it).

- RULES.md §6 `two_player`, after the draw: the cards nobody kept are out of play. The
  seat knows the ones it looked at and discarded (`SeatView.seen`); the others it never
  saw are shared, with the other hand's cards, between that hand and the discards. The
  discards are sampled as one more seat (`Knowledge.discards`: its index P) that may hold
  anything, and left out of the worlds.

A *world* is a (P,) uint64 vector of hands now (the observer's own included) that agrees
with all of it. `sample_worlds` draws worlds uniformly among all such worlds, exactly:
the number of ways to share the free cards of each suit among the seats allowed to hold
it, with each seat's count fixed, is counted by dynamic programming over the suits
(exact integers), and each world is drawn suit by suit with probabilities proportional
to those counts (exact integer draws); within a suit, the cards are then dealt to the
chosen counts by a uniform shuffle. Optionally (`weight="bids"`) worlds are weighted by
how well each hand fits its bid (`agents.montecarlo.world_weights`).

The random numbers are numpy's (the caller's `Generator`); the weights, the choices and
the dealing are compiled (`_split_weights`, `_take_splits`, `_deal_rows`) where the
counts fit int64, and numpy with Python integers beyond: the same draws, the same
worlds (`WorldSampler.use_kernel`, tested against each other).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from agents.kernels.compile import ensure_fresh, jit
from agents.montecarlo import world_weights as bid_model
from spades_env.cards import (
    CARD_SUIT,
    NUM_SUITS,
    SPADES,
    SUIT_MASK,
    TWO_OF_CLUBS,
    mask_to_cards,
)
from spades_env.core.rule_functions import legal_bids, partner_of
from spades_env.core.rules_vector import BID_MIRROR, BID_WHIZ
from spades_env.observation import SeatView
from spades_env.rules import Rules
from spades_env.state import DRAW, PLAY, deck_mask

ensure_fresh()  # agents/kernels/compile.py: no stale kernels from the on-disk cache

Worlds = npt.NDArray[np.uint64]  # (n, P) hands now, one row per sampled world
ALL_SUITS = (1 << NUM_SUITS) - 1
_INT64_SAFE = 1 << 62


class InconsistentViewError(ValueError):
    """No deal agrees with the view (a bug upstream: a view is always of a real deal)."""


@dataclass(frozen=True)
class Knowledge:
    """Where the cards are, as far as one seat of one game knows (see the module doc)."""

    rules: Rules
    seat: int  # the observer
    known: tuple[int, ...]  # (P,) cards known to be in each hand now
    free: int  # cards whose holder is unknown
    need: tuple[int, ...]  # (P,) free cards each seat still needs
    allowed: tuple[int, ...]  # (P,) bit s: the seat may hold suit s
    spades: tuple[int, ...] = ()  # (P,) free spades each seat must get, -1 = any
    discards: bool = False  # RULES.md §6 two_player: a last "seat" P holds the discards


def knowledge(view: SeatView, game: int = 0) -> Knowledge:
    """What seat `view.seat[game]` knows about the hidden hands of its game."""
    rules = view.rules
    p = rules.num_players
    if rules.draw and int(view.phase[game]) == DRAW:
        raise NotImplementedError("sampling starts after the RULES.md §6 two_player draw")
    seat = int(view.seat[game])
    played = int(view.played[game])
    hidden_hand = bool(view.hand_hidden[game])
    hand = 0 if hidden_hand else int(view.hand[game])
    counts = [rules.hand_size - int(view.played_by[game, s]).bit_count() for s in range(p)]
    unseen = int(deck_mask(rules)) & ~played & ~hand & ~int(view.seen[game])
    known = [0] * p
    known[seat] = hand
    allowed = [ALL_SUITS & ~int(view.voids[game, s]) for s in range(p)]
    if not hidden_hand:
        allowed[seat] = ALL_SUITS  # nothing to sample there
    # RULES.md §2 exchange: what I passed is with my partner unless played. (Before the
    # exchange is done the passed cards are still in my hand, so none is unseen.)
    partner = partner_of(seat, p)
    known[partner] |= int(view.passed[game]) & unseen
    # RULES.md §3 first_lead=two_of_clubs: the holder of 2C leads the first trick.
    if (
        rules.first_lead == "two_of_clubs"
        and int(view.phase[game]) == PLAY
        and int(view.tricks_played[game]) == 0
        and int(view.trick_size[game]) == 0
    ):
        known[int(view.to_act[game])] |= (1 << TWO_OF_CLUBS) & unseen
    free = unseen & ~_union(known)
    need = [counts[s] - known[s].bit_count() for s in range(p)]
    spades = _spade_counts(view, game, known)
    discards = free.bit_count() - sum(need)
    if rules.draw:  # RULES.md §6 two_player: the cards nobody kept (module doc)
        known, need, allowed = [*known, 0], [*need, discards], [*allowed, ALL_SUITS]
        spades = (*spades, -1)
    if min(need) < 0 or sum(need) != free.bit_count():
        raise InconsistentViewError(
            f"seat {seat}: hand counts {counts} do not fit {unseen.bit_count()} unseen cards"
        )
    return Knowledge(
        rules, seat, tuple(known), free, tuple(need), tuple(allowed), spades, rules.draw
    )


def _spade_counts(view: SeatView, game: int, known: list[int]) -> tuple[int, ...]:
    """RULES.md §6 mirror / whiz: free spades each seat must still hold (-1 = any)."""
    rules = view.rules
    p = rules.num_players
    out = [-1] * p
    if rules.bid_constraint not in ("mirror", "whiz"):
        return tuple(out)
    spade_mask = int(SUIT_MASK[SPADES])
    seat = int(view.seat[game])
    partner = partner_of(seat, p)
    for s in range(p):
        bid = int(view.bids[game, s])
        if s == seat or bid < 0 or view.blind[game, s]:
            continue
        if rules.bid_constraint == "whiz" and bid == 0:
            continue  # a whiz nil may be bid on any spades
        held = bid - (int(view.played_by[game, s]) & spade_mask).bit_count()
        if rules.blind_nil_exchange and view.blind[game].any():
            team_blind = any(view.blind[game, t] for t in range(p) if t % 2 == s % 2)
            if s == partner and view.passed[game] and view.received[game]:
                held += (int(view.passed[game]) & spade_mask).bit_count()
                held -= (int(view.received[game]) & spade_mask).bit_count()
            elif team_blind:
                continue  # an exchange I did not see may have moved spades
        out[s] = held - (known[s] & spade_mask).bit_count()
    return tuple(out)


def _union(masks: list[int] | tuple[int, ...]) -> int:
    out = 0
    for m in masks:
        out |= m
    return out


class WorldSampler:
    """Exact uniform sampler of the worlds consistent with a `Knowledge`.

    Build once per decision, then `sample` as often as needed; `count` is the exact
    number of consistent worlds.
    """

    #: deal by the compiled kernels where the counts fit int64 (False: numpy alone, the
    #: reference the tests hold them to; the same draws and worlds either way)
    use_kernel = True

    def __init__(self, know: Knowledge) -> None:
        self.know = know
        self.seats = [s for s, n in enumerate(know.need) if n > 0]  # seats to fill
        self.caps = [know.need[s] for s in self.seats]
        cards = np.array(mask_to_cards(know.free), dtype=np.int64)
        suit_of = CARD_SUIT[cards].astype(np.int64)
        order = np.lexsort((cards, suit_of))
        cards, suit_of = cards[order], suit_of[order]
        self.cards = cards  # free cards grouped by suit (jokers are spades)
        self.suit_of = suit_of
        self.suit_count = [int((suit_of == k).sum()) for k in range(NUM_SUITS)]
        self.allow = np.array(
            [[bool(know.allowed[s] >> k & 1) for k in range(NUM_SUITS)] for s in self.seats],
            dtype=bool,
        ).reshape(len(self.seats), NUM_SUITS)
        m = len(self.seats)
        total = int(cards.size)
        self.exact_ints = m**total >= _INT64_SAFE  # counts may exceed int64: Python ints
        self.spades = [know.spades[s] if know.spades else -1 for s in self.seats]
        self.unconstrained = bool(self.allow.all()) and max(self.spades, default=-1) < 0
        if m > 1 and not self.unconstrained:
            self._build_tables()
        self._count = self._count_worlds()
        if self._count == 0:
            raise InconsistentViewError("no deal agrees with what the seat knows")

    # ------------------------------------------------------------------ counting
    def _splits(self, k: int) -> tuple[npt.NDArray[np.int64], list[int]]:
        """Ways to share suit k's free cards among the seats: (S, m) parts, weights."""
        u = self.suit_count[k]
        m = len(self.seats)
        ranges = [
            range(min(u, self.caps[j]) + 1) if self.allow[j, k] else range(1) for j in range(m - 1)
        ]
        if k == SPADES:  # RULES.md §6 mirror / whiz: known spade counts
            ranges = [r if self.spades[j] < 0 else [self.spades[j]] for j, r in enumerate(ranges)]
        parts, weights = [], []
        for head in itertools.product(*ranges):
            last = u - sum(head)
            if last < 0 or last > self.caps[-1] or (last and not self.allow[m - 1, k]):
                continue
            if k == SPADES and self.spades[-1] >= 0 and last != self.spades[-1]:
                continue
            x = (*head, last)
            w = math.factorial(u)
            for xi in x:
                w //= math.factorial(xi)
            parts.append(x)
            weights.append(w)
        return np.array(parts, dtype=np.int64).reshape(-1, m), weights

    def _build_tables(self) -> None:
        """F[k][r]: ways to deal suits k.. when the first m-1 seats need r (the last
        seat takes the rest): a convolution of each suit's split weights, back to front."""
        dims = tuple(c + 1 for c in self.caps[:-1])
        dtype = object if self.exact_ints else np.int64
        after = np.zeros(dims, dtype=dtype)
        after[(0,) * len(dims)] = 1
        self.tables = [after]
        self.splits = []
        for k in reversed(range(NUM_SUITS)):
            parts, weights = self._splits(k)
            table = np.zeros(dims, dtype=dtype)
            for x, w in zip(parts, weights, strict=True):
                head = x[:-1]
                dst = tuple(slice(int(a), d) for a, d in zip(head, dims, strict=True))
                src = tuple(slice(0, d - int(a)) for a, d in zip(head, dims, strict=True))
                table[dst] += w * after[src]
            self.splits.append((parts, np.array(weights, dtype=dtype)))
            self.tables.append(table)
            after = table
        self.tables.reverse()  # tables[k] for suits k..3; tables[4] = the empty deal
        self.splits.reverse()
        if not self.exact_ints:  # the compiled draw (`_split_weights`) reads them flat
            self.flat = [np.ascontiguousarray(t).reshape(-1) for t in self.tables]
            self.strides = np.array(
                [int(np.prod(dims[j + 1 :])) for j in range(len(dims))], dtype=np.int64
            )

    def _count_worlds(self) -> int:
        m = len(self.seats)
        if m <= 1:
            return 1
        if self.unconstrained:
            n, out = int(self.cards.size), 1
            for c in self.caps:
                out *= math.comb(n, c)
                n -= c
            return out
        return int(self.tables[0][tuple(self.caps[:-1])])

    @property
    def count(self) -> int:
        """The exact number of worlds consistent with the knowledge."""
        return self._count

    # ------------------------------------------------------------------ sampling
    def sample(self, n: int, rng: np.random.Generator) -> Worlds:
        """(n, P) uint64: n worlds drawn independently and uniformly."""
        worlds = self._sample(n, rng)
        return worlds[:, : self.know.rules.num_players] if self.know.discards else worlds

    def _sample(self, n: int, rng: np.random.Generator) -> Worlds:
        know = self.know
        worlds = np.tile(np.array(know.known, dtype=np.uint64), (n, 1))
        m = len(self.seats)
        if m == 0 or n == 0:
            return worlds
        if m == 1:
            worlds[:, self.seats[0]] |= np.uint64(know.free)
            return worlds
        if self.use_kernel and not self.exact_ints:
            return self._sample_compiled(worlds, rng)
        if self.unconstrained:
            seat_of = self._shuffle_deal(n, rng)
        else:
            parts = self._draw_splits(n, rng)  # (n, m, 4) cards per seat and suit
            seat_of = self._deal_suits(parts, rng)
        bits = np.left_shift(np.uint64(1), self.cards.astype(np.uint64))
        for j, s in enumerate(self.seats):
            mine = np.where(seat_of == j, bits[None, :], np.uint64(0))
            worlds[:, s] |= np.bitwise_or.reduce(mine, axis=1)
        return worlds

    def _sample_compiled(self, worlds: Worlds, rng: np.random.Generator) -> Worlds:
        """`_sample`'s draws of `rng`, in the same order, and the same worlds, dealt by
        the compiled `_split_weights`, `_take_splits` and `_deal_rows`."""
        n, m, c = worlds.shape[0], len(self.seats), self.cards.size
        seats = np.array(self.seats, dtype=np.int64)
        if self.unconstrained:  # `_shuffle_deal`: one "suit", cut into the counts
            keys = rng.random((n, c))
            caps = np.array(self.caps, dtype=np.int64).reshape(1, m, 1)
            one = np.zeros(c, dtype=np.int64)
            _deal_rows(worlds, keys, 1.0, self.cards, seats, caps, one, np.arange(c))
            return worlds
        parts = self._draw_splits_compiled(n, rng)
        keys = self.suit_of[None, :] + rng.random((n, c))  # `_deal_suits`
        start = np.concatenate([[0], np.cumsum(self.suit_count)[:-1]]).astype(np.int64)
        place = np.arange(c) - start[self.suit_of]
        _deal_rows(worlds, keys, float(NUM_SUITS), self.cards, seats, parts, self.suit_of, place)
        return worlds

    def _shuffle_deal(self, n: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """(n, C) seat index of each free card: a uniform shuffle cut into the counts."""
        order = np.argsort(rng.random((n, self.cards.size)), axis=1)
        seat_at = np.repeat(np.arange(len(self.seats)), self.caps)  # seat of each place
        seat_of = np.empty_like(order)
        np.put_along_axis(seat_of, order, np.broadcast_to(seat_at, order.shape), axis=1)
        return seat_of

    def _draw_splits(self, n: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """(n, m, 4): how many cards of each suit each seat gets, drawn suit by suit
        with probability proportional to the number of deals that complete it."""
        m = len(self.seats)
        need = np.tile(np.array(self.caps[:-1], dtype=np.int64), (n, 1))  # (n, m-1)
        out = np.zeros((n, m, NUM_SUITS), dtype=np.int64)
        for k in range(NUM_SUITS):
            parts, weights = self.splits[k]
            rest = need[:, None, :] - parts[None, :, :-1]  # (n, S, m-1)
            ok = (rest >= 0).all(axis=2)
            idx = tuple(np.where(ok, rest[:, :, j], 0) for j in range(m - 1))
            w = np.where(ok, weights[None, :] * self.tables[k + 1][idx], 0)
            choice = _draw_rows(w, rng, self.exact_ints)
            out[:, :, k] = parts[choice]
            need -= parts[choice, :-1]
        return out

    def _draw_splits_compiled(self, n: int, rng: np.random.Generator) -> npt.NDArray[np.int64]:
        """`_draw_splits` for counts within int64: the weights and choices compiled
        (`_split_weights`, `_take_splits`), the same draws of `rng`."""
        m = len(self.seats)
        need = np.tile(np.array(self.caps[:-1], dtype=np.int64), (n, 1))  # (n, m-1)
        out = np.zeros((n, m, NUM_SUITS), dtype=np.int64)
        for k in range(NUM_SUITS):
            parts, weights = self.splits[k]
            cum = np.empty((n, parts.shape[0]), dtype=np.int64)
            _split_weights(need, parts, weights, self.flat[k + 1], self.strides, cum)
            u = rng.integers(0, cum[:, -1])
            _take_splits(cum, u, parts, need, out, k)
        return out

    def _deal_suits(self, parts: npt.NDArray[np.int64], rng) -> npt.NDArray[np.int64]:
        """(n, C) seat of each free card: within each suit, a uniform shuffle cut into
        the drawn counts."""
        n = parts.shape[0]
        suit_of = self.suit_of
        # Sorting by suit + a uniform key shuffles each suit's cards within its block.
        order = np.argsort(suit_of[None, :] + rng.random((n, self.cards.size)), axis=1)
        start = np.concatenate([[0], np.cumsum(self.suit_count)[:-1]])
        place = np.arange(self.cards.size) - start[suit_of]  # rank of each place in suit
        bounds = np.cumsum(parts, axis=1)[:, :, suit_of]  # (n, m, C)
        seat_at = (place[None, None, :] >= bounds).sum(axis=1)  # (n, C) seat of place
        seat_of = np.empty_like(order)
        np.put_along_axis(seat_of, order, seat_at, axis=1)
        return seat_of


@jit
def _split_weights(need, parts, weights, table, strides, cum):
    """cum[i]: the running sum over the splits `parts` (S, m) of one suit of the deals
    that complete row i's `need` (n, m-1) after it (`_draw_splits`' weights, table
    `tables[k + 1]` flat); 0 where a split takes more than a seat needs."""
    n, m1 = need.shape
    for i in range(n):
        acc = 0
        for s in range(parts.shape[0]):
            idx = 0
            for j in range(m1):
                rest = need[i, j] - parts[s, j]
                if rest < 0:
                    idx = -1
                    break
                idx += rest * strides[j]
            if idx >= 0:
                acc += weights[s] * table[idx]
            cum[i, s] = acc


@jit
def _take_splits(cum, u, parts, need, out, k):
    """Row i takes the first split whose running weight exceeds its draw u[i] (as
    `_draw_rows` does): its counts into out[i, :, k], taken from the row's need."""
    n, m1 = need.shape
    for i in range(n):
        s = 0
        while cum[i, s] <= u[i]:
            s += 1
        for j in range(m1 + 1):
            out[i, j, k] = parts[s, j]
        for j in range(m1):
            need[i, j] -= parts[s, j]


@jit
def _deal_rows(worlds, keys, top, cards, seats, parts, suit_of, place):
    """Deal the free cards into `worlds` (n, P) in place: in row i the card of the j-th
    smallest key goes to seat `seats[x]`, where x counts the seats whose share `parts`
    (n, m, 4) of that card's suit `suit_of[j]`, added up in seat order, ends at or
    before `place[j]` (`_deal_suits`; the unconstrained shuffle is one suit, `parts`
    (1, m, 1) the counts, as `_shuffle_deal` cuts them). The keys of a row are distinct
    (uniform doubles), so any exact sort orders them as numpy's argsort does; here a
    bucket sort by `floor(key * C / top)` (keys below `top`; a monotone map, so the
    buckets are in key order), finished by an insertion sort within the buckets."""
    n, c = keys.shape
    m = seats.size
    order = np.empty(c, dtype=np.int64)
    sorted_keys = np.empty(c)
    bucket = np.empty(c, dtype=np.int64)
    start = np.empty(c + 1, dtype=np.int64)
    scale = c / top
    for i in range(n):
        pi = i if parts.shape[0] > 1 else 0
        start[:] = 0
        for j in range(c):
            b = min(int(keys[i, j] * scale), c - 1)
            bucket[j] = b
            start[b + 1] += 1
        for b in range(c):
            start[b + 1] += start[b]
        for j in range(c):
            t = start[bucket[j]]
            start[bucket[j]] = t + 1
            order[t], sorted_keys[t] = j, keys[i, j]
        for j in range(1, c):  # only keys that share a bucket are out of order
            key, card = sorted_keys[j], order[j]
            t = j
            while t > 0 and sorted_keys[t - 1] > key:
                order[t], sorted_keys[t] = order[t - 1], sorted_keys[t - 1]
                t -= 1
            order[t], sorted_keys[t] = card, key
        for j in range(c):
            k = suit_of[j]
            x, acc = 0, 0
            for s in range(m):
                acc += parts[pi, s, k]
                x += place[j] >= acc
            worlds[i, seats[x]] |= np.uint64(1) << np.uint64(cards[order[j]])


def _draw_rows(w: npt.NDArray, rng: np.random.Generator, exact_ints: bool) -> npt.NDArray:
    """One column index per row of non-negative integer weights, exactly ∝ weight."""
    cum = np.cumsum(w, axis=1)
    if exact_ints:  # Python integers beyond int64: draw each row exactly, bit by bit
        u = np.array([_randbelow(int(t), rng) for t in cum[:, -1]], dtype=object)
    else:
        u = rng.integers(0, cum[:, -1])
    return (cum > u[:, None]).argmax(axis=1)


def _randbelow(n: int, rng: np.random.Generator) -> int:
    """A uniform integer in [0, n), exact for any size (rejection on random bits)."""
    bits = n.bit_length()
    while True:
        words = rng.integers(0, 1 << 32, size=(bits + 31) // 32, dtype=np.uint64)
        value = int.from_bytes(words.astype("<u4").tobytes(), "little") >> (32 * words.size - bits)
        if value < n:
            return value


def sample_worlds(
    view: SeatView,
    n: int,
    rng: np.random.Generator,
    *,
    game: int = 0,
    weight: Literal["bids"] | None = None,
) -> Worlds:
    """(n, P) uint64: n worlds for game `game` of `view`, each a full set of hands now.

    `weight=None`: exactly uniform over the consistent worlds. `weight="bids"`: drawn
    in proportion to `agents.montecarlo.world_weights.world_bid_weights` (see `bid_model` for the
    model and how exact that is).
    """
    sampler = WorldSampler(knowledge(view, game))
    if weight is None:
        return sampler.sample(n, rng)
    if weight == "bids":
        return bid_model.sample_weighted(sampler, view, game, n, rng)
    raise ValueError(f"weight={weight!r} is not a weighting; use None or 'bids'")


def sample_worlds_batch(
    view: SeatView,
    n: int,
    rng: np.random.Generator,
    *,
    weight: Literal["bids"] | None = None,
) -> npt.NDArray[np.uint64]:
    """(B, n, P) uint64: `sample_worlds` for every game of the view."""
    return np.stack(
        [sample_worlds(view, n, rng, game=g, weight=weight) for g in range(view.batch_size)]
    )


def world_violations(view: SeatView, world: npt.ArrayLike, game: int = 0) -> list[str]:
    """Every way `world` ((P,) uint64 hands now) contradicts the view; [] if none."""
    rules = view.rules
    p = rules.num_players
    hands = [int(h) for h in np.asarray(world, dtype=np.uint64)]
    seat = int(view.seat[game])
    played = int(view.played[game])
    out = []
    in_play = int(deck_mask(rules)) & ~played
    if rules.draw:  # RULES.md §6 two_player: some of the cards I never saw are discarded
        whole = _union(hands) & ~(in_play & ~int(view.seen[game])) == 0
    else:
        whole = _union(hands) == in_play
    if not whole or sum(h.bit_count() for h in hands) != _union(hands).bit_count():
        out.append("hands are not a partition of the cards not yet played")
    if not view.hand_hidden[game] and hands[seat] != int(view.hand[game]):
        out.append(f"seat {seat}'s own hand differs from the one it sees")
    for s in range(p):
        expect = rules.hand_size - int(view.played_by[game, s]).bit_count()
        if hands[s].bit_count() != expect:
            out.append(f"seat {s} holds {hands[s].bit_count()} cards, not {expect}")
        for k in range(NUM_SUITS):
            if int(view.voids[game, s]) >> k & 1 and hands[s] & int(SUIT_MASK[k]):
                out.append(f"seat {s} holds suit {k}, where it has shown a void")
    if rules.bid_constraint in ("mirror", "whiz") and not (
        rules.blind_nil_exchange and view.blind[game].any()
    ):
        kind = BID_MIRROR if rules.bid_constraint == "mirror" else BID_WHIZ
        for s in range(p):
            bid = int(view.bids[game, s])
            if bid < 0 or view.blind[game, s]:
                continue
            dealt = hands[s] | int(view.played_by[game, s])
            if not int(legal_bids(rules.min_bid, rules.max_bid, kind, dealt, -1)) >> bid & 1:
                spades = (dealt & int(SUIT_MASK[SPADES])).bit_count()
                out.append(
                    f"seat {s} bid {bid} under {rules.bid_constraint} but held {spades} spades"
                )
    partner = partner_of(seat, p)
    if int(view.phase[game]) >= PLAY:
        missing = int(view.passed[game]) & ~played & ~hands[partner]
        if missing:
            out.append(f"partner {partner} lacks passed cards {mask_to_cards(missing)}")
    if (
        rules.first_lead == "two_of_clubs"
        and int(view.phase[game]) == PLAY
        and int(view.tricks_played[game]) == 0
        and int(view.trick_size[game]) == 0
        and not hands[int(view.to_act[game])] >> TWO_OF_CLUBS & 1
    ):
        out.append("the first leader does not hold 2C")
    return out
