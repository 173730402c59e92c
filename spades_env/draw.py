"""Renamed `spades_env.stock_draw` (RULES.md §6 two_player's draw from the stock); this path
warns on import and goes in the next release."""

from spades_env import stock_draw
from spades_env.tooling.renamed import renamed

renamed(globals(), stock_draw)
