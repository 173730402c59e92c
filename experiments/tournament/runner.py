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
(`spades_env.files.atomic_write`) and never through a link.

**One driver.** `drive` is the one sequence every caller runs (the Python API
`run_tournament`, `spades tournament`, each rung of `spades evaluate`): hold the folder,
open or resume the run, repair the log, play what it lacks, summarise. What differs
between callers is said through `Hooks`: the log's repair notes, checks of a resumed run,
progress, and each unit's rows as they are logged.

**Interruption.** Ctrl-C reaches the driver alone (the local workers ignore SIGINT, and
the driver kills them: `experiments.tournament.local_pool`) and ends the run at once;
the log then ends with whole units, or a partial last unit that `--resume` cuts off
before playing what is missing.
"""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
from collections.abc import Callable, Iterable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.llm.store import RUN_DIR_ENV, run_stats
from agents.processes import check_workers
from agents.registry import AgentImportError, AgentSpecError, entry_of
from experiments.tournament import deals as deals_mod
from experiments.tournament import run_lock
from experiments.tournament.config import (
    RunContext,
    TournamentConfig,
    TournamentError,
    tournament_id,
)
from experiments.tournament.deals import DealSet
from experiments.tournament.local_pool import WorkerDiedError, ordered_results
from experiments.tournament.ray_backend import ray_results
from experiments.tournament.report import TournamentResult
from experiments.tournament.results_log import append_unit, iter_rows, repair, seal
from experiments.tournament.summary import summarize
from experiments.tournament.units import execute_unit, unit_rows
from spades_env.agent_calls import Limits, current_limits, set_limits
from spades_env.files import atomic_write, is_tmp_of

BACKENDS = ("local", "ray")
CONFIG_FILE, DEALS_FILE, LOG_FILE, SUMMARY_FILE = (
    "config.json",
    "deals.json",
    "log.jsonl",
    "summary.json",
)


def _worker_context(arg: tuple[str, TournamentConfig, str, Limits]) -> RunContext:
    """A local worker's context: the driver's config, a value it trusts (its agents and
    rules were parsed and checked once, in the driver), and the deals of the run folder;
    and its driver's limits on agent calls (the decision time limit,
    `spades_env.agent_calls`)."""
    run_dir, config, tid, agent_limits = arg
    set_limits(agent_limits)
    for agent in config.agents:
        try:
            entry_of(agent)  # a file, module or plugin imported once, here
        except AgentSpecError as exc:
            raise TournamentError(
                f"the tournament in {run_dir!r} plays an agent this process cannot import: "
                f"{exc}; then --resume again"
            ) from None
    return RunContext(config, tid, deals_mod.load(config.play_rules(), Path(run_dir) / DEALS_FILE))


# ----------------------------------------------------------------------------- run folder
def load_context(run_dir: Path) -> RunContext:
    """Reopen a run folder: its config, and its deals checked against the tournament id."""
    try:
        saved = json.loads((run_dir / CONFIG_FILE).read_text())
        config = TournamentConfig.from_dict(saved["config"])
        tid = saved["tournament"]
    except AgentImportError as exc:  # the file is fine: the agent's code is not here
        raise TournamentError(
            f"the tournament in {str(run_dir)!r} plays an agent this process cannot import: "
            f"{exc}; then --resume again"
        ) from None
    except AgentSpecError as exc:  # e.g. an option a newer release renamed
        raise TournamentError(
            f"the tournament in {str(run_dir)!r} plays an agent this installation cannot "
            f"build: {exc}"
        ) from None
    except (FileNotFoundError, NotADirectoryError):
        raise TournamentError(
            f"{str(run_dir)!r} holds no tournament ({CONFIG_FILE} is missing)"
        ) from None
    except (ValueError, KeyError, TypeError) as exc:
        raise TournamentError(
            f"{str(run_dir / CONFIG_FILE)!r} is damaged ({type(exc).__name__}: {exc})"
        ) from None
    deal_set = deals_mod.load(config.play_rules(), run_dir / DEALS_FILE)
    if tournament_id(saved["config"], deal_set) != tid:  # the config as it was written
        raise TournamentError(
            f"{str(run_dir / DEALS_FILE)!r} is not the deal set of tournament {tid} (it was "
            "replaced or edited); put the original back, or start a new run"
        )
    return RunContext(config, tid, deal_set)


@contextmanager
def run_folder(
    run_dir: Path, create: bool = False, deal_set: DealSet | None = None, *, fresh: bool = False
) -> Iterator[None]:
    """Hold the run folder's lock (`run_lock`) for the block; with `create`, make the
    folder first (refusing one that holds anything but a killed start's files, and, given
    `deal_set`, a deals.json of other deals). A folder made here is removed when the
    block fails before the log has a row (a refused run, or one whose first unit failed;
    not one stopped by Ctrl-C or an OSError, which --resume finishes), so a refused run
    leaves nothing behind; `fresh` says the caller has just made the (empty) folder, which
    is then removed the same way. A run refused by the lock removes nothing: the folder
    is the holder's."""
    if run_dir.exists() and not run_dir.is_dir():
        raise TournamentError(f"run folder {str(run_dir)!r} is a file; choose a folder")
    if create:
        _check_new_folder(run_dir)
        if deal_set is not None:
            _check_left_deals(run_dir, deal_set)
    elif run_dir.is_dir() and not _is_tournament_config(run_dir / CONFIG_FILE):
        # before the lock file is made: a folder of another kind gets nothing written
        if not (run_dir / CONFIG_FILE).exists():
            raise TournamentError(
                f"{str(run_dir)!r} holds no tournament ({CONFIG_FILE} is missing)"
            )
        raise TournamentError(
            f"{str(run_dir / CONFIG_FILE)!r} is not a tournament's config (damaged, or "
            "another kind of run); put the original back, or choose another --out"
        )
    made = run_dir if fresh else None
    if create and not run_dir.exists():
        top = run_dir
        while not top.parent.exists():
            top = top.parent
        try:
            run_dir.mkdir(parents=True)
            made = top
        except FileExistsError:  # another process made it just now: its lock decides
            pass
    elif not run_dir.is_dir():
        raise TournamentError(f"{str(run_dir)!r} holds no tournament (no such folder)")
    with run_lock.hold(run_dir):  # refused: nothing is removed, the folder is the holder's
        try:
            yield
        except BaseException as exc:
            log = run_dir / LOG_FILE
            no_rows = not log.exists() or log.stat().st_size == 0
            # a new run that failed before its first row for a reason a rerun meets again
            # (a bad agent value) leaves nothing; one stopped by Ctrl-C or by the system (a
            # full disk, a lost connection: OSError) stays, for --resume
            failed = no_rows and not isinstance(exc, KeyboardInterrupt | OSError)
            if made is not None and (failed or not (run_dir / CONFIG_FILE).exists()):
                shutil.rmtree(made, ignore_errors=True)
            raise


