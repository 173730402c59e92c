"""Bid constraints of the RULES.md §6 presets, as legal-bid bitmasks (bit i = bid i).

One rule, two shapes: `bid_bits` works on a batch of games for the engine, `bid_bits_one`
on Python ints for `SingleGame`; tests/test_single.py checks they agree state for state.

- `family` (`Rules.min_bid` = 1): no nil, bids 1..hand_size.
- `mirror`: the bid is forced to the number of spades held (0 spades = nil). Jokers, being
  spades (RULES.md §6 `jokers`), count.
- `whiz`: nil, or exactly the number of spades held.
- `suicide`: each partnership has exactly one nil. The first partner to bid is free; the
  second must bid nil if the first did not, and must not if the first did. A blind nil
  counts as the nil, so blind nil is offered only while the partner has not bid nil
  (`blind_blocked`).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from spades_env.cards import SPADE_MASK
from spades_env.rules import Rules

_SPADES = int(SPADE_MASK)


def bid_bits(
    rules: Rules,
    top: npt.NDArray[np.int64],
    hand: npt.NDArray[np.uint64],
    partner_bid: npt.NDArray[np.int8] | None,
) -> npt.NDArray[np.uint64]:
    """(K,) legal bids as bits, for bidders whose largest bid is `top` holding `hand`.

    `partner_bid`: (K,) the partner's bid (-1 = not yet), needed by `suicide` only.
    """
    bits = (np.uint64(2) << top.astype(np.uint64)) - np.uint64(1)
    if rules.min_bid:
        bits &= ~np.uint64(1)  # RULES.md §6 family: no nil
    kind = rules.bid_constraint
    if kind in ("mirror", "whiz"):
        spades = np.bitwise_count(hand & SPADE_MASK).astype(np.uint64)
        forced = np.uint64(1) << spades  # RULES.md §6: the bid is the spades held
        bits = forced if kind == "mirror" else forced | np.uint64(1)
    elif kind == "suicide" and partner_bid is not None:
        # RULES.md §6 suicide: the second partner completes exactly one nil.
        bits = np.where(
            partner_bid < 0,
            bits,
            np.where(partner_bid == 0, bits & ~np.uint64(1), np.uint64(1)),
        ).astype(np.uint64)
    return bits


def bid_bits_one(rules: Rules, top: int, hand: int, partner_bid: int) -> int:
    """`bid_bits` for one bidder, on Python ints (SingleGame)."""
    bits = (2 << top) - 1
    if rules.min_bid:
        bits &= ~1
    kind = rules.bid_constraint
    if kind in ("mirror", "whiz"):
        forced = 1 << (hand & _SPADES).bit_count()
        return forced if kind == "mirror" else forced | 1
    if kind == "suicide" and partner_bid >= 0:
        return bits & ~1 if partner_bid == 0 else 1
    return bits


def blind_blocked(rules: Rules, partner_bid: npt.ArrayLike) -> npt.NDArray[np.bool_]:
    """RULES.md §6 suicide: no blind nil once the partner has bid nil."""
    pb = np.asarray(partner_bid)
    if rules.bid_constraint != "suicide":
        return np.zeros(pb.shape, dtype=bool)
    return pb == 0


def describe(rules: Rules) -> str:
    """The bid rule in words, for illegal-bid messages."""
    return {
        "none": f"bids are {rules.min_bid}..{rules.max_bid}",
        "suicide": "each partnership must have exactly one nil (RULES.md §6 suicide)",
        "mirror": "the bid must equal the spades held (RULES.md §6 mirror)",
        "whiz": "the bid must be nil or the spades held (RULES.md §6 whiz)",
    }[rules.bid_constraint]
