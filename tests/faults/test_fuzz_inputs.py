"""A fuzz suite for inputs (Hypothesis): rules options and agent specs drawn from a grammar
of names, types and extreme values (huge, negative, NaN, infinite, Unicode, repeated), and
the engine's and the envs' public calls given such values. Each case either works or
raises one documented error with a message (`RulesError`, `AgentSpecError`, `DealError`,
`ValueError`, `TypeError`); never another exception, never a crash, never a value that
overflowed silently, never a file left behind. The command-line cases run `spades` as a
subprocess: exit status 0, or 2 with one line on stderr and no traceback.

The default run tries a small budget (a few seconds); `-m slow` runs the same searches
with a large one. Hypothesis keeps no example database (`database=None`): nothing is
written to the user's home or the repository. tests/faults/test_input_errors.py holds the cases
this search found or the issue listed, one by one."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import gymnasium as gym
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from spades_reference import team_points

from agents.registry import REGISTRY, AgentSpecError, parse_spec, split_specs
from spades_env import engine
from spades_env.cards import ActionValueError
from spades_env.core.rules_vector import rules_vector
from spades_env.env_common import check_hand_limit
from spades_env.gym_env import SpadesEnv
from spades_env.obs_bits import encode_bits
from spades_env.observation import encode, seat_view
from spades_env.render import render_state
from spades_env.rules import _BOUNDS, PRESETS, Rules, RulesError
from spades_env.scoring import score_hand
from spades_env.single import SingleGame
from spades_env.spades_v0 import raw_env
from spades_env.state import init

REPO = Path(__file__).resolve().parents[2]

# ----------------------------------------------------------------------------- budgets
#: (examples per search) in the default run and in the slow run
SMALL, LARGE = 40, 2000
COUNTS: dict[str, int] = {}  # cases tried per search in this session (printed at the end)


def fuzz(examples: int):
    """Hypothesis settings of one search: no database (nothing written anywhere), no
    deadline (the machine is shared), derandomized in the default run so that it is
    reproducible, random in the slow one."""
    return settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=examples == SMALL,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


def _count(name: str) -> None:
    COUNTS[name] = COUNTS.get(name, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def _report_counts():
    yield
    if COUNTS:
        total = sum(COUNTS.values())
        shown = ", ".join(f"{k} {v}" for k, v in sorted(COUNTS.items()))
        print(f"\nfuzz cases tried: {total} ({shown})")


# ----------------------------------------------------------------------------- the grammar
HUGE_INTS = [
    0, 1, -1, 13, 17, 999, 1000, 1001, 100_000, 100_001, -100_000, -100_001,
    2**31 - 1, 2**31, -(2**31), -(2**31) - 1, 2**32, 2**33, 3_000_000_000,
    2**63 - 1, 2**63, -(2**63), 2**64 - 1, 2**64, 10**23, -(10**23), 10**400,
]  # fmt: skip
ODD_FLOATS = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324, -0.0, 0.5, 1.5, 1e400]
ODD_TEXT = [
    "", " ", "nan", "NaN", "inf", "-inf", "infinity", "1e3", "1e400", "0x10", "1_000",
    "١٢٣", "１", "²", "½", "ⅷ", "none", "None", "off", "true", "yes", "maybe", "-", "+5",
    " 7 ", "7\n", "7,8", "a=b", "=", ":", "é", "\x00", "💥", "9" * 30, "-" + "9" * 30,
]  # fmt: skip

ints = st.one_of(st.sampled_from(HUGE_INTS), st.integers())
floats = st.one_of(st.sampled_from(ODD_FLOATS), st.floats())
texts = st.one_of(
    st.sampled_from(ODD_TEXT),
    st.text(max_size=12),
    ints.map(str),
    floats.map(repr),
)
#: a value for a Python call: any of the types a careless caller passes
values = st.one_of(
    ints,
    floats,
    st.booleans(),
    st.none(),
    texts,
    ints.map(lambda x: np.int64(x) if -(2**63) <= x < 2**63 else x),
    st.sampled_from([np.uint64(2**64 - 1), np.float32("nan"), np.bool_(True)]),
    st.lists(ints, max_size=3),
)
OPTION_NAMES = list(Rules.option_names())
option_names = st.one_of(
    st.sampled_from(OPTION_NAMES),
    st.sampled_from(["colour", "Target", "nil value", "tárget", "", "name", "__class__"]),
)
#: option values as text: extreme numbers and words, and the allowed words themselves
option_texts = st.one_of(
    texts,
    st.sampled_from(["standard", "jokers", "bags", "count", "never", "always", "family"]),
)


@st.composite
def option_lists(draw) -> str:
    """`name=value,name=value` text, names often repeated."""
    items = draw(st.lists(st.tuples(option_names, option_texts), min_size=1, max_size=4))
    if draw(st.booleans()):
        items.append(items[0])  # the same option again
    sep = draw(st.sampled_from([",", ", ", ",,"]))
    return sep.join(f"{k}={v}" for k, v in items)


def _check_rules(rules: Rules) -> None:
    """A Rules value that was accepted holds every numeric option within its bounds, and
    its rules vector holds exactly those values (nothing wrapped on the way to int64)."""
    for option, (lo, hi) in _BOUNDS.items():
        value = getattr(rules, option)
        assert value is None or lo <= value <= hi, (option, value)
    r = rules_vector(rules)
    assert r.dtype == np.int64
    from spades_env.core.rules_vector import R_BAG_PENALTY, R_BLIND_VALUE, R_NIL_VALUE, R_TARGET

    got = (r[R_NIL_VALUE], r[R_BLIND_VALUE], r[R_BAG_PENALTY], r[R_TARGET])
    assert got == (rules.nil_value, rules.blind_nil_value, rules.bag_penalty, rules.target)


# ----------------------------------------------------------------------------- rules
def _rules_from_text(text: str, preset: str) -> None:
    _count("rules text")
    try:
        rules = Rules.from_options(text, preset=preset)
    except RulesError as exc:
        assert str(exc) and "\n" not in str(exc)
        return
    _check_rules(rules)


def _rules_from_values(options: dict, preset: str) -> None:
    _count("rules values")
    try:
        rules = Rules.preset(preset, **options)
    except RulesError as exc:  # TypeError from an unknown keyword is named below
        assert str(exc) and "\n" not in str(exc)
        return
    except TypeError as exc:
        assert "unexpected keyword argument" in str(exc), exc  # an unknown option
        return
    _check_rules(rules)


def _rules_build(items: list[str]) -> None:
    _count("rules --option")
    try:
        rules = Rules.build("standard", items)
    except RulesError as exc:
        assert str(exc).startswith("--option ") or str(exc).startswith("--rules ")
        return
    _check_rules(rules)


presets = st.sampled_from(PRESETS)
option_dicts = st.dictionaries(st.sampled_from(OPTION_NAMES), values, max_size=3)


@fuzz(SMALL)
@given(option_lists(), presets)
def test_rules_options_as_text(text, preset):
    _rules_from_text(text, preset)


@fuzz(SMALL)
@given(option_dicts, presets)
def test_rules_options_as_python_values(options, preset):
    _rules_from_values(options, preset)


@fuzz(SMALL)
@given(st.lists(option_lists(), min_size=1, max_size=3))
def test_rules_options_as_repeated_command_line_flags(items):
    _rules_build(items)


@st.composite
def bounded_rules(draw) -> Rules:
    """Standard-table rules whose numeric options sit anywhere in their bounds, the
    extremes most often."""
    out = {}
    for option in ("nil_value", "blind_nil_value", "bag_penalty", "bag_limit"):
        lo, hi = _BOUNDS[option]
        out[option] = draw(st.one_of(st.sampled_from([lo, hi]), st.integers(lo, hi)))
    out["nil_tricks"] = draw(st.sampled_from(["bags", "count"]))
    return Rules(**out)


@st.composite
def finished_hands(draw):
    bids = [draw(st.integers(0, 13)) for _ in range(4)]
    blind = [draw(st.booleans()) and bids[s] == 0 for s in range(4)]
    cuts = sorted(draw(st.lists(st.integers(0, 13), min_size=3, max_size=3)))
    tricks = [b - a for a, b in zip([0, *cuts], [*cuts, 13], strict=True)]
    return bids, blind, tricks


def _scores_exactly(rules: Rules, hand) -> None:
    """The engine's int32 hand score equals the reference's Python integers."""
    _count("scores at the bounds")
    bids, blind, tricks = hand
    got = score_hand(rules, bids, blind, tricks)
    for team in (0, 1):
        points, bags = team_points(rules, bids, blind, tricks, team)
        assert (int(got.points[0, team]), int(got.bags[0, team])) == (points, bags)


@fuzz(SMALL)
@given(bounded_rules(), finished_hands())
def test_scores_at_the_bounds_never_overflow(rules, hand):
    _scores_exactly(rules, hand)


# ----------------------------------------------------------------------------- agent specs
#: the agents that load nothing heavy (the network agents import torch and read their
#: checkpoint on every parse: the slow run takes them too)
LIGHT_AGENTS = ["random", "heuristic", "pimc", "ismcts"]


@st.composite
def agent_specs(draw, names: list[str]) -> str:
    """`name:key=value,key=value` with the registry's names and parameters, odd ones,
    extreme values and repeated keys; sometimes with `:` where `,` belongs."""
    name = draw(st.one_of(st.sampled_from(names), st.sampled_from(["", "Heuristic", "héu"])))
    entry = REGISTRY.get(name)
    keys = list(entry.params) if entry and entry.params else ["x"]
    key_st = st.one_of(st.sampled_from(keys), st.sampled_from(["", "bogus", "wörlds"]))
    value_st = st.one_of(texts, st.sampled_from(["rules", "model", "search", "heuristic"]))
    items = draw(st.lists(st.tuples(key_st, value_st), max_size=4))
    if items and draw(st.booleans()):
        items.append((items[0][0], draw(value_st)))  # a key again
    sep = draw(st.sampled_from([",", ":", ";"]))
    body = sep.join(f"{k}={v}" for k, v in items)
    return f"{name}:{body}" if body or draw(st.booleans()) else name


def _agent_spec(spec_text: str) -> None:
    _count("agent specs")
    for part in split_specs(spec_text) or (spec_text,):
        try:
            name, params = parse_spec(part)
        except AgentSpecError as exc:
            assert str(exc) and "\n" not in str(exc)
            continue
        entry = REGISTRY[name]
        for key, value in params.items():
            assert key in entry.params
            if isinstance(value, float):
                assert math.isfinite(value), (part, key, value)
            if isinstance(value, int | float) and not isinstance(value, bool):
                assert abs(value) < 2**31, (part, key, value)


@fuzz(SMALL)
@given(agent_specs(LIGHT_AGENTS))
def test_agent_specs(spec_text):
    _agent_spec(spec_text)


# ----------------------------------------------------------------------------- engine calls
index_values = st.one_of(
    ints,
    floats,
    st.booleans(),
    st.none(),
    texts,
    st.lists(ints, max_size=4),
    st.lists(st.one_of(ints, floats, st.booleans()), max_size=3),
    st.sampled_from(
        [
            np.array([], dtype=np.int64),
            np.array([2**64 - 1], dtype=np.uint64),
            np.array([[0, 1]]),
            np.array([0.0]),
            [[0], [1, 2]],
        ]
    ),
)
ENGINE_CALLS = [
    "stop_games", "start_hand", "blind_allowed rows", "blind_allowed seats", "legal_actions",
    "explain_illegal", "take", "encode", "encode_bits", "seat_view", "observe", "render_state",
]  # fmt: skip


def _engine_call(call: str, value, batch: int) -> None:
    """A public call given `value` as its games or seats: it works (and then `value` was a
    valid index) or raises a ValueError naming the range; the other games are unchanged."""
    _count("engine calls")
    state = init(Rules(), batch, seeds=np.arange(batch, dtype=np.uint64))
    before = state.buffer.copy()
    game = SingleGame(Rules(), seed=1)
    calls = {
        "stop_games": lambda: engine.stop_games(state, value),
        "start_hand": lambda: engine.start_hand(state, value),
        "blind_allowed rows": lambda: engine.blind_allowed(state, value, 0),
        "blind_allowed seats": lambda: engine.blind_allowed(state, [0], value),
        "legal_actions": lambda: engine.legal_actions(state, value),
        "explain_illegal": lambda: engine.explain_illegal(state, value, 0),
        "take": lambda: state.take(value),
        "encode": lambda: encode(state, value),
        "encode_bits": lambda: encode_bits(state, value),
        "seat_view": lambda: seat_view(state, value),
        "observe": lambda: game.observe(value),
        "render_state": lambda: render_state(state, value),
    }
    try:
        calls[call]()
    except ValueError as exc:
        assert "indices" in str(exc) or "give one" in str(exc), exc
        np.testing.assert_array_equal(state.buffer, before)
        return
    if value is None and call in ("encode", "encode_bits", "seat_view"):
        return  # None: the seat to act (documented)
    size = 4 if "seat" in call or call in ("encode", "encode_bits", "observe") else batch
    flat = np.asarray(value).reshape(-1)  # it worked: every index was a valid one
    if flat.size == 0:
        return  # no game named: nothing done
    assert flat.dtype.kind in "iu" and ((flat >= 0) & (flat < size)).all(), (call, value)
    if call == "stop_games":  # only the games named stopped
        others = np.setdiff1d(np.arange(batch), flat)
        np.testing.assert_array_equal(state.buffer[others], before[others])


@fuzz(SMALL)
@given(st.sampled_from(ENGINE_CALLS), index_values, st.integers(1, 5))
def test_engine_calls_with_odd_indices(call, value, batch):
    _engine_call(call, value, batch)


INIT_ARGS = ["batch_size", "seeds", "dealer", "scores", "bags"]


def _init_call(arg: str, value) -> None:
    _count("init")
    kwargs = {"batch_size": 2, "seeds": [1, 2]}
    kwargs[arg] = value
    try:
        state = init(Rules(), kwargs.pop("batch_size"), **kwargs)
    except (ValueError, TypeError) as exc:  # DealError is a ValueError
        assert str(exc) and "\n" not in str(exc)
        return
    assert state.batch_size >= 1
    assert (np.abs(state.scores) <= 1_000_000).all() and (state.bags >= 0).all()


def _no_huge(arg: str, value):
    """A batch size that init would take but that would allocate gigabytes becomes one it
    refuses (10**12)."""
    if arg == "batch_size" and isinstance(value, int | np.integer) and 10**4 < value <= 1 << 24:
        return 10**12
    return value


@fuzz(SMALL)
@given(st.sampled_from(INIT_ARGS), values)
def test_init_with_odd_arguments(arg, value):
    _init_call(arg, _no_huge(arg, value))


# ----------------------------------------------------------------------------- envs
ENV_ARGS = ["rules", "seats", "episode", "zero_sum", "hand_limit", "illegal_reward", "obs_format"]


def _env_case(arg: str, value, seed, action) -> None:
    """SpadesEnv built with one odd argument, reset with an odd seed, stepped with an odd
    action: each either works or raises a documented error; an illegal or odd action
    never changes the game (it ends the episode, as the env documents)."""
    _count("envs")
    try:
        env = SpadesEnv(**{arg: value})
    except (ValueError, TypeError) as exc:  # RulesError is a ValueError
        assert str(exc) and "\n" not in str(exc)
        return
    try:
        env.reset(seed=seed)
    except (ValueError, TypeError, gym.error.Error) as exc:  # Gymnasium's for a bad seed
        assert str(exc) and "\n" not in str(exc)
        return
    try:
        _, reward, term, _, info = env.step(action)
    except ActionValueError as exc:
        assert str(exc)
        return
    assert math.isfinite(reward)
    if info.get("illegal"):
        assert term and not info["action_mask"].any()


@fuzz(SMALL)
@given(st.sampled_from(ENV_ARGS), values, st.one_of(ints, st.none()), values)
def test_gym_env_with_odd_arguments(arg, value, seed, action):
    _env_case(arg, value, seed, action)


def _pettingzoo_case(seed, action) -> None:
    _count("pettingzoo")
    env = raw_env()
    try:
        env.reset(seed=seed)
    except (ValueError, TypeError) as exc:
        assert str(exc)
        return
    try:
        env.step(action)
    except (ValueError, TypeError) as exc:  # IllegalActionError, ActionValueError
        assert str(exc) and "\n" not in str(exc)


@fuzz(SMALL)
@given(st.one_of(ints, st.none()), values)
def test_pettingzoo_env_with_odd_seeds_and_actions(seed, action):
    _pettingzoo_case(seed, action)


@fuzz(SMALL)
@given(values)
def test_hand_limit_values(value):
    _count("hand_limit")
    try:
        out = check_hand_limit(value)
    except ValueError:
        return
    assert out is None or 1 <= out <= 100_000


# ----------------------------------------------------------------------------- command line
#: few cases: each is a subprocess of a second or two
CLI_CASES = 4


@st.composite
def cli_args(draw) -> list[str]:
    command = draw(st.sampled_from(["demo", "tournament"]))
    args = [command]
    flags = draw(
        st.lists(
            st.sampled_from(["--option", "--seed", "--rules", "--agents", "--deals"]),
            min_size=1,
            max_size=3,
        )
    )
    for flag in flags:
        if flag == "--option":
            args += [flag, draw(option_lists())]
        elif flag == "--agents":
            if command == "demo":
                continue
            args += [flag, draw(agent_specs(LIGHT_AGENTS)) + ",random"]
        elif flag == "--rules":
            args += [flag, draw(st.one_of(st.sampled_from(PRESETS), texts))]
        elif flag == "--deals":
            if command == "demo":
                continue
            # a deal count that runs is kept at 2 (a large one would run for minutes)
            count = draw(st.one_of(ints.map(str), texts))
            args += [flag, "2" if _runs(count) else count]
        else:
            args += [flag, draw(st.one_of(ints.map(str), texts))]
    return args


def _runs(count: str) -> bool:
    """Whether `--deals COUNT` would be taken (1..MAX_DEALS)."""
    try:
        return 1 <= int(count) <= 1_000_000
    except ValueError:
        return False


def _cli_case(args: list[str], tmp: Path) -> None:
    """`spades ARGS`: refused with exit 2 and one stderr line, no traceback and no file
    left in the folder; or (rarely: the grammar aims at errors) it runs, and only
    its `--out` is written."""
    _count("command line")
    out_dir = tmp / "run"
    if args[0] == "tournament":  # a tournament that runs is kept small
        extra = ["--out", str(out_dir), "--no-progress", "--workers", "1", "--chunk", "2"]
        extra += [] if "--deals" in args else ["--deals", "2"]
    else:
        extra = ["--hands", "1"]
    if any("\x00" in a for a in args):
        return  # no process takes a NUL in its arguments
    before = set(os.listdir(tmp))
    # from the empty folder `tmp` (a file a command wrongly writes lands there), running
    # this checkout's code
    path = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    res = subprocess.run(
        [sys.executable, "-m", "experiments.cli", *args, *extra],
        cwd=tmp,
        env={**os.environ, "PYTHONPATH": path},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "Traceback" not in res.stderr, res.stderr
    if res.returncode == 0:
        return
    assert res.returncode == 2, res.stderr
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert set(os.listdir(tmp)) == before, "a refused command left a file"


@settings(max_examples=CLI_CASES, database=None, deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))  # fmt: skip
@given(cli_args())
@pytest.mark.cli
def test_command_line_options_and_specs(tmp_path_factory, args):
    _cli_case(args, tmp_path_factory.mktemp("cli"))


# ----------------------------------------------------------------------------- the slow run
@pytest.mark.slow
@pytest.mark.cli
def test_the_same_searches_with_a_large_budget(tmp_path_factory):
    """Every search above with LARGE examples each (random, not derandomized), the
    network agents' specs too, and more command-line cases."""
    big = fuzz(LARGE)
    searches = [
        given(option_lists(), presets)(_rules_from_text),
        given(option_dicts, presets)(_rules_from_values),
        given(st.lists(option_lists(), min_size=1, max_size=3))(_rules_build),
        given(bounded_rules(), finished_hands())(_scores_exactly),
        given(agent_specs(list(REGISTRY)))(_agent_spec),
        given(st.sampled_from(ENGINE_CALLS), index_values, st.integers(1, 5))(_engine_call),
        given(st.sampled_from(INIT_ARGS), values)(lambda arg, v: _init_call(arg, _no_huge(arg, v))),
        given(st.sampled_from(ENV_ARGS), values, st.one_of(ints, st.none()), values)(_env_case),
        given(st.one_of(ints, st.none()), values)(_pettingzoo_case),
    ]
    for search in searches:
        big(search)()
    cli = settings(max_examples=60, database=None, deadline=None,
                   suppress_health_check=list(HealthCheck))  # fmt: skip
    cli(given(cli_args())(lambda args: _cli_case(args, tmp_path_factory.mktemp("cli"))))()
