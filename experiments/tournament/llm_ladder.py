"""The short ladder for language models, and how many requests a run will make.

**LLM ladder 1** (`spades evaluate SPEC --ladder llm`). The evaluation protocol
(`experiments.tournament.ladder_protocol`) needs 1450 to 2300 duplicate deals per opponent, about
100,000 decisions of the candidate per rung: far beyond a paid model's budget. This ladder
is sized for one instead: standard rules, hand mode, duplicate deals of one fixed deal set
(`DEAL_SEED`, its SHA-256 printed with every result), `DEALS` deals against each of
`OPPONENTS`, so 448 decisions of the candidate per opponent (2 seats x 14 decisions x 2
sides x 8 deals) and 896 requests in all without re-asks.

**Its intervals are wide, and it says so.** With 8 duplicate deals, the 95% interval of
the margin is t(7) x sd / sqrt(8) = 0.83 sd. The per-deal sd was measured with bots
standing in for the model (`MEASURED`, from a 200-deal round robin of random, heuristic
and heuristic:aggression=1 on the ladder's rules; `measure_widths`): sd 54.2 against
random and 52.3 against heuristic, so a 95% interval of about ±45 and ±44 points per
deal, where heuristic beats random by 194 and heuristic:aggression=1 by 58 points per
deal. Runs of the ladder itself measured ±63 / ±45 (heuristic:aggression=1 as the
candidate) and ±76 / ±31 (the `llm:` agent against a stand-in model playing its first
legal action, `experiments.bench.llm.standin_server`): the sd of 8 deals is itself noisy.
The ladder tells a model that plays like random from one that plays like the heuristic,
and says little finer; the protocol's ±2.5 needs about 220 times the deals.

**Rungs with a bot partner** (`--partner BOT`). The candidate may play as one seat of
a partnership whose other seat a bot holds (`team(SPEC, BOT)`, `agents.spec.TeamSpec`):
a model with a bot partner. It then makes half the requests of a rung (one seat of its
partnership on each side of a deal instead of two), and its margin reads as the team's:
compare it with the bot partnering itself, `team(BOT, BOT)`, on the same ladder. The
result names the partner (`partner`), and the leaderboard never puts a ladder with a
partner in one row with a ladder without. A candidate written as a team is played as
given.

A change of opponents, deals, rules or deal seed is a new `VERSION`. The prompt's words
are the text view's (`spades_env.text.TEXT_VERSION`), recorded in each result as
`text_view`: results of two text views were asked different questions.

`planned_requests(config)` counts the decisions (= first requests) an `llm:` agent will
make in a tournament: what ``--dry-run`` prints.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from agents.registry import AgentSpecError, TeamSpec, members_of, parse_entry
from experiments.tournament.config import TournamentConfig, TournamentError
from experiments.tournament.ladder_protocol import deals_for, slug, spades_version
from experiments.tournament.runner import run_tournament
from spades_env.rules import Rules
from spades_env.text import TEXT_VERSION
from spades_env.tooling.stats import t975

PROTOCOL = "spades-llm-ladder"
VERSION = 1
DEAL_SEED = 38_2026
DEALS = 8
OPPONENTS = ("random", "heuristic")
#: per-deal sd of the duplicate margin with bots standing in for the model (round robin
#: of random, heuristic, heuristic:aggression=1, 200 deals, seed 382026), per opponent:
#: the largest over the stand-ins; filled from `measure_widths`
MEASURED: dict[str, float] = {"random": 54.21, "heuristic": 52.26}


def half_width(sd: float, deals: int = DEALS) -> float:
    """The 95% half-width of a mean margin over `deals` duplicate deals at per-deal `sd`."""
    return t975(deals - 1) * sd / math.sqrt(deals)


def with_partner(candidate: str, partner: str | None) -> str:
    """The candidate's entry: `candidate` alone, or with `partner` a team of the two,
    `team(candidate; partner)` (the candidate in its partnership's first seat)."""
    if partner is None:
        return candidate
    for spec, flag in ((candidate, "the candidate"), (partner, "--partner")):
        try:
            entry = parse_entry(spec)
        except AgentSpecError as exc:
            raise type(exc)(f"{flag}: {exc}") from None
        if isinstance(entry, TeamSpec):
            raise TournamentError(f"{flag} {spec!r:.80} is a team already; a team is two agents")
    return f"team({candidate};{partner})"


def config(candidate: str, opponent: str) -> TournamentConfig:
    return TournamentConfig(
        agents=(candidate, opponent),
        mode="hand",
        rules=Rules().to_dict(),
        seed=DEAL_SEED,
        deals=DEALS,
        chunk=DEALS,
    )


def run_ladder(
    candidate: str, root: str | Path, *, workers: int = 1, partner: str | None = None
) -> dict[str, Any]:
    """Play the ladder for `candidate` (with `partner`: as a team with that bot) in
    `root` (one run folder per opponent, resumable: a rung already started is finished);
    return the result (JSON-ready)."""
    root = Path(root)
    entry = with_partner(candidate, partner)
    rungs = []
    for k, opponent in enumerate(OPPONENTS):
        run_dir = root / f"{k + 1}-{slug(opponent)}"
        started = (run_dir / "config.json").exists()
        cfg = config(entry, opponent)
        result = run_tournament(run_dir, None if started else cfg, resume=started, workers=workers)
        (pair,) = result["pairs"]
        sign = 1 if pair["a"] == cfg.labels[0] else -1
        m = pair["margin"]
        model = model_figures(result.get("llm", {}), candidate_name(cfg))
        rungs.append(
            {
                "opponent": opponent,
                "deals": pair["deals"],
                "margin": None if m["mean"] is None else sign * m["mean"],
                "ci": None if m["ci"] is None else sorted(sign * x for x in m["ci"]),
                "expected_half_width": round(half_width(MEASURED[opponent]), 1)
                if opponent in MEASURED
                else None,
                "model": model,
                "llm": result.get("llm", {}),
                "run": str(run_dir),
            }
        )
    team = cfg.agents[0]
    return {
        "protocol": PROTOCOL,
        "version": VERSION,
        "candidate": candidate,
        "partner": partner,
        "team": [m.text for m in team.members] if isinstance(team, TeamSpec) else None,
        "deal_seed": DEAL_SEED,
        "deals": DEALS,
        "spades_version": spades_version(),
        "text_view": TEXT_VERSION,
        "invalid": any(r["model"] is not None and r["model"]["invalid"] for r in rungs),
        "rungs": rungs,
    }


#: what a rung keeps of its candidate's requests (`model`), from the run's ``llm``
#: section (`agents.llm.run`): what judges the margin beside it, and what it cost
MODEL_FIGURES = (
    "model", "decisions", "answers", "fallback_share", "not_understood_share", "invalid",
    "invalid_reason", "tokens_in", "tokens_out", "replayed_tokens_in", "dollars",
)  # fmt: skip


def candidate_name(cfg: TournamentConfig) -> str:
    """The name the candidate's requests are kept under: its label, or a team's first
    member's (a team's members report under their own names)."""
    entry = cfg.agents[0]
    return entry.members[0].display if isinstance(entry, TeamSpec) else cfg.labels[0]


def model_figures(section: dict[str, Any], name: str) -> dict[str, Any] | None:
    """The candidate's figures of a rung (`MODEL_FIGURES`, and ``agent``, its name);
    None where the candidate is no `llm:` agent."""
    stats = section.get(name)
    if not isinstance(stats, dict):
        return None
    out: dict[str, Any] = {"agent": name} | {k: stats.get(k) for k in MODEL_FIGURES}
    if out["fallback_share"] is None and stats.get("decisions"):
        out["fallback_share"] = stats.get("fallbacks", 0) / stats["decisions"]
    out["invalid"] = bool(out["invalid"])
    return out


def measure_widths(pilot: str | Path) -> dict[str, dict[str, float]]:
    """From a pilot round robin's log: per opponent, the largest per-deal sd over the
    stand-ins, the ladder's 95% half-width at `DEALS`, and the deals the protocol's ±2.5
    would take."""
    from experiments.tournament.results_log import read_rows
    from experiments.tournament.summary import pair_results

    sd: dict[str, float] = {}
    for p in pair_results(read_rows(Path(pilot)), "hand"):
        for opponent in (p["a"], p["b"]):
            sd[opponent] = max(sd.get(opponent, 0.0), p["margin"]["sd"] or 0.0)
    return {
        o: {"sd": s, "half_width": half_width(s), "deals_for_2.5": deals_for(s)}
        for o, s in sd.items()
    }


# ----------------------------------------------------------------------------- dry run
def decisions_per_hand(rules: Rules) -> float:
    """An llm agent's decisions per seat and hand: a bid and a card per trick, the draw's
    keep-or-discard (two_player), its share of naming trump (auction), a blind-nil offer
    when the rules always allow one (else offers come only 100 behind, in game mode)."""
    n = 1 + rules.hand_size
    if rules.draw:
        n += rules.hand_size
    if rules.trump == "named":
        n += 1 / rules.num_players
    if rules.blind_nil == "always":
        n += 1
    return n


def planned_requests(cfg: TournamentConfig, deals: int | None = None) -> dict[str, dict]:
    """Per `llm:` agent of `cfg`: its decisions over `deals` deals (default all), which are
    its first requests, and the most requests with every re-ask. In game mode, per hand:
    multiply by the hands per game."""
    rules = cfg.play_rules()
    n = cfg.deals if deals is None else deals
    out: dict[str, dict] = {}
    for i, j in cfg.pairs:
        for k in (i, j):
            team = isinstance(cfg.agents[k], TeamSpec)
            for spec in members_of([cfg.agents[k]]):  # AgentSpecs: their options typed
                if spec.kind != "registry" or spec.target != "llm":
                    continue
                options = spec.params
                reasks = int(options.get("reasks", 2))
                # both sides of a deal: every seat of the table once by an agent, every
                # other seat by a team's member (half its partnership's seats)
                seats = rules.num_players // 2 if team else rules.num_players
                decisions = n * seats * decisions_per_hand(rules)
                label = spec.display if team else cfg.labels[k]
                entry = out.setdefault(
                    label, {"model": options.get("model"), "decisions": 0.0, "reasks": reasks}
                )
                entry["decisions"] += decisions
    for entry in out.values():
        entry["decisions"] = math.ceil(entry["decisions"])
        entry["max_requests"] = entry["decisions"] * (1 + entry["reasks"])
        entry["per"] = "hand" if cfg.mode == "game" else "run"
    return out


def dry_run_lines(plans: dict[str, dict], mode: str) -> list[str]:
    """What ``--dry-run`` prints."""
    if not plans:
        return ["dry run: no llm: agent plays; no requests"]
    lines = []
    for label, p in plans.items():
        unit = " per hand of each game (game mode)" if mode == "game" else ""
        lines.append(
            f"dry run: {label} (model {p['model']}): {p['decisions']} decisions{unit}, "
            f"so {p['decisions']} requests, at most {p['max_requests']} with every re-ask "
            f"(reasks={p['reasks']}; transport retries and answers already in the run's "
            "cache not counted)"
        )
    lines.append("dry run: nothing was played and nothing was written")
    return lines
