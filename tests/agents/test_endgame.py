"""`learned:endgame=K,worlds=W`: the network's last K tricks by a determinized exact solve."""

from __future__ import annotations

import numpy as np
import pytest

from agents.dd import DDSolver, Position, score_objective
from agents.dd.endgame_kernel import solve_rows
from agents.heuristic.agent import HeuristicAgent
from agents.learned.endgame import EndgameSolver, live_nil, opponent_live_nil, value_table
from agents.montecarlo.sampling import sample_worlds, world_violations
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env.engine import legal_action_mask, step
from spades_env.observation import encode, seat_view
from spades_env.rules import Rules
from spades_env.state import DONE, PLAY, State, init


def _late(n: int, tricks_left: int, extra: int, seed: int) -> State:
    """n games played by the heuristic to `tricks_left` tricks from the end, `extra`
    cards into that trick."""
    st = init(Rules(), n, np.random.default_rng(seed))
    h = HeuristicAgent(0)
    while not ((st.phase == PLAY) & (st.tricks_played == 13 - tricks_left)).all():
        step(st, h.act(seat_view(st), None, None))
    for _ in range(extra):
        step(st, h.act(seat_view(st), None, None))
    return st


@pytest.mark.parametrize(("tricks_left", "extra"), [(2, 1), (3, 0), (3, 3)])
def test_the_kernel_values_every_card_as_the_double_dummy_solver_does(tricks_left, extra):
    """Exact values under the relative score objective (nil and bags) on sampled worlds."""
    st = _late(6, tricks_left, extra, seed=tricks_left * 10 + extra)
    view = seat_view(st)
    rng = np.random.default_rng(0)
    solver = DDSolver(tt_bits=12)
    for g in range(view.batch_size):
        team = int(view.seat[g]) % 2
        obj = score_objective(view.rules, view.bids[g], view.blind[g], team, relative=True)
        table = value_table(view.rules, view.bids[g], view.blind[g], team)[None]
        info = np.array(
            [[view.leader[g], view.trick_size[g], view.lead_suit[g], view.broken[g],
              view.tricks_played[g], 0, -1]], dtype=np.int64,
        )  # fmt: skip
        for world in sample_worlds(view, 3, rng, game=g):
            ref = solver.move_values(Position.from_view(view, world, g), obj)
            cards = np.array(sorted(ref), dtype=np.int64)
            got = solve_rows(
                world[None].astype(np.int64), view.trick[g][None].astype(np.int64),
                view.tricks_won[g][None].astype(np.int64), info, cards[None], table, 13,
            )[0]  # fmt: skip
            np.testing.assert_allclose(got, [ref[c] for c in cards.tolist()])


