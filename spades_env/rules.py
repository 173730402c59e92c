"""The rules configuration: one frozen dataclass holding every option of RULES.md.

`Rules()` is the `standard` preset (RULES.md §1-§5 with the bold defaults). Options are
changed with keyword arguments or `Rules.from_options("target=300,nil_tricks=count")`.
An unknown option, or a value outside the allowed ones, raises `RulesError` naming the
option and the values it accepts.

Presets of RULES.md §6 are named constructors (`Rules.standard()`, `Rules.family()`, ...,
`Rules.preset(name)`). Implemented: standard, family, jokers, suicide, mirror, whiz,
three_player, cutthroat (3, 4 or 5 players; `cutthroat_3` / `cutthroat_5` name the
other table sizes), two_player (the draw phase, spades_env/stock_draw.py) and auction (trump
named after the bidding, spades_env/auction.py).

Every variant is a value of the same fields, handled by the one batched engine with
masks: `deck` (which cards are in play), `draw` (the two_player draw phase instead of a
deal), `partnerships` (two teams of two, or one-player teams), `scoring` (`standard` or
`family`), `bid_constraint` (`none`, `suicide`, `mirror`, `whiz`; RULES.md §6,
spades_env/variants.py), `open_hands` and `trump` (`spades`, or `named`: RULES.md §6
auction's trump-naming phase).

Choices where RULES.md §6 is silent: one-player-team presets keep nil, blind nil and bags
(§4) per player, and "behind by 100" for blind nil means behind the best other player;
`mirror` turns blind nil off (the bid is forced) and `whiz` keeps it (a blind nil is a
nil); in `suicide` a blind nil is the team's nil, so blind nil is not offered once the
partner bid nil; jokers count as spades for mirror and whiz; `family` keeps §5's rule
that an exact tie at the top plays another hand; `three_player` equals `cutthroat_3`.
`two_player`: the seat left of the dealer draws first and the players alternate; the
dealer passes every hand as in §1; blind nil is off (a drawn hand has been seen card by
card, so it cannot be bid blind); target 500 as standard.
`auction` (the least settled variant; the seed names only the idea) is standard with
`trump="named"`: bidding as in §2 (nil and blind nil included), partnerships and §4
scoring; after the last bid the highest bidder names the trump suit (one decision among
four actions, cards.py), highest meaning the most tricks bid (nil and blind nil count
0) and, among equals, the first in bidding order (from left of the dealer), so four
nils let the first bidder name; then the blind-nil exchange if any, and the play from
§3's first lead. The named suit takes every role spades have in §3: it trumps, it
cannot be led until broken (a trump played) unless the leader holds only trumps, and
leading it unbroken shows that the leader held only trumps; with spades named the hand
plays exactly as standard, otherwise spades are an ordinary suit. `trump="named"` is
refused with the jokers deck (jokers are spades) and with the mirror and whiz bid
constraints (they count spades); other options combine with it (cutthroat or
two_player with a named trump play too, but only `auction` is a preset).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

BlindNil = Literal["never", "when_behind_100", "always"]
NilTricks = Literal["bags", "count"]
FirstLead = Literal["left_of_dealer", "two_of_clubs"]
Deck = Literal["standard", "jokers", "no_2c", "no_2c_2d"]
Scoring = Literal["standard", "family"]
BidConstraint = Literal["none", "suicide", "mirror", "whiz"]
Trump = Literal["spades", "named"]
MAX_PLAYERS = 5  # RULES.md §1: tables of 2 to 5 players

_CHOICES: dict[str, tuple[str, ...]] = {
    "blind_nil": ("never", "when_behind_100", "always"),
    "nil_tricks": ("bags", "count"),
    "first_lead": ("left_of_dealer", "two_of_clubs"),
    "deck": ("standard", "jokers", "no_2c", "no_2c_2d"),
    "scoring": ("standard", "family"),
    "bid_constraint": ("none", "suicide", "mirror", "whiz"),
    "trump": ("spades", "named"),
}

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
_BOOL_OPTIONS = {
    "blind_nil_exchange",
    "thirteen_bid_doubles",
    "ten_for_two_hundred",
    "partnerships",
    "open_hands",
    "draw",
}


#: RULES.md §6 "Bounds of the numeric options": the values each numeric option may take.
#: Scores and bags are int32 in the engine; within these bounds a hand moves a score by
#: under 20,000 points (a set contract, two nils at the largest value, the bag penalty up
#: to 17 times), so no score leaves the int32 range in the first 100,000 hands of a game.
MAX_VALUE = 1000  # nil_value, blind_nil_value, bag_penalty, bag_limit
MAX_TARGET = 100_000  # target, and -lose_at
MAX_HANDS = 100_000  # max_hands
#: A position given by hand (`state.init`'s scores and bags) lies within these.
MAX_POSITION_SCORE = 1_000_000
MAX_POSITION_BAGS = 10_000
_BOUNDS: dict[str, tuple[int, int]] = {
    "nil_value": (1, MAX_VALUE),
    "blind_nil_value": (1, MAX_VALUE),
    "bag_penalty": (0, MAX_VALUE),
    "bag_limit": (1, MAX_VALUE),
    "target": (1, MAX_TARGET),
    "lose_at": (-MAX_TARGET, MAX_TARGET - 1),
    "max_hands": (1, MAX_HANDS),
}

#: Presets of RULES.md §6 that this engine implements.
PRESETS: tuple[str, ...] = (
    "standard",
    "family",
    "jokers",
    "suicide",
    "mirror",
    "whiz",
    "three_player",
    "cutthroat",
    "cutthroat_3",
    "cutthroat_5",
    "two_player",
    "auction",
)
#: Presets of RULES.md §6 that are specified but not implemented yet (none left).
PLANNED_PRESETS: tuple[str, ...] = ()


class RulesError(ValueError):
    """An unknown rules option, a bad value, or a combination that makes no sense."""


@dataclass(frozen=True)
class Rules:
    """Every option of RULES.md; the defaults are the `standard` preset.

    Table shape (RULES.md §1, §6): `num_players` seats (2..5), `hand_size` cards each;
    the deck must hold exactly `num_players * hand_size` cards, or twice that with `draw`
    (two_player: every draw turn keeps one card and discards one).
    """

    name: str = "standard"
    #: RULES.md §1: seats at the table.
    num_players: int = 4
    #: RULES.md §1: cards dealt to each player (= tricks per hand).
    hand_size: int = 13
    #: RULES.md §6: the cards in play: the 52, jokers (2H 2D out, LJ BJ in), 2C out, 2C 2D out.
    deck: Deck = "standard"
    #: RULES.md §6 two_player: the hands are drawn from the stock (keep/discard decisions).
    draw: bool = False
    #: RULES.md §1/§6: partners sit opposite (4 players), else every player is a team.
    partnerships: bool = True
    #: RULES.md §4/§6: `standard` contracts, nil and bags; `family` 1 a trick, +5 exact.
    scoring: Scoring = "standard"
    #: RULES.md §6: suicide / mirror / whiz restrictions on the bids.
    bid_constraint: BidConstraint = "none"
    #: RULES.md §6 family option: every observation shows every hand.
    open_hands: bool = False
    #: RULES.md §3: spades are trump; §6 auction: `named`, the highest bidder names it.
    trump: Trump = "spades"
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
        self._check_types()
        for option, allowed in _CHOICES.items():
            value = getattr(self, option)
            if value not in allowed:
                raise RulesError(
                    f"rules option {option}={value!r} is not allowed; allowed: {', '.join(allowed)}"
                )
        self._check_table()
        for option, (lo, hi) in _BOUNDS.items():
            value = getattr(self, option)
            if value is not None and not lo <= value <= hi:
                none = " or none" if option in _OPTIONAL_INT else ""
                raise RulesError(
                    f"rules option {option}={value} is out of range: {lo}..{hi}{none} "
                    "(RULES.md §6, bounds of the numeric options: no score may overflow)"
                )
        if self.max_total_bid is not None and not (
            0 <= self.max_total_bid <= self.hand_size * self.num_players
        ):
            raise RulesError(
                f"rules option max_total_bid must be none or 0..{self.hand_size * self.num_players}"
            )
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

    def _check_types(self) -> None:
        """Integers must be integers and flags booleans: `target='300'` is an error, not a
        crash when the first hand ends. numpy integers and booleans become Python ones."""
        if not isinstance(self.name, str):
            raise RulesError(f"rules name must be a string; got {self.name!r}")
        for option in _INT_OPTIONS | _OPTIONAL_INT:
            value = getattr(self, option)
            if value is None and option in _OPTIONAL_INT:
                continue
            if isinstance(value, bool | np.bool_) or not isinstance(value, int | np.integer):
                none = " or None" if option in _OPTIONAL_INT else ""
                raise RulesError(
                    f"rules option {option} needs an integer{none}; got {value!r} "
                    f"({type(value).__name__}; Rules.from_options parses text)"
                )
            object.__setattr__(self, option, int(value))
        for option in _BOOL_OPTIONS:
            value = getattr(self, option)
            if not isinstance(value, bool | np.bool_):
                raise RulesError(
                    f"rules option {option} needs True or False; got {value!r} "
                    f"({type(value).__name__})"
                )
            object.__setattr__(self, option, bool(value))

    def _check_table(self) -> None:
        """RULES.md §1/§6: table size, deck and the options that need partners or 2C."""
        from spades_env.cards import DECKS, MAX_BID, TWO_OF_CLUBS

        p, k = self.num_players, self.hand_size
        if not 2 <= p <= MAX_PLAYERS:
            raise RulesError(
                f"rules option num_players={p}: tables of 2 to {MAX_PLAYERS} players exist"
            )
        if (p == 2) != self.draw:
            raise RulesError(
                f"rules options num_players={p}, draw={self.draw}: the draw phase is the "
                "two-player deal and two players need it (use the preset two_player)"
            )
        deck_size = int(DECKS[self.deck]).bit_count()
        per_card = 2 if self.draw else 1  # RULES.md §6 two_player: half the stock is discarded
        if p * k * per_card != deck_size or k > MAX_BID:
            raise RulesError(
                f"rules options num_players={p}, hand_size={k}, deck={self.deck}: the deck "
                f"holds {deck_size} cards, so hand_size must be {deck_size // p} and "
                f"{deck_size} must divide evenly (use a preset: cutthroat_3, cutthroat_5, "
                "two_player)"
            )
        needs = []
        if self.partnerships and p != 4:
            needs.append("partnerships=true needs 4 players; set partnerships=false")
        if not self.partnerships and (self.blind_nil_exchange or self.bid_constraint == "suicide"):
            needs.append("blind_nil_exchange and bid_constraint=suicide need partnerships")
        if self.first_lead == "two_of_clubs" and not int(DECKS[self.deck]) >> TWO_OF_CLUBS & 1:
            needs.append(f"first_lead=two_of_clubs needs the 2C, which deck={self.deck} lacks")
        if self.blind_nil != "never" and (
            self.scoring == "family" or self.open_hands or self.bid_constraint == "mirror"
        ):
            needs.append(
                "scoring=family, open_hands and bid_constraint=mirror need blind_nil=never"
            )
        if self.draw and self.blind_nil != "never":
            needs.append("draw=true (two_player) shows every card drawn: blind_nil=never")
        if self.scoring == "family" and self.bid_constraint != "none":
            needs.append("scoring=family has no nil, so it needs bid_constraint=none")
        if self.trump == "named" and (
            self.deck == "jokers" or self.bid_constraint in ("mirror", "whiz")
        ):
            needs.append(
                "trump=named (auction) cannot take deck=jokers (jokers are spades) or "
                "bid_constraint=mirror/whiz (they count spades)"
            )
        if needs:
            raise RulesError("rules options make no sense together: " + "; ".join(needs))

    # ------------------------------------------------------------------ derived shape
    @property
    def num_teams(self) -> int:
        """RULES.md §1: partners sit opposite (two teams); §6: else one team per player."""
        return self.num_players // 2 if self.partnerships else self.num_players

    def team_of(self, seat: int) -> int:
        """RULES.md §1: team 0 = seats 0 and 2, team 1 = seats 1 and 3; §6: team = seat."""
        return seat % self.num_teams

    @property
    def max_bid(self) -> int:
        """RULES.md §2: a bid is 0..hand_size."""
        return self.hand_size

    @property
    def min_bid(self) -> int:
        """RULES.md §6 family: bids are 1..13 (no nil); else 0 (nil) is a bid."""
        return 1 if self.scoring == "family" else 0

    # ------------------------------------------------------------------ constructors
    @classmethod
    def standard(cls, **options: Any) -> Rules:
        """RULES.md §6 `standard`: everything in §1-§5 with the bold defaults."""
        return cls(**options)

    @classmethod
    def family(cls, **options: Any) -> Rules:
        """RULES.md §6 `family`: per-player scoring, 1 a trick, +5 exact, no nil, first to 25."""
        base = dict(name="family", partnerships=False, scoring="family", blind_nil="never")
        return cls(**{**base, "target": 25, **options})

    @classmethod
    def jokers(cls, **options: Any) -> Rules:
        """RULES.md §6 `jokers`: 2H and 2D out, Little and Big Joker in as top spades."""
        return cls(**{"name": "jokers", "deck": "jokers", **options})

    @classmethod
    def suicide(cls, **options: Any) -> Rules:
        """RULES.md §6 `suicide`: exactly one nil per partnership."""
        return cls(**{"name": "suicide", "bid_constraint": "suicide", **options})

    @classmethod
    def mirror(cls, **options: Any) -> Rules:
        """RULES.md §6 `mirror`: the bid is the number of spades held (0 = nil)."""
        base = dict(name="mirror", bid_constraint="mirror", blind_nil="never")
        return cls(**{**base, **options})

    @classmethod
    def whiz(cls, **options: Any) -> Rules:
        """RULES.md §6 `whiz`: nil, or exactly the number of spades held."""
        return cls(**{"name": "whiz", "bid_constraint": "whiz", **options})

    @classmethod
    def cutthroat(cls, num_players: int = 4, **options: Any) -> Rules:
        """RULES.md §6 `cutthroat`: one-player teams; 3 players as three_player, 5 players
        without 2C and 2D, 10 cards each."""
        shape = {
            3: dict(deck="no_2c", hand_size=17, target=300),
            4: dict(deck="standard", hand_size=13),
            5: dict(deck="no_2c_2d", hand_size=10),
        }
        whole = isinstance(num_players, int | np.integer) and not isinstance(num_players, bool)
        if not whole or num_players not in shape:  # a list is not a table size either
            raise RulesError(f"cutthroat is for 3, 4 or 5 players; got num_players={num_players!r}")
        name = "cutthroat" if num_players == 4 else f"cutthroat_{num_players}"
        base = dict(name=name, num_players=num_players, partnerships=False)
        return cls(**{**base, **shape[num_players], **options})

    @classmethod
    def three_player(cls, **options: Any) -> Rules:
        """RULES.md §6 `three_player`: 2C out, 17 cards each, one-player teams, target 300."""
        options.pop("num_players", None)
        return cls.cutthroat(3, **{"name": "three_player", **options})

    @classmethod
    def two_player(cls, **options: Any) -> Rules:
        """RULES.md §6 `two_player`: hands drawn from the stock by keep/discard decisions,
        13 cards each, one-player teams, no blind nil."""
        base = dict(name="two_player", num_players=2, hand_size=13, partnerships=False)
        return cls(**{**base, "draw": True, "blind_nil": "never", **options})

    @classmethod
    def auction(cls, **options: Any) -> Rules:
        """RULES.md §6 `auction`: standard bidding, then the highest bidder (first among
        equals) names the trump suit for the hand (spades_env/auction.py)."""
        return cls(**{"name": "auction", "trump": "named", **options})

    @classmethod
    def preset(cls, name: str, **options: Any) -> Rules:
        """Build a named preset of RULES.md §6, with options on top."""
        if name == "standard":
            return cls.standard(**options)
        if name in ("cutthroat", "cutthroat_3", "cutthroat_4", "cutthroat_5"):
            players = options.pop("num_players", 4)
            players = int(name[-1]) if name[-1].isdigit() else players
            return cls.cutthroat(players, **options)
        if name in PRESETS:
            return getattr(cls, name)(**options)
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
        options = _item_values(text)
        unknown = sorted(set(options) - set(cls.option_names()))
        if unknown:
            return cls.preset(preset).replace(**options)  # raises, naming the option
        return cls.preset(preset, **options)

    @classmethod
    def build(cls, preset: str = "standard", options: Sequence[str] = ()) -> Rules:
        """The command line's `--rules PRESET --option NAME=VALUE[,NAME=VALUE] ...`: the
        preset with the options on top. An option given twice is an error.

        Each item's text is read once (`parse_value`) and the rules are built and
        checked once, from the preset and every option together; only when that fails
        are the items applied one at a time, to name the one that makes the rules wrong."""
        try:
            rules = _bare_preset(preset) if cls is Rules else cls.preset(preset)
        except RulesError as exc:
            raise RulesError(f"--rules {preset}: {exc}") from None
        values: dict[str, Any] = {}
        names = set(cls.option_names())
        for item in options:
            keys = [p.split("=", 1)[0].strip() for p in item.split(",") if p.strip()]
            if any(k in values for k in keys) or not names.issuperset(keys):
                values = {}  # a repeat or an unknown name: worded below, per item
                break
            try:
                values.update(_item_values(item))
            except RulesError:
                values = {}
                break
        else:
            try:
                return rules.replace(**values) if values else rules
            except RulesError:
                pass  # worded below, naming the item that makes the rules wrong
        seen: set[str] = set()
        for item in options:
            keys = [p.split("=", 1)[0].strip() for p in item.split(",") if p.strip()]
            try:
                twice = seen.intersection(keys)
                if twice:
                    raise RulesError(f"rules option {min(twice)} is given twice; give it once")
                parsed = cls.from_options(item, preset=rules.name)
                rules = rules.replace(**{k: getattr(parsed, k) for k in keys})
            except RulesError as exc:
                raise RulesError(f"--option {item}: {exc}") from None
            seen.update(keys)
        return rules

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def changed_options(self) -> list[str]:
        """`NAME=VALUE` of every option that differs from this rules' preset (RULES.md §6),
        in field order: what a label or a dataset's meta.json shows on top of the name."""
        base = _preset_dict(self.name)
        return [f"{k}={v}" for k, v in self.to_dict().items() if base.get(k) != v]

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Rules:
        data = dict(data)
        name = data.pop("name", "standard")
        if name.startswith("cutthroat"):
            name = f"cutthroat_{data.get('num_players', 4)}"
        return cls.preset(name, **data)