#: What a folder may hold when a new tournament starts in it: a start killed before its
#: config was written leaves these (and deals.json, checked against the new deals).
_START_LEFTOVERS = {run_lock.LOCK_FILE, DEALS_FILE}


def _is_start_leftover(name: str) -> bool:
    return name in _START_LEFTOVERS or any(is_tmp_of(name, f) for f in (DEALS_FILE, CONFIG_FILE))


def _check_new_folder(run_dir: Path) -> None:
    """A new tournament starts in a new or empty folder, or one a killed start left;
    a folder of another kind of run, or with anything else in it, is refused untouched."""
    if not run_dir.is_dir():
        return
    names = {p.name for p in run_dir.iterdir()}
    if CONFIG_FILE in names or LOG_FILE in names:
        if CONFIG_FILE in names and not _is_tournament_config(run_dir / CONFIG_FILE):
            raise TournamentError(
                f"run folder {str(run_dir)!r} holds another kind of run ({CONFIG_FILE} is not "
                "a tournament's); choose another --out"
            )
        raise TournamentError(
            f"run folder {str(run_dir)!r} already holds a tournament; "
            "add --resume to finish it, or choose another --out"
        )
    others = sorted(n for n in names if not _is_start_leftover(n))
    if others:
        shown = ", ".join(others[:3]) + (", ..." if len(others) > 3 else "")
        raise TournamentError(
            f"run folder {str(run_dir)!r} holds files that are not a tournament's ({shown}); "
            "choose a new or empty folder for --out"
        )


