"""The rules configuration: one frozen dataclass holding every option of RULES.md.

`Rules()` is the `standard` preset (RULES.md §1-§5 with the bold defaults). Options are
changed with keyword arguments or `Rules.from_options("target=300,nil_tricks=count")`.
An unknown option, or a value outside the allowed ones, raises `RulesError` naming the
option and the values it accepts.

Presets of RULES.md §6 are named constructors (`Rules.standard()`, `Rules.preset(name)`).
This release implements `standard` and all its options; the other presets of §6 (family,
jokers, suicide, mirror, whiz, three/two-player, cutthroat, auction) are not built yet and
`Rules.preset` says so instead of pretending.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

BlindNil = Literal["never", "when_behind_100", "always"]
NilTricks = Literal["bags", "count"]
FirstLead = Literal["left_of_dealer", "two_of_clubs"]

_CHOICES: dict[str, tuple[str, ...]] = {
    "blind_nil": ("never", "when_behind_100", "always"),
    "nil_tricks": ("bags", "count"),
    "first_lead": ("left_of_dealer", "two_of_clubs"),
}

#: Presets of RULES.md §6 that this engine implements.
PRESETS: tuple[str, ...] = ("standard",)
#: Presets of RULES.md §6 that are specified but not implemented yet.
PLANNED_PRESETS: tuple[str, ...] = (
    "family",
    "jokers",
    "suicide",
    "mirror",
    "whiz",
    "three_player",
    "two_player",
    "cutthroat",
    "auction",
)


class RulesError(ValueError):
    """An unknown rules option, a bad value, or a combination that makes no sense."""


@dataclass(frozen=True)
class Rules:
    """Every option of RULES.md; the defaults are the `standard` preset.

    Table shape (RULES.md §1): `num_players` seats, `hand_size` cards each. Only the
    four-player partnership game is implemented; the fields exist so that array shapes in
    the engine are parameterised by them rather than hard-coded.
    """

    name: str = "standard"
    #: RULES.md §1: seats at the table.
    num_players: int = 4
    #: RULES.md §1: cards dealt to each player (= tricks per hand).
    hand_size: int = 13
    #: RULES.md §2: when blind nil may be bid.
    blind_nil: BlindNil = "when_behind_100"
    #: RULES.md §2: after bidding, a blind-nil bidder and partner each pass 2 cards.
    blind_nil_exchange: bool = False
    #: RULES.md §2: cap on the total of all bids (None = no cap).
    max_total_bid: int | None = None
    #: RULES.md §3: who leads the first trick.
    first_lead: FirstLead = "left_of_dealer"
    #: RULES.md §4: how tricks taken by a nil bidder count.
    nil_tricks: NilTricks = "bags"
    #: RULES.md §4: bags that trigger the penalty, and the penalty.
    bag_limit: int = 10
    bag_penalty: int = 100
    #: RULES.md §4: a team that bids 13 and takes all 13 scores double.
    thirteen_bid_doubles: bool = False
    #: RULES.md §4: a contract of 10+ scores +200 / -200 instead of 10 a trick.
    ten_for_two_hundred: bool = False
    #: RULES.md §4: nil and blind nil values.
    nil_value: int = 100
    blind_nil_value: int = 200
    #: RULES.md §5: the game ends after the hand in which a team reaches this.
    target: int = 500
    #: RULES.md §5: stop after this many hands (None = no limit).
    max_hands: int | None = None
    #: RULES.md §5: a team at or below this score loses (None = off).
    lose_at: int | None = None

    def __post_init__(self) -> None:
        for option, allowed in _CHOICES.items():
            value = getattr(self, option)
            if value not in allowed:
                raise RulesError(
                    f"rules option {option}={value!r} is not allowed; allowed: {', '.join(allowed)}"
                )
        if self.num_players != 4 or self.hand_size != 13:
            raise RulesError(
                "rules options num_players/hand_size: only 4 players with 13 cards "
                "(the standard table) are implemented; allowed: num_players=4, hand_size=13"
            )
        positive = ("bag_limit", "target", "nil_value", "blind_nil_value")
        for option in positive:
            if int(getattr(self, option)) <= 0:
                raise RulesError(f"rules option {option} must be a positive integer")
        if self.bag_penalty < 0:
            raise RulesError("rules option bag_penalty must be >= 0")
        if self.max_hands is not None and self.max_hands < 1:
            raise RulesError("rules option max_hands must be >= 1 or none")
        if self.max_total_bid is not None and not (
            0 <= self.max_total_bid <= self.hand_size * self.num_players
        ):
            raise RulesError(f"rules option max_total_bid must be none or 0..{self.hand_size * 4}")
        if self.lose_at is not None and self.lose_at >= self.target:
            raise RulesError(
                f"rules options lose_at={self.lose_at} and target={self.target} make no "
                "sense together: lose_at must be below target"
            )
        if self.blind_nil_exchange and self.blind_nil == "never":
            raise RulesError(
                "rules option blind_nil_exchange=true needs blind nil; "
                "set blind_nil to when_behind_100 or always"
            )

    # ------------------------------------------------------------------ derived shape
    @property
    def num_teams(self) -> int:
        """RULES.md §1: partners sit opposite, so four players make two teams."""
        return 2

    def team_of(self, seat: int) -> int:
        """RULES.md §1: team 0 = seats 0 and 2, team 1 = seats 1 and 3."""
        return seat % self.num_teams

    @property
    def max_bid(self) -> int:
        """RULES.md §2: a bid is 0..hand_size."""
        return self.hand_size

    # ------------------------------------------------------------------ constructors
    @classmethod
    def standard(cls, **options: Any) -> Rules:
        """RULES.md §6 `standard`: everything in §1-§5 with the bold defaults."""
        return cls(**options)

    @classmethod
    def preset(cls, name: str, **options: Any) -> Rules:
        """Build a named preset of RULES.md §6, with options on top."""
        if name == "standard":
            return cls.standard(**options)
        if name in PLANNED_PRESETS:
            raise RulesError(
                f"preset {name!r} (RULES.md §6) is not implemented yet; "
                f"implemented presets: {', '.join(PRESETS)}"
            )
        raise RulesError(
            f"unknown preset {name!r}; known presets: {', '.join(PRESETS + PLANNED_PRESETS)}"
        )

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if f.name != "name")

    def replace(self, **options: Any) -> Rules:
        unknown = sorted(set(options) - set(self.option_names()))
        if unknown:
            raise RulesError(
                f"unknown rules option {unknown[0]!r}; known options: "
                f"{', '.join(self.option_names())}"
            )
        return dataclasses.replace(self, **options)

    @classmethod
    def from_options(cls, text: str = "", preset: str = "standard") -> Rules:
        """Parse `"target=300,nil_tricks=count"` on top of a preset."""
        base = cls.preset(preset)
        options: dict[str, Any] = {}
        for item in filter(None, (p.strip() for p in text.split(","))):
            if "=" not in item:
                raise RulesError(f"rules option {item!r} must be written as name=value")
            key, raw = (s.strip() for s in item.split("=", 1))
            options[key] = _parse_value(key, raw)
        return base.replace(**options)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        data = dict(data)
        name = data.pop("name", "standard")
        return cls.preset(name).replace(**data)


_INT_OPTIONS = {
    "num_players",
    "hand_size",
    "bag_limit",
    "bag_penalty",
    "nil_value",
    "blind_nil_value",
    "target",
}
_OPTIONAL_INT = {"max_total_bid", "max_hands", "lose_at"}
_BOOL_OPTIONS = {"blind_nil_exchange", "thirteen_bid_doubles", "ten_for_two_hundred"}


def _parse_value(key: str, raw: str) -> Any:
    low = raw.lower()
    try:
        if key in _INT_OPTIONS:
            return int(raw)
        if key in _OPTIONAL_INT:
            return None if low in ("none", "off", "") else int(raw)
    except ValueError:
        raise RulesError(f"rules option {key} needs an integer, got {raw!r}") from None
    if key in _BOOL_OPTIONS:
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
        raise RulesError(f"rules option {key} needs true or false, got {raw!r}")
    return raw
