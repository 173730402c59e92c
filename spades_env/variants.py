"""Bid constraints of the RULES.md §6 presets, in words (the rule itself is
`spades_env.core.rule_functions.legal_bids`, and blind nil's `core.rule_functions.blind_allowed`).

- `family` (`Rules.min_bid` = 1): no nil, bids 1..hand_size.
- `mirror`: the bid is forced to the number of spades held (0 spades = nil). Jokers, being
  spades (RULES.md §6 `jokers`), count.
- `whiz`: nil, or exactly the number of spades held.
- `suicide`: each partnership has exactly one nil. The first partner to bid is free; the
  second must bid nil if the first did not, and must not if the first did. A blind nil
  counts as the nil, so blind nil is offered only while the partner has not bid nil.
"""

from __future__ import annotations

from spades_env.rules import Rules


def describe(rules: Rules) -> str:
    """The bid rule in words, for illegal-bid messages."""
    return {
        "none": f"bids are {rules.min_bid}..{rules.max_bid}",
        "suicide": "each partnership must have exactly one nil (RULES.md §6 suicide)",
        "mirror": "the bid must equal the spades held (RULES.md §6 mirror)",
        "whiz": "the bid must be nil or the spades held (RULES.md §6 whiz)",
    }[rules.bid_constraint]
