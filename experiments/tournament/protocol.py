"""The evaluation protocol (`spades evaluate SPEC`): one fixed, versioned ladder a paper can
cite and a user can run on their own agent.

**Protocol 1.** Standard rules (RULES.md), hand mode, duplicate deals (both sides of
every deal; `experiments.tournament.runner`). The candidate plays one two-agent
tournament per rung against each opponent of `LADDER`, on the first `deals` deals of one
published deal set: `DEAL_SEED` through `experiments.tournament.deals.generate`, whose
SHA-256 (of the deal-set file's JSON, `deal_set_hash`) every result and table prints, so
a reader can check they were played on the same cards. Game seed `i` depends only on the
seed and `i`, so every rung plays a prefix of the same set.

**Deal counts.** Each rung's count makes the 95% CI of its margin about ±`TARGET_HALF_WIDTH`
points per deal: n = (1.96 sd / 2.5)^2 with sd the per-deal standard deviation of the
duplicate margin against that opponent, measured on a 200-deal pilot (heuristic,
learned, random and pimc:worlds=64 round robin, seed 20261203; the largest sd over the
candidates tried, rounded up to whole chunks of 50). Where the interval and the time
conflict, the interval wins: the counts are fixed, and the wall time depends on the
candidate's speed (about 30 minutes on 2 cores for a candidate as fast as `learned`; a
search agent as candidate takes longer).

A change of opponents, counts, rules or deal seed is a new `VERSION`; results of
different versions are never put in one table (`spades leaderboard` refuses).
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from experiments.tournament import deals as deals_mod
from experiments.tournament.config import TournamentConfig, TournamentError
from experiments.tournament.deals import DealSet
from spades_env.rules import Rules

PROTOCOL = "spades-evaluate"
VERSION = 1
DEAL_SEED = 26_2026
TARGET_HALF_WIDTH = 2.5
CHUNK = 50


@dataclass(frozen=True)
class Rung:
    """One opponent of the ladder: its spec, deals, and the pilot's sd they come from."""

    opponent: str
    deals: int
    pilot_sd: float


#: the ladder of protocol 1 (sd: per-deal margin sd measured on the pilot, see above)
LADDER: tuple[Rung, ...] = (
    Rung("random", 2200, 59.3),
    Rung("heuristic", 1550, 49.6),
    Rung("pimc:worlds=64", 1950, 56.3),
    Rung("learned", 1150, 42.7),
)


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


def rung_config(candidate: str, rung: Rung, deals: int) -> TournamentConfig:
    return TournamentConfig(
        agents=(candidate, rung.opponent),
        mode="hand",
        rules=rules().to_dict(),
        seed=DEAL_SEED,
        deals=deals,
        chunk=CHUNK,
    )


def rung_dir(root: Path, k: int, rung: Rung) -> Path:
    return root / f"{k + 1}-{slug(rung.opponent)}"


def header(candidate: str, test_deals: int | None) -> dict[str, Any]:
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


def rung_entry(rung: Rung, summary: dict[str, Any], candidate_label: str) -> dict[str, Any]:
    """The candidate's margin over the rung's opponent (points per deal, 95% CI)."""
    (pair,) = summary["pairs"]
    m = pair["margin"]
    sign = 1 if pair["a"] == candidate_label else -1
    ci = None if m["ci"] is None else sorted(sign * x for x in m["ci"])
    return {
        "opponent": rung.opponent,
        "deals": pair["deals"],
        "margin": None if m["mean"] is None else sign * m["mean"],
        "ci": ci,
        "sd": m["sd"],
        "tournament": summary["tournament"],
    }


def check_header(saved: dict[str, Any], wanted: dict[str, Any], folder: Path) -> None:
    for key, value in wanted.items():
        if saved.get(key) != value:
            raise TournamentError(
                f"{str(folder)!r} holds an evaluation with another {key} "
                f"({saved.get(key)!r}, not {value!r}); drop --resume or choose another --dir"
            )