#: The words of a yes/no value, in any case: one grammar for rules options
#: (`--option open_hands=on`), agent options (`sample=on`) and an agent's undeclared ones.
TRUE_WORDS = ("1", "true", "yes", "on")
FALSE_WORDS = ("0", "false", "no", "off")


def parse_value(raw: str, kind: type | None = None) -> Any:
    """Text -> a value of `kind`: the one grammar of every option written as text.

    `bool`: on/off, true/false, yes/no, 1/0 (any case); `int`: a whole number; `float`:
    a number; `str`: the text. `None` (a type nobody declared): a yes/no word other than
    1/0, else a whole number, else a number, else the text. A value that does not read
    as `kind` is a ValueError (the caller words it). NaN and infinities read as floats;
    the callers refuse them (a bound or a finiteness check)."""
    low = raw.strip().lower()
    if kind is bool:
        if low in TRUE_WORDS:
            return True
        if low in FALSE_WORDS:
            return False
        raise ValueError(f"{raw!r} is not one of {'/'.join(TRUE_WORDS + FALSE_WORDS)}")
    if kind is int or kind is float:
        return kind(raw)
    if kind is not None:
        return raw
    if low in TRUE_WORDS[1:] or low in FALSE_WORDS[1:]:
        return low in TRUE_WORDS
    for number in (int, float):
        try:
            return number(raw)
        except ValueError:
            pass
    return raw


