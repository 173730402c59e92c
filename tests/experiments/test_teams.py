"""Teams of two agents (`team(A, B)`): the spec, the seating, the duplicate, the results
per team and per agent, and `spades tournament` run as a user would."""

from __future__ import annotations

import json
from collections import Counter

import pytest
from cli_helpers import one_line_error, spades

from agents.registry import (
    AgentSpec,
    AgentSpecError,
    TeamSpec,
    entry_from_json,
    parse_agent,
    parse_entry,
    split_specs,
)
from experiments.tournament.config import TournamentConfig, TournamentError
from experiments.tournament.llm_ladder import planned_requests, with_partner
from experiments.tournament.results_log import read_rows
from experiments.tournament.runner import run_tournament
from spades_env.rules import Rules


# ----------------------------------------------------------------------------- the spec
@pytest.mark.parametrize(
    ("text", "want"),
    [
        ("team(heuristic,random)", [("team(heuristic;random)", None)]),
        ("team( heuristic ; random )", [("team(heuristic;random)", None)]),
        ("mix=team(heuristic,random)", [("mix=team(heuristic;random)", "mix")]),
        # a member's options hold commas: the list grammar decides, as in --agents
        (
            "team(heuristic:aggression=0.5,nil_risk=0.6,random),heuristic",
            [("team(heuristic:aggression=0.5,nil_risk=0.6;random)", None), ("heuristic", None)],
        ),
        (
            "random;t=team(a=heuristic,b=random);heuristic",
            [("random", None), ("t=team(a=heuristic;b=random)", "t"), ("heuristic", None)],
        ),
        ("team(random,random),team(heuristic,heuristic)", [
            ("team(random;random)", None), ("team(heuristic;heuristic)", None)]),
    ],
)  # fmt: skip
def test_a_team_is_one_entry_of_the_list_whatever_its_parentheses_hold(text, want):
    entries = [parse_entry(s) for s in split_specs(text)]
    assert [(e.text, e.label) for e in entries] == want
    for entry in entries:
        # the text is read back to the same value, and so is its JSON form
        assert parse_entry(entry.text) == entry
        assert entry_from_json(json.loads(json.dumps(entry.to_json()))) == entry


def test_a_teams_members_are_agents_with_their_own_names():
    team = parse_entry("team(a=heuristic:aggression=0.5, random)")
    assert isinstance(team, TeamSpec)
    assert all(isinstance(m, AgentSpec) for m in team.members)
    assert [m.display for m in team.members] == ["a", "random"]
    assert team.display == "a+random"
    assert team.members[0].params == {"aggression": 0.5}


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("team()", "0 member(s)"),
        ("team(random)", "1 member(s)"),
        ("team(random,heuristic,random)", "3 member(s)"),
        ("team(team(random,random),random)", "members are agents, not teams"),
        ("team(random,heuristic", "has no )"),
        ("bad name=team(random,random)", "name 'bad name'"),
        ("bad name=team(random;random)", "name 'bad name'"),
        ("team(nosuchagent,random)", "unknown agent 'nosuchagent'"),
        ("team(random,heuristic:nosuch=1)", "no parameter 'nosuch'"),
    ],
)
def test_a_bad_team_is_one_line_naming_what_is_wrong(text, says):
    with pytest.raises(AgentSpecError) as err:
        [parse_entry(s) for s in split_specs(text)]
    assert says in str(err.value) and "\n" not in str(err.value)


def test_a_team_is_not_one_agent_where_one_agent_is_asked_for():
    with pytest.raises(AgentSpecError, match="is a team of two agents"):
        parse_agent("team(random,heuristic)")


def test_the_config_refuses_teams_without_partnerships_and_names_for_two_agents():
    with pytest.raises(TournamentError, match="partnerships"):
        TournamentConfig(
            agents=("team(random,heuristic)", "random"), rules=Rules.preset("cutthroat")
        )
    with pytest.raises(TournamentError, match="'a' stands for two different agents"):
        TournamentConfig(agents=("team(a=heuristic,random)", "a=random"))
    with pytest.raises(TournamentError, match="given to more than one agent"):
        TournamentConfig(agents=("random=team(heuristic,heuristic)", "random=random"))
    with pytest.raises(TournamentError, match="'heuristic' stands for two different"):
        TournamentConfig(agents=("heuristic=team(random,random)", "team(heuristic,random)"))
    # a stored config reads back to the same value, its teams included
    cfg = TournamentConfig(agents=("t=team(heuristic,random)", "heuristic"), deals=2)
    assert TournamentConfig.from_dict(json.loads(json.dumps(cfg.to_dict()))) == cfg
    assert cfg.labels == ["t", "heuristic"] and cfg.agent_names == ["heuristic", "random"]


