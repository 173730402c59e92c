"""The layouts the core and its faces share: the phase numbers, the blocks of the
observation encoding (documented in spades_env/observation.py) and the keys of the packed
encoding's layout (spades_env/obs_bits.py). Defined here, in the core, so that the
compiled code never imports the Python faces that document and re-export them."""

from __future__ import annotations

from spades_env.cards import MAX_BID, NUM_CARDS, NUM_SUITS
from spades_env.rules import Rules

# Phases (RULES.md §2-§3). DONE: the game is over (RULES.md §5). DRAW: RULES.md §6
# two_player's draw from the stock, before the bidding; TRUMP: RULES.md §6 auction's
# naming of the trump suit, after the bidding (numbered last so that the other phases
# keep their numbers).
BLIND, BID, EXCHANGE, PLAY, DONE, DRAW, TRUMP = 0, 1, 2, 3, 4, 5, 6
PHASE_NAMES = ("blind", "bid", "exchange", "play", "done", "draw", "trump")
NUM_PHASES = 7


def obs_blocks(rules: Rules) -> list[tuple[str, int]]:
    """(name, size) of each block of the encoding, in order."""
    p, c, t, k = rules.num_players, NUM_CARDS, rules.num_teams, MAX_BID + 1
    return [
        ("hand", c),
        ("played_by", p * c),
        ("played_trick", c),
        ("table", p * c),
        ("bids", p * (k + 1)),
        ("blind", p),
        ("tricks_won", p),
        ("passed", c),
        ("received", c),
        ("scores", t),
        ("bags", t),
        ("dealer", p),
        ("leader", p),
        ("to_act", p),
        ("lead_suit", NUM_SUITS),
        ("broken", 1),
        ("phase", phase_slots(rules)),
        ("voids", p * NUM_SUITS),
        ("hand_no", 1),
        ("open_hands", (p - 1) * c if rules.open_hands else 0),
        ("looking", c if rules.draw else 0),
        ("seen", c if rules.draw else 0),
        ("stock", 1 if rules.draw else 0),
        ("trump", NUM_SUITS if rules.trump == "named" else 0),
    ]


def phase_slots(rules: Rules) -> int:
    """Slots of the phase block: the phases these rules can reach (numbers in state.py)."""
    if rules.trump == "named":
        return NUM_PHASES  # RULES.md §6 auction: up to TRUMP
    return NUM_PHASES - 1 if rules.draw else NUM_PHASES - 2


def obs_size(rules: Rules) -> int:
    return sum(n for _, n in obs_blocks(rules))


def obs_slices(rules: Rules) -> dict[str, slice]:
    out, i = {}, 0
    for name, n in obs_blocks(rules):
        out[name] = slice(i, i + n)
        i += n
    return out


#: blocks of one word per 54-slot card row, and of one bit / one int16 per cell
CARD_BLOCKS = ("hand", "played_by", "table", "passed", "received", "open_hands", "looking", "seen")
FLAG_BLOCKS = (
    "bids", "blind", "dealer", "leader", "to_act", "lead_suit", "broken", "phase", "voids",
    "trump",
)  # fmt: skip
INT_BLOCKS = ("tricks_won", "scores", "bags", "hand_no", "stock")

#: Entries of `BitsLayout.kernel` (core/observe_bits.py reads them as a tuple): the
#: first word of each card block and of the trick planes, the plane count, the absolute
#: bit of each flag block's first cell, the int16 slot of each int block's first cell,
#: then the first flag word, the first int word and the row's words.
KERNEL_KEYS = (
    "w_hand", "w_played_by", "w_table", "w_passed", "w_received", "w_open_hands",
    "w_looking", "w_seen", "w_trick", "planes",
    "f_bids", "f_blind", "f_dealer", "f_leader", "f_to_act", "f_lead_suit", "f_broken",
    "f_phase", "f_voids", "f_trump",
    "i_tricks_won", "i_scores", "i_bags", "i_hand_no", "i_stock",
    "flag_word", "int_word", "words",
)  # fmt: skip
NUM_KERNEL_KEYS = len(KERNEL_KEYS)
