"""The rules and the state layout as data for the compiled core: one int64 vector.

`rules_vector(rules)` turns a `Rules` into a (VECTOR_SIZE,) int64 array that every kernel takes
first: table shape, bid and blind-nil options, the deck, scoring options (indices `R_*`),
and where each `State` field lives in the packed per-game row (indices `L_*`, offsets in
units of the field's dtype). The kernels branch on these values, so one compiled kernel
plays every preset.

The packed row: `State` keeps all of one game's fields in one row of a (B, ROW) uint8
buffer; the fields are numpy views into it (state.py), and a kernel reads the same bytes
through `buf.view(np.uint64)`, `.view(np.int32)`, ... at these offsets. `FIELDS` declares
each field once: name, dtype, width (`"1"`, `"P"` seats, `"T"` teams, `"C"` card slots,
`"H"` history length) and meaning; `ROW_ORDER` puts what a step touches first.
"""

from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from spades_env.cards import DECKS, NUM_CARDS, TWO_OF_CLUBS
from spades_env.rules import Rules


class Field(NamedTuple):
    """One `State` field: its name, dtype, width code and one-line meaning."""

    name: str
    dtype: type
    width: str  # "1": shape (B,); "P", "T", "C", "H": shape (B, that many)
    meaning: str


#: Every State field, in State's order: the one place a field is declared. `State`
#: (state.py) takes its attributes and its docstring from it, `layout` packs it into a row.
FIELDS: tuple[Field, ...] = tuple(
    Field(*f)
    for f in (
        ("seed", np.uint64, "1", "per-game deal key: deal of hand h = f(seed, h)"),
        ("hand_no", np.int32, "1", "hands completed in this game"),
        ("dealer", np.int8, "1", "seat of the dealer (RULES.md §1)"),
        ("phase", np.int8, "1", "BLIND / BID / EXCHANGE / PLAY / DONE / DRAW / TRUMP"),
        ("to_act", np.int8, "1", "seat whose decision it is"),
        ("deal", np.uint64, "P", "hands as dealt this hand"),
        ("hands", np.uint64, "P", "hands now (after any exchange), played cards included"),
        ("played", np.uint64, "1", "every card played this hand"),
        ("legal", np.uint64, "1", "legal cards of `to_act` in PLAY/EXCHANGE (cache kept by step)"),
        ("bids", np.int8, "P", "bid per seat, 0 = nil, -1 = not bid yet"),
        ("blind", np.bool_, "P", "the nil was bid blind (RULES.md §2)"),
        ("num_bids", np.int8, "1", "bids made this hand"),
        ("passing", np.uint64, "P", "cards chosen to pass in the exchange (RULES.md §2)"),
        ("trick", np.int8, "P", "card each seat played to the current trick, -1 = none"),
        ("leader", np.int8, "1", "seat that led the current trick"),
        ("trick_size", np.int8, "1", "cards in the current trick"),
        ("lead_suit", np.int8, "1", "suit led in the current trick (-1 before the lead)"),
        ("tricks_played", np.int8, "1", "completed tricks this hand"),
        ("tricks_won", np.int8, "P", "tricks taken per seat this hand"),
        ("broken", np.bool_, "1", "trumps (spades unless named) broken (RULES.md §3)"),
        ("voids", np.uint8, "P", "bit s: seat has shown it holds no suit s"),
        ("card_seat", np.int8, "C", "seat that played each card this hand, -1 = unplayed"),
        ("card_trick", np.int8, "C", "trick (0-based) each card was played in, -1 = unplayed"),
        ("scores", np.int32, "T", "cumulative score per team (RULES.md §4)"),
        ("bags", np.int32, "T", "bag counter per team, below bag_limit after penalties"),
        ("winner", np.int8, "1", "winning team once DONE, else -1 (RULES.md §5)"),
        ("history", np.int16, "H", "actions of this hand in order, -1 padded"),
        ("history_len", np.int16, "1", "actions taken this hand"),
        # RULES.md §6 two_player (draw.py); unused (-1 / 0) by the other presets:
        ("stock", np.int8, "C", "two_player: the shuffled stock, top card first, -1 padded"),
        ("stock_pos", np.int8, "1", "two_player: index in `stock` of the card on top now"),
        ("seen", np.uint64, "P", "two_player: cards each seat looked at and discarded in the draw"),
        ("trump", np.int8, "1", "trump suit: SPADES, or -1 until named (RULES.md §6 auction)"),
    )
)
FIELD_NAMES = tuple(f.name for f in FIELDS)

