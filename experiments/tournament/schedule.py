"""How a tournament's units are played: in order, by a pool of local processes or by
Ray tasks, each unit's rows appended to the log by the driver alone as it completes.

**Units.** The work is cut into units of `chunk` deals of one pair (both sides of each
deal in one batch). Unit `u` covers chunk `u // P` of pair `u % P` (P pairs), so a
partial run covers all pairs evenly. The agents of a unit are built with seeds drawn from
`(seed, agent indices, chunk)` alone, so a unit's rows do not depend on which process
plays it, or when: serial, parallel and resumed runs write the same rows, in unit order.

**Backends.** `local` plays the units in a pool of processes on this machine; `ray`
(`experiments.tournament.ray_backend`) as Ray tasks over a cluster. Both call
`execute_unit`, and in both the driver alone appends each unit's rows to the log, in
unit order. The units are played inside each agent class's `in_run_folder` (its run
hook, `agents.base.BaseAgent`), so that the agents of a kind that keeps files find the
run folder, in every worker.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from contextlib import ExitStack, closing
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agents.processes import check_workers
from agents.registry import AgentSpecError, agent_classes, entry_of, members_of
from experiments.tournament import deals as deals_mod
from experiments.tournament.config import RunContext, TournamentConfig, TournamentError
from experiments.tournament.folder import DEALS_FILE, LOG_FILE
from experiments.tournament.local_pool import WorkerDiedError, ordered_results
from experiments.tournament.ray_backend import ray_results
from experiments.tournament.results_log import append_unit, seal
from experiments.tournament.units import execute_unit, relocated, unit_rows
from spades_env.agent_calls import Limits, current_limits, set_limits

BACKENDS = ("local", "ray")


def _worker_context(arg: tuple[str, TournamentConfig, str, Limits]) -> RunContext:
    """A local worker's context: the driver's config, a value it trusts (its agents and
    rules were parsed and checked once, in the driver), and the deals of the run folder;
    and its driver's limits on agent calls (the decision time limit,
    `spades_env.agent_calls`)."""
    run_dir, config, tid, agent_limits = arg
    set_limits(agent_limits)
    for agent in members_of(config.agents):  # a team: its two members
        try:
            entry_of(agent)  # a file, module or plugin imported once, here
        except AgentSpecError as exc:
            raise TournamentError(
                f"the tournament in {run_dir!r} plays an agent this process cannot import: "
                f"{exc}; then --resume again"
            ) from None
    return RunContext(config, tid, deals_mod.load(config.play_rules(), Path(run_dir) / DEALS_FILE))


def unit_deals(config: TournamentConfig, unit: int) -> int:
    """How many deals unit `unit` plays (the last chunk may be short)."""
    chunk = unit // len(config.pairs)
    return min(config.chunk, config.deals - chunk * config.chunk)


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
    with ExitStack() as held:  # agent kinds that keep files find the run folder
        for kind in agent_classes(ctx.config.agents):
            held.enter_context(kind.in_run_folder(run_dir))
        _play_units(run_dir, ctx, todo, workers, on_unit, backend, address, on_rows)


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
    results = ordered_results(
        todo,
        min(workers, len(todo)),
        _worker_context,
        execute_unit,
        arg,
        relocate=functools.partial(relocated, ctx.config),
    )
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