def test_a_partner_halves_a_models_planned_requests():
    model = "m=llm:model=x,base_url=http://127.0.0.1:9/v1,api_key_env=NOKEY"
    alone = TournamentConfig(agents=(model, "random"), deals=8, chunk=8)
    paired = TournamentConfig(agents=(with_partner(model, "heuristic"), "random"), deals=8, chunk=8)
    selfish = TournamentConfig(agents=(f"team({model};{model})", "random"), deals=8, chunk=8)
    a, p, s = (planned_requests(c)["m"]["decisions"] for c in (alone, paired, selfish))
    assert a == 8 * 4 * 14 and p * 2 == a and s == a  # 14 decisions per seat and hand
    with pytest.raises(TournamentError, match="is a team already"):
        with_partner("team(random,random)", "heuristic")
    with pytest.raises(AgentSpecError, match=r"^--partner: unknown agent 'nosuch'"):
        with_partner("random", "nosuch")


# ----------------------------------------------------------------------------- play
DEALS = 3


@pytest.fixture(scope="module")
def mixed_run(tmp_path_factory):
    """A team of two different agents, a plain agent, and a bot partnering itself."""
    run_dir = tmp_path_factory.mktemp("teams") / "run"
    cfg = TournamentConfig(
        agents=("team(heuristic,random)", "heuristic", "rr=team(random,random)"),
        deals=DEALS,
        chunk=DEALS,
        seed=7,
    )
    summary = run_tournament(run_dir, cfg, workers=1)
    return cfg, dict(summary), list(read_rows(run_dir))


def test_members_sit_at_their_partnerships_first_and_second_seat(mixed_run):
    _, _, rows = mixed_run
    for row in rows:
        team, other = row["teams"]
        seats = row["seats"]
        if team == "heuristic+random":  # team 0: seats 0 (first member) and 2
            assert seats[0] == "heuristic" and seats[2] == "random"
        if other == "heuristic+random":  # team 1: seats 1 and 3
            assert seats[1] == "heuristic" and seats[3] == "random"
        if "rr" in (team, other):
            k = (team, other).index("rr")
            assert seats[k] == seats[k + 2] == "random"


def test_each_member_holds_one_seat_of_each_side_of_every_deal(mixed_run):
    _, summary, rows = mixed_run
    hands = Counter()
    for row in rows:
        for seat in row["seats"]:
            hands[seat] += 1
    # heuristic: its member seat in 2 pairs + both seats of its own entry in 2 pairs;
    # random: its member seat in 2 pairs + both seats of rr in 2 pairs; 2 sides a deal
    assert hands == {"heuristic": DEALS * 2 * (2 * 1 + 2 * 2), "random": DEALS * 2 * (2 + 2 * 2)}
    # per agent: every seat it held, in its teams and alone; no contracts
    agents = {b["agent"]: b for b in summary["agent_bids"]}
    assert set(agents) == {"heuristic", "random"}
    assert {a: b["seat_hands"] for a, b in agents.items()} == hands
    assert all(b["contracts"] == 0 for b in agents.values())
    # per entry: a team's line holds its two members' seats and its contracts, an
    # agent's its own two seats: 2 seats x 2 sides x DEALS x 2 pairs each
    lines = {b["agent"]: b for b in summary["bids"]}
    assert set(lines) == {"heuristic+random", "heuristic", "rr"}
    assert all(b["seat_hands"] == 2 * 2 * DEALS * 2 for b in lines.values())
    assert all(b["contracts"] > 0 for b in lines.values())
    nils = sum(b["nil_attempts"] for b in lines.values())
    assert nils == sum(b["nil_attempts"] for b in agents.values())
    assert nils == sum(r["bids"].count(0) for r in rows)


