"""A fitted model of the tricks a hand takes, from the project's own play.

What the heuristic's model bidding (`agents.heuristic.model_bids`) reads. For one seat about to
bid, a feature vector `x` (`FEATURES`: the hand, the bidding position, the bids made so
far, the score) gives

- **team tricks** (the seat bids a number): the tricks `y` the team takes beyond the
  partner's bid (my tricks plus my partner's, less its bid; with a nil partner, my tricks
  alone, RULES.md §4 `nil_tricks=bags`), as an ordinal logit. The hand's strength is
  `z = w · x` and `P(y <= k) = sigmoid(theta_k - z)` for k = -3..12 (`Y_LOW`; -3 holds
  everything below). The contract `bid + partner's bid` is made exactly when `y >= bid`,
  and a model of the team's tricks, not of mine alone, carries what the partners'
  tricks share: when I take a trick my partner does not;
- **nil** (the seat bids nil): `P(no trick) = sigmoid(v · x + v0)`, a logistic regression;
- **partner**: a table of counts, `partner[b][t]`, of the tricks `t` a partner who bid
  `b` (0 = nil) took, with the bids' own frequency as the prior when the partner has
  not bid yet.

The model is fitted for the standard table (`applies(rules)`: four players in two
partnerships, 13 cards of the standard deck, spades trump, standard scoring, no bid
constraint); other rules keep the rule-based count. The file is JSON with the command
that made it (`recipe`, `training.bid_fit`); `load` validates it and names what is wrong
in one line (`TrickModelError`).
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.heuristic.bidding import ACE, JACK, KING, QUEEN, estimate_tricks, nil_danger, suit_ranks
from spades_env.cards import NUM_SUITS, SPADES
from spades_env.rules import Rules

#: the model shipped with the project
DEFAULT_PATH = Path(__file__).parent / "data" / "trick_model.json"
FORMAT = "spades-trick-model"
VERSION = 1
TRICKS = 14  # 0..13 tricks of the standard hand
Y_LOW = -3  # the team-tricks model's lowest class (everything below it included)
Y_CLASSES = TRICKS - Y_LOW  # y = -3..13

#: one seat's features, in the order of the weights (see `features`)
FEATURES: tuple[str, ...] = (
    "count",  # rule text 000's trick count (agents.heuristic.bidding.estimate_tricks)
    "nil_danger",  # rule text 000's nil danger (agents.heuristic.bidding.nil_danger), capped at 3
    "spades",  # spades held
    "long_spades",  # spades beyond the fourth
    "spade_ace",
    "spade_king",
    "spade_queen",
    "spade_jack",
    "side_aces",
    "side_kings",  # side kings with a card beside them
    "lone_kings",  # singleton side kings
    "side_queens",  # side queens with two cards beside them
    "voids",  # side suits
    "singletons",
    "doubletons",
    "position_2",  # bidding position (1 = left of the dealer, the baseline)
    "position_3",
    "position_4",
    "partner_bid",  # the partner's bid when it has bid a number, else 0
    "partner_nil",  # the partner bid nil (blind or not)
    "partner_unbid",  # the partner has not bid yet
    "opponent_bids",  # the opponents' number bids so far, summed
    "opponent_nils",  # the opponents' nil bids so far
    "score_margin",  # (own score - other's) / 100, clipped to [-5, 5]
    "own_bags",  # own team's bags / 10
    "opponent_bags",  # the other team's bags / 10
    # my bid less the bid my bidder would choose, -1..1: in the data, the change made by
    # exploration (training.bid_fit); when bidding, a candidate's distance from the bid
    # of highest expected score at offset 0 (agents.heuristic.model_bids). Bidding a trick more
    # makes the team play for one more.
    "bid_offset",
)
OFFSET = FEATURES.index("bid_offset")


class TrickModelError(ValueError):
    """A model file that is missing, unreadable or not a valid trick model."""


def applies(rules: Rules) -> bool:
    """Whether the fitted model speaks of these rules (see the module docstring)."""
    return (
        rules.num_players == 4
        and rules.partnerships
        and rules.hand_size == 13
        and rules.deck == "standard"
        and rules.trump == "spades"
        and rules.scoring == "standard"
        and rules.bid_constraint == "none"
        and not rules.draw
    )


def hand_features(hand: int) -> list[float]:
    """The features of a 13-card hand (a Python int bitmask), spades trump."""
    spades = suit_ranks(hand, SPADES)
    out = [estimate_tricks(hand), min(nil_danger(hand), 3.0), len(spades), max(0, len(spades) - 4)]
    out += [float(r in spades) for r in (ACE, KING, QUEEN, JACK)]
    aces = kings = lone = queens = voids = singles = doubles = 0
    for s in range(1, NUM_SUITS):
        ranks = suit_ranks(hand, s)
        n = len(ranks)
        aces += ACE in ranks
        kings += KING in ranks and n >= 2
        lone += ranks == [KING]
        queens += QUEEN in ranks and n >= 3
        voids += n == 0
        singles += n == 1
        doubles += n == 2
    return [*out, aces, kings, lone, queens, voids, singles, doubles]


def context_features(
    seat: int,
    bids: list[int],
    scores: list[int],
    bags: list[int],
    order: list[int],
    offset: int = 0,
) -> list[float]:
    """The features of the moment of bidding: `bids` per seat (-1 not yet, 0 nil),
    `scores` and `bags` per team, `order` the seats in bidding order, `offset` the
    bid's offset (see FEATURES)."""
    position = order.index(seat)
    partner = (seat + 2) % 4
    pb = bids[partner]
    opp = [bids[s] for s in ((seat + 1) % 4, (seat + 3) % 4)]
    team = seat % 2
    margin = max(-5.0, min(5.0, (scores[team] - scores[1 - team]) / 100))
    return [
        float(position == 1),
        float(position == 2),
        float(position == 3),
        float(max(pb, 0)),
        float(pb == 0),
        float(pb < 0),
        float(sum(b for b in opp if b > 0)),
        float(sum(b == 0 for b in opp)),
        margin,
        bags[team] / 10,
        bags[1 - team] / 10,
        float(max(-1, min(1, offset))),
    ]