@functools.cache
def _bare_preset(name: str) -> Rules:
    """A preset without options, built and checked once per process (a `Rules` is a
    frozen value, so every `Rules.build` of the preset shares it)."""
    return Rules.preset(name)


def _item_values(text: str) -> dict[str, Any]:
    """`"target=300,nil_tricks=count"` -> {"target": 300, "nil_tricks": "count"} (read, not
    yet checked against the other options)."""
    options: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in text.split(","))):
        if "=" not in item:
            raise RulesError(f"rules option {item!r} must be written as name=value")
        key, raw = (s.strip() for s in item.split("=", 1))
        if key in options:
            raise RulesError(f"rules option {key} is given twice in {text!r}; give it once")
        options[key] = _parse_value(key, raw)
    return options


def _parse_value(key: str, raw: str) -> Any:
    low = raw.lower()
    try:
        if key in _INT_OPTIONS:
            return parse_value(raw, int)
        if key in _OPTIONAL_INT:
            return None if low in ("none", "off", "") else parse_value(raw, int)
    except ValueError:
        raise RulesError(f"rules option {key} needs an integer, got {raw!r}") from None
    if key in _BOOL_OPTIONS:
        try:
            return parse_value(raw, bool)
        except ValueError:
            raise RulesError(f"rules option {key} needs true or false, got {raw!r}") from None
    return raw


@functools.cache
def _preset_dict(name: str) -> dict[str, Any]:
    """A preset's options, built once per process (`Rules.changed_options`)."""
    return Rules.preset(name).to_dict()


#: the options' value tables, for readers that describe them (the web lobby)
OPTION_CHOICES = _CHOICES
OPTIONAL_INT_OPTIONS = _OPTIONAL_INT
OPTION_BOUNDS = _BOUNDS
