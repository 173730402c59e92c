"""One unit of a tournament: `chunk` deals of one pair, both sides of each deal.

`execute_unit` is the one unit function of every backend (a process of the local pool,
a Ray task); see `experiments.tournament.runner` for how units are cut and logged.
"""

from __future__ import annotations

import traceback
from typing import Any

import numpy as np

from agents.registry import make_agent
from experiments.tournament.config import RunContext, TournamentError
from experiments.tournament.match import play_batch, seat_players, unit_players
from spades_env.agent_calls import AgentError, described
from spades_env.duplicate import fold_made, fold_teams, seat_agents
from spades_env.rules import Rules
from spades_env.scoring import score_hand


def unit_rows(ctx: RunContext, unit: int) -> list[dict[str, Any]]:
    """Play one unit (both sides of `chunk` deals of one pair) and return its log rows."""
    cfg = ctx.config
    pairs = cfg.pairs
    i, j = pairs[unit % len(pairs)]
    chunk = unit // len(pairs)
    start = chunk * cfg.chunk
    ds = ctx.deal_set.slice(start, min(start + cfg.chunk, cfg.deals))
    rules = cfg.play_rules()
    names = [cfg.labels[i], cfg.labels[j]]  # the two entries (an agent, or a team)
    players, player_names, member_player = unit_players(cfg, i, j, chunk)
    try:
        agents = [make_agent(spec, seed) for spec, seed in players]
    except AgentError as exc:
        raise exc.relocated(f"unit {unit} (deals {start}-{start + len(ds) - 1})") from None
    n = len(ds)
    for agent in agents:  # the class as first built here (check_class_state)
        _FIRST_CLASS_STATE.setdefault(type(agent), _plain_class_state(type(agent)))
    # Games 2k (side 0) and 2k+1 (side 1) play deal k; agent 0 (= i) holds the even seats
    # on side 0 (team 0 with partnerships), the odd on side 1.
    seat_agent = seat_agents(rules, n)
    seat_player = seat_players(rules, seat_agent, member_player)  # a team: its two members
    try:
        with described(lambda game: game_where(cfg, unit, game)):  # for a watchdog's error
            played = play_batch(
                rules,
                agents,
                seat_player,
                np.repeat(ds.game_seeds, 2),
                np.repeat(ds.dealers, 2),
                np.repeat(ds.hands, 2, axis=0),
                one_hand=cfg.mode == "hand",
                names=player_names,
            )
    except AgentError as exc:  # game g of the batch is side g % 2 of deal start + g // 2
        if exc.game is None:
            raise
        raise exc.relocated(game_where(cfg, unit, exc.game)) from None
    for agent, name in zip(agents, player_names, strict=True):
        check_class_state(agent, name, f"unit {unit} (deals {start}-{start + n - 1})")
    played.sort(key=lambda gr: (gr[0], gr[1]["hand_no"]))
    rows = [
        _row(
            ctx,
            rules,
            unit,
            start + g // 2,
            g % 2,
            [player_names[a] for a in seat_player[g]],
            rec,
            [names[a] for a in seat_agent[g]],
        )
        for g, rec in played
    ]
    for row in rows:
        row["unit_rows"] = len(rows)
    return rows


def game_where(cfg: Any, unit: int, game: int) -> str:
    """Game `game` of unit `unit`'s batch in a tournament's words: games 2k and 2k+1
    play the unit's deal k, on sides 0 and 1."""
    start = unit // len(cfg.pairs) * cfg.chunk
    return f"deal {start + game // 2}, side {game % 2}"


def relocated(cfg: Any, err: AgentError, unit: int | None) -> AgentError:
    """An agent's error in unit `unit` (None: unknown), in the tournament's words."""
    if unit is None or err.game is None:
        return err
    return err.relocated(game_where(cfg, unit, err.game))


#: Packages whose classes are the project's own (their class attributes are not checked).
_OWN_PACKAGES = ("agents", "spades_env", "training", "experiments", "builtins")

#: Per agent class: its plain class attributes when this process first built it.
_FIRST_CLASS_STATE: dict[type, dict[str, str]] = {}


