"""The Ray backend of `spades tournament` (`--backend ray`): work units as Ray tasks.

The tournament is the same as with the local backend (`experiments.tournament.runner`): the same
units, each played by the same function (`execute_unit`), the same log, written by the
driver alone, one unit at a time, in unit order, so the log and the summary are identical
to the local backend's for the same seed (apart from the `logged_at` stamps).

**Tasks.** The run context (config and deal set) goes into Ray's object store once; each
unit is one task of one CPU, which returns the unit's rows to the driver. The driver keeps
a window of tasks in flight and takes their results in unit order, appending each unit to
the log (fsynced, as always) before it moves on; progress is reported on the driver.

**Failures.** A task whose worker process or node dies is run again by Ray, up to
`MAX_RETRIES` times (`max_retries`). A dead worker never wrote anything (only the driver
writes), and a unit's rows reach the log once, when the driver takes its result, so the
log holds exactly one row per (deal, side) whatever dies. An error raised by the unit
itself (a bad agent, an illegal move) is deterministic: it is not retried, and it stops
the run with the unit's message. If the driver itself dies, `--resume` finishes the run.

**Cluster.** Without `address` a local Ray is started (with `workers` CPUs, default all)
and shut down at the end; with `address` (`auto`, or `HOST:PORT`) the driver joins a
running cluster, whose machines must all have the project installed the same way
(`bash .ci/setup`, plus the `ray` extra), since the tasks import it. If Ray is already
initialised in this process, that connection is used as it is.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from typing import Any

from experiments.tournament.config import RunContext, TournamentError
from experiments.tournament.units import execute_unit
from spades_env.agent_calls import Limits, current_limits, set_limits

#: Times a unit's task is run again after its worker (or node) died.
MAX_RETRIES = 3
#: The unit function the tasks call (a test swaps in one that kills its worker).
UNIT_FN: Callable[[RunContext, int], list[dict[str, Any]]] = execute_unit
INSTALL_HINT = "install the ray extra: pip install -e '.[ray]'"


def require_ray() -> Any:
    """The `ray` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise TournamentError(f"--backend ray: {INSTALL_HINT}") from None
    return ray


def _run_unit(
    unit_fn: Callable[[RunContext, int], list[dict[str, Any]]],
    ctx: RunContext,
    unit: int,
    agent_limits: Limits | None = None,
) -> list[dict[str, Any]]:
    """The body of a unit's Ray task, under the driver's limits on agent calls."""
    if agent_limits is not None:
        set_limits(agent_limits)
    return unit_fn(ctx, unit)


def ray_results(
    ctx: RunContext,
    todo: list[int],
    workers: int | None = None,
    address: str | None = None,
) -> Generator[list[dict[str, Any]], None, None]:
    """The rows of each unit of `todo`, in order, played as Ray tasks.

    `workers`: with a Ray started here, its CPUs (default: all of this machine's); with a
    cluster (`address`, or Ray already initialised), the most tasks in flight (default:
    twice the cluster's CPUs).
    """
    ray = require_ray()
    started = False
    refs: dict[int, Any] = {}
    if not ray.is_initialized():
        options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
        if address is None:
            options["num_cpus"] = workers
        ray.init(address=address, **options)
        started = True
    try:
        cpus = max(1, int(ray.cluster_resources().get("CPU", 1)))
        window = 2 * cpus if started or workers is None else workers
        task = ray.remote(num_cpus=1, max_retries=MAX_RETRIES)(_run_unit)
        ctx_ref, fn_ref = ray.put(ctx), ray.put(UNIT_FN)
        queue = iter(todo)

        def submit() -> None:
            unit = next(queue, None)
            if unit is not None:
                refs[unit] = task.remote(fn_ref, ctx_ref, unit, current_limits())

        for _ in range(window):
            submit()
        for unit in todo:
            ref = refs.pop(unit)
            try:
                rows = ray.get(ref)
            except ray.exceptions.RayTaskError as exc:
                cause = getattr(exc, "cause", None)
                raise (cause if isinstance(cause, Exception) else exc) from None
            except ray.exceptions.WorkerCrashedError:
                raise TournamentError(
                    f"unit {unit}: its Ray worker died {MAX_RETRIES + 1} times; "
                    "the log holds the units before it: finish with --resume"
                ) from None
            submit()
            yield rows
    finally:
        for ref in refs.values():  # the run stopped early: drop the units in flight
            ray.cancel(ref, force=True)
        if started:
            ray.shutdown()
