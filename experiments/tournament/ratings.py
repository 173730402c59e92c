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

    def add_teams(self, a: Sequence[str], b: Sequence[str], margin: float) -> None:
        """A match of two teams of players, `a` over `b` by `margin`: each seat's agent
        in `a` and `b` (an agent may hold several places, even on both sides: it takes
        the mean of its places' new mu and sigma)."""
        ranks = [0, 0] if margin == 0 else ([0, 1] if margin > 0 else [1, 0])
        ratings = self.ratings
        teams = [[ratings[x] for x in a], [ratings[x] for x in b]]
        new = self.model.rate(teams, ranks=ranks)
        places: dict[str, list[Any]] = {}
        for names, rated in zip((a, b), new, strict=True):
            for name, r in zip(names, rated, strict=True):
                places.setdefault(name, []).append(r)
        for name, rs in places.items():
            mu = sum(r.mu for r in rs) / len(rs)
            sigma = sum(r.sigma for r in rs) / len(rs)
            ratings[name] = self.model.rating(mu=mu, sigma=sigma, name=name)

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
