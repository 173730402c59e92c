"""OpenSkill ratings from duplicate results.

One match per duplicate deal and pair: the agent whose partnerships scored more over the
two sides ranks first, equal totals are a tie. Duplicate results (rather than single
games) are what the ratings see, so the luck of the cards is already cancelled. Matches
are rated in the order given, which the summary fixes (by deal, then pair), so ratings
are reproducible.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from openskill.models import PlackettLuce


class Rater:
    """Ratings updated one match at a time (`add`), in the order given: what `rate` does,
    for a caller that streams the matches."""

    def __init__(self, agents: Sequence[str]) -> None:
        self.model = PlackettLuce()
        self.ratings = {a: self.model.rating(name=a) for a in agents}

    def add(self, a: str, b: str, margin: float) -> None:
        ranks = [0, 0] if margin == 0 else ([0, 1] if margin > 0 else [1, 0])
        ratings = self.ratings
        [[ra], [rb]] = self.model.rate([[ratings[a]], [ratings[b]]], ranks=ranks)
        ratings[a], ratings[b] = ra, rb

    def result(self) -> list[dict[str, Any]]:
        out = [
            {"agent": a, "mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()}
            for a, r in self.ratings.items()
        ]
        return sorted(out, key=lambda r: -r["ordinal"])


def rate(matches: Iterable[tuple[str, str, float]], agents: Sequence[str]) -> list[dict[str, Any]]:
    """Ratings of `agents` after the matches `(a, b, margin of a over b)`, best first.

    Each rating has `mu`, `sigma` (its uncertainty) and `ordinal` = mu - 3 sigma, the
    conservative estimate the ranking uses.
    """
    rater = Rater(agents)
    for a, b, margin in matches:
        rater.add(a, b, margin)
    return rater.result()
