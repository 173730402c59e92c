"""The evaluation protocol (`spades evaluate SPEC`): one fixed, versioned ladder a paper can
cite and a user can run on their own agent.

**Protocol 1.** Standard rules (RULES.md), hand mode, duplicate deals (both sides of
every deal; each rung is played by the tournament's one driver, `runner.drive`). The
candidate plays one two-agent tournament per rung against each opponent of `LADDER`, on
the first `deals` deals of one published deal set: `DEAL_SEED` through
`experiments.tournament.deals.generate`, whose SHA-256 (of the deal-set file's JSON,
`deal_set_hash`) every result and table prints, so a reader can check they were played
on the same cards. Game seed `i` depends only on the seed and `i`, so every rung plays a
prefix of the same set.

**Deal counts.** Each rung's count makes the 95% CI of its margin about
±`TARGET_HALF_WIDTH` points per deal: n = (1.96 sd / 2.5)^2, in whole chunks of 50, with
sd the per-deal standard deviation of the duplicate margin against that opponent. The sd
was measured on a pilot, a 200-deal round robin of heuristic, learned, random and
pimc:worlds=64 (`spades tournament --agents "heuristic;learned;random;pimc:worlds=64"
--deals 200 --seed 20261203 --out PILOT`; `python -m experiments.tournament.ladder_protocol
PILOT` prints the counts a pilot gives); each rung takes the largest sd over the
candidates tried, so the interval holds for candidates from random to PIMC strength.

**Time.** The deal counts are fixed and the time is what gives way: it depends on the
candidate's speed. Estimated from the CPU time per duplicate deal of each pairing, the
ladder is about 19 CPU minutes for a candidate as fast as `learned` (PIMC's own moves are
two thirds of it), about 10 minutes of wall time on 2 cores; about 6 for random or
heuristic, 12 for ppo, 15 for ismcts:iterations=1000 and 25 for pimc:worlds=64 as the
candidate. A slower candidate takes longer; `--workers` or `--backend ray` spread it.

`run_evaluation(spec, folder)` plays it (what `spades evaluate` calls): one run folder per
rung under the folder, resumable as any tournament's, and `result.json` at the end.

A change of opponents, counts, rules or deal seed is a new `VERSION`; results of
different versions are never put in one table (`spades leaderboard` refuses).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agents.registry import AgentSpec, TeamSpec, parse_entry, summary_sections
from experiments.tournament import deals as deals_mod
from experiments.tournament.config import RunContext, TournamentConfig, TournamentError
from experiments.tournament.deals import DealSet
from experiments.tournament.runner import CONFIG_FILE, Hooks, OnUnit, drive
from spades_env.rules import Rules
from spades_env.tooling.files import (
    LOCK_FILE,
    FolderLockedError,
    UnsafeFileError,
    atomic_write,
    lock_folder,
    refuse_link,
)

PROTOCOL = "spades-evaluate"
VERSION = 1
#: (version, what it fixes) of every protocol version, oldest first; a new version adds a
#: line here (docs/results/protocol.md shows this list)
VERSION_HISTORY: tuple[tuple[int, str], ...] = (
    (
        1,
        "standard rules, hand mode, duplicate deals of the deal set of seed 262026; against "
        "random (2300 deals), heuristic (1450), pimc:worlds=64 (2300) and learned (2100), the "
        "counts of a 95% CI of about ±2.5 points per deal from a 200-deal pilot's sd",
    ),
)
DEAL_SEED = 26_2026
TARGET_HALF_WIDTH = 2.5
CHUNK = 50
#: an evaluation folder: the header (what fixes it, written first) and the result
HEADER_FILE, RESULT_FILE = "evaluation.json", "result.json"


@dataclass(frozen=True)
class Rung:
    """One opponent of the ladder: its spec, deals, and the pilot's sd they come from."""

    opponent: str
    deals: int
    pilot_sd: float


#: the ladder of protocol 1 (sd: per-deal margin sd measured on the pilot, see above)
LADDER: tuple[Rung, ...] = (
    Rung("random", 2300, 60.54),  # by candidate: heuristic 48.4, learned 58.1, pimc 60.5
    Rung("heuristic", 1450, 48.41),  # learned 45.2, pimc 47.6, random 48.4
    Rung("pimc:worlds=64", 2300, 60.54),  # heuristic 47.6, learned 51.1, random 60.5
    Rung("learned", 2100, 58.13),  # heuristic 45.2, pimc 51.1, random 58.1
)