# ---------------------------------------------------------------- rule parameters
(
    R_P,  # seats
    R_K,  # hand size (cards dealt = tricks per hand)
    R_T,  # teams
    R_PARTNERS,  # 1: partnerships (partner opposite)
    R_MIN_BID,  # 1 in family (no nil), else 0
    R_MAX_BID,
    R_MAX_TOTAL,  # cap on the total of the bids, -1 = none
    R_BID_RULE,  # BID_FREE / BID_SUICIDE / BID_MIRROR / BID_WHIZ
    R_BLIND,  # BLIND_NEVER / BLIND_BEHIND / BLIND_ALWAYS
    R_EXCHANGE,  # 1: blind_nil_exchange
    R_TWO_CLUBS,  # 1: first_lead=two_of_clubs
    R_NAMED,  # 1: trump="named" (auction)
    R_DRAW,  # 1: two_player's draw
    R_DECK,  # deck mask (uint64 bits as int64)
    R_DECK_SIZE,
    R_FAMILY,  # 1: family scoring
    R_NIL_COUNT,  # 1: nil_tricks=count
    R_BAG_LIMIT,
    R_BAG_PENALTY,
    R_THIRTEEN,  # 1: thirteen_bid_doubles
    R_TEN_200,  # 1: ten_for_two_hundred
    R_NIL_VALUE,
    R_BLIND_VALUE,
    R_TARGET,
    R_MAX_HANDS,  # -1 = none
    R_HAS_LOSE,  # 1: lose_at set
    R_LOSE_AT,
    R_H,  # longest history of a hand
    R_ROW,  # bytes per game row
    R_OPEN_HANDS,  # 1: RULES.md §6 open_hands (observations show every hand)
    R_LAST_HAND,  # 1: a hand's end stops the game, no next deal (`rules_vector`'s last_hand)
) = range(31)
_NUM_R = 31
BID_FREE, BID_SUICIDE, BID_MIRROR, BID_WHIZ = 0, 1, 2, 3
BLIND_NEVER, BLIND_BEHIND, BLIND_ALWAYS = 0, 1, 2

# ---------------------------------------------------------------- layout offsets
# L_<FIELD>: the field's offset in the row, in units of its own dtype.
_L = {name: _NUM_R + i for i, name in enumerate(FIELD_NAMES)}
(
    L_SEED, L_HAND_NO, L_DEALER, L_PHASE, L_TO_ACT, L_DEAL, L_HANDS, L_PLAYED, L_LEGAL,
    L_BIDS, L_BLIND, L_NUM_BIDS, L_PASSING, L_TRICK, L_LEADER, L_TRICK_SIZE, L_LEAD_SUIT,
    L_TRICKS_PLAYED, L_TRICKS_WON, L_BROKEN, L_VOIDS, L_CARD_SEAT, L_CARD_TRICK, L_SCORES,
    L_BAGS, L_WINNER, L_HISTORY, L_HISTORY_LEN, L_STOCK, L_STOCK_POS, L_SEEN, L_TRUMP,
) = (_L[n] for n in FIELD_NAMES)  # fmt: skip
VECTOR_SIZE = _NUM_R + len(FIELDS)


def max_history(rules: Rules) -> int:
    """Longest action history of one hand: draw decisions, blind decisions, bids,
    naming trump (RULES.md §6 auction), exchange passes, plays."""
    p = rules.num_players
    draws = p * rules.hand_size if rules.draw else 0
    naming = 1 if rules.trump == "named" else 0
    return draws + 2 * p + naming + 2 * p + p * rules.hand_size


def _width(rules: Rules, code: str) -> int:
    return {
        "1": 1,
        "P": rules.num_players,
        "T": rules.num_teams,
        "C": NUM_CARDS,
        "H": max_history(rules),
    }[code]


