"""What the three environments share: seeds, the default opponent, rewards, infos, spaces
(`env_common`, not `core/`: the compiled core is `spades_env/core/`).

The PettingZoo env (`spades_v0`), the single-seat Gymnasium env (`gym_env`) and the
native vector env (`vector_env`) are thin layers over the engine; this module holds the
few decisions they must make identically, so that a vector env and N single envs given
the same seeds and actions produce the same games (tests/env/test_vector_env.py):

- **Seeds.** `reset(seed=s)` keys a counter: episode `e` plays the game whose deal key is
  `game_seeds(seed_base(s), e)`. A vector env's sub-env `i` uses seed `s + i`, as
  Gymnasium's own vector envs do.
- **The default opponent** plays uniformly at random among the legal actions, through the
  engine's `random_legal_actions`, with uniforms keyed by (game seed, hand, decision)
  instead of drawn from a generator: the same game gets the same opponent moves in any
  batch, in any env.
- **Rewards** are the team's points of each finished hand (bag penalty included), or,
  zero-sum, those points minus the mean of the other teams' points.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
from gymnasium import spaces

from spades_env.agent_calls import AgentError
from spades_env.cards import NUM_ACTIONS
from spades_env.core.deal import splitmix64_int
from spades_env.core.vector import DECISION_MULT, EPISODE_MULT, HAND_MULT, UNIFORM_SALT
from spades_env.engine import PHASE_BASE, HandResult, random_legal_actions
from spades_env.observation import obs_blocks
from spades_env.records import hand_records
from spades_env.rules import MAX_HANDS, Rules
from spades_env.single import SingleGame
from spades_env.spec_resolver import resolve as resolve_spec
from spades_env.state import seed_array, shown, splitmix64

U64 = npt.NDArray[np.uint64]
_MASK64 = (1 << 64) - 1
# the keys of core/vector.py, which the compiled vector step derives the same way
_EPISODE_MULT = int(EPISODE_MULT)
_UNIFORM_SALT = int(UNIFORM_SALT)
_HAND_MULT = int(HAND_MULT)
_DECISION_MULT = int(DECISION_MULT)
_PHASE_BASE = [int(b) for b in PHASE_BASE]

#: What an illegal action costs in the Gymnasium envs and the wrapped PettingZoo env
#: (the episode also ends): lower than any one hand can score.
DEFAULT_ILLEGAL_REWARD = -1000.0
#: Game episodes are truncated after this many hands: random play never reaches the
#: target (its scores drift ever lower), so an unbounded game may never end.
DEFAULT_HAND_LIMIT = 100
#: Keys of `reset(options=...)` that set the starting position (the engine's `init`).
RESET_OPTIONS = ("deal", "dealer", "scores", "bags")
EPISODES = ("hand", "game")


# ----------------------------------------------------------------------------- seeds
def seed_base(seeds: npt.ArrayLike) -> U64:
    """(N,) uint64 episode-counter keys from non-negative integer seeds."""
    arr = np.atleast_1d(np.asarray(seeds))
    if arr.dtype.kind not in "iuO" or (arr.dtype.kind == "i" and (arr < 0).any()):
        raise ValueError(f"seeds must be whole numbers 0..2**64-1; got {shown(seeds)}")
    return splitmix64(seed_array(arr, arr.size))  # 2**64 and beyond refused, not wrapped


def game_seeds(base: U64, episode: npt.ArrayLike) -> U64:
    """(N,) uint64 deal key of episode `episode` for each counter key `base`."""
    with np.errstate(over="ignore"):
        ep = np.asarray(episode).astype(np.uint64) * np.uint64(_EPISODE_MULT)
        return splitmix64(base ^ ep)


# ----------------------------------------------------------------------------- new games
_TEMPLATES: dict[Rules, SingleGame] = {}


def new_single_game(rules: Rules, seed: int, position: Mapping[str, Any]) -> SingleGame:
    """A fresh `SingleGame` with deal key `seed`, equal to `SingleGame(rules, seed=seed)`.

    Building one through the engine's `init` and a full encoding costs milliseconds, which
    a hand-long episode cannot afford. Without a given position, clone a template and
    `restart` it; tests/env/test_gym_env.py checks the result equals the constructor's, field
    for field.
    """
    if position:
        return SingleGame(rules, seed=seed, **position)
    template = _TEMPLATES.get(rules)
    if template is None:
        template = _TEMPLATES[rules] = SingleGame(rules, seed=0)
    game = template.clone()
    game.restart(seed)
    return game


# ----------------------------------------------------------------------------- opponent
def keyed_uniform(
    seed: U64, hand_no: npt.NDArray[np.integer], decision: npt.NDArray[np.integer]
) -> npt.NDArray[np.float64]:
    """(B,) float64 in [0, 1): one uniform per (game seed, hand, decision of the hand)."""
    with np.errstate(over="ignore"):
        x = (
            (seed ^ np.uint64(_UNIFORM_SALT))
            + hand_no.astype(np.uint64) * np.uint64(_HAND_MULT)
            + decision.astype(np.uint64) * np.uint64(_DECISION_MULT)
        )
        z = splitmix64(x)
    return (z >> np.uint64(11)).astype(np.float64) * 2.0**-53


def keyed_uniform_one(seed: int, hand_no: int, decision: int) -> float:
    """`keyed_uniform` for one game, on Python ints (bit-identical)."""
    x = ((seed ^ _UNIFORM_SALT) + hand_no * _HAND_MULT + decision * _DECISION_MULT) & _MASK64
    return (splitmix64_int(x) >> 11) * 2.0**-53


class _Uniforms:
    """A stand-in for `Generator.random(n)` that returns uniforms computed beforehand."""

    def __init__(self, values: npt.NDArray[np.float64]) -> None:
        self.values = values

    def random(self, n: int) -> npt.NDArray[np.float64]:
        assert n == self.values.shape[0]
        return self.values


def random_opponent_actions(state: Any, games: Any = slice(None)) -> npt.NDArray[np.int64]:
    """The default opponent's action in `games` of a `State` (all by default; 0 where DONE)."""
    u = keyed_uniform(state.seed[games], state.hand_no[games], state.history_len[games])
    return random_legal_actions(state.legal[games], state.phase[games], _Uniforms(u))


