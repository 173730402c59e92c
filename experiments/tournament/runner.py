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
(`experiments.tournament.ray_backend`) as Ray tasks over a cluster. Both call `execute_unit`, and in
both the driver alone appends each unit's rows to the log, in unit order.

**Run folder.** `config.json` (the tournament, written last at start), `deals.json` (the
deal set, reusable with `--deal-file`; a resume checks it against the tournament id),
`log.jsonl` (see `experiments.tournament.results_log`), `summary.json` (written at the
end), `.lock` (`experiments.tournament.run_lock`: one process at a time works in a run
folder; a second is refused, naming the holder). Every file is written whole
(`spades_env.tooling.files.atomic_write`) and never through a link.

**One driver.** `drive` is the one sequence every caller runs (the Python API
`run_tournament`, `spades tournament`, each rung of `spades evaluate`): hold the folder,
open or resume the run, repair the log, play what it lacks, summarise. What differs
between callers is said through `Hooks`: the log's repair notes, checks of a resumed run,
progress, and each unit's rows as they are logged.

**Interruption.** Ctrl-C reaches the driver alone (the local workers ignore SIGINT, and
the driver kills them: `experiments.tournament.local_pool`) and ends the run at once;
the log then ends with whole units, or a partial last unit that `--resume` cuts off
before playing what is missing.

