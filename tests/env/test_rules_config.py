"""The rules configuration: defaults of the `standard` preset, parsing, and errors that
name the option and its allowed values (RULES.md)."""

from __future__ import annotations

import pytest

from spades_env.rules import Rules, RulesError


def test_standard_preset_has_the_bold_defaults_of_rules_md():
    r = Rules.standard()
    assert r == Rules()
    assert (r.num_players, r.hand_size, r.num_teams) == (4, 13, 2)
    assert r.blind_nil == "when_behind_100"
    assert r.blind_nil_exchange is False
    assert r.max_total_bid is None
    assert r.first_lead == "left_of_dealer"
    assert r.nil_tricks == "bags"
    assert (r.bag_limit, r.bag_penalty) == (10, 100)
    assert r.thirteen_bid_doubles is False and r.ten_for_two_hundred is False
    assert (r.target, r.max_hands, r.lose_at) == (500, None, None)


def assert_refused_naming(names: list[str], make, *args, **kw) -> None:
    """`make(*args, **kw)` raises a RulesError whose message holds each of `names`."""
    with pytest.raises(RulesError) as err:
        make(*args, **kw)
    for name in names:
        assert name in str(err.value)


@pytest.mark.parametrize(("seat", "team"), [(0, 0), (1, 1), (2, 0), (3, 1)])
def test_partners_sit_opposite(seat, team):
    assert Rules().team_of(seat) == team  # RULES.md §1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", {}),
        ("target=300", {"target": 300}),
        ("nil_tricks=count, blind_nil=always", {"nil_tricks": "count", "blind_nil": "always"}),
        (
            "blind_nil=always,blind_nil_exchange=true",
            {"blind_nil": "always", "blind_nil_exchange": True},
        ),
        ("max_hands=6,lose_at=-200", {"max_hands": 6, "lose_at": -200}),
        ("max_total_bid=13", {"max_total_bid": 13}),
        ("max_total_bid=none", {"max_total_bid": None}),
        (
            "thirteen_bid_doubles=yes,ten_for_two_hundred=on",
            {"thirteen_bid_doubles": True, "ten_for_two_hundred": True},
        ),
        ("first_lead=two_of_clubs", {"first_lead": "two_of_clubs"}),
        ("bag_limit=5,bag_penalty=50", {"bag_limit": 5, "bag_penalty": 50}),
    ],
)
def test_from_options_parses_each_option(text, expected):
    assert Rules.from_options(text) == Rules(**expected)


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("colour=red", ["colour", "target", "nil_tricks"]),
        ("blind_nil=sometimes", ["blind_nil", "never", "when_behind_100", "always"]),
        ("nil_tricks=all", ["nil_tricks", "bags", "count"]),
        ("first_lead=dealer", ["first_lead", "left_of_dealer", "two_of_clubs"]),
        ("target=many", ["target", "integer"]),
        ("thirteen_bid_doubles=maybe", ["thirteen_bid_doubles", "true", "false"]),
        ("target", ["target", "name=value"]),
        ("target=0", ["target"]),
        ("bag_limit=0", ["bag_limit"]),
        ("bag_penalty=-1", ["bag_penalty"]),
        ("max_hands=0", ["max_hands"]),
        ("max_total_bid=53", ["max_total_bid"]),
        ("num_players=5", ["num_players"]),
    ],
)
def test_bad_option_raises_naming_the_option_and_allowed_values(text, names):
    assert_refused_naming(names, Rules.from_options, text)


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"lose_at": 500}, ["lose_at", "target"]),
        ({"lose_at": 100, "target": 100}, ["lose_at", "target"]),
        ({"blind_nil": "never", "blind_nil_exchange": True}, ["blind_nil_exchange", "blind_nil"]),
    ],
)
def test_combination_that_makes_no_sense_raises(options, names):
    assert_refused_naming(names, Rules, **options)


def test_unknown_preset_raises_with_the_known_ones():
    with pytest.raises(RulesError, match="standard"):
        Rules.preset("poker")


def test_rules_round_trip_through_dict():
    r = Rules(target=300, nil_tricks="count", blind_nil="always", blind_nil_exchange=True)
    assert Rules.from_dict(r.to_dict()) == r


def test_rules_are_frozen():
    with pytest.raises(AttributeError):
        Rules().target = 300  # type: ignore[misc]


@pytest.mark.parametrize(
    ("options", "names"),
    [
        ({"target": "300"}, ["target", "integer", "'300'"]),
        ({"target": 300.0}, ["target", "integer"]),
        ({"bag_limit": True}, ["bag_limit", "integer"]),
        ({"max_hands": "6"}, ["max_hands", "integer or None"]),
        ({"open_hands": 1}, ["open_hands", "True or False"]),
        ({"blind_nil_exchange": "yes"}, ["blind_nil_exchange", "True or False"]),
    ],
)
def test_option_of_the_wrong_type_raises_instead_of_crashing_later(options, names):
    assert_refused_naming(names, Rules, **options)


def test_numpy_integers_and_booleans_become_python_values():
    import numpy as np

    r = Rules(target=np.int64(300), max_hands=np.int32(6), open_hands=np.bool_(False))
    assert r == Rules(target=300, max_hands=6)
    assert type(r.target) is int and type(r.max_hands) is int and type(r.open_hands) is bool


@pytest.mark.parametrize(
    "text", ["target=300,target=200", "target=300, nil_tricks=count,target=300"]
)
def test_an_option_given_twice_raises(text):
    with pytest.raises(RulesError, match="target is given twice"):
        Rules.from_options(text)