#: the shipped agents the leaderboard lists, as their specs (`agents.registry`)
SHIPPED = (
    "random", "heuristic", "pimc:worlds=64", "ismcts:iterations=1000", "learned", "learned2",
    "ppo", "search",
)  # fmt: skip


def deals_for(sd: float, half_width: float = TARGET_HALF_WIDTH, chunk: int = CHUNK) -> int:
    """Duplicate deals for a 95% CI of ±`half_width` at per-deal sd `sd`, in whole chunks."""
    n = (1.959963984540054 * sd / half_width) ** 2
    return max(chunk, chunk * math.ceil(n / chunk))


def rules() -> Rules:
    return Rules()


def deal_set(n: int | None = None) -> DealSet:
    """The published deal set (its first `n` deals; default: all the ladder needs)."""
    return deals_mod.generate(rules(), DEAL_SEED, n or max(r.deals for r in LADDER))


def deal_set_hash(deals: DealSet | None = None) -> str:
    """SHA-256 of the deal set as its file holds it (`deals.json`, keys sorted)."""
    blob = json.dumps(deals_mod.to_dict(deals or deal_set()), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def slug(spec: str) -> str:
    """A folder-safe name for an agent spec."""
    return re.sub(r"[^A-Za-z0-9._=-]+", "_", spec).strip("_") or "agent"


def rung_config(candidate: str | AgentSpec | TeamSpec, rung: Rung, deals: int) -> TournamentConfig:
    return TournamentConfig(
        agents=(candidate, rung.opponent),
        mode="hand",
        rules=rules(),
        seed=DEAL_SEED,
        deals=deals,
        chunk=CHUNK,
    )


def rung_dir(root: Path, k: int, rung: Rung) -> Path:
    return root / f"{k + 1}-{slug(rung.opponent)}"


def header_of(candidate: str, test_deals: int | None) -> dict[str, Any]:
    """What fixes an evaluation (written first in its folder; a resume checks it)."""
    return {
        "protocol": PROTOCOL,
        "version": VERSION,
        "candidate": candidate,
        "deal_seed": DEAL_SEED,
        "deal_set_sha256": deal_set_hash(),
        "test_deals": test_deals,
    }


def rung_deals(rung: Rung, test_deals: int | None) -> int:
    return rung.deals if test_deals is None else min(test_deals, rung.deals)


#: the bid-accuracy figures a rung reports for each side (`bid_stats.bid_lines`): nils
#: bid and made, the opponents' nils faced and set, contracts set, bags per team-hand
PLAY_FIGURES = (
    "seat_hands", "nil_attempts", "nil_success", "opponent_nils", "nils_set", "contracts",
    "set_rate", "bags_per_hand",
)  # fmt: skip


def rung_entry(
    rung: Rung,
    summary: dict[str, Any],
    candidate_label: str,
    agents: Iterable[AgentSpec | str | dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The candidate's margin over the rung's opponent (points per deal, 95% CI), both
    sides' nil and contract figures, and the candidate's entry of each agent kind's
    section of the summary (`run_summary`, a run hook of `agents.base.BaseAgent`);
    `agents`: the rung's parsed agents (default: read from the summary's config)."""
    (pair,) = summary["pairs"]
    lines = {b["agent"]: b for b in summary["bids"]}
    other = pair["b"] if pair["a"] == candidate_label else pair["a"]
    figures = {
        side: {k: lines[label].get(k) for k in PLAY_FIGURES}
        for side, label in (("candidate", candidate_label), ("opponent", other))
    }
    m = pair["margin"]
    sign = 1 if pair["a"] == candidate_label else -1
    ci = None if m["ci"] is None else sorted(sign * x for x in m["ci"])
    entry = {
        "opponent": rung.opponent,
        "deals": pair["deals"],
        "margin": None if m["mean"] is None else sign * m["mean"],
        "ci": ci,
        "sd": m["sd"],
        "tournament": summary["tournament"],
        "play": figures,
    }
    if agents is None:
        agents = summary.get("config", {}).get("agents", ())
    # a team's members report under their own names: its first member's (the candidate)
    names = [candidate_label, *summary.get("teams", {}).get(candidate_label, ())]
    for key in summary_sections(agents):  # e.g. a language model's requests
        found = [n for n in names if n in summary.get(key, {})]
        if found:
            entry[key] = summary[key][found[0]]
    return entry


def check_header(saved: dict[str, Any], wanted: dict[str, Any], folder: Path) -> None:
    for key, value in wanted.items():
        if saved.get(key) != value:
            raise TournamentError(
                f"{str(folder)!r} holds an evaluation with another {key} "
                f"({saved.get(key)!r}, not {value!r}); drop --resume or choose another --dir"
            )


def _check_folder(root: Path, resume: bool) -> None:
    """What can be refused before anything is written in the evaluation folder."""
    if root.exists() and not root.is_dir():
        raise TournamentError(f"--dir {str(root)!r} is a file; choose a folder")
    if (root / HEADER_FILE).exists() or (root / HEADER_FILE).is_symlink():
        return
    if resume:
        raise TournamentError(f"{str(root)!r} holds no evaluation ({HEADER_FILE} is missing)")
    if root.exists() and any(p.name != LOCK_FILE for p in root.iterdir()):
        raise TournamentError(f"--dir {str(root)!r} is not empty; choose a new folder")


def _read_header(path: Path) -> dict[str, Any] | None:
    """The saved header, or None when the file is damaged (empty: a full disk's)."""
    try:
        saved = json.loads(path.read_text())
    except (ValueError, UnicodeDecodeError):
        return None
    return saved if isinstance(saved, dict) else None


def _open_folder(
    root: Path,
    header: dict[str, Any],
    resume: bool,
    on_note: Callable[[str], None] | None = None,
) -> None:
    """Write the header of a new evaluation, or check a resumed one's. A damaged header
    (cut short by a full disk) is written again from the same spec when no rung has
    started, or on `resume` (each rung's own config is still checked), saying so."""
    path = root / HEADER_FILE
    if path.is_symlink():
        refuse_link(path, f"{str(path)!r}")
    if path.exists():
        saved = _read_header(path)
        started = any(p.is_dir() and (p / CONFIG_FILE).exists() for p in root.iterdir())
        if saved is None and (resume or not started):
            if on_note is not None:
                on_note(f"{str(path)!r} was damaged (empty or cut short); written again")
            atomic_write(path, json.dumps(header, indent=2) + "\n")
            return
        if not resume:
            more = "" if saved is not None else f" (its {HEADER_FILE} is damaged)"
            raise TournamentError(
                f"{str(root)!r} already holds an evaluation{more}; add --resume to finish "
                "it, or choose another --dir"
            )
        assert saved is not None
        check_header(saved, header, root)
        return
    atomic_write(path, json.dumps(header, indent=2) + "\n")


def run_evaluation(
    spec: str,
    root: str | Path,
    *,
    resume: bool = False,
    test_deals: int | None = None,
    workers: int | None = 2,
    backend: str = "local",
    address: str | None = None,
    on_rung: Callable[[str, int, int], OnUnit | None] | None = None,
    on_start: Callable[[], None] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Play (or, with `resume`, finish) the ladder for `spec` in the folder `root`, write
    `result.json` there and return the result (JSON-ready).

    `test_deals` caps every rung's deals: for tests only, and marked in the result as not
    the protocol. `on_rung(opponent, deals, done)` is called as each rung starts and may
    return the `on_unit(unit, deals)` progress callback (`runner.OnUnit`);
    `on_start()` once the folder is checked; `on_note(line)` hears what was repaired.
    `workers`, `backend`, `address`: as `runner.run_tournament`. One process works in an
    evaluation folder at a time (`.lock`); a second is refused in one line.
    """
    root = Path(root)
    header = header_of(spec, test_deals)
    candidate = parse_entry(spec)  # read once, for every rung (an agent, or a team)
    configs = [rung_config(candidate, r, rung_deals(r, test_deals)) for r in LADDER]
    # (the configs check the spec and its rules before any folder is made)
    # a folder that holds a lock file may be another evaluation's, just begun: its lock
    # is taken before the folder is judged, so a second process is told "in use", not
    # "not empty"; a folder without one is judged before anything is written into it
    locked_first = (root / LOCK_FILE).exists()
    if not locked_first:
        _check_folder(root, resume)
    root.mkdir(parents=True, exist_ok=True)
    try:
        with lock_folder(root, "evaluation folder", "wait for it to end, or choose another --dir"):
            if locked_first:
                _check_folder(root, resume)
            return _evaluate(root, header, configs, resume, workers, backend, address,
                             on_rung, on_start, on_note)  # fmt: skip
    except FolderLockedError as exc:
        raise TournamentError(str(exc)) from None
    except UnsafeFileError as exc:
        raise TournamentError(f"evaluation folder {str(root)!r}: {exc}") from None


def _evaluate(
    root: Path,
    header: dict[str, Any],
    configs: list[TournamentConfig],
    resume: bool,
    workers: int | None,
    backend: str,
    address: str | None,
    on_rung: Callable[[str, int, int], OnUnit | None] | None,
    on_start: Callable[[], None] | None,
    on_note: Callable[[str], None] | None,
) -> dict[str, Any]:
    """`run_evaluation` in its locked folder."""
    _open_folder(root, header, resume, on_note)
    if on_start is not None:
        on_start()
    deals = deal_set()
    rungs, started = [], time.monotonic()
    for k, (rung, config) in enumerate(zip(LADDER, configs, strict=True)):
        run_dir = rung_dir(root, k, rung)
        summary = drive(
            run_dir,
            config,
            deals,
            resume=(run_dir / CONFIG_FILE).exists(),  # a rung to finish
            workers=workers,
            backend=backend,
            address=address,
            hooks=_rung_hooks(rung, config, run_dir, on_rung),
        )
        entry = rung_entry(rung, summary, config.labels[0], config.agents)
        rungs.append({**entry, "run": str(run_dir)})
    result = {
        **header,
        "official": header.get("test_deals") is None,
        "rules": "standard",
        "mode": "hand",
        "metric": "points per deal (candidate - opponent), 95% t-interval over duplicate deals",
        "spades_version": spades_version(),
        "rungs": rungs,
        "seconds_this_run": round(time.monotonic() - started, 1),
    }
    atomic_write(root / RESULT_FILE, json.dumps(result, indent=2) + "\n")
    return result


def _rung_hooks(
    rung: Rung,
    config: TournamentConfig,
    run_dir: Path,
    on_rung: Callable[[str, int, int], OnUnit | None] | None,
) -> Hooks:
    """The driver's hooks of one rung: a resumed rung must be this rung's tournament, and
    `on_rung(opponent, deals, done)` hears it start."""

    def opened(ctx: RunContext) -> None:
        if ctx.config != config:
            raise TournamentError(
                f"{str(run_dir)!r} holds another tournament than this rung's; "
                "start the evaluation in a new --dir"
            )

    def progress(_ctx: RunContext, done: int, _total: int) -> OnUnit | None:
        return None if on_rung is None else on_rung(rung.opponent, config.deals, done)

    return Hooks(opened=opened, progress=progress)


def spades_version() -> str:
    """The installed spades-env version (what `spades --version` prints)."""
    import importlib.metadata

    try:
        return importlib.metadata.version("spades-env")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def counts_from_pilot(run_dir: str | Path) -> dict[str, tuple[float, int]]:
    """{opponent: (largest sd over the other agents, deals)} from a pilot round robin."""
    from experiments.tournament.results_log import iter_rows
    from experiments.tournament.summary import pair_results

    sd: dict[str, float] = {}
    for p in pair_results(iter_rows(Path(run_dir)), "hand"):
        for opponent in (p["a"], p["b"]):
            sd[opponent] = max(sd.get(opponent, 0.0), p["margin"]["sd"] or 0.0)
    return {o: (s, deals_for(s)) for o, s in sd.items()}


if __name__ == "__main__":
    import sys

    for opponent, (sd, n) in counts_from_pilot(sys.argv[1]).items():
        print(f"{opponent}: sd {sd:.2f}, {n} deals")