def test_sampled_worlds_agree_with_what_the_seat_knows():
    st = _late(8, 4, 2, seed=5)
    view = seat_view(st)
    solver = EndgameSolver(4, 8, np.random.default_rng(1))
    worlds = solver._worlds(view, np.arange(8))
    assert worlds.shape == (64, 4)
    for i, world in enumerate(worlds):
        assert world_violations(view, world.astype(np.uint64), i // 8) == []


def _play_hands(spec: str, seed: int, n: int = 4):
    """Hands of `spec` (seats 0, 2) against the heuristic; the actions of every step."""
    st = init(Rules(), n, np.random.default_rng(7))
    agent, h = make_agent(parse_agent(spec), seed=seed), HeuristicAgent(3)
    seen = []
    while (st.phase != DONE).any() and not (st.hand_no > 0).any():
        view, obs, mask = seat_view(st), encode(st), legal_action_mask(st)
        acts = h.act(view, None, mask)
        mine = np.flatnonzero((st.to_act % 2 == 0) & (st.phase != DONE))
        if mine.size:
            acts[mine] = agent.act(view.take(mine), obs[mine], mask[mine])
        assert mask[np.arange(n), acts][st.phase != DONE].all()  # legal
        seen.append(acts.copy())
        step(st, acts)
    return np.array(seen), agent


@pytest.mark.torch
def test_endgame_decisions_are_legal_and_the_same_for_a_seed():
    a, agent = _play_hands("learned:endgame=3,worlds=4", seed=11)
    b, _ = _play_hands("learned:endgame=3,worlds=4", seed=11)
    np.testing.assert_array_equal(a, b)
    assert agent.endgame.solves > 0


def _solver_decisions(monkeypatch, spec: str, seeds, n: int = 4):
    """The games the solver decided in `_play_hands` of `spec` for each seed: (tricks
    played, the team's live nil, the opponents' live nil), one entry per decision."""
    calls = []
    original = EndgameSolver.choose

    def spy(self, view, prefs, games):
        sub = view.take(games)
        calls.append((sub.tricks_played.copy(), live_nil(sub), opponent_live_nil(sub)))
        return original(self, view, prefs, games)

    monkeypatch.setattr(EndgameSolver, "choose", spy)
    for seed in seeds:
        _play_hands(spec, seed=seed, n=n)
    return tuple(np.concatenate([c[k] for c in calls]) for k in range(3))


@pytest.mark.torch
def test_the_solver_plays_only_the_last_tricks(monkeypatch):
    played, _, _ = _solver_decisions(monkeypatch, "learned:endgame=2,worlds=2", [1])
    assert played.size > 0 and (played >= 11).all()


@pytest.mark.torch
def test_endgame_zero_is_the_network_alone():
    st = _late(4, 2, 0, seed=3)
    view, obs, mask = seat_view(st), encode(st), legal_action_mask(st)
    plain = make_agent(parse_agent("learned:endgame=0"), seed=0)
    assert plain.endgame is None
    np.testing.assert_array_equal(
        plain.act(view, obs, mask),
        make_agent(parse_agent("checkpoint:agents/learned/checkpoints/learned.pt")).act(
            view, obs, mask
        ),
    )


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("learned:endgame=14", r"endgame=14: the solved tricks at the end, 0 \(off\) to 13$"),
        ("learned:endgame=-1", r"endgame=-1: the solved tricks"),
        ("learned:endgame=3,worlds=0", r"worlds=0: sampled worlds per decision, 1 to 4096$"),
        ("learned:endgame=three", r"endgame='three' is not a valid int"),
        ("learned:nil=14", r"nil=14: the last tricks solved for a live nil of the team, 0 \(off"),
        ("learned:nilplay=rules", r"nilplay='rules'; use net, heuristic$"),
    ],
)
@pytest.mark.torch
def test_bad_endgame_options_are_refused_in_one_line(spec, message):
    with pytest.raises(AgentSpecError, match=message) as info:
        make_agent(parse_agent(spec))
    assert "\n" not in str(info.value)


@pytest.mark.torch
def test_the_options_parse():
    agent = make_agent(parse_agent("learned:endgame=5,worlds=32"), seed=0)
    assert (agent.endgame.tricks, agent.endgame.worlds) == (5, 32)
    assert agent.needs_view
    plain = make_agent(parse_agent("learned"))
    assert (plain.endgame.tricks, plain.endgame.nil) == (3, 4)
    assert make_agent(parse_agent("learned:endgame=0,nil=5")).endgame.nil == 5


def _nil_table(nil: int, team: int, hand_size: int = 13) -> np.ndarray:
    """The nil objective as a value table: 1 to the nil seat's team where that seat ends
    with no trick (seat 3 takes what seats 0-2 leave), 0 otherwise; the other team 1 - it."""
    t = np.stack(np.meshgrid(*[np.arange(14)] * 3, indexing="ij"), axis=-1)
    final = np.concatenate([t, hand_size - t.sum(axis=-1, keepdims=True)], axis=-1)
    kept = (final[..., nil] == 0).astype(float)
    return (kept if nil % 2 == team else 1.0 - kept)[None]


@pytest.mark.parametrize(("tricks_left", "extra"), [(3, 1), (4, 0), (4, 2)])
def test_the_nil_objective_ends_the_search_where_the_full_table_search_agrees(tricks_left, extra):
    """The nil objective (decided as soon as the nil seat takes a trick, searched in the
    window [0, 1]) gives the values of a full search of the same objective as a table."""
    st = _late(6, tricks_left, extra, seed=40 + tricks_left + extra)
    view = seat_view(st)
    rng = np.random.default_rng(2)
    checked = 0
    for g in range(view.batch_size):
        seat = int(view.seat[g])
        cards = np.array([c for c in range(52) if int(view.legal[g]) >> c & 1], dtype=np.int64)
        for nil in np.flatnonzero(view.tricks_won[g] == 0).tolist():
            world = sample_worlds(view, 1, rng, game=g).astype(np.int64)
            args = (world, view.trick[g][None].astype(np.int64),
                    view.tricks_won[g][None].astype(np.int64))  # fmt: skip
            row = [view.leader[g], view.trick_size[g], view.lead_suit[g], view.broken[g],
                   view.tricks_played[g], 0]  # fmt: skip
            table = _nil_table(nil, seat % 2)
            full = solve_rows(*args, np.array([[*row, -1]], np.int64), cards[None], table, 13)
            fast = solve_rows(*args, np.array([[*row, nil]], np.int64), cards[None], table, 13)
            np.testing.assert_array_equal(fast, full)
            checked += 1
    assert checked > 0


