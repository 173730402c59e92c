"""Cards, hands as bitmasks, and the one action space.

Cards
-----
A card is an integer `suit * 13 + rank` with suits spades=0, hearts=1, diamonds=2,
clubs=3 and ranks 0 ('2') .. 12 ('A'). Indices 52 and 53 are the Little and Big Joker of
RULES.md §6 `jokers` (spades ranking above the ace); the standard deck never holds them.
A hand is a `uint64` bitmask with bit `card` set for each card held.

Action space (one `Discrete(NUM_ACTIONS)` for every decision)
--------------------------------------------------------------
=========  ===========================  ==========================================
action     meaning                      phase
=========  ===========================  ==========================================
0..53      card `a` (see above)         PLAY: play it; EXCHANGE: pass it to partner
54..71     bid `a - 54` (0 = nil)       BID (bids above hand_size are never legal)
72         blind nil                    BLIND (RULES.md §2)
73         see hand (decline blind)     BLIND
74         keep the looked-at card      DRAW (RULES.md §6 two_player)
75         discard the looked-at card   DRAW (then the next card is kept)
76..79     name trump suit `a - 76`     TRUMP (RULES.md §6 auction; suits as cards:
           (♠, ♥, ♦, ♣)                 76 spades, 77 hearts, 78 diamonds, 79 clubs)
=========  ===========================  ==========================================

Version history: 74 actions (0..73) until the two_player draw phase added 74 and 75;
76 actions (0..75) until the auction preset's trump naming added 76..79.

Action values: an action is an integer. Integer types of any width are taken as they are,
and a float holding a whole number (`54.0`, e.g. from a network's output) is taken as that
integer; any other value (`54.7`, NaN, a string) raises `ActionValueError` rather than being
truncated (`action_index`, `action_array`).

Strings: cards `AS`, `TD`, `10d`, `2C`, `q♥`, `LJ`/`BJ`; bids `nil`, `4`; `blind nil`;
`see hand`; `keep`, `discard`; `trump hearts` (also `trump h`, `trump ♥`).

One notation: every card the product writes (logs, tables, hints, the play screen, the
table pictures) is `card_to_str`'s: a rank character of `RANK_CHARS` (the ten is `T`) and
a suit, `TD` in files and `T♦` on screens. Two characters each, so hands and columns
line up, and the run folders' logs already use it; `str_to_card` reads `10d` and `10♦`
as well.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
import numpy.typing as npt

SPADES, HEARTS, DIAMONDS, CLUBS = 0, 1, 2, 3
NUM_SUITS = 4
NUM_RANKS = 13
LITTLE_JOKER, BIG_JOKER = 52, 53
NUM_CARDS = 54  # the card universe; a deck is a subset of it
MAX_BID = 17  # largest hand size of any preset (three players, RULES.md §6)

BID_BASE = NUM_CARDS
BLIND_NIL = BID_BASE + MAX_BID + 1
SEE_HAND = BLIND_NIL + 1
DRAW_KEEP = SEE_HAND + 1  # RULES.md §6 two_player: keep the top card of the stock
DRAW_DISCARD = DRAW_KEEP + 1  # ... or discard it (face down) and keep the next one
NAME_TRUMP = DRAW_DISCARD + 1  # RULES.md §6 auction: NAME_TRUMP + suit names the trump
NUM_ACTIONS = NAME_TRUMP + NUM_SUITS

RANK_CHARS = "23456789TJQKA"
SUIT_CHARS = "SHDC"
SUIT_SYMBOLS = "♠♥♦♣"
SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")

#: (NUM_CARDS,) int8 suit of each card; jokers are spades (RULES.md §6).
CARD_SUIT: npt.NDArray[np.int8] = np.array(
    [c // NUM_RANKS for c in range(52)] + [SPADES, SPADES], dtype=np.int8
)
#: (NUM_CARDS,) int8 rank within the suit; jokers rank above the ace.
CARD_RANK: npt.NDArray[np.int8] = np.array(
    [c % NUM_RANKS for c in range(52)] + [13, 14], dtype=np.int8
)
#: (NUM_CARDS,) uint64 single-bit mask of each card.
CARD_BIT: npt.NDArray[np.uint64] = np.left_shift(
    np.uint64(1), np.arange(NUM_CARDS, dtype=np.uint64)
)
#: the standard 52-card deck of RULES.md §1.
STANDARD_DECK = np.uint64((1 << 52) - 1)
#: (NUM_SUITS,) uint64 masks of each suit; spades include the jokers.
SUIT_MASK: npt.NDArray[np.uint64] = np.array(
    [((1 << 13) - 1) << (13 * s) for s in range(NUM_SUITS)], dtype=np.uint64
)
SUIT_MASK[SPADES] |= CARD_BIT[LITTLE_JOKER] | CARD_BIT[BIG_JOKER]
SPADE_MASK = SUIT_MASK[SPADES]
TWO_OF_CLUBS = CLUBS * NUM_RANKS + 0
TWO_OF_HEARTS = HEARTS * NUM_RANKS + 0
TWO_OF_DIAMONDS = DIAMONDS * NUM_RANKS + 0
#: RULES.md §6: the decks of the presets, by the `Rules.deck` option.
DECKS: dict[str, np.uint64] = {
    "standard": STANDARD_DECK,
    "jokers": STANDARD_DECK & ~(CARD_BIT[TWO_OF_HEARTS] | CARD_BIT[TWO_OF_DIAMONDS])
    | CARD_BIT[LITTLE_JOKER]
    | CARD_BIT[BIG_JOKER],
    "no_2c": STANDARD_DECK & ~CARD_BIT[TWO_OF_CLUBS],
    "no_2c_2d": STANDARD_DECK & ~(CARD_BIT[TWO_OF_CLUBS] | CARD_BIT[TWO_OF_DIAMONDS]),
}


class ActionParseError(ValueError):
    """A string that names no card, bid or decision."""


class ActionValueError(ValueError):
    """An action that is not a whole number (it would have to be truncated to be played)."""


def action_index(action: Any) -> int:
    """One action as an int: integers as they are, whole floats converted, else an error."""
    try:
        return operator.index(action)  # int, numpy integers, 0-d integer arrays
    except TypeError:
        pass
    try:
        if isinstance(action, str | bytes):  # str_to_action parses names
            raise TypeError
        value = float(action)
    except (TypeError, ValueError):
        raise ActionValueError(
            f"an action must be an integer 0..{NUM_ACTIONS - 1}; got {action!r}"
        ) from None
    if not value.is_integer():
        raise ActionValueError(
            f"action {action!r} is not a whole number; actions are integers 0..{NUM_ACTIONS - 1}"
        )
    return int(value)


def action_array(actions: npt.ArrayLike) -> npt.NDArray[np.int64]:
    """Actions as int64: integer arrays as they are, whole floats converted, else an error."""
    arr = np.asarray(actions)
    if arr.dtype.kind == "i":
        return arr.astype(np.int64, copy=False)
    if arr.dtype.kind == "u":  # past int64: never an action, -1 (illegal) rather than wrapped
        out = arr.astype(np.int64)
        out[arr > NUM_ACTIONS] = -1
        return out
    if arr.dtype.kind == "O" and arr.size:  # Python ints beyond int64 (or other objects)
        flat = [action_index(a) for a in arr.reshape(-1).tolist()]  # whole numbers only
        out = np.array([a if 0 <= a < NUM_ACTIONS else -1 for a in flat], dtype=np.int64)
        return out.reshape(arr.shape)
    if arr.dtype.kind != "f":
        raise ActionValueError(
            f"actions must be integers 0..{NUM_ACTIONS - 1}; got an array of {arr.dtype}"
        )
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~(np.isfinite(arr) & (np.round(arr) == arr)).reshape(-1))
    if bad.size:
        i = int(bad[0])
        raise ActionValueError(
            f"action {arr.reshape(-1)[i].item()!r} (index {i}) is not a whole number; "
            f"actions are integers 0..{NUM_ACTIONS - 1}"
        )
    return np.where(np.abs(arr) > NUM_ACTIONS, -1.0, arr).astype(np.int64)  # no wrap either


def card_to_str(card: int, unicode: bool = False) -> str:
    card = int(card)
    if card == LITTLE_JOKER:
        return "LJ"
    if card == BIG_JOKER:
        return "BJ"
    suits = SUIT_SYMBOLS if unicode else SUIT_CHARS
    return RANK_CHARS[card % NUM_RANKS] + suits[card // NUM_RANKS]


def str_to_card(text: str) -> int:
    t = text.strip().upper().replace("10", "T")
    if t in ("LJ", "LITTLE JOKER"):
        return LITTLE_JOKER
    if t in ("BJ", "BIG JOKER"):
        return BIG_JOKER
    for i, sym in enumerate(SUIT_SYMBOLS):
        t = t.replace(sym, SUIT_CHARS[i])
    if len(t) != 2 or t[0] not in RANK_CHARS or t[1] not in SUIT_CHARS:
        raise ActionParseError(f"{text!r} is not a card; write cards like AS, TD, 10h, 2C")
    return SUIT_CHARS.index(t[1]) * NUM_RANKS + RANK_CHARS.index(t[0])


def action_to_str(action: int, unicode: bool = False) -> str:
    a = int(action)
    if 0 <= a < NUM_CARDS:
        return card_to_str(a, unicode)
    if BID_BASE <= a < BLIND_NIL:
        bid = a - BID_BASE
        return "nil" if bid == 0 else str(bid)
    if a == BLIND_NIL:
        return "blind nil"
    if a == SEE_HAND:
        return "see hand"
    if a == DRAW_KEEP:
        return "keep"
    if a == DRAW_DISCARD:
        return "discard"
    if NAME_TRUMP <= a < NAME_TRUMP + NUM_SUITS:
        suit = a - NAME_TRUMP
        return f"trump {SUIT_SYMBOLS[suit] if unicode else SUIT_NAMES[suit]}"
    raise ActionParseError(f"action {a} is outside 0..{NUM_ACTIONS - 1}")


def str_to_action(text: str) -> int:
    t = " ".join(text.strip().lower().split())
    if t in ("nil", "0"):
        return BID_BASE
    if t in ("blind nil", "blind", "bn"):
        return BLIND_NIL
    if t in ("see hand", "see", "look"):
        return SEE_HAND
    if t in ("keep", "k"):
        return DRAW_KEEP
    if t in ("discard", "d"):
        return DRAW_DISCARD
    if t.startswith("trump"):
        return NAME_TRUMP + str_to_suit(t[len("trump") :])
    if t.isdigit():
        bid = int(t)
        if bid > MAX_BID:
            raise ActionParseError(f"bid {bid} is above the largest bid {MAX_BID}")
        return BID_BASE + bid
    return str_to_card(text)


def str_to_suit(text: str) -> int:
    """`hearts`, `heart`, `h`, `♥` (any case) -> the suit index."""
    t = text.strip().lower()
    for suit, name in enumerate(SUIT_NAMES):
        if t in (name, name[:-1], name[0], SUIT_SYMBOLS[suit]):
            return suit
    raise ActionParseError(
        f"{text.strip()!r} is not a suit; write spades, hearts, diamonds, clubs (or s, h, d, c)"
    )


def bid_action(bid: int) -> int:
    return BID_BASE + int(bid)


def mask_to_cards(mask: int | np.uint64) -> list[int]:
    """Cards of a bitmask, lowest index first."""
    m = int(mask)
    return [c for c in range(NUM_CARDS) if m >> c & 1]


def cards_to_mask(cards: list[int] | npt.NDArray[np.integer]) -> np.uint64:
    m = 0
    for c in cards:
        m |= 1 << int(c)
    return np.uint64(m)


def hand_to_str(mask: int | np.uint64, unicode: bool = True) -> str:
    """A hand sorted as rule text 000 recommends: spades first, high cards first in each suit."""
    cards = sorted(mask_to_cards(mask), key=lambda c: (CARD_SUIT[c], -CARD_RANK[c]))
    return " ".join(card_to_str(c, unicode) for c in cards)


def bits_to_bool(masks: npt.NDArray[np.uint64]) -> npt.NDArray[np.bool_]:
    """(..., ) uint64 masks -> (..., NUM_CARDS) bool, bit order = card index."""
    flat = np.ascontiguousarray(masks, dtype=np.uint64)
    bits = np.unpackbits(flat.view(np.uint8).reshape(*flat.shape, 8), axis=-1, bitorder="little")
    return bits[..., :NUM_CARDS].astype(bool)


def _select16_table() -> npt.NDArray[np.int8]:
    """(65536 * 16,) int8: position of the k-th set bit of a 16-bit word (flat [v*16+k])."""
    table = np.full((1 << 16, 16), -1, dtype=np.int8)
    bits = ((np.arange(1 << 16)[:, None] >> np.arange(16)[None, :]) & 1).astype(bool)
    rank = np.cumsum(bits, axis=1) - 1
    rows, cols = np.nonzero(bits)
    table[rows, rank[rows, cols]] = cols
    return table.reshape(-1)


_SELECT16: npt.NDArray[np.int8] | None = None


def select_bit(masks: npt.NDArray[np.uint64], k: npt.NDArray[np.integer]) -> npt.NDArray[np.int64]:
    """Index of the k-th (0-based, from bit 0) set bit of each mask; k < popcount(mask).

    Vectorised with 16-bit chunks and a lookup table: a handful of array operations,
    whatever the number of set bits.
    """
    global _SELECT16
    if _SELECT16 is None:
        _SELECT16 = _select16_table()
    m = np.ascontiguousarray(masks, dtype=np.uint64)
    n = m.shape[0]
    chunks = m.view(np.uint16).reshape(n, 4)  # little-endian: chunk j = bits 16j..16j+15
    counts = np.bitwise_count(chunks)
    c0 = counts[:, 0].astype(np.int16)
    c1 = c0 + counts[:, 1]
    c2 = c1 + counts[:, 2]
    k = np.asarray(k).astype(np.int16)
    g0, g1, g2 = k >= c0, k >= c1, k >= c2
    j = g0.view(np.int8) + g1.view(np.int8) + g2.view(np.int8)  # chunk holding the bit
    before = np.where(g2, c2, np.where(g1, c1, g0 * c0))  # set bits below that chunk
    word = chunks.reshape(-1)[np.arange(n, dtype=np.int64) * 4 + j].astype(np.int32)
    pos = _SELECT16[word * 16 + (k - before)]
    return j.astype(np.int64) * 16 + pos
