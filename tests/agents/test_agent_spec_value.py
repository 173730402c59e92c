"""An agent spec read once into an `AgentSpec` value: typed options, every path absolute,
its name as the user wrote it, and a JSON form that any process, in any folder, reads
back into the same value."""

from __future__ import annotations

import pickle
import re
import shutil
from pathlib import Path

import pytest

from agents.adapters import sources
from agents.registry import AgentSpec, agent_from_json, make_agent, parse_agent
from agents.spec import AgentImportError, AgentSpecError

REPO = Path(__file__).resolve().parents[2]
SHIPPED = REPO / "agents" / "learned" / "checkpoints" / "ppo_small.pt"


def test_a_registered_spec_is_a_value_with_typed_options():
    spec = parse_agent("h=heuristic:aggression=0.2,set_tricks=2")
    assert spec == AgentSpec(
        "h",
        "registry",
        "heuristic",
        (("aggression", 0.2), ("set_tricks", 2)),
        "h=heuristic:aggression=0.2,set_tricks=2",
        "h",
    )
    assert parse_agent(spec) is spec  # a value is trusted, not read again
    assert spec.to_json() == spec.text
    assert agent_from_json(spec.to_json()) == spec
    assert pickle.loads(pickle.dumps(spec)) == spec
    assert make_agent(spec, seed=1).name == "h"


def test_a_file_spec_holds_its_path_absolute_and_shows_its_file_name(tmp_path, monkeypatch):
    (tmp_path / "bots").mkdir()
    (tmp_path / "bots" / "low.py").write_text(
        "from agents.random_agent import RandomAgent\n\nclass Low(RandomAgent):\n    pass\n"
    )
    monkeypatch.chdir(tmp_path)
    spec = parse_agent("bots/low.py:Low")
    assert spec.kind == "file"
    assert spec.target == f"{tmp_path / 'bots' / 'low.py'}:Low"
    assert spec.display == "low.py:Low"
    assert spec.to_json() == spec.text == spec.target
    monkeypatch.chdir(REPO)
    assert agent_from_json(spec.to_json()) == spec


def test_the_errors_live_with_the_spec_and_stay_importable_from_sources():
    assert sources.AgentSpecError is AgentSpecError
    assert sources.AgentImportError is AgentImportError
    with pytest.raises(AgentSpecError, match="has no parameter 'depth'"):
        parse_agent("heuristic:depth=2")


@pytest.mark.torch
def test_a_checkpoint_path_is_made_absolute_and_the_name_stays_as_written(tmp_path, monkeypatch):
    pytest.importorskip("torch")
    shutil.copy(SHIPPED, tmp_path / "l.pt")
    monkeypatch.chdir(tmp_path)
    spec = parse_agent("checkpoint:l.pt,sample=on")
    assert spec.params == {"path": str(tmp_path / "l.pt"), "sample": True}
    assert spec.text == f"checkpoint:{tmp_path / 'l.pt'},sample=on"
    assert spec.display == "checkpoint:l.pt,sample=on"
    stored = spec.to_json()
    assert stored == {"spec": spec.text, "name": "checkpoint:l.pt,sample=on"}
    named = parse_agent("mine=checkpoint:path=l.pt")
    assert named.text == f"mine=checkpoint:path={tmp_path / 'l.pt'}"
    assert named.to_json() == named.text
    other = tmp_path / "elsewhere"
    other.mkdir()
    monkeypatch.chdir(other)  # read back from another folder: the same file, the same name
    assert agent_from_json(stored) == spec
    assert agent_from_json(named.to_json()) == named
    with pytest.raises(AgentSpecError, match=re.escape("'l.pt'")):
        parse_agent("checkpoint:l.pt")  # relative to this folder: the error quotes it as written


def test_a_damaged_stored_agent_is_refused():
    for bad in ({"spec": "random"}, {"spec": 3, "name": "x"}, 7, ["random"]):
        with pytest.raises(ValueError):
            agent_from_json(bad)


def test_the_factory_takes_a_value_only():
    """Text is read once, at the edge, by parse_agent: the factory refuses it."""
    from agents.registry import check_agent_rules
    from spades_env.rules import Rules

    with pytest.raises(TypeError, match=r"make_agent takes an AgentSpec: parse the text once"):
        make_agent("heuristic", seed=0)
    with pytest.raises(TypeError, match="check_agent_rules takes an AgentSpec"):
        check_agent_rules("heuristic", Rules())
    assert make_agent(parse_agent("random"), seed=0, rules=Rules()).name == "random"


def test_the_text_helpers_warn_and_work_for_one_release(tmp_path):
    import agents.registry as registry

    with pytest.warns(DeprecationWarning, match=r"display_name is deprecated .* use parse_agent"):
        assert registry.display_name("bot.py:Low:depth=2") == "bot.py:Low:depth=2"
    with pytest.warns(DeprecationWarning, match="canonical_spec is deprecated"):
        assert registry.canonical_spec(f"{tmp_path}/../x/b.py:B") == f"{tmp_path.parent}/x/b.py:B"
    with pytest.warns(DeprecationWarning, match="parse_spec is deprecated"):
        assert registry.parse_spec("pimc:worlds=64") == ("pimc", {"worlds": 64})
    with pytest.warns(DeprecationWarning, match="split_spec is deprecated"):
        parts = registry.split_spec("h=heuristic:aggression=0.2")
    assert (parts.label, parts.target, parts.options, parts.kind) == (
        "h",
        "heuristic",
        "aggression=0.2",
        "registry",
    )
    assert (parts.spec, parts.display) == ("h=heuristic:aggression=0.2", "h")
    with pytest.warns(DeprecationWarning, match="resolve is deprecated"):
        parsed, entry, params = registry.resolve("heuristic:aggression=0.2")
    assert isinstance(parsed, registry.ParsedSpec) and params == {"aggression": 0.2}
    assert entry is registry.REGISTRY["heuristic"]
