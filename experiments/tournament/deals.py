"""Deal sets for duplicate tournaments: generated from one seed, saved, reused.

A deal set is N games' starting points: a 64-bit game seed, the first dealer and the
first hand's cards. The engine deals hand `h` of a game as a pure function of
`(game seed, h)` (see `spades_env.state`), so the seed alone fixes the whole deal
sequence of a game; the first hand's cards and dealer are stored as well so that a file
is readable and checkable on its own, and so a hand-made file can fix its own deals.

Game seed `i` depends only on the set's seed and `i`, so a set of 200 deals is the first
200 deals of the set of 2000 with the same seed.

File format (JSON, `FORMAT_VERSION`):
    {"format": "spades-deals", "version": 1, "seed": 7, "deck": "standard",
     "deals": [{"id": 0, "seed": 1234..., "dealer": 2,
                "hands": ["AS KS 7H ...", "...", "...", "..."]}, ...]}
Hands are listed by seat (0 = North .. 3 = West), cards as in `spades_env.cards`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from spades_env.cards import card_to_str, mask_to_cards, str_to_card
from spades_env.rules import Rules
from spades_env.state import DealError, deal_hands, first_dealer, parse_deals, splitmix64
from spades_env.tooling.files import atomic_write, open_input

FORMAT = "spades-deals"
FORMAT_VERSION = 1


class DealSetError(ValueError):
    """A deal-set file that cannot be read, or a request it cannot satisfy."""


@dataclass(frozen=True)
class DealSet:
    """N duplicate deals; deal `i` is the start of game `i` in every pairing."""

    seed: int | None  # the seed the set was generated from (None: hand-made)
    game_seeds: npt.NDArray[np.uint64]  # (N,) per-game deal key
    dealers: npt.NDArray[np.int8]  # (N,) first dealer
    hands: npt.NDArray[np.uint64]  # (N, P) first hand's cards per seat, bitmasks

    def __len__(self) -> int:
        return int(self.game_seeds.shape[0])

    def head(self, n: int) -> DealSet:
        """The first `n` deals."""
        if not 1 <= n <= len(self):
            raise DealSetError(f"--deals {n}: the deal set holds {len(self)} deals")
        return DealSet(self.seed, self.game_seeds[:n], self.dealers[:n], self.hands[:n])

    def slice(self, start: int, stop: int) -> DealSet:
        return DealSet(
            self.seed,
            self.game_seeds[start:stop],
            self.dealers[start:stop],
            self.hands[start:stop],
        )


def game_seeds(seed: int, n: int) -> npt.NDArray[np.uint64]:
    """(n,) uint64 game seeds: a counter-based stream, so prefixes agree across n."""
    key = splitmix64(np.array([seed & 0xFFFF_FFFF_FFFF_FFFF], dtype=np.uint64))
    with np.errstate(over="ignore"):
        return splitmix64(key + np.arange(n, dtype=np.uint64))


def generate(rules: Rules, seed: int, n: int) -> DealSet:
    """`n` deals from `seed`: the engine's own deal and first dealer of each game seed."""
    if n < 1:
        raise DealSetError(f"a deal set needs at least 1 deal, got {n}")
    seeds = game_seeds(seed, n)
    hands = deal_hands(rules, seeds, np.zeros(n, dtype=np.int32))
    return DealSet(seed, seeds, first_dealer(rules, seeds), hands)


def to_dict(deals: DealSet) -> dict:
    return {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "seed": deals.seed,
        "deck": "standard",
        "deals": [
            {
                "id": i,
                "seed": int(deals.game_seeds[i]),
                "dealer": int(deals.dealers[i]),
                "hands": [" ".join(card_to_str(c) for c in mask_to_cards(m)) for m in row],
            }
            for i, row in enumerate(deals.hands)
        ],
    }


def from_dict(rules: Rules, data: dict, source: str = "deal set") -> DealSet:
    """Parse and check a deal set (every hand a valid deal of the rules' deck)."""
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise DealSetError(f'{source}: not a deal-set file (no "format": "{FORMAT}")')
    if data.get("version") != FORMAT_VERSION:
        raise DealSetError(f"{source}: deal-set version {data.get('version')} is not supported")
    items = data.get("deals") or []
    if not items:
        raise DealSetError(f"{source}: holds no deals")
    p = rules.num_players
    if not isinstance(items, list):
        raise DealSetError(f'{source}: "deals" must be a list of deals')
    for i, d in enumerate(items):
        _check_deal(d, i, p, source)
    try:
        seeds = np.array([d["seed"] for d in items], dtype=np.uint64)
        dealers = np.array([d["dealer"] for d in items], dtype=np.int8)
        cards = [[[str_to_card(c) for c in h.split()] for h in d["hands"]] for d in items]
        hands = parse_deals(rules, np.array(cards, dtype=np.int64), len(items))
    except (KeyError, TypeError, ValueError, DealError) as exc:
        raise DealSetError(f"{source}: bad deal: {exc}") from None
    return DealSet(data.get("seed"), seeds, dealers, hands)


def encode(deals: DealSet) -> bytes:
    """The bytes `save` writes."""
    return (json.dumps(to_dict(deals)) + "\n").encode()


def _check_deal(d: Any, i: int, players: int, source: str) -> None:
    """One deal's fields have the types and ranges of the format (module docstring)."""

    def bad(what: str) -> DealSetError:
        return DealSetError(f"{source}: deal {i}: {what}")

    if not isinstance(d, dict):
        raise bad(f"not an object but {type(d).__name__}")
    for key in ("seed", "dealer", "hands"):
        if key not in d:
            raise bad(f'lacks "{key}"')
    seed, dealer, hands = d["seed"], d["dealer"], d["hands"]
    if type(seed) is not int or not 0 <= seed < 2**64:
        raise bad(f"seed {seed!r} is not a whole number in 0..2**64-1")
    if type(dealer) is not int or not 0 <= dealer < players:
        raise bad(f"dealers must be seats 0..{players - 1}, got {dealer!r}")
    if not isinstance(hands, list) or len(hands) != players:
        raise bad(f"hands must be a list of {players} hands, got {hands!r:.60}")
    for seat, hand in enumerate(hands):
        if not isinstance(hand, str):
            raise bad(f"hand of seat {seat} is {hand!r:.40}, not a string of cards")


def save(deals: DealSet, path: str | Path) -> None:
    """Write atomically (temporary file, then rename), so a kill leaves no half file."""
    atomic_write(path, encode(deals))


def load(rules: Rules, path: str | Path) -> DealSet:
    path = Path(path)
    try:
        with open_input(path, "deal file", "r") as f:  # never a FIFO or a device
            data = json.load(f)
    except FileNotFoundError:
        raise DealSetError(f"deal file {str(path)!r} does not exist") from None
    except IsADirectoryError:
        raise DealSetError(f"deal file {str(path)!r} is a folder; give its deals.json") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DealSetError(f"deal file {str(path)!r} is not JSON: {exc}") from None
    return from_dict(rules, data, source=f"deal file {str(path)!r}")
