"""The heuristic's draw decision in RULES.md §6 `two_player` (spades_env/stock_draw.py).

Keep the looked-at card when it is worth more than a card drawn blind, otherwise discard
it and take the next one. A blind card is a spade one time in four and middling in rank,
so a sure or likely trick beats it: a spade from the 8 up (spades are trumps and win
tricks even when low, rule text 000 "Räkna spadern"), or a queen, king or ace of another suit
(rule text 000 counts aces and kings as tricks). Everything else is discarded: a low card of a
side suit wins no trick, and the blind card is at least as likely to be useful.
"""

from __future__ import annotations

from agents.heuristic.seat_table import Table
from spades_env.cards import CARD_RANK, CARD_SUIT, DRAW_DISCARD, DRAW_KEEP, SPADES, card_to_str

_SPADE_FROM = 6  # rank index of the 8
_HONOUR_FROM = 10  # rank index of the queen


def choose_draw(t: Table) -> tuple[int, str]:
    """DRAW phase: (DRAW_KEEP or DRAW_DISCARD, why)."""
    card = t.looking
    if card < 0:
        return DRAW_KEEP, "keep: no card is shown (not my turn)"
    name = card_to_str(card)
    rank, suit = int(CARD_RANK[card]), int(CARD_SUIT[card])
    if suit == SPADES and rank >= _SPADE_FROM:
        return DRAW_KEEP, f"keep {name}: a spade from the 8 up is a likely trick"
    if suit != SPADES and rank >= _HONOUR_FROM:
        return DRAW_KEEP, f"keep {name}: a queen, king or ace is a likely trick"
    return DRAW_DISCARD, f"discard {name}: a blind card is worth more than a low card"