def _check_left_deals(run_dir: Path, deal_set: DealSet) -> None:
    """A deals.json already in a new run's folder (a killed start's) must be these deals."""
    old = run_dir / DEALS_FILE
    if old.is_file() and old.read_bytes() != deals_mod.encode(deal_set):
        raise TournamentError(
            f"run folder {str(run_dir)!r} holds the {DEALS_FILE} of another tournament; "
            "choose a new or empty folder for --out"
        )


def _is_tournament_config(path: Path) -> bool:
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError):
        return False
    return isinstance(saved, dict) and {"tournament", "config"} <= set(saved)


def create_run(run_dir: Path, config: TournamentConfig, deal_set: DealSet) -> RunContext:
    """Start a run folder: the deals, then the config (its presence marks a valid run)."""
    if (run_dir / CONFIG_FILE).exists() or (run_dir / LOG_FILE).exists():
        raise TournamentError(
            f"run folder {str(run_dir)!r} already holds a tournament; "
            "add --resume to finish it, or choose another --out"
        )
    run_dir.mkdir(parents=True, exist_ok=True)
    deal_set = deal_set.head(config.deals)
    _check_left_deals(run_dir, deal_set)
    deals_mod.save(deal_set, run_dir / DEALS_FILE)
    tid = tournament_id(config, deal_set)
    _write_json(run_dir / CONFIG_FILE, {"tournament": tid, "config": config.to_dict()})
    return RunContext(config, tid, deal_set)


def _write_json(path: Path, data: Any) -> None:
    atomic_write(path, json.dumps(data, indent=2) + "\n")


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


def pending_units(
    run_dir: Path, ctx: RunContext, on_note: Callable[[str], None] | None = None
) -> list[int]:
    """Repair the log (drop a partial last unit, units logged twice) and list the units
    still to play; `on_note` hears what was repaired beyond a torn end."""
    found = repair(run_dir / LOG_FILE, ctx.tournament)
    for note in found.notes():
        if on_note is not None:
            on_note(f"log {str(run_dir / LOG_FILE)!r}: {note}")
    return [u for u in range(ctx.config.num_units) if u not in found.done]


def play_units(
    run_dir: Path,
    ctx: RunContext,
    todo: list[int],
    workers: int | None = 2,
    on_unit: Callable[[int, int], None] | None = None,
    *,
    backend: str = "local",
    address: str | None = None,
    on_rows: Callable[[int, list[dict[str, Any]]], None] | None = None,
) -> None:
    """Play the units `todo`, appending each to the log as it completes, in order.

    `on_rows(unit, rows)` hears each unit's rows as they are logged, then `on_unit(unit,
    deals)` is called. `backend="ray"` plays
    the units as Ray tasks (`experiments.tournament.ray_backend`; `address` is the cluster's, and
    `workers` caps the tasks in flight); the driver writes the log either way.
    """
    if backend not in BACKENDS:
        raise TournamentError(f"--backend {backend!r}: choose one of {', '.join(BACKENDS)}")
    if not todo:
        return
    with _run_dir_env(run_dir):  # agents that keep records (llm:) find the run folder
        _play_units(run_dir, ctx, todo, workers, on_unit, backend, address, on_rows)


