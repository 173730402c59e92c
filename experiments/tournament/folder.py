"""A tournament's run folder, from its start to its summary: made and locked, opened
new or resumed, its log repaired, and summarised at the end (the tournament's driver,
`experiments.tournament.runner`, runs these in order; `experiments.tournament.schedule`
plays the units in between).

**Run folder.** `config.json` (the tournament, written last at start), `deals.json` (the
deal set, reusable with `--deal-file`; a resume checks it against the tournament id),
`log.jsonl` (see `experiments.tournament.results_log`), `summary.json` (written at the
end), `.lock` (`experiments.tournament.run_lock`: one process at a time works in a run
folder; a second is refused, naming the holder). Every file is written whole
(`spades_env.tooling.files.atomic_write`) and never through a link. An agent kind may
keep files of its own there and add a section to the summary (its run hooks,
`agents.base.BaseAgent.in_run_folder` and `run_summary`).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agents.registry import AgentImportError, AgentSpecError, summary_sections
from experiments.tournament import deals as deals_mod
from experiments.tournament import run_lock
from experiments.tournament.config import (
    RunContext,
    TournamentConfig,
    TournamentError,
    tournament_id,
)
from experiments.tournament.deals import DealSet
from experiments.tournament.results_log import iter_rows, repair
from experiments.tournament.summary import summarize
from spades_env.tooling.files import atomic_write, is_tmp_of

CONFIG_FILE, DEALS_FILE, LOG_FILE, SUMMARY_FILE = (
    "config.json",
    "deals.json",
    "log.jsonl",
    "summary.json",
)


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
        raise TournamentError(_edited(run_dir, saved, deal_set, tid))
    return RunContext(config, tid, deal_set)


def fingerprint(config: dict[str, Any], deal_set: DealSet) -> dict[str, str]:
    """{field of the config, and `deals.json`: a short hash of its value as written}, kept
    in config.json so that a resume refused for an edit names the file and field edited."""

    def digest(value: Any) -> str:
        return hashlib.sha256(json.dumps(value, sort_keys=True).encode()).hexdigest()[:12]

    marks = {name: digest(value) for name, value in config.items()}
    marks[DEALS_FILE] = digest(deals_mod.to_dict(deal_set))
    return marks


def _edited(run_dir: Path, saved: dict[str, Any], deal_set: DealSet, tid: str) -> str:
    """Which file, and which field of config.json, no longer matches the tournament id."""
    marks = saved.get("fingerprint")
    where = f"tournament {tid} in {str(run_dir)!r}"
    fix = "put the original back, or start a new run"
    if not isinstance(marks, dict):  # a run folder of an earlier release: no field marks
        return f"{CONFIG_FILE} or {DEALS_FILE} of {where} was edited; {fix}"
    now = fingerprint(saved["config"], deal_set)
    fields = sorted(k for k in now.keys() | marks.keys() if now.get(k) != marks.get(k))
    deals_edited = DEALS_FILE in fields
    fields = [k for k in fields if k != DEALS_FILE]
    if fields:
        named = ", ".join(repr(f) for f in fields)
        return (
            f"{str(run_dir / CONFIG_FILE)!r}: field {named} differs from {where} as it was "
            f"started (the file was edited{f', and {DEALS_FILE} too' if deals_edited else ''}); "
            f"{fix}"
        )
    return (
        f"{str(run_dir / DEALS_FILE)!r} is not the deal set of {where} (it was replaced or "
        f"edited); {fix}"
    )


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
    data = config.to_dict()
    marks = fingerprint(data, deal_set)
    _write_json(run_dir / CONFIG_FILE, {"tournament": tid, "config": data, "fingerprint": marks})
    return RunContext(config, tid, deal_set)


def _write_json(path: Path, data: Any) -> None:
    atomic_write(path, json.dumps(data, indent=2) + "\n")


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


def finish(run_dir: Path, ctx: RunContext) -> dict[str, Any]:
    """Summarise the complete log and write `summary.json` (the log is read row by row:
    the memory does not grow with its length), with the section of each agent kind of
    the run that reports one (`run_section`, `run_summary`: `agents.base.BaseAgent`)."""
    config = ctx.config
    seat_agents = config.agent_names if config.has_teams else None  # per agent, per team
    summary = summarize(iter_rows(run_dir / LOG_FILE), config.labels, seat_agents)  # streamed
    for key, kind in summary_sections(ctx.config.agents).items():
        section = kind.run_summary(run_dir)  # an agent kind's own records of the run
        if section:
            summary[key] = section
    summary = {
        "tournament": ctx.tournament,
        "config": ctx.config.to_dict(),
        "play_rules": ctx.config.play_rules().to_dict(),
        **summary,
    }
    _write_json(run_dir / SUMMARY_FILE, summary)
    return summary
