"""The batched game state and how a batch of games starts (`init`).

The state is one dataclass of arrays whose first axis is the batch (B games, P seats,
T teams, C = NUM_CARDS card slots, H = longest action history of a hand). Every game in
the batch advances independently, each in its own phase.

Deals are reproducible per game: game `g` carries a 64-bit `seed`, and the deal of its
`h`-th hand is a pure function of `(seed, h)`. So the same game gives the same deals
whatever batch it is played in, and duplicate tournaments can replay a deal sequence.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from spades_env.cards import (
    CARD_BIT,
    DECKS,
    NUM_CARDS,
    mask_to_cards,
)
from spades_env.rules import Rules

# Phases (RULES.md §2-§3). DONE: the game is over (RULES.md §5). DRAW: RULES.md §6
# two_player's draw from the stock, before the bidding; TRUMP: RULES.md §6 auction's
# naming of the trump suit, after the bidding (numbered last so that the other phases
# keep their numbers).
BLIND, BID, EXCHANGE, PLAY, DONE, DRAW, TRUMP = 0, 1, 2, 3, 4, 5, 6
PHASE_NAMES = ("blind", "bid", "exchange", "play", "done", "draw", "trump")
NUM_PHASES = 7

U64 = npt.NDArray[np.uint64]
I8 = npt.NDArray[np.int8]
I16 = npt.NDArray[np.int16]
I32 = npt.NDArray[np.int32]
B8 = npt.NDArray[np.bool_]


@dataclass
class State:
    """A batch of Spades games. `step` updates it in place; `copy()` branches it."""

    rules: Rules
    seed: U64  # (B,) uint64 per-game deal key: deal of hand h = f(seed, h)
    hand_no: I32  # (B,) int32 hands completed in this game
    dealer: I8  # (B,) int8 seat of the dealer (RULES.md §1)
    phase: I8  # (B,) int8 BLIND / BID / EXCHANGE / PLAY / DONE / DRAW
    to_act: I8  # (B,) int8 seat whose decision it is
    deal: U64  # (B, P) uint64 hands as dealt this hand
    hands: U64  # (B, P) uint64 hands now (after any exchange), played cards included
    played: U64  # (B,) uint64 every card played this hand
    legal: U64  # (B,) uint64 legal cards of `to_act` in PLAY/EXCHANGE (cache kept by step)
    bids: I8  # (B, P) int8 bid per seat, 0 = nil, -1 = not bid yet
    blind: B8  # (B, P) bool the nil was bid blind (RULES.md §2)
    num_bids: I8  # (B,) int8 bids made this hand
    passing: U64  # (B, P) uint64 cards chosen to pass in the exchange (RULES.md §2)
    trick: I8  # (B, P) int8 card each seat played to the current trick, -1 = none
    leader: I8  # (B,) int8 seat that led the current trick
    trick_size: I8  # (B,) int8 cards in the current trick
    lead_suit: I8  # (B,) int8 suit led in the current trick (-1 before the lead)
    tricks_played: I8  # (B,) int8 completed tricks this hand
    tricks_won: I8  # (B, P) int8 tricks taken per seat this hand
    broken: B8  # (B,) bool trumps (spades unless named) broken (RULES.md §3)
    voids: npt.NDArray[np.uint8]  # (B, P) uint8 bit s: seat has shown it holds no suit s
    card_seat: I8  # (B, C) int8 seat that played each card this hand, -1 = unplayed
    card_trick: I8  # (B, C) int8 trick (0-based) each card was played in, -1 = unplayed
    scores: I32  # (B, T) int32 cumulative score per team (RULES.md §4)
    bags: I32  # (B, T) int32 bag counter per team, below bag_limit after penalties
    winner: I8  # (B,) int8 winning team once DONE, else -1 (RULES.md §5)
    history: I16  # (B, H) int16 actions of this hand in order, -1 padded
    history_len: I16  # (B,) int16 actions taken this hand
    # RULES.md §6 two_player (spades_env/draw.py); unused (-1 / 0) by the other presets:
    stock: I8  # (B, C) int8 the shuffled stock, top card first, -1 padded
    stock_pos: I8  # (B,) int8 index in `stock` of the card on top now
    seen: U64  # (B, P) uint64 cards each seat looked at and discarded in the draw
    # RULES.md §3 / §6 auction (spades_env/auction.py): the trump suit of this hand;
    # SPADES in every game whose rules have trump="spades", -1 until named in auction.
    trump: I8  # (B,) int8

    @property
    def batch_size(self) -> int:
        return int(self.phase.shape[0])

    def copy(self) -> State:
        return State(
            rules=self.rules,
            **{
                f.name: getattr(self, f.name).copy()
                for f in dataclasses.fields(self)
                if f.name != "rules"
            },
        )

    def take(self, games: npt.ArrayLike) -> State:
        """A new state holding the given games of this batch (copies)."""
        idx = np.asarray(games)
        return State(
            rules=self.rules,
            **{
                f.name: getattr(self, f.name)[idx].copy()
                for f in dataclasses.fields(self)
                if f.name != "rules"
            },
        )


def max_history(rules: Rules) -> int:
    """Longest action history of one hand: draw decisions, blind decisions, bids,
    naming trump (RULES.md §6 auction), exchange passes, plays."""
    p = rules.num_players
    draws = p * rules.hand_size if rules.draw else 0
    naming = 1 if rules.trump == "named" else 0
    return draws + 2 * p + naming + 2 * p + p * rules.hand_size


def deck_mask(rules: Rules) -> np.uint64:
    """RULES.md §1: the 52-card deck, no jokers; §6: the preset's deck (`Rules.deck`)."""
    return DECKS[rules.deck]


