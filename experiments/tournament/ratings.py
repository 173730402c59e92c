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


def rate(matches: Iterable[tuple[str, str, float]], agents: Sequence[str]) -> list[dict[str, Any]]:
    """Ratings of `agents` after the matches `(a, b, margin of a over b)`, best first.

    Each rating has `mu`, `sigma` (its uncertainty) and `ordinal` = mu - 3 sigma, the
    conservative estimate the ranking uses.
    """
    model = PlackettLuce()
    ratings = {a: model.rating(name=a) for a in agents}
    for a, b, margin in matches:
        ranks = [0, 0] if margin == 0 else ([0, 1] if margin > 0 else [1, 0])
        [[ra], [rb]] = model.rate([[ratings[a]], [ratings[b]]], ranks=ranks)
        ratings[a], ratings[b] = ra, rb
    out = [
        {"agent": a, "mu": r.mu, "sigma": r.sigma, "ordinal": r.ordinal()}
        for a, r in ratings.items()
    ]
    return sorted(out, key=lambda r: -r["ordinal"])