def random_opponent_action_one(game: Any) -> int:
    """The default opponent's action in a `single.SingleGame` (same as the batched one)."""
    legal = game.legal
    count = legal.bit_count()
    u = keyed_uniform_one(game.seed, game.hand_no, game.history_len)
    k = min(int(u * count), count - 1)
    for _ in range(k):
        legal &= legal - 1  # drop the lowest set bit
    return _PHASE_BASE[game.phase] + (legal & -legal).bit_length() - 1


# ----------------------------------------------------------------------------- seats
def learner_seats(seats: int | Sequence[int], rules: Rules) -> tuple[int, ...]:
    """Validate the learner's seats: one seat, or the two seats of one partnership."""
    p, t = rules.num_players, rules.num_teams
    whole = (int, np.integer)
    if isinstance(seats, whole) and not isinstance(seats, bool):
        out: tuple[int, ...] = (int(seats),)
    elif (
        isinstance(seats, Sequence)
        and not isinstance(seats, str)
        and all(isinstance(s, whole) and not isinstance(s, bool) for s in seats)
    ):
        out = tuple(int(s) for s in seats)
    else:
        raise TypeError(
            f"seats must be one seat 0..{p - 1} or a pair of partners' seats; got {_shown(seats)}"
        )
    if not out or any(not 0 <= s < p for s in out) or len(set(out)) != len(out):
        raise ValueError(f"seats must be one seat 0..{p - 1} or two partners; got {_shown(seats)}")
    if len(out) > 1 and (len(out) != p // t or len({s % t for s in out}) != 1):
        raise ValueError(
            f"seats {out} are not one partnership; partners sit opposite (e.g. (0, 2) or (1, 3))"
        )
    return out


def opponent_table(opponents: Any, learner: tuple[int, ...], rules: Rules) -> dict[int, Any]:
    """Seat -> agent (None = the default random opponent) for every non-learner seat.

    `opponents` is None (all random), one agent for every other seat, a mapping
    {seat: agent}, or a sequence with one agent per non-learner seat in seat order. An
    agent is an object with `act(view, obs, mask)`, or a spec string (`"heuristic"`,
    `"pimc:worlds=16"`, `"path/to/bot.py:Class"`) that the layer above the envs builds
    (`spades_env.spec_resolver`: `agents.opponents.build`), once per distinct string.
    """
    others = [s for s in range(rules.num_players) if s not in learner]
    built: dict[str, Any] = {}
    if opponents is None:
        return dict.fromkeys(others)
    if isinstance(opponents, Mapping):
        extra = sorted(set(opponents) - set(others))
        if extra:
            raise ValueError(f"opponents given for seats {extra}, which the learner plays")
        return {s: _opponent(opponents.get(s), rules, built) for s in others}
    if isinstance(opponents, Sequence) and not isinstance(opponents, str):
        if len(opponents) != len(others):
            raise ValueError(
                f"{len(opponents)} opponents given for the {len(others)} seats {others}"
            )
        return {s: _opponent(o, rules, built) for s, o in zip(others, opponents, strict=True)}
    return dict.fromkeys(others, _opponent(opponents, rules, built))


def _opponent(value: Any, rules: Rules, built: dict[str, Any]) -> Any:
    """One opponent: None, an agent, or the agent a spec string names (built once)."""
    if isinstance(value, str):
        if value not in built:
            try:
                built[value] = resolve_spec(value, rules)
            except AgentError:  # the agent itself failed (built, then raised): it is named
                raise
            except ValueError as exc:  # an AgentSpecError: named as the parameter it came from
                raise type(exc)(f"opponents: {exc}") from None
        return built[value]
    if value is not None and not callable(getattr(value, "act", None)):
        raise TypeError(
            f"opponents: an opponent must have act(view, obs, mask) or be an agent spec such "
            f"as 'heuristic'; got {_shown(value)}"
        )
    return value


# ----------------------------------------------------------------------------- rewards
def team_reward(points: npt.NDArray, team: int, zero_sum: bool) -> npt.NDArray[np.float64]:
    """(K,) reward of `team` from (K, T) hand points."""
    own = points[:, team].astype(np.float64)
    if not zero_sum:
        return own
    others = (points.sum(axis=1) - points[:, team]) / (points.shape[1] - 1)
    return own - others


def hand_info(rules: Rules, result: HandResult, i: int, record: bool = True) -> dict[str, Any]:
    """The end-of-hand info of finished hand `i` of `result` (plain Python values)."""
    out: dict[str, Any] = {
        "hand_no": int(result.hand_no[i]),
        "bids": result.bids[i].tolist(),
        "blind": result.blind[i].tolist(),
        "tricks": result.tricks[i].tolist(),
        "hand_score": (result.points[i] - result.penalty[i]).tolist(),
        "scores": result.scores[i].tolist(),
        "bags": result.bags[i].tolist(),
        "game_over": bool(result.game_over[i]),
        "winner": int(result.winner[i]),
    }
    if record:
        one = HandResult(**{f: getattr(result, f)[i : i + 1] for f in result.__dataclass_fields__})
        out["record"] = hand_records(rules, one)[0]
    return out


# ----------------------------------------------------------------------------- spaces
#: Value range of each block of the encoding (observation.py); others are 0/1 flags.
_I16 = (-(2**15), 2**15 - 1)


def observation_bounds(rules: Rules) -> tuple[npt.NDArray[np.int16], npt.NDArray[np.int16]]:
    """Per-element (low, high) of the int16 encoding, for the Box spaces."""
    ranges = {
        "played_trick": (0, rules.hand_size),
        "tricks_won": (0, rules.hand_size),
        "scores": _I16,  # clipped to int16 by the encoder
        "bags": _I16,  # a position given to reset may hold any count
        "hand_no": (0, _I16[1]),
        "stock": (0, 52),  # RULES.md §6 two_player: cards left in the stock
    }
    low, high = [], []
    for name, size in obs_blocks(rules):
        lo, hi = ranges.get(name, (0, 1))
        low += [lo] * size
        high += [hi] * size
    return np.array(low, dtype=np.int16), np.array(high, dtype=np.int16)


def observation_space(rules: Rules) -> spaces.Box:
    low, high = observation_bounds(rules)
    return spaces.Box(low=low, high=high, dtype=np.int16)


#: `obs_format` of the Gymnasium envs: the int16 encoding (observation.py) or its packed
#: rows (obs_bits.py)
OBS_FORMATS = ("int16", "bits")


def obs_format_space(rules: Rules, obs_format: str) -> spaces.Box:
    """The observation space of one game in `obs_format` (checked)."""
    if obs_format not in OBS_FORMATS:
        raise ValueError(f"obs_format must be one of {', '.join(OBS_FORMATS)}; got {obs_format!r}")
    if obs_format == "int16":
        return observation_space(rules)
    from spades_env.obs_bits import bits_size

    return spaces.Box(low=0, high=255, shape=(bits_size(rules),), dtype=np.uint8)


def action_space() -> spaces.Discrete:
    """One `Discrete(NUM_ACTIONS)` for every decision (cards.py)."""
    return spaces.Discrete(NUM_ACTIONS)


def reset_position(options: Mapping[str, Any] | None) -> dict[str, Any]:
    """The starting position in `reset(options=...)`; other keys are ignored. Options
    that are not a mapping (a string, a list) are a `TypeError` saying what is expected."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(
            f"reset(options=...) takes a dict (keys {', '.join(RESET_OPTIONS)}) or None, "
            f"not {type(options).__name__} {options!r:.40}"
        )
    return {k: options[k] for k in RESET_OPTIONS if options.get(k) is not None}


def env_rules(rules: Rules | str | None) -> Rules:
    """The rules an env plays: `Rules()` for None, a `Rules` value as it is, or a preset
    of RULES.md §6 by name (`rules="jokers"`); an unknown name is a `RulesError` listing
    the presets."""
    if rules is None:
        return Rules()
    if isinstance(rules, Rules):
        return rules
    if isinstance(rules, str):
        try:
            return Rules.preset(rules)
        except ValueError as exc:  # RulesError: named as the parameter it came from
            raise type(exc)(f"rules={_shown(rules)}: {exc}") from None
    raise TypeError(f"rules must be a Rules value or a preset name; got {_shown(rules)}")


def _shown(value: object) -> str:
    """A value as an error quotes it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_hand_limit(hand_limit: int | None) -> int | None:
    """`hand_limit`: None (never truncate) or a whole number of hands 1..MAX_HANDS."""
    if hand_limit is None:
        return None
    if isinstance(hand_limit, bool) or not isinstance(hand_limit, int | np.integer):
        raise ValueError(f"hand_limit must be None or a whole number >= 1; got {hand_limit!r}")
    if not 1 <= hand_limit <= MAX_HANDS:
        raise ValueError(
            f"hand_limit must be None or 1..{MAX_HANDS} (RULES.md §6, bounds of the numeric "
            f"options); got {hand_limit}"
        )
    return int(hand_limit)


def check_reward(value: float, name: str = "illegal_reward") -> float:
    """A finite reward (a NaN or infinite one would poison every return it enters)."""
    try:
        out = float(value)
    except (TypeError, ValueError, OverflowError):  # OverflowError: an int past 1e308
        raise ValueError(f"{name} must be a finite number; got {value!r}") from None
    if not np.isfinite(out):
        raise ValueError(f"{name} must be a finite number; got {value!r}")
    return out


def check_episode(episode: str) -> str:
    if not isinstance(episode, str) or episode not in EPISODES:
        raise ValueError(f"episode must be one of {', '.join(EPISODES)}; got {episode!r}")
    return episode