def test_live_nil_names_the_team_seat_whose_nil_still_holds():
    st = _late(8, 6, 1, seed=9)
    view = seat_view(st)
    got = live_nil(view)
    for g in range(view.batch_size):
        seat = int(view.seat[g])
        alive = [s for s in (seat, (seat + 2) % 4)
                 if view.bids[g, s] == 0 and view.tricks_won[g, s] == 0]  # fmt: skip
        assert got[g] == (alive[0] if alive else -1)


@pytest.mark.torch
def test_the_nil_solve_plays_only_while_the_teams_nil_is_alive(monkeypatch):
    spec = "learned:endgame=1,nil=4,worlds=2"
    played, nil, _ = _solver_decisions(monkeypatch, spec, range(3), n=16)
    assert played.size > 0 and (played >= 9).all()
    assert ((played == 12) | (nil >= 0)).all()  # before the last trick: a live nil only
    assert (nil[played < 12] >= 0).any()


def test_opponent_live_nil_names_the_other_teams_seat_whose_nil_still_holds():
    st = _late(8, 6, 1, seed=9)
    view = seat_view(st)
    got = opponent_live_nil(view)
    for g in range(view.batch_size):
        seat = int(view.seat[g])
        alive = [s for s in ((seat + 1) % 4, (seat + 3) % 4)
                 if view.bids[g, s] == 0 and view.tricks_won[g, s] == 0]  # fmt: skip
        assert got[g] == (alive[0] if alive else -1)


@pytest.mark.torch
def test_the_setnil_solve_plays_only_while_an_opponents_nil_is_alive(monkeypatch):
    spec = "learned:endgame=1,nil=0,setnil=5,worlds=2"
    played, ours, theirs = _solver_decisions(monkeypatch, spec, range(3), n=16)
    early = played < 12
    assert played.size > 0 and (played >= 8).all()
    assert ((theirs[early] >= 0) & (ours[early] < 0)).all()  # an opponent's nil to set
    assert early.any()


def test_the_setnil_values_are_the_chance_to_force_the_opponents_nil_to_take_a_trick():
    """Solved for the opponents' nil, each card's value is the mean over the sampled worlds
    of a full search of "the nil seat takes a trick" (the value table of the setting side)."""
    st = _late(24, 5, 1, seed=21)
    view = seat_view(st)
    games = np.flatnonzero((opponent_live_nil(view) >= 0) & (live_nil(view) < 0))
    assert games.size
    setter = EndgameSolver(0, 3, np.random.default_rng(0), setnil=5)
    worlds = EndgameSolver(0, 3, np.random.default_rng(0), setnil=5)._worlds(view, games)
    for i, (g, vals) in enumerate(zip(games.tolist(), setter.values(view, games), strict=True)):
        seat, nil = int(view.seat[g]), int(opponent_live_nil(view)[g])
        cards = np.array([c for c in range(52) if int(view.legal[g]) >> c & 1], dtype=np.int64)
        row = [view.leader[g], view.trick_size[g], view.lead_suit[g], view.broken[g],
               view.tricks_played[g], 0, -1]  # fmt: skip
        full = [
            solve_rows(world[None], view.trick[g][None].astype(np.int64),
                       view.tricks_won[g][None].astype(np.int64), np.array([row], np.int64),
                       cards[None], _nil_table(nil, seat % 2), 13)[0]
            for world in worlds[3 * i : 3 * i + 3]
        ]  # fmt: skip
        expect = np.mean(full, axis=0)
        np.testing.assert_allclose([vals[c] for c in cards.tolist()], expect)  # PLAY base 0


@pytest.mark.slow  # plain `learned` (nil=4) is checked for a seed above
def test_nil_options_parse_and_stay_deterministic():
    agent = make_agent(parse_agent("learned:nil=5,nilplay=heuristic"), seed=0)
    assert agent.endgame.nil == 5 and agent.nil_player is not None and agent.needs_view
    a, _ = _play_hands("learned:endgame=2,nil=4,worlds=2,nilplay=heuristic", seed=5, n=16)
    b, _ = _play_hands("learned:endgame=2,nil=4,worlds=2,nilplay=heuristic", seed=5, n=16)
    np.testing.assert_array_equal(a, b)
