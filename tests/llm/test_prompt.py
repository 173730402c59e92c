"""The prompt of the `llm:` agent (agents/llm/prompt.py) against the fake server of
tests/llm (a real HTTP server on 127.0.0.1):

- ``system=FILE`` is the system message of every request, re-asks included; a file that
  is not a regular UTF-8 text file is refused at parse time, in one line;
- ``list_legal=false`` holds on every request: no first prompt and no re-ask names the
  legal actions, though the server's illegal answers are refused and re-asked;
- ``strict=true`` reads only a final-answer tag.
"""

from __future__ import annotations

import numpy as np
import pytest

from agents.llm import prompt as prompts
from agents.play_loop import play
from agents.registry import make_agent, parse_agent
from experiments.tournament import deals as deals_mod
from spades_env.duplicate import seat_agents
from spades_env.rules import Rules
from spades_env.state import init
from spades_env.text import AnswerError, parse_answer

pytest.importorskip("openai")


def _play(spec: str, deals: int = 1) -> None:
    """`deals` duplicate deals of one hand, `spec` against heuristic."""
    rules = Rules()
    ds = deals_mod.generate(rules, 3, deals)
    agent = make_agent(parse_agent(spec), seed=3)
    state = init(
        rules,
        2 * deals,
        seeds=np.repeat(ds.game_seeds, 2),
        deals=np.repeat(ds.hands, 2, axis=0),
        dealer=np.repeat(ds.dealers, 2),
    )
    try:
        play(
            state,
            seat_agents(rules, deals),
            [agent, make_agent(parse_agent("heuristic"))],
            one_hand=True,
        )
    finally:
        agent.close()


def test_system_message_and_list_legal_false_on_every_request(tmp_path, fake_server, llm_key):
    system = tmp_path / "system.txt"
    system.write_text("You play Spades for the North-South team. Be bold; $5 says so.", "utf-8")
    spec = fake_server.spec(
        system=system,
        list_legal="false",
        store=tmp_path / "s",
        reasks=2,
        max_fallback_share=1,
    )
    _play(spec.partition("=")[2], deals=2)
    stats = fake_server.stats()
    assert stats["requests"] >= 56
    assert set(stats["systems"]) == {system.read_text("utf-8")}
    assert not any("Legal actions" in p for p in stats["prompts"])
    reasks = stats["reask_texts"]
    assert reasks  # the server's illegal answers and nonsense were re-asked
    assert any("is not legal" in r for r in reasks)  # the rule broken is still said
    assert not any("Legal:" in r or "Legal actions" in r for r in reasks)


def test_list_legal_true_names_them_on_a_re_ask():
    state = init(Rules(), 1, seeds=np.array([3], dtype=np.uint64))
    with pytest.raises(AnswerError) as err:
        parse_answer("bid 14", state)
    assert "Legal: nil; bid 1" in prompts.refusal(err.value, True)
    shown = prompts.refusal(err.value, False)
    assert "bids are 0..13" in shown and "Legal" not in shown and "bid 1;" not in shown


@pytest.mark.parametrize("kind", ["folder", "fifo", "binary", "empty", "missing", "huge"])
def test_a_system_file_that_is_not_text_is_refused_in_one_line(tmp_path, kind):
    import os

    path = tmp_path / "system"
    if kind == "folder":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "binary":
        path.write_bytes(b"\xff\xfe\x00bad")
    elif kind == "empty":
        path.write_text("  \n")
    elif kind == "huge":
        path.write_text("x" * (prompts.MAX_SYSTEM_BYTES + 1))
    with pytest.raises(ValueError) as err:
        parse_agent(f"llm:model=m,base_url=http://127.0.0.1:9/v1,system={path}")
    assert "system" in str(err.value) and "\n" not in str(err.value)


def test_strict_reads_only_the_tag(tmp_path, fake_server, llm_key):
    # the fake model ends every answer with 'Final answer: ...': strict reads them all
    spec = fake_server.spec(strict="true", store=tmp_path / "s", reasks=0)
    agent = make_agent(parse_agent(spec.partition("=")[2]), seed=1)
    assert agent.strict
    agent.close()


# ----------------------------------------------------------------------------- the view's text
def _view_at_play(preset: str = "standard", **options):
    from spades_env.cards import BID_BASE
    from spades_env.engine import legal_actions, step
    from spades_env.state import PLAY
    from spades_env.text import seat_json

    state = init(Rules.preset(preset, **options), 1, seeds=np.array([3], dtype=np.uint64))
    while state.phase[0] != PLAY:
        legal = legal_actions(state, 0)
        step(state, np.array([BID_BASE + 3 if BID_BASE + 3 in legal else legal[0]]))
    return seat_json(state)


@pytest.mark.parametrize(
    ("trick", "trump", "winning"),
    [
        ([["West", "9H"], ["North", "JH"]], "spades", "North"),
        ([["West", "9H"], ["North", "JH"], ["East", "AH"]], "spades", "East"),
        ([["West", "9H"], ["North", "2S"], ["East", "AH"]], "spades", "North"),
        ([["West", "9H"], ["North", "AD"]], "spades", "West"),
        ([["West", "AS"], ["North", "LJ"], ["East", "BJ"]], "spades", "East"),
        ([["West", "AS"], ["North", "2H"]], "hearts", "North"),
        ([["West", "KC"]], "spades", "West"),
    ],
)
def test_the_view_says_who_is_winning_the_trick(trick, trump, winning):
    from spades_env.text import view_text

    view = _view_at_play()
    view["current_trick"], view["trump"] = trick, trump
    line = next(x for x in view_text(view).splitlines() if x.startswith("Trick in progress"))
    assert line.endswith(f"({winning} winning).")


@pytest.mark.parametrize(
    ("preset", "options", "says"),
    [
        ("standard", {}, ["your partner is South", "Preset: standard."]),
        ("cutthroat", {}, ["playing alone", "Preset: cutthroat."]),
        ("jokers", {}, ["Big Joker (BJ)", "Little Joker (LJ)", "two highest spades"]),
        ("standard", {"blind_nil": "always", "blind_nil_exchange": True},
         ["pass each other 2 cards", "with blind_nil=always, blind_nil_exchange=True."]),
        ("auction", {}, ["names the trump suit", "The highest trump wins"]),
        ("standard", {"target": 300}, ["Game to 300", "Preset: standard with target=300."]),
        ("whiz", {}, ["nil or exactly the number of spades held"]),
    ],
)  # fmt: skip
def test_the_view_states_the_rules_once_in_plain_words(preset, options, says):
    from spades_env.text import view_text

    text = view_text(_view_at_play(preset, **options))
    for words in says:
        assert words in text
    assert "num_players=" not in text and "bag_penalty=" not in text  # no dump of options
    assert text.count("Rules:") == 1