def _plain_class_state(cls: type) -> dict[str, str]:
    """The class attributes of plain values (numbers, strings, tuples, None) of an agent's
    own classes, as their reprs: what a counter or flag kept on the class looks like."""
    plain = (int, float, complex, str, bytes, bool, tuple, frozenset, type(None))
    out = {}
    for klass in cls.__mro__:
        if klass.__module__.split(".")[0] in _OWN_PACKAGES:
            continue
        for key, value in vars(klass).items():
            if not key.startswith("__") and isinstance(value, plain):
                out.setdefault(f"{klass.__name__}.{key}", repr(value))
    return out


def check_class_state(agent: Any, name: str, where: str) -> None:
    """Refuse an agent that keeps state on its class: a class attribute of a plain value
    that changed since this process first built the class. A unit's agents are built
    afresh, in whichever process plays it; state on the class would make the rows depend
    on which process played which units before (serial, parallel and resumed runs must
    write the same rows). A cache (a dict or list filled once) is not a plain value."""
    now = _plain_class_state(type(agent))
    first = _FIRST_CLASS_STATE.setdefault(type(agent), now)
    for key, value in now.items():
        if key in first and first[key] != value:
            raise AgentError(
                name,
                f"changed its class attribute {key} ({first[key]} -> {value}) while "
                "playing: state kept on the class makes the results depend on which "
                "process plays which deals; keep it on the instance",
                where=where,
            )


def _row(
    ctx: RunContext,
    rules: Rules,
    unit: int,
    deal: int,
    side: int,
    seats: list[str],
    rec: dict[str, Any],
    entries: list[str],
) -> dict[str, Any]:
    """One log row: a hand, who sat where (`seats`: each seat's agent; `entries`: each
    seat's entry, its team's name where a team of two agents plays), and its outcome
    (with the full hand record)."""
    hs = score_hand(rules, [rec["bids"]], [rec["blind"]], [rec["tricks"]])
    t = rules.num_teams
    winner = rec["winner"]
    hand_score = [rec["scores"][k] - rec["scores_before"][k] for k in range(t)]
    teams, contract, made = entries[:t], hs.contract[0].tolist(), hs.made[0].tolist()
    per_team = {k: rec[k] for k in ("scores", "bags", "bags_gained")} | {"hand_score": hand_score}
    if not rules.partnerships:
        # One-player teams: fold the seats into the two agent slots of this side
        # (spades_env.duplicate, the scoring training's evaluation shares).
        per_team = {n: fold_teams(rules, v) for n, v in per_team.items()}
        contract = fold_teams(rules, contract)
        made = fold_made(rules, made)
        teams = [entries[0], entries[1]]
    return {
        "tournament": ctx.tournament,
        "unit": unit,
        "unit_rows": 0,
        "mode": ctx.config.mode,
        "deal": deal,
        "side": side,
        "hand": rec["hand_no"],
        "seats": seats,
        "teams": teams,
        "rules": rec["rules"],
        "dealer": rec["dealer"],
        "bids": rec["bids"],
        "blind": rec["blind"],
        "tricks": rec["tricks"],
        "contract": contract,
        "made": made,
        "hand_score": per_team["hand_score"],
        "bags_gained": per_team["bags_gained"],
        "bags": per_team["bags"],
        "scores": per_team["scores"],
        "game_over": rec["game_over"],
        "winner": winner,
        "winner_agent": entries[winner] if winner >= 0 else None,
        "record": rec,
    }


def execute_unit(ctx: RunContext, unit: int) -> list[dict[str, Any]]:
    """`unit_rows` in a worker, the one unit function of every backend (a process of the
    local pool, a Ray task). Errors cross back as plain picklable ones (an exception
    with a custom constructor, like `IllegalActionError`, would not unpickle)."""
    try:
        return unit_rows(ctx, unit)
    except AgentError:  # already one line naming the agent, the deal and the seat
        raise
    except ValueError as exc:
        raise TournamentError(f"unit {unit}: {type(exc).__name__}: {exc}") from None
    except Exception:
        raise RuntimeError(f"unit {unit} failed in a worker:\n{traceback.format_exc()}") from None