**Modules.** The run folder's life (made, locked, opened or resumed, its log repaired,
summarised) is `experiments.tournament.folder`; the scheduling of the units (workers,
backends, the log's appends, progress) `experiments.tournament.schedule`; this module is
the driver on top of both, and every public name of the two is importable from here.
The driver knows no agent kind: what a kind keeps in the run folder, and adds to the
summary, it says through its run hooks (`agents.base.BaseAgent`).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from experiments.tournament import deals as deals_mod
from experiments.tournament.config import RunContext, TournamentConfig, TournamentError
from experiments.tournament.deals import DealSet
from experiments.tournament.folder import (
    CONFIG_FILE,
    DEALS_FILE,
    LOG_FILE,
    SUMMARY_FILE,
    create_run,
    finish,
    load_context,
    open_run,
    pending_units,
    run_folder,
)
from experiments.tournament.report import TournamentResult
from experiments.tournament.schedule import BACKENDS, play_units, unit_deals

__all__ = [
    "BACKENDS",
    "CONFIG_FILE",
    "DEALS_FILE",
    "LOG_FILE",
    "SUMMARY_FILE",
    "Hooks",
    "OnUnit",
    "create_run",
    "drive",
    "finish",
    "load_context",
    "load_result",
    "open_run",
    "pending_units",
    "play_units",
    "run_folder",
    "run_tournament",
    "unit_deals",
]


#: `Hooks.progress`'s answer: called after each unit is logged with (unit, its deals)
OnUnit = Callable[[int, int], None]


@dataclasses.dataclass(frozen=True)
class Hooks:
    """What a caller of `drive` hears (each hook optional):

    - `note(text)`: what the log's repair found beyond a torn end (`pending_units`);
    - `opened(ctx)`: the run's context once opened, before anything is played (a caller
      checks a resumed run against what it wants here; raising stops the run);
    - `progress(ctx, done, total)`: as play starts, the deals x pairs already logged and
      in all; may return the `OnUnit` callback that hears each unit logged;
    - `rows(unit, rows)`: each unit's rows as they are logged, in unit order.
    """

    note: Callable[[str], None] | None = None
    opened: Callable[[RunContext], None] | None = None
    progress: Callable[[RunContext, int, int], OnUnit | None] | None = None
    rows: Callable[[int, list[dict[str, Any]]], None] | None = None


def drive(
    run_dir: str | Path,
    config: TournamentConfig | None = None,
    deal_set: DealSet | None = None,
    *,
    resume: bool = False,
    workers: int | None = 2,
    backend: str = "local",
    address: str | None = None,
    hooks: Hooks = Hooks(),
    fresh: bool = False,
) -> dict[str, Any]:
    """The one tournament driver: run (or, with `resume`, finish) a tournament in
    `run_dir` and return its summary (the `summary.json` dict).

    Holds the folder (`run_folder`: a new one is made, and removed again if the run is
    refused before its first row), opens the run (`open_run`; without `deal_set` the
    deals are generated from `config.seed`), repairs the log and plays the units it lacks
    (`pending_units`, `play_units`), then summarises (`finish`), telling `hooks` along
    the way. `workers`, `backend`, `address`: as `play_units`; `fresh`: as `run_folder`'s.
    A resume given a `config` or `deal_set` checks them against the run folder's, never
    ignoring them silently.
    """
    run_dir = Path(run_dir)
    if not resume and config is not None and deal_set is None:
        deal_set = deals_mod.generate(config.play_rules(), config.seed, config.deals)
    checked = None if deal_set is None or config is None else deal_set.head(config.deals)
    with run_folder(run_dir, create=not resume, deal_set=checked, fresh=fresh):
        ctx = open_run(run_dir, config, deal_set, resume)
        if hooks.opened is not None:
            hooks.opened(ctx)  # (a caller's own check of a resumed run speaks first)
        if resume:
            _check_same_run(run_dir, ctx, config, deal_set)
        todo = pending_units(run_dir, ctx, on_note=hooks.note)
        on_unit = None
        if hooks.progress is not None:
            total = ctx.config.deals * len(ctx.config.pairs)
            done = total - sum(unit_deals(ctx.config, u) for u in todo)
            on_unit = hooks.progress(ctx, done, total)
        play_units(
            run_dir,
            ctx,
            todo,
            workers,
            on_unit,
            backend=backend,
            address=address,
            on_rows=hooks.rows,
        )
        return finish(run_dir, ctx)


def _check_same_run(
    run_dir: Path, ctx: RunContext, config: TournamentConfig | None, deal_set: DealSet | None
) -> None:
    """A resume takes the tournament from its run folder: a `config` or `deal_set` given
    with it must be that tournament's, never silently ignored."""
    if config is not None and config != ctx.config:
        diff = [k for k, v in config.to_dict().items() if ctx.config.to_dict().get(k) != v]
        raise TournamentError(
            f"resume=True: the config differs from the tournament in {str(run_dir)!r} "
            f"({', '.join(diff)}); pass config=None to finish it, or start a new run folder"
        )
    mine = None if deal_set is None else deals_mod.encode(deal_set.head(ctx.config.deals))
    if mine is not None and mine != deals_mod.encode(ctx.deal_set):
        raise TournamentError(
            f"resume=True: deal_set differs from the deals of {str(run_dir)!r}; pass "
            "deal_set=None to finish it, or start a new run folder"
        )


def run_tournament(
    run_dir: str | Path,
    config: TournamentConfig | None = None,
    deal_set: DealSet | None = None,
    *,
    resume: bool = False,
    workers: int | None = 2,
    on_unit: OnUnit | None = None,
    backend: str = "local",
    address: str | None = None,
    hooks: Hooks | None = None,
) -> TournamentResult:
    """Run (or, with `resume`, finish) a tournament in `run_dir`; return its summary as a
    `TournamentResult`: the `summary.json` dict, which prints the command line's tables
    (`print(result)`) and gives `margins`, `ratings` and `bids` as data frames.

    `on_unit(unit, deals)` hears each unit logged (a shorthand for `Hooks.progress`);
    `hooks` as `drive`'s."""
    if hooks is None:
        hooks = Hooks()
    if on_unit is not None:
        hooks = dataclasses.replace(hooks, progress=lambda _ctx, _done, _total: on_unit)
    summary = drive(
        run_dir,
        config,
        deal_set,
        resume=resume,
        workers=workers,
        backend=backend,
        address=address,
        hooks=hooks,
    )
    return TournamentResult(summary, Path(run_dir))


def load_result(run_dir: str | Path) -> TournamentResult:
    """The result of a finished run folder, read from its `summary.json`."""
    run_dir = Path(run_dir)
    path = run_dir / SUMMARY_FILE
    if not path.exists():
        raise TournamentError(
            f"{str(run_dir)!r} has no {SUMMARY_FILE}: the tournament is not finished"
        )
    return TournamentResult(json.loads(path.read_text()), run_dir)