#: The order of the fields in the row: what a step reads and writes first (the legal
#: bits, the hands, the trick and the phase fit in the first cache lines), records after.
ROW_ORDER = (
    "legal", "played", "hands", "hand_no", "phase", "to_act", "trick_size", "lead_suit",
    "tricks_played", "broken", "trump", "leader", "num_bids", "trick", "voids",
    "tricks_won", "bids", "blind", "history_len", "card_seat", "card_trick", "history",
    "seed", "deal", "passing", "seen", "scores", "bags", "dealer", "winner",
    "stock", "stock_pos",
)  # fmt: skip


@functools.cache
def layout(rules: Rules) -> tuple[int, tuple[tuple[str, type, int, int], ...]]:
    """(row bytes, ((name, dtype, byte offset, width), ...)) of the packed State row, in
    `FIELDS` order; every field is aligned to its dtype."""
    kinds = {f.name: (f.dtype, f.width) for f in FIELDS}
    placed, offset = {}, 0
    for name in ROW_ORDER:
        dtype, code = kinds[name]
        size = np.dtype(dtype).itemsize
        offset = -(-offset // size) * size
        width = _width(rules, code)
        placed[name] = (name, dtype, offset, width)
        offset += size * width
    row = -(-offset // 8) * 8  # whole uint64 words: the row views as every dtype
    return row, tuple(placed[n] for n in FIELD_NAMES)


@functools.cache
def rules_vector(rules: Rules, last_hand: bool = False) -> np.ndarray:
    """(VECTOR_SIZE,) int64: the rules and the State layout for the kernels (cached: do not
    write to it). With `last_hand`, the kernels stop a game where its hand ends (phase
    DONE, no next deal, the winner -1 unless the game is decided): the envs' one-hand
    episodes, which would otherwise deal a hand that is never played."""
    r = np.zeros(VECTOR_SIZE, dtype=np.int64)
    deck = int(DECKS[rules.deck])
    r[R_P], r[R_K], r[R_T] = rules.num_players, rules.hand_size, rules.num_teams
    r[R_PARTNERS] = rules.partnerships
    r[R_MIN_BID], r[R_MAX_BID] = rules.min_bid, rules.max_bid
    r[R_MAX_TOTAL] = -1 if rules.max_total_bid is None else rules.max_total_bid
    r[R_BID_RULE] = ("none", "suicide", "mirror", "whiz").index(rules.bid_constraint)
    r[R_BLIND] = ("never", "when_behind_100", "always").index(rules.blind_nil)
    r[R_EXCHANGE] = rules.blind_nil_exchange
    r[R_TWO_CLUBS] = rules.first_lead == "two_of_clubs"
    r[R_NAMED] = rules.trump == "named"
    r[R_DRAW] = rules.draw
    r[R_DECK], r[R_DECK_SIZE] = deck, deck.bit_count()
    r[R_FAMILY] = rules.scoring == "family"
    r[R_NIL_COUNT] = rules.nil_tricks == "count"
    r[R_BAG_LIMIT], r[R_BAG_PENALTY] = rules.bag_limit, rules.bag_penalty
    r[R_THIRTEEN], r[R_TEN_200] = rules.thirteen_bid_doubles, rules.ten_for_two_hundred
    r[R_NIL_VALUE], r[R_BLIND_VALUE] = rules.nil_value, rules.blind_nil_value
    r[R_TARGET] = rules.target
    r[R_MAX_HANDS] = -1 if rules.max_hands is None else rules.max_hands
    r[R_HAS_LOSE] = rules.lose_at is not None
    r[R_LOSE_AT] = 0 if rules.lose_at is None else rules.lose_at
    r[R_H] = max_history(rules)
    row, fields = layout(rules)
    r[R_ROW] = row
    r[R_OPEN_HANDS] = rules.open_hands
    r[R_LAST_HAND] = last_hand
    for name, dtype, offset, _ in fields:
        r[_L[name]] = offset // np.dtype(dtype).itemsize
    return r


assert TWO_OF_CLUBS == 39  # the core's first-lead rule names the card by its index