# ----------------------------------------------------------------------------- dealing
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def splitmix64(x: U64) -> U64:
    """The SplitMix64 finaliser: a counter-based generator, vectorised over games."""
    with np.errstate(over="ignore"):
        z = (x + _GOLDEN).astype(np.uint64)
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return z ^ (z >> np.uint64(31))


def _stream(seed: U64, hand_no: npt.NDArray[np.integer], n: int) -> U64:
    """(B, n) uint64 random words for hand `hand_no` of each game."""
    with np.errstate(over="ignore"):
        base = splitmix64(seed ^ (hand_no.astype(np.uint64) * _GOLDEN))
        counters = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0xD1B54A32D192ED03)
        return splitmix64(base[:, None] + counters[None, :])


def deal_hands(rules: Rules, seed: U64, hand_no: npt.NDArray[np.integer]) -> U64:
    """(B, P) uint64: a uniformly shuffled deck dealt `hand_size` cards to each seat."""
    cards = np.array(mask_to_cards(deck_mask(rules)), dtype=np.int64)
    p, k = rules.num_players, rules.hand_size
    words = _stream(seed, hand_no, cards.size)
    order = np.argsort(words, axis=1, kind="stable")[:, : p * k]
    bits = CARD_BIT[cards[order]].reshape(-1, p, k)
    return np.bitwise_or.reduce(bits, axis=2)


