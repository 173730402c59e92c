"""One grammar for every option written as text: rules options (`--option
open_hands=on`), an agent's declared options (`sample=on`) and its undeclared ones
(`agents.adapters.sources.literal`) read yes/no words and numbers alike
(`spades_env.rules.parse_value`)."""

from __future__ import annotations

import pytest

from agents.adapters.sources import literal
from agents.registry import AgentSpecError, parse_agent
from spades_env.rules import Rules, RulesError, parse_value

YES_NO = [
    ("on", True),
    ("OFF", False),
    ("true", True),
    ("False", False),
    ("Yes", True),
    ("no", False),
    ("1", True),
    ("0", False),
]

BOT = '''
from agents.random_agent import RandomAgent


class Flagged(RandomAgent):
    """A random agent with a declared flag and any other option."""

    def __init__(self, seed=None, flag: bool = False, **extra):
        super().__init__(seed=seed)
        self.flag, self.extra = flag, extra
'''


@pytest.fixture
def bot(tmp_path):
    path = tmp_path / "flagged.py"
    path.write_text(BOT)
    return f"{path}:Flagged"


@pytest.mark.parametrize(("word", "value"), YES_NO)
def test_a_yes_no_word_reads_the_same_for_rules_and_agent_options(bot, word, value):
    assert Rules.build("standard", [f"thirteen_bid_doubles={word}"]).thirteen_bid_doubles is value
    assert parse_value(word, bool) is value
    assert parse_agent(f"{bot}:flag={word}").params["flag"] is value
    if word not in ("1", "0"):  # an undeclared 1 or 0 stays a number
        assert literal(word) is value
        assert parse_agent(f"{bot}:other={word}").params["other"] is value


def test_numbers_read_alike_and_an_undeclared_1_stays_a_number(bot):
    assert literal("1") == 1 and type(literal("1")) is int
    assert literal("2.5") == 2.5 and literal("-3") == -3
    assert literal("hello") == "hello"
    spec = parse_agent(f"{bot}:depth=3,scale=0.5,mode=deep")
    assert spec.params == {"depth": 3, "scale": 0.5, "mode": "deep"}
    assert Rules.build("standard", ["target=300"]).target == 300
    assert parse_agent("heuristic:aggression=0.25,set_tricks=2").params == {
        "aggression": 0.25,
        "set_tricks": 2,
    }


def test_a_word_that_is_not_yes_or_no_is_refused_by_both(bot):
    with pytest.raises(RulesError, match="needs true or false"):
        Rules.build("standard", ["thirteen_bid_doubles=maybe"])
    with pytest.raises(AgentSpecError, match="is not a valid bool"):
        parse_agent(f"{bot}:flag=maybe")
    with pytest.raises(ValueError):
        parse_value("maybe", bool)


@pytest.mark.parametrize("raw", ["nan", "inf", "-inf", "NaN"])
def test_nan_and_infinities_are_refused_as_agent_options(bot, raw):
    with pytest.raises(AgentSpecError, match="out of range"):
        parse_agent(f"heuristic:aggression={raw}")
    with pytest.raises(AgentSpecError, match="not finite"):
        parse_agent(f"{bot}:other={raw}")
    with pytest.raises(RulesError, match="needs an integer"):
        Rules.build("standard", [f"target={raw}"])
