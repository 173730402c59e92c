"""Bad input to the Python API and the command line, case by case (issue 28): game and
seat indices out of range, rules values that would overflow the int32 scores, agent
parameters that are NaN, infinite, huge or repeated, seeds past 64 bits, raw exceptions
of the envs. Each is refused with one clear error and changes nothing; the command line
answers with exit status 2, one line and no folder. tests/faults/test_fuzz_inputs.py searches
for more of the same kind."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from cli_helpers import one_line_error, spades

from agents.registry import AgentSpecError, parse_spec
from spades_env import IllegalActionError, engine, spades_v0
from spades_env.obs_bits import encode_bits
from spades_env.observation import encode, seat_view
from spades_env.render import render_state
from spades_env.rules import MAX_VALUE, PRESETS, Rules, RulesError
from spades_env.scoring import apply_bags, score_hand
from spades_env.single import SingleGame
from spades_env.state import DONE, DealError, init
from spades_env.table_image import table_image

ROW_RANGE = r"0\.\.3 \(4 games\)"


@pytest.fixture
def state():
    return init(Rules(), 4, np.random.default_rng(0))


# ----------------------------------------------------------------------------- indices
@pytest.mark.parametrize("call", ["stop_games", "start_hand", "blind_allowed"])
@pytest.mark.parametrize("row", [10**9, 50, 4, -3, -1, 2**63, 10**30])
def test_a_game_index_outside_the_batch_is_refused_and_changes_nothing(state, call, row):
    # 10**9 used to crash the interpreter (exit 139), 50 to return silently, -3 to stop
    # game 1: the kernels index rows unchecked
    before = state.buffer.copy()
    args = ([row], [0]) if call == "blind_allowed" else ([row],)
    with pytest.raises(ValueError, match=rf"game indices must be whole numbers {ROW_RANGE}"):
        getattr(engine, call)(state, *args)
    np.testing.assert_array_equal(state.buffer, before)


def test_a_list_with_one_bad_index_stops_no_game(state):
    with pytest.raises(ValueError, match="got 50"):
        engine.stop_games(state, [1, 2, 3, 50])
    assert not (state.phase == DONE).any()
    engine.stop_games(state, [1, 3])  # in range: works
    assert (state.phase == DONE).tolist() == [False, True, False, True]


@pytest.mark.parametrize("rows", [[1.5], [1.0], ["a"], [True], [None], [[0, 1], [2]]])
def test_a_game_index_that_is_not_a_whole_number_is_refused(state, rows):
    with pytest.raises(ValueError, match="game indices must be whole numbers"):
        engine.stop_games(state, rows)


def test_every_public_call_that_takes_a_game_or_a_seat_checks_it(state):
    for call in (
        lambda: engine.legal_actions(state, 4),
        lambda: engine.legal_actions(state, -1),
        lambda: engine.explain_illegal(state, 10**9, 0),
        lambda: state.take([0, 9]),
        lambda: SingleGame.from_state(state, -2),
        lambda: render_state(state, -1),  # numpy showed the last game
        lambda: table_image(state, 4),
    ):
        with pytest.raises(ValueError, match=ROW_RANGE):
            call()
    with pytest.raises(ValueError, match=r"give one game index 0\.\.3"):
        engine.legal_actions(state, [[0], [1, 2]])  # was numpy's ragged-array error
    game = SingleGame(Rules(), seed=1)
    for call in (
        lambda: engine.blind_allowed(state, [0], [7]),
        lambda: encode(state, 10**9),
        lambda: encode(state, [0, 1, 2, -1]),
        lambda: encode_bits(state, 4),
        lambda: seat_view(state, -1),
        lambda: game.observe(10**9),
        lambda: game.observe_masked(-1, True),
    ):
        with pytest.raises(ValueError, match=r"seat indices must be whole numbers 0\.\.3"):
            call()


def test_scoring_functions_check_their_rows():
    with pytest.raises(ValueError, match=r"bids must have shape \(B, 4\)"):
        score_hand(Rules(), [[1, 2, 3]], [[0, 0, 0]], [[1, 2, 3]])  # a row read past its end
    with pytest.raises(ValueError, match=r"tricks must be whole numbers 0\.\.13"):
        score_hand(Rules(), [3, 3, 3, 3], [0, 0, 0, 0], [3, 3, 3, 99])
    with pytest.raises(ValueError, match="bags must be whole numbers"):
        apply_bags(Rules(), [0], [2**40])


# ----------------------------------------------------------------------------- overflow
@pytest.mark.parametrize(
    "option",
    [
        {"nil_value": 3_000_000_000},  # scored +1,294,967,190 for a failed nil
        {"nil_value": 2**33},  # a failed nil cost 0
        {"blind_nil_value": 2**31},
        {"bag_penalty": 9223372036854775807},  # printed "bag penalty --4"
        {"bag_limit": 10**12},
        {"target": 99999999999999999999999},  # a traceback
        {"lose_at": -(10**12)},
        {"max_hands": 10**10},
        {"nil_value": 0},
        {"bag_penalty": -1},
    ],
)
def test_rules_values_beyond_their_bounds_are_refused_citing_the_rule_book(option):
    with pytest.raises(RulesError, match=r"out of range: .*RULES\.md §6, bounds"):
        Rules(**option)
    ((key, value),) = option.items()
    with pytest.raises(RulesError, match="out of range"):
        Rules.from_options(f"{key}={value}")


@pytest.mark.parametrize("players", [[], 2.0, True, "4"])
def test_cutthroat_takes_only_a_whole_table_size(players):
    # found by the fuzz suite: num_players=[] was a TypeError (unhashable type: 'list')
    with pytest.raises(RulesError, match="cutthroat is for 3, 4 or 5 players"):
        Rules.preset("cutthroat", num_players=players)


def test_scores_at_the_bounds_are_exact():
    # the largest values of RULES.md §6's bounds: a failed blind nil and a failed nil in
    # one team, and the bag penalty 17 times in a hand, all within int32 and exact
    rules = Rules(nil_value=MAX_VALUE, blind_nil_value=MAX_VALUE, bag_penalty=MAX_VALUE,
                  bag_limit=1)  # fmt: skip
    hand = score_hand(rules, [0, 12, 0, 1], [1, 0, 0, 0], [1, 0, 12, 0])
    assert hand.points[0, 0] == -2 * MAX_VALUE + 13  # two failed nils, 13 nil tricks
    assert hand.points[0, 1] == -130  # the set contract of 13
    scores, bags, penalty = apply_bags(rules, hand.points[0], hand.bags[0])
    assert penalty[0] == 13 * MAX_VALUE and bags[0] == 0
    assert scores[0] == -2 * MAX_VALUE + 13 - 13 * MAX_VALUE


def test_a_position_beyond_the_bounds_is_refused():
    rng = np.random.default_rng(0)
    with pytest.raises(DealError, match=r"scores must be whole numbers in -1000000..1000000"):
        init(Rules(), 2, rng, scores=[10**20, 0])
    with pytest.raises(DealError, match=r"bags must be whole numbers in 0..10000"):
        init(Rules(), 2, rng, bags=[-1, 0])


@pytest.mark.parametrize(
    "option", ["nil_value=3000000000", "target=99999999999999999999999", "bag_penalty=-5"]
)
@pytest.mark.cli
def test_an_option_beyond_its_bound_is_one_line_on_the_command_line(option):
    line = one_line_error(spades("demo", "--hands", "1", "--option", option))
    assert "out of range" in line and "RULES.md §6" in line


# ----------------------------------------------------------------------------- agent specs
@pytest.mark.parametrize(
    "spec",
    [
        "heuristic:aggression=inf",
        "heuristic:aggression=nan",
        "heuristic:aggression=-inf",
        "heuristic:nil_risk=1e400",
        "heuristic:bag_cost=nan",
        "heuristic:blind_deficit=99999999999999999999",
        "pimc:worlds=99999999999999999999",
        "pimc:time_ms=nan",
        "ismcts:iterations=99999999999999999999",
        "ismcts:c=inf",
    ],
)
def test_agent_parameters_that_are_not_finite_or_too_large_are_refused(spec):
    with pytest.raises(AgentSpecError, match="out of range"):
        parse_spec(spec)


def test_an_agent_parameter_given_twice_is_refused():
    with pytest.raises(AgentSpecError, match="aggression is given twice"):
        parse_spec("heuristic:bid=rules,aggression=0.2,aggression=0.3")
    with pytest.raises(AgentSpecError, match="not a valid float"):
        parse_spec("heuristic:aggression=0.2:aggression=0.3")
    assert parse_spec("heuristic:bid=rules,aggression=0.2") == (
        "heuristic",
        {"bid": "rules", "aggression": 0.2},
    )


@pytest.mark.cli
def test_an_error_quoting_a_line_break_stays_one_line(tmp_path):
    # found by the fuzz suite: a model path holding a line break broke the one-line error
    with pytest.raises(AgentSpecError) as caught:
        parse_spec("heuristic:model=a\nb")
    assert "\n" not in str(caught.value) and "a\\nb" in str(caught.value)
    out = tmp_path / "r"
    agents = "heuristic:bid=model,model=a\nb,random"
    line = one_line_error(spades("tournament", "--agents", agents, "--out", str(out)))
    assert "a\\nb" in line
    assert not out.exists()


@pytest.mark.cli
def test_a_nan_agent_parameter_stops_a_tournament_before_its_folder(tmp_path):
    out = tmp_path / "r"
    agents = "heuristic:aggression=nan,random"
    line = one_line_error(spades("tournament", "--agents", agents, "--out", str(out)))
    assert "aggression='nan' is out of range" in line
    assert not out.exists()


# ----------------------------------------------------------------------------- the command line
@pytest.mark.parametrize(
    ("flags", "word"),
    [
        (["--deals", "4", "--deals", "8"], "--deals"),
        (["--rules", "standard", "--rules", "jokers"], "--rules"),
        (["--seed", "1", "--seed", "2"], "--seed"),
    ],
)
@pytest.mark.cli
def test_a_single_valued_flag_given_twice_is_refused(flags, word, tmp_path):
    out = tmp_path / "r"
    line = one_line_error(spades("tournament", *flags, "--out", str(out)))
    assert f"argument {word}: given twice" in line
    assert not out.exists()


@pytest.mark.cli
def test_a_seed_past_64_bits_and_too_many_deals_are_refused_before_any_folder(tmp_path):
    out = tmp_path / "r"
    line = one_line_error(spades("tournament", "--seed", str(2**64), "--out", str(out)))
    assert "--seed" in line and "0..2**64-1" in line  # 2**64 played the deals of seed 0
    line = one_line_error(spades("tournament", "--deals", "99999999999", "--out", str(out)))
    assert "--deals" in line and "at most 1,000,000" in line  # was a 745 GiB allocation
    assert not out.exists()


@pytest.mark.cli
def test_dd_table_at_the_last_seed_is_one_line(tmp_path):
    cache = tmp_path / "dd.sqlite"
    line = one_line_error(
        spades("dd-table", "--seed", str(2**64 - 1), "--cache", str(cache), "--no-progress")
    )
    assert "the last seed would pass 2**64-1" in line  # 1000 deals from the last seed
    assert not cache.exists()


@pytest.mark.parametrize("seconds", ["nan", "inf", "-1", "0"])
@pytest.mark.cli
def test_bench_seconds_must_be_finite_and_positive(seconds):
    # nan ran over 60 s with no output
    line = one_line_error(spades("bench", "--only", "presets", "--seconds", seconds))
    assert "--seconds" in line and "must be 0.001 to 86400 seconds" in line


# ----------------------------------------------------------------------------- engine and envs
def test_init_refuses_a_preset_name_and_an_empty_batch():
    with pytest.raises(TypeError, match="init needs a Rules value"):
        init("standard", 4, np.random.default_rng(0))
    for size in (0, -1, 2.5, True):
        with pytest.raises(ValueError, match="batch_size must be"):
            init(Rules(), size, np.random.default_rng(0))


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, "7"])
def test_a_seed_outside_64_bits_is_refused(seed):
    with pytest.raises(ValueError, match=r"seeds must be whole numbers 0..2\*\*64-1"):
        init(Rules(), 1, seeds=seed)
    with pytest.raises(ValueError, match=r"seeds must be whole numbers 0..2\*\*64-1"):
        SingleGame(Rules(), seed=seed)
    assert init(Rules(), 1, seeds=2**64 - 1).seed[0] == 2**64 - 1


def test_on_illegal_must_be_raise_or_report(state):
    # "bogus" was taken as "raise"
    with pytest.raises(ValueError, match="on_illegal must be 'raise' or 'report'"):
        engine.step(state, np.zeros(4, dtype=np.int64), on_illegal="bogus")
    with pytest.raises(ValueError, match="on_illegal must be 'raise' or 'report'"):
        SingleGame(Rules(), seed=1).step(0, on_illegal="bogus")


def _play_out(env) -> None:
    for _ in env.agent_iter():
        obs, _, term, trunc, _ = env.last()
        env.step(None if term or trunc else int(np.flatnonzero(obs["action_mask"])[0]))


@pytest.mark.parametrize("make", [spades_v0.raw_env, spades_v0.env], ids=["raw", "wrapped"])
def test_pettingzoo_last_after_the_end_is_a_clear_error(make):
    env = make()
    env.reset(seed=1)
    _play_out(env)
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.last()  # was KeyError: 'player_0'
    env.reset(seed=2)
    assert env.last()[1:4] == (0.0, False, False)


def test_pettingzoo_raw_env_before_reset_and_after_the_end():
    env = spades_v0.raw_env()
    for call in (lambda: env.step(0), env.last):  # were AttributeErrors
        with pytest.raises(RuntimeError, match="call reset"):
            call()
    env.reset(seed=3)
    _play_out(env)
    env.step(0)  # PettingZoo's convention (OrderEnforcingWrapper): a logged warning, no step
    assert env.agents == []
    with pytest.raises(ValueError, match="unknown agent 'player_9'"):
        env.observe("player_9")


@pytest.mark.parametrize("action", [1e308, 10**30, 2**63, -5])
def test_a_huge_action_is_illegal_not_an_overflow(action):
    # found by the fuzz suite: 1e308 reached the compiled step as an OverflowError
    env = spades_v0.raw_env()
    env.reset(seed=1)
    with pytest.raises(IllegalActionError, match="is illegal"):
        env.step(action)
    state = init(Rules(), 2, seeds=[1, 2])
    with pytest.raises(IllegalActionError):
        engine.step(state, np.array([action, 54], dtype=np.float64 if action == 1e308 else object))


def test_envs_take_a_preset_by_name_and_refuse_an_unknown_one():
    env = gym.make("spades_env/Spades-v0", rules="jokers")
    assert env.unwrapped.rules == Rules.jokers()
    for make in (
        lambda: gym.make("spades_env/Spades-v0", rules="bogus"),
        lambda: spades_v0.env(rules="bogus"),
    ):
        with pytest.raises(RulesError, match="unknown preset 'bogus'; known presets: standard"):
            make()
    assert all(p in str(RulesError) or True for p in PRESETS)
    with pytest.raises(ValueError, match="hand_limit"):
        gym.make("spades_env/Spades-v0", hand_limit=0)
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        gym.make("spades_env/Spades-v0", illegal_reward=float("nan"))


def test_huge_numbers_in_the_envs_arguments_are_one_line_errors():
    # found by the fuzz suite: an OverflowError, and a seed error spread over lines
    with pytest.raises(ValueError, match="illegal_reward must be a finite number"):
        gym.make("spades_env/Spades-v0", illegal_reward=10**400)
    env = gym.make("spades_env/Spades-v0")
    with pytest.raises(ValueError, match=r"seeds must be whole numbers 0\.\.2\*\*64-1") as caught:
        env.reset(seed=10**400)
    assert "\n" not in str(caught.value)


def test_the_native_vector_envs_mask_on_a_terminal_step_is_all_zeros_as_the_sync_one():
    kwargs = {"num_envs": 3, "vectorization_mode": "vector_entry_point"}
    native = gym.make_vec("spades_env/Spades-v0", **kwargs)
    sync = gym.make_vec("spades_env/Spades-v0", num_envs=3, vectorization_mode="sync")
    _, a = native.reset(seed=5)
    _, b = sync.reset(seed=5)
    ended = 0
    for _ in range(400):
        np.testing.assert_array_equal(a["action_mask"], b["action_mask"])
        acts = np.array([np.flatnonzero(m)[0] if m.any() else 0 for m in a["action_mask"]])
        _, _, terms, truncs, a = native.step(acts)
        _, _, terms_b, truncs_b, b = sync.step(acts)
        done = terms | truncs
        assert (done == (terms_b | truncs_b)).all()
        assert not a["action_mask"][done].any()
        ended += int(done.sum())
    assert ended >= 3
    native.close()
    sync.close()
