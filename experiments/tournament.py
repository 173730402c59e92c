"""Duplicate round-robin tournaments between agents, resumable and parallel.

**Duplicate.** Every deal is played twice per pair of agents, with the partnerships
swapped: on side 0 agent A holds North-South (seats 0, 2, team 0) and B East-West; on
side 1 the same cards, in the same seats, with the same dealer, are played by B at
North-South and A at East-West. Luck of the cards cancels in the sum of the two sides.

**Individual presets** (RULES.md §6 family, three_player, cutthroat: one-player teams).
The same two sides rotate the seats instead of the partnerships: on side 0 agent A holds
the even seats and B the odd ones, on side 1 the reverse, over the same deals. Every seat
of every deal is played once by each agent, so the luck of the cards cancels again; a
row's `teams`, `hand_score` and `scores` are then per agent slot (A's seats summed against
B's seats), and the ratings are per agent.

**Round-robin.** Every pair of agents in the list plays the whole deal set.

**Modes.** `hand`: deal-level duplicate; each game is one hand from 0-0. `game`: whole
games to the target; both sides of a deal start from the same game seed, so they get
the same deal sequence for as long as both games last (RULES.md §5). A game mode whose
rules set neither `max_hands` nor `lose_at` gets `max_hands = hand_cap` so that games
between weak agents (whose scores can drift down for ever) still end; the effective
rules are logged.

**Units.** The work is cut into units of `chunk` deals of one pair (both sides of each
deal in one batch). Unit `u` covers chunk `u // P` of pair `u % P` (P pairs), so a
partial run covers all pairs evenly. The agents of a unit are built with seeds drawn from
`(seed, agent indices, chunk)` alone, so a unit's rows do not depend on which process
plays it, or when: serial, parallel and resumed runs write the same rows, in unit order.

**Backends.** `local` plays the units in a pool of processes on this machine; `ray`
(`experiments.ray_backend`) as Ray tasks over a cluster. Both call `execute_unit`, and in
both the driver alone appends each unit's rows to the log, in unit order.

**Run folder.** `config.json` (the tournament, written last at start), `deals.json` (the
deal set, reusable with `--deal-file`), `log.jsonl` (see `experiments.results_log`),
`summary.json` (written at the end).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import multiprocessing as mp
import os
import traceback
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from itertools import combinations
from pathlib import Path
from typing import Any

import numpy as np

from agents.registry import check_agent_rules, make_agent, parse_spec
from experiments import deals as deals_mod
from experiments.deals import DealSet
from experiments.match import play_batch
from experiments.results_log import append_unit, read_rows, repair
from experiments.summary import summarize
from spades_env.rules import Rules
from spades_env.scoring import score_hand

MODES = ("hand", "game")
BACKENDS = ("local", "ray")
CONFIG_FILE, DEALS_FILE, LOG_FILE, SUMMARY_FILE = (
    "config.json",
    "deals.json",
    "log.jsonl",
    "summary.json",
)


class TournamentError(ValueError):
    """A tournament that cannot be set up or resumed; the message says how to fix it."""


@dataclass(frozen=True)
class TournamentConfig:
    """Everything that decides a tournament's rows (and nothing that does not)."""

    agents: tuple[str, ...] = ("random", "heuristic")
    mode: str = "hand"
    rules: dict[str, Any] = field(default_factory=lambda: Rules().to_dict())
    seed: int = 0
    deals: int = 300
    chunk: int = 50
    hand_cap: int = 100

    def __post_init__(self) -> None:
        if len(self.agents) < 2:
            raise TournamentError(f"--agents needs at least two agents, got {len(self.agents)}")
        rules = Rules.from_dict(self.rules)
        for spec in self.agents:
            parse_spec(spec)  # AgentSpecError names the unknown agent or parameter
            check_agent_rules(spec, rules)  # e.g. pimc refuses RULES.md §6 auction
        if self.mode not in MODES:
            raise TournamentError(f"--mode {self.mode!r}: choose one of {', '.join(MODES)}")
        if self.deals < 1:
            raise TournamentError(f"--deals must be at least 1, got {self.deals}")
        if self.chunk < 1:
            raise TournamentError(f"--chunk must be at least 1, got {self.chunk}")
        if self.hand_cap < 1:
            raise TournamentError(f"--hand-cap must be at least 1, got {self.hand_cap}")

    @property
    def labels(self) -> list[str]:
        """Agent names for the log: the specs, with repeats numbered (`random#2`)."""
        out: list[str] = []
        for spec in self.agents:
            k = sum(1 for s in self.agents[: len(out)] if s == spec)
            out.append(spec if k == 0 else f"{spec}#{k + 1}")
        return out

    @property
    def pairs(self) -> list[tuple[int, int]]:
        return list(combinations(range(len(self.agents)), 2))

    @property
    def num_chunks(self) -> int:
        return -(-self.deals // self.chunk)

    @property
    def num_units(self) -> int:
        return self.num_chunks * len(self.pairs)

    def play_rules(self) -> Rules:
        """The rules the engine plays (game mode may add the hand cap, see the module doc)."""
        rules = Rules.from_dict(self.rules)
        if self.mode == "game" and rules.max_hands is None and rules.lose_at is None:
            rules = rules.replace(max_hands=self.hand_cap)
        return rules

    def to_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["agents"] = list(self.agents)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TournamentConfig:
        d = dict(d)
        d["agents"] = tuple(d["agents"])
        return cls(**d)


def tournament_id(config: TournamentConfig, deal_set: DealSet) -> str:
    """A content hash: the same tournament (config and deals) always has the same id."""
    blob = json.dumps([config.to_dict(), deals_mod.to_dict(deal_set)], sort_keys=True)
    return "t-" + hashlib.sha1(blob.encode()).hexdigest()[:12]


def agent_seed(seed: int, agent: int, opponent: int, chunk: int) -> int:
    """The seed of `agent` in its unit against `opponent`: fixed by the unit alone."""
    return int(np.random.SeedSequence([seed, agent, opponent, chunk]).generate_state(1)[0])


# ----------------------------------------------------------------------------- one unit
@dataclass(frozen=True)
class RunContext:
    """What a process needs to play units: the config, its id and the deal set."""

    config: TournamentConfig
    tournament: str
    deal_set: DealSet


def unit_rows(ctx: RunContext, unit: int) -> list[dict[str, Any]]:
    """Play one unit (both sides of `chunk` deals of one pair) and return its log rows."""
    cfg = ctx.config
    pairs = cfg.pairs
    i, j = pairs[unit % len(pairs)]
    chunk = unit // len(pairs)
    start = chunk * cfg.chunk
    ds = ctx.deal_set.slice(start, min(start + cfg.chunk, cfg.deals))
    rules = cfg.play_rules()
    agents = [
        make_agent(cfg.agents[i], agent_seed(cfg.seed, i, j, chunk)),
        make_agent(cfg.agents[j], agent_seed(cfg.seed, j, i, chunk)),
    ]
    n = len(ds)
    # Games 2k (side 0) and 2k+1 (side 1) play deal k; agent 0 (= i) holds team 0 on side 0.
    side = np.tile([0, 1], n)
    if rules.partnerships:
        team_agent = np.stack([side, 1 - side], axis=1)  # (G, T) agent slot of each team
        seat_agent = team_agent[:, np.arange(rules.num_players) % rules.num_teams]
    else:  # RULES.md §6 one-player teams: A the even seats on side 0, the odd on side 1
        seat_agent = (np.arange(rules.num_players)[None, :] + side[:, None]) % 2
    played = play_batch(
        rules,
        agents,
        seat_agent,
        np.repeat(ds.game_seeds, 2),
        np.repeat(ds.dealers, 2),
        np.repeat(ds.hands, 2, axis=0),
        one_hand=cfg.mode == "hand",
    )
    names = [cfg.labels[i], cfg.labels[j]]
    played.sort(key=lambda gr: (gr[0], gr[1]["hand_no"]))
    rows = [
        _row(ctx, rules, unit, start + g // 2, g % 2, [names[a] for a in seat_agent[g]], rec)
        for g, rec in played
    ]
    for row in rows:
        row["unit_rows"] = len(rows)
    return rows


def _row(
    ctx: RunContext,
    rules: Rules,
    unit: int,
    deal: int,
    side: int,
    seats: list[str],
    rec: dict[str, Any],
) -> dict[str, Any]:
    """One log row: a hand, who sat where, and its outcome (with the full hand record)."""
    hs = score_hand(rules, [rec["bids"]], [rec["blind"]], [rec["tricks"]])
    t = rules.num_teams
    winner = rec["winner"]
    hand_score = [rec["scores"][k] - rec["scores_before"][k] for k in range(t)]
    teams, contract, made = seats[:t], hs.contract[0].tolist(), hs.made[0].tolist()
    per_team = {k: rec[k] for k in ("scores", "bags", "bags_gained")} | {"hand_score": hand_score}
    if not rules.partnerships:
        # One-player teams: fold the seats into the two agent slots of this side.
        slot = [[k for k in range(t) if k % 2 == m] for m in (0, 1)]
        per_team = {n: [sum(v[k] for k in ks) for ks in slot] for n, v in per_team.items()}
        contract = [sum(contract[k] for k in ks) for ks in slot]
        made = [all(made[k] for k in ks) for ks in slot]
        teams = [seats[0], seats[1]]
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
        "winner_agent": seats[winner] if winner >= 0 else None,
        "record": rec,
    }


_CTX: RunContext | None = None


def _worker_init(run_dir: str) -> None:
    global _CTX
    _CTX = load_context(Path(run_dir))


def execute_unit(ctx: RunContext, unit: int) -> list[dict[str, Any]]:
    """`unit_rows` in a worker, the one unit function of every backend (a process of the
    local pool, a Ray task). Errors cross back as plain picklable ones (an exception
    with a custom constructor, like `IllegalActionError`, would not unpickle)."""
    try:
        return unit_rows(ctx, unit)
    except ValueError as exc:
        raise TournamentError(f"unit {unit}: {type(exc).__name__}: {exc}") from None
    except Exception:
        raise RuntimeError(f"unit {unit} failed in a worker:\n{traceback.format_exc()}") from None


def _worker_unit(unit: int) -> list[dict[str, Any]]:
    assert _CTX is not None, "worker not initialised"
    return execute_unit(_CTX, unit)


# ----------------------------------------------------------------------------- run folder
def load_context(run_dir: Path) -> RunContext:
    try:
        saved = json.loads((run_dir / CONFIG_FILE).read_text())
    except FileNotFoundError:
        raise TournamentError(
            f"{str(run_dir)!r} holds no tournament ({CONFIG_FILE} is missing)"
        ) from None
    config = TournamentConfig.from_dict(saved["config"])
    deal_set = deals_mod.load(config.play_rules(), run_dir / DEALS_FILE)
    return RunContext(config, saved["tournament"], deal_set)


def create_run(run_dir: Path, config: TournamentConfig, deal_set: DealSet) -> RunContext:
    """Start a run folder: the deals, then the config (its presence marks a valid run)."""
    if (run_dir / CONFIG_FILE).exists() or (run_dir / LOG_FILE).exists():
        raise TournamentError(
            f"run folder {str(run_dir)!r} already holds a tournament; "
            "add --resume to finish it, or choose another --out"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    deal_set = deal_set.head(config.deals)
    deals_mod.save(deal_set, run_dir / DEALS_FILE)
    tid = tournament_id(config, deal_set)
    _write_json(run_dir / CONFIG_FILE, {"tournament": tid, "config": config.to_dict()})
    return RunContext(config, tid, deal_set)


def _write_json(path: Path, data: Any) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(tmp, path)


def unit_deals(config: TournamentConfig, unit: int) -> int:
    """How many deals unit `unit` plays (the last chunk may be short)."""
    chunk = unit // len(config.pairs)
    return min(config.chunk, config.deals - chunk * config.chunk)


def open_run(
    run_dir: Path,
    config: TournamentConfig | None = None,
    deal_set: DealSet | None = None,
    resume: bool = False,
) -> RunContext:
    """Start a new run folder, or (`resume`) reopen one. Without `deal_set`, the deals
    are generated from `config.seed`."""
    if resume:
        return load_context(run_dir)
    if config is None:
        raise TournamentError("a new tournament needs a config")
    if deal_set is None:
        deal_set = deals_mod.generate(config.play_rules(), config.seed, config.deals)
    return create_run(run_dir, config, deal_set)


def pending_units(run_dir: Path, ctx: RunContext) -> list[int]:
    """Repair the log (drop a partial last unit) and list the units still to play."""
    done = repair(run_dir / LOG_FILE, ctx.tournament)
    return [u for u in range(ctx.config.num_units) if u not in done]


def play_units(
    run_dir: Path,
    ctx: RunContext,
    todo: list[int],
    workers: int | None = 2,
    on_unit: Callable[[int, int], None] | None = None,
    *,
    backend: str = "local",
    address: str | None = None,
) -> None:
    """Play the units `todo`, appending each to the log as it completes, in order.

    `on_unit(unit, deals)` is called after each unit is written. `backend="ray"` plays
    the units as Ray tasks (`experiments.ray_backend`; `address` is the cluster's, and
    `workers` caps the tasks in flight); the driver writes the log either way.
    """
    if backend not in BACKENDS:
        raise TournamentError(f"--backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if not todo:
        return
    log = run_dir / LOG_FILE
    if backend == "ray":
        from experiments.ray_backend import ray_results

        results = ray_results(ctx, todo, workers, address)
        try:
            _append_all(log, todo, results, ctx, on_unit)
        finally:
            results.close()  # cancels the tasks in flight on an error, stops a Ray started here
        return
    workers = 2 if workers is None else workers
    if workers <= 1 or len(todo) == 1:
        _append_all(log, todo, (unit_rows(ctx, u) for u in todo), ctx, on_unit)
        return
    # spawn, not fork: the caller may run threads (a progress bar) that fork would copy.
    with mp.get_context("spawn").Pool(
        min(workers, len(todo)), initializer=_worker_init, initargs=(str(run_dir),)
    ) as pool:
        _append_all(log, todo, pool.imap(_worker_unit, todo), ctx, on_unit)


def _append_all(
    log: Path,
    todo: list[int],
    results: Iterable[list[dict[str, Any]]],
    ctx: RunContext,
    on_unit: Callable[[int, int], None] | None,
) -> None:
    for unit, rows in zip(todo, results, strict=True):
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        for row in rows:
            row["logged_at"] = stamp
        append_unit(log, rows)
        if on_unit is not None:
            on_unit(unit, unit_deals(ctx.config, unit))


def finish(run_dir: Path, ctx: RunContext) -> dict[str, Any]:
    """Summarise the complete log and write `summary.json`."""
    rows = read_rows(run_dir / LOG_FILE)
    summary = summarize(rows, ctx.config.labels)
    summary = {
        "tournament": ctx.tournament,
        "config": ctx.config.to_dict(),
        "play_rules": ctx.config.play_rules().to_dict(),
        **summary,
    }
    _write_json(run_dir / SUMMARY_FILE, summary)
    return summary


def run_tournament(
    run_dir: str | Path,
    config: TournamentConfig | None = None,
    deal_set: DealSet | None = None,
    *,
    resume: bool = False,
    workers: int | None = 2,
    on_unit: Callable[[int, int], None] | None = None,
    backend: str = "local",
    address: str | None = None,
) -> dict[str, Any]:
    """Run (or, with `resume`, finish) a tournament in `run_dir`; return its summary."""
    run_dir = Path(run_dir)
    ctx = open_run(run_dir, config, deal_set, resume)
    todo = pending_units(run_dir, ctx)
    play_units(run_dir, ctx, todo, workers, on_unit, backend=backend, address=address)
    return finish(run_dir, ctx)