def bidding_order(dealer: int) -> list[int]:
    """RULES.md §2: the seats in bidding order, from left of the dealer."""
    return [(dealer + 1 + i) % 4 for i in range(4)]


@dataclass(frozen=True)
class TrickModel:
    """The fitted weights (see the module docstring)."""

    weights: npt.NDArray[np.float64]  # (F,) ordinal logit weights w
    thresholds: npt.NDArray[np.float64]  # (16,) increasing theta_-3..theta_12
    nil_weights: npt.NDArray[np.float64]  # (F,) logistic weights v
    nil_bias: float  # v0
    partner: npt.NDArray[np.float64]  # (14, 14) counts: partner's bid (0 = nil) x tricks
    meta: dict[str, Any] = field(default_factory=dict)  # recipe, data, fit quality

    def team_pmf(self, x: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """(..., 17) P(y = k), k = -3..13, of feature rows (..., F) for a number bid: the
        team's tricks beyond the partner's bid (see the module docstring)."""
        z = np.asarray(x, dtype=np.float64) @ self.weights
        cdf = 1.0 / (1.0 + np.exp(-(self.thresholds - z[..., None])))
        cdf = np.concatenate([cdf, np.ones((*cdf.shape[:-1], 1))], axis=-1)
        return np.diff(cdf, axis=-1, prepend=0.0)

    def nil_made(self, x: npt.ArrayLike) -> npt.NDArray[np.float64]:
        """(...) P(no trick taken) of feature rows (..., F) for a nil bid."""
        z = np.asarray(x, dtype=np.float64) @ self.nil_weights + self.nil_bias
        return 1.0 / (1.0 + np.exp(-z))

    def partner_pmf(self) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """(P(partner bids b), P(partner takes t | bid b)): (14,), (14, 14), smoothed
        by half a count per cell so an unseen bid still gives a distribution."""
        counts = self.partner + 0.5
        return self.partner.sum(axis=1) / self.partner.sum(), counts / counts.sum(
            axis=1, keepdims=True
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "version": VERSION,
            "features": list(FEATURES),
            "weights": self.weights.tolist(),
            "thresholds": self.thresholds.tolist(),
            "nil_weights": self.nil_weights.tolist(),
            "nil_bias": self.nil_bias,
            "partner": self.partner.astype(int).tolist(),
            **self.meta,
        }

    def save(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n")


def _vector(d: dict[str, Any], key: str, n: int, where: str) -> npt.NDArray[np.float64]:
    value = d.get(key)
    if not isinstance(value, list) or len(value) != n:
        raise TrickModelError(f"{where}: {key!r} must be a list of {n} numbers")
    arr = (
        np.asarray(value, dtype=np.float64)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)
        else None
    )
    if arr is None or not np.isfinite(arr).all():
        raise TrickModelError(f"{where}: {key!r} must hold {n} finite numbers")
    return arr


def from_dict(d: Any, where: str = "trick model") -> TrickModel:
    """Validate a parsed model file; TrickModelError names the first problem."""
    if not isinstance(d, dict) or d.get("format") != FORMAT:
        raise TrickModelError(f"{where}: not a trick model (format must be {FORMAT!r})")
    if d.get("version") != VERSION:
        raise TrickModelError(f"{where}: version {d.get('version')!r}, this code reads {VERSION}")
    if d.get("features") != list(FEATURES):
        raise TrickModelError(f"{where}: its features differ from trick_model.FEATURES")
    f = len(FEATURES)
    theta = _vector(d, "thresholds", Y_CLASSES - 1, where)
    if (np.diff(theta) <= 0).any():
        raise TrickModelError(f"{where}: 'thresholds' must increase")
    partner = d.get("partner")
    if not isinstance(partner, list) or len(partner) != TRICKS:
        raise TrickModelError(f"{where}: 'partner' must be {TRICKS} rows of {TRICKS} counts")
    rows = np.stack([_vector({"row": r}, "row", TRICKS, f"{where}: 'partner'") for r in partner])
    if (rows < 0).any() or rows.sum() <= 0:
        raise TrickModelError(f"{where}: 'partner' counts must be >= 0, not all zero")
    bias = d.get("nil_bias")
    if not isinstance(bias, (int, float)) or isinstance(bias, bool) or not math.isfinite(bias):
        raise TrickModelError(f"{where}: 'nil_bias' must be a finite number")
    known = {"format", "version", "features", "weights", "thresholds", "nil_weights"}
    meta = {k: v for k, v in d.items() if k not in known | {"nil_bias", "partner"}}
    return TrickModel(
        weights=_vector(d, "weights", f, where),
        thresholds=theta,
        nil_weights=_vector(d, "nil_weights", f, where),
        nil_bias=float(bias),
        partner=rows,
        meta=meta,
    )


def load(path: str | Path = DEFAULT_PATH) -> TrickModel:
    """Read and validate a model file (TrickModelError, one line, if it is not one)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise TrickModelError(f"trick model {path}: cannot read it ({exc.strerror})") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise TrickModelError(
            f"trick model {path}: not JSON ({exc.msg}, line {exc.lineno})"
        ) from None
    return from_dict(d, f"trick model {path}")


@lru_cache(maxsize=4)
def load_cached(path: str = str(DEFAULT_PATH)) -> TrickModel:
    """`load`, once per process and path."""
    return load(path)