@contextmanager
def _run_dir_env(run_dir: Path) -> Iterator[None]:
    """`RUN_DIR_ENV` names the run folder for the block (worker processes inherit it)."""
    old = os.environ.get(RUN_DIR_ENV)
    os.environ[RUN_DIR_ENV] = str(Path(run_dir).resolve())
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(RUN_DIR_ENV, None)
        else:
            os.environ[RUN_DIR_ENV] = old


def _play_units(
    run_dir: Path,
    ctx: RunContext,
    todo: list[int],
    workers: int | None,
    on_unit: Callable[[int, int], None] | None,
    backend: str,
    address: str | None,
    on_rows: Callable[[int, list[dict[str, Any]]], None] | None,
) -> None:
    log = run_dir / LOG_FILE
    if backend == "ray":
        results = ray_results(ctx, todo, workers, address)
        try:
            _append_all(log, todo, results, ctx, on_unit, on_rows)
        finally:
            results.close()  # cancels the tasks in flight on an error, stops a Ray started here
        return
    workers = 2 if workers is None else workers
    try:
        check_workers(min(workers, len(todo)))  # each worker costs about 230 MB
    except ValueError as exc:
        raise TournamentError(str(exc)) from None
    if workers <= 1 or len(todo) == 1:
        _append_all(log, todo, (unit_rows(ctx, u) for u in todo), ctx, on_unit, on_rows)
        return
    arg = (str(run_dir), ctx.config, ctx.tournament, current_limits())
    results = ordered_results(todo, min(workers, len(todo)), _worker_context, execute_unit, arg)
    with closing(results):  # an interrupt or error kills the workers at once (local_pool)
        try:
            _append_all(log, todo, results, ctx, on_unit, on_rows)
        except WorkerDiedError as exc:
            raise _named(exc, ctx.config) from None


def _named(exc: WorkerDiedError, config: TournamentConfig) -> TournamentError:
    """A worker's death, with the agents and deals of the unit it was playing."""
    if exc.unit is None:
        return TournamentError(f"{exc}; the log keeps every finished unit: finish with --resume")
    i, j = config.pairs[exc.unit % len(config.pairs)]
    start = exc.unit // len(config.pairs) * config.chunk
    deals = f"deals {start}-{start + unit_deals(config, exc.unit) - 1}"
    return TournamentError(
        f"{exc} ({config.labels[i]} vs {config.labels[j]}, {deals}): one of these agents may "
        "have crashed the process or used up its memory; the log keeps every finished unit: "
        "finish with --resume"
    )


def _append_all(
    log: Path,
    todo: list[int],
    results: Iterable[list[dict[str, Any]]],
    ctx: RunContext,
    on_unit: Callable[[int, int], None] | None,
    on_rows: Callable[[int, list[dict[str, Any]]], None] | None = None,
) -> None:
    for unit, rows in zip(todo, results, strict=True):
        stamp = datetime.now(UTC).isoformat(timespec="milliseconds")
        for row in rows:
            row["logged_at"] = stamp
            seal(row)
        append_unit(log, rows)
        if on_rows is not None:
            on_rows(unit, rows)
        if on_unit is not None:
            on_unit(unit, unit_deals(ctx.config, unit))


def finish(run_dir: Path, ctx: RunContext) -> dict[str, Any]:
    """Summarise the complete log and write `summary.json` (the log is read row by row:
    the memory does not grow with its length)."""
    summary = summarize(iter_rows(run_dir / LOG_FILE), ctx.config.labels)  # streamed
    llm = run_stats(run_dir)  # llm: agents' requests, re-asks, fallbacks, tokens, seconds
    if llm:
        summary["llm"] = llm
    summary = {
        "tournament": ctx.tournament,
        "config": ctx.config.to_dict(),
        "play_rules": ctx.config.play_rules().to_dict(),
        **summary,
    }
    _write_json(run_dir / SUMMARY_FILE, summary)
    return summary


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