def test_results_are_per_team_and_per_agent(mixed_run):
    cfg, summary, _ = mixed_run
    pairs = {frozenset((p["a"], p["b"])) for p in summary["pairs"]}
    assert pairs == {frozenset(p) for p in
                     [("heuristic+random", "heuristic"), ("heuristic+random", "rr"),
                      ("heuristic", "rr")]}  # fmt: skip
    assert {r["agent"] for r in summary["ratings"]} == set(cfg.labels)
    assert {r["agent"] for r in summary["agent_ratings"]} == {"heuristic", "random"}
    assert summary["teams"] == {
        "heuristic+random": ["heuristic", "random"],
        "heuristic": ["heuristic", "heuristic"],
        "rr": ["random", "random"],
    }
    # the per-agent margin: every deal of its teams, both signs, a deal held by both
    # sides left out (heuristic vs heuristic+random for heuristic, random vs rr ...)
    margins = {m["agent"]: m["margin"] for m in summary["agent_margins"]}
    assert margins["heuristic"]["n"] == 2 * DEALS  # vs rr from both of its teams
    assert margins["random"]["n"] == 2 * DEALS  # rr vs heuristic+random shares random
    by_pair = {(p["a"], p["b"]): p["margin"]["mean"] for p in summary["pairs"]}
    total = sum(m * (1 if a != "rr" else -1) for (a, b), m in by_pair.items() if "rr" in (a, b))
    assert margins["heuristic"]["mean"] == pytest.approx(total / 2)


def test_a_team_of_the_same_composition_on_both_sides_is_exactly_level(tmp_path):
    """The duplicate swaps the partnerships' seats: each member plays, on the other side,
    the cards the other team's same member held. With two deterministic agents per team
    and the same composition on both sides, every deal's margin is exactly 0; a member
    seated at the wrong seat on one side would make it differ."""
    cfg = TournamentConfig(
        agents=("x=team(heuristic,heuristic:aggression=1)",
                "y=team(heuristic,heuristic:aggression=1)"),
        deals=4, chunk=4, seed=11,
    )  # fmt: skip
    summary = run_tournament(tmp_path / "run", cfg, workers=1)
    (pair,) = summary["pairs"]
    assert pair["margin"]["mean"] == 0.0 and pair["margin"]["sd"] == 0.0
    swapped = TournamentConfig(
        agents=("x=team(heuristic:aggression=1,heuristic)",
                "y=team(heuristic,heuristic:aggression=1)"),
        deals=4, chunk=4, seed=11,
    )  # fmt: skip
    other = run_tournament(tmp_path / "swapped", swapped, workers=1)
    (pair,) = other["pairs"]
    assert pair["margin"]["sd"] != 0.0  # the order of the members matters


def test_in_game_mode_the_winner_is_the_team(tmp_path):
    cfg = TournamentConfig(
        agents=("team(heuristic,random)", "random"), mode="game",
        rules=Rules().replace(target=100), deals=1, chunk=1, seed=3,
    )  # fmt: skip
    summary = run_tournament(tmp_path / "run", cfg, workers=1)
    rows = list(read_rows(tmp_path / "run"))
    finals = [r for r in rows if r["game_over"]]
    assert finals and all(r["winner_agent"] == r["teams"][r["winner"]] for r in finals)
    assert {r["winner_agent"] for r in finals} <= {"heuristic+random", "random"}
    (pair,) = summary["pairs"]
    wins = sum((r["winner_agent"] == pair["a"]) - (r["winner_agent"] == pair["b"]) for r in finals)
    # the pair's win rate counts the team's wins (a win 1, a loss 0, per game)
    assert pair["win_rate"]["mean"] == pytest.approx((wins / len(finals) + 1) / 2)


def test_a_tournament_without_teams_writes_no_per_agent_section(tmp_path):
    cfg = TournamentConfig(agents=("heuristic", "random"), deals=1, chunk=1)
    summary = dict(run_tournament(tmp_path / "run", cfg, workers=1))
    assert not {"teams", "agent_ratings", "agent_margins"} & set(summary)


# ----------------------------------------------------------------------------- the CLI
def test_spades_tournament_plays_a_mixed_team_and_prints_per_agent_results(tmp_path):
    out = spades(
        "tournament", "--agents", "team(heuristic, random);heuristic", "--deals", "2",
        "--chunk", "2", "--workers", "2", "--out", str(tmp_path / "run"), "--no-progress",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert "heuristic+random" in out.stdout and "Per agent (teams of two agents)" in out.stdout
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["config"]["agents"] == [{"team": ["heuristic", "random"]}, "heuristic"]
    assert {r["agent"] for r in summary["agent_ratings"]} == {"heuristic", "random"}
    bad = spades("tournament", "--agents", "team(heuristic),random", "--deals", "1",
                 "--out", str(tmp_path / "bad"))  # fmt: skip
    assert "1 member(s)" in one_line_error(bad)
    assert not (tmp_path / "bad").exists()