def first_dealer(rules: Rules, seed: U64) -> I8:
    """RULES.md §1: the first dealer is drawn from the game's seed."""
    with np.errstate(over="ignore"):
        word = splitmix64(seed ^ np.uint64(0xA5A5A5A5A5A5A5A5))
    return (word % np.uint64(rules.num_players)).astype(np.int8)


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
    value: npt.ArrayLike | None, shape: tuple[int, ...], dtype: type, default: int, what: str
):
    """`value` broadcast to `shape` as `dtype`; a value that does not fit is a `DealError`
    (never a wrapped integer: a score of 1e20 must not become -2**31)."""
    if value is None:
        return np.full(shape, default, dtype=dtype)
    raw = np.asarray(value)
    if raw.dtype.kind not in "iuf":
        raise DealError(f"{what} must be integers; got {value!r}")
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore"):
        fits = np.isfinite(raw) & (raw == np.round(raw)) & (raw >= info.min) & (raw <= info.max)
    if not fits.all():
        bad = raw.reshape(-1)[np.flatnonzero(~fits.reshape(-1))[0]].item()
        raise DealError(f"{what} must be whole numbers in {info.min}..{info.max}; got {bad!r}")
    try:
        arr = np.broadcast_to(raw.astype(dtype), shape)
    except ValueError:
        shown = f"{shape[-1:]} or {shape}"
        raise DealError(f"{what} must have shape {shown}; got {raw.shape}") from None
    return arr.copy()


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
    from spades_env.engine import start_hand  # the engine owns the hand flow
    from spades_env.legality import update_legal

    b, p, t = batch_size, rules.num_players, rules.num_teams
    if seeds is None:
        if rng is None:
            raise ValueError("init needs rng (a numpy.random.Generator) or seeds")
        seed = rng.integers(0, np.iinfo(np.uint64).max, size=b, dtype=np.uint64, endpoint=True)
    else:
        seed = np.broadcast_to(np.asarray(seeds, dtype=np.uint64), (b,)).copy()
    hand_no = np.zeros(b, dtype=np.int32)
    if dealer is None:
        first = first_dealer(rules, seed)
    else:
        first = _fill(dealer, (b,), np.int8, 0, "dealer")
    if ((first < 0) | (first >= p)).any():
        raise DealError(f"dealer must be a seat 0..{p - 1}")
    given = None if deals is None else parse_deals(rules, deals, b)
    h = max_history(rules)
    state = State(
        rules=rules,
        seed=seed,
        hand_no=hand_no,
        dealer=first.astype(np.int8),
        phase=np.zeros(b, dtype=np.int8),
        to_act=np.zeros(b, dtype=np.int8),
        deal=np.zeros((b, p), dtype=np.uint64),
        hands=np.zeros((b, p), dtype=np.uint64),
        played=np.zeros(b, dtype=np.uint64),
        legal=np.zeros(b, dtype=np.uint64),
        bids=np.full((b, p), -1, dtype=np.int8),
        blind=np.zeros((b, p), dtype=bool),
        num_bids=np.zeros(b, dtype=np.int8),
        passing=np.zeros((b, p), dtype=np.uint64),
        trick=np.full((b, p), -1, dtype=np.int8),
        leader=np.zeros(b, dtype=np.int8),
        trick_size=np.zeros(b, dtype=np.int8),
        lead_suit=np.full(b, -1, dtype=np.int8),
        tricks_played=np.zeros(b, dtype=np.int8),
        tricks_won=np.zeros((b, p), dtype=np.int8),
        broken=np.zeros(b, dtype=bool),
        voids=np.zeros((b, p), dtype=np.uint8),
        card_seat=np.full((b, NUM_CARDS), -1, dtype=np.int8),
        card_trick=np.full((b, NUM_CARDS), -1, dtype=np.int8),
        scores=_fill(scores, (b, t), np.int32, 0, "scores"),
        bags=_fill(bags, (b, t), np.int32, 0, "bags"),
        winner=np.full(b, -1, dtype=np.int8),
        history=np.full((b, h), -1, dtype=np.int16),
        history_len=np.zeros(b, dtype=np.int16),
        stock=np.full((b, NUM_CARDS), -1, dtype=np.int8),
        stock_pos=np.zeros(b, dtype=np.int8),
        seen=np.zeros((b, p), dtype=np.uint64),
        trump=np.zeros(b, dtype=np.int8),
    )
    start_hand(state, np.arange(b), given)
    update_legal(state)
    return state


_ARANGE = np.arange(0, dtype=np.int64)


def arange_cached(n: int) -> npt.NDArray[np.int64]:
    """A cached arange(n): the hot path indexes it with a slice or rows every step."""
    global _ARANGE
    if _ARANGE.size < n:
        _ARANGE = np.arange(max(n, 2 * _ARANGE.size), dtype=np.int64)
    return _ARANGE[:n]
