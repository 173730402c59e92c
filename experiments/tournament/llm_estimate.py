"""What a run of `llm:` agents will cost, from the prompts of its own deals, before any
request is sent (``--dry-run``).

Each deal of the run is played once by the heuristic at every seat, and at each decision
the prompt of every `llm:` agent is rendered as the agent would render it (its template,
``list_legal`` and system message: `agents.llm.prompt`) from the seat's view. Over both
sides of a duplicate deal an agent holds every seat once, so these are as many prompts
as it will send first requests; the model's own play changes the cards on the table, not the
prompts' length much. Tokens are the characters over 4 (no tokenizer is assumed: the
models differ); the answers' tokens are bounded by the token limit; dollars come from
the agent's prices (``price_in``/``price_out`` or ``prices=FILE``), where given.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from agents.heuristic.agent import HeuristicAgent
from agents.llm import prompt as prompts
from agents.llm.agent import load_template, read_prices
from experiments.tournament.config import TournamentConfig
from experiments.tournament.deals import DealSet
from spades_env.engine import step
from spades_env.state import PHASE_NAMES, init
from spades_env.text import seat_json

#: characters per token of the estimate (the usual rule of thumb for English)
CHARS_PER_TOKEN = 4
#: at most this many deals are rendered; a longer run is scaled from them
MAX_DEALS = 64


def _llm_specs(cfg: TournamentConfig) -> dict[str, Any]:
    from agents.registry import members_of

    out = {}
    for spec in members_of(cfg.agents):
        if spec.kind == "registry" and spec.target == "llm":
            out[spec.display] = spec
    return out


def prompt_chars(cfg: TournamentConfig, deals: DealSet, render: list[Any]) -> list[list[int]]:
    """For each renderer in `render` (a function view -> messages), the characters of
    the first prompt of every decision of every seat over the first `MAX_DEALS` deals'
    first hands."""
    rules = cfg.play_rules()
    n = min(len(deals), MAX_DEALS)
    part = deals.head(n)
    state = init(rules, n, seeds=part.game_seeds, deals=part.hands, dealer=part.dealers)
    bot = HeuristicAgent(seed=0)
    done = PHASE_NAMES.index("done")
    out: list[list[int]] = [[] for _ in render]
    while True:
        live = np.flatnonzero(state.phase != done)
        if live.size == 0:
            return out
        for g in live:
            view = seat_json(state, int(g))
            for k, fn in enumerate(render):
                out[k].append(sum(len(m["content"]) for m in fn(view)))
        step(state, bot.act_state(state), last_hand=True)


def estimate(cfg: TournamentConfig, deals: DealSet, plans: dict[str, dict]) -> dict[str, dict]:
    """Per `llm:` agent of `plans` (`llm_ladder.planned_requests`): the estimated tokens
    in of its first requests, the most tokens out, and dollars where prices are known."""
    specs = _llm_specs(cfg)
    labels = [label for label in plans if label in specs]
    render = []
    for label in labels:
        params = dict(specs[label].params)
        template = load_template(params["template"]) if params.get("template") else None
        system = prompts.load_system(params["system"]) if params.get("system") else None
        list_legal = bool(params.get("list_legal", True))
        render.append(lambda v, t=template, ll=list_legal, s=system: prompts.messages(v, ll, t, s))
    chars = prompt_chars(cfg, deals, render) if render else []
    out: dict[str, dict] = {}
    for label, seen in zip(labels, chars, strict=True):
        params = dict(specs[label].params)
        plan = plans[label]
        mean = sum(seen) / max(len(seen), 1) / CHARS_PER_TOKEN
        tokens_in = math.ceil(mean * plan["decisions"])
        limit = params.get("max_completion_tokens") or params.get("max_tokens", 512)
        tokens_out_max = plan["decisions"] * int(limit)
        prices = None
        if params.get("prices"):
            prices = read_prices(params["prices"], params["model"])
        if prices is None and "price_in" in params and "price_out" in params:
            prices = (float(params["price_in"]), float(params["price_out"]))
        tries = 1 + plan["reasks"]
        out[label] = {
            "prompt_tokens_mean": round(mean, 1),
            "prompt_tokens_max": math.ceil(max(seen, default=0) / CHARS_PER_TOKEN),
            "tokens_in": tokens_in,
            "tokens_out_max": tokens_out_max,
            "dollars_in": None if prices is None else tokens_in * prices[0] / 1e6,
            "dollars_max": None
            if prices is None
            else tries * (tokens_in * prices[0] + tokens_out_max * prices[1]) / 1e6,
        }
    return out


def estimate_lines(est: dict[str, dict]) -> list[str]:
    """What ``--dry-run`` adds: tokens and dollars per agent."""
    lines = []
    for label, e in est.items():
        money = (
            "no prices given (price_in=, price_out= or prices=FILE give dollars)"
            if e["dollars_in"] is None
            else f"${e['dollars_in']:.4f} for the prompts, at most ${e['dollars_max']:.4f} "
            "with every re-ask and every answer at its token limit"
        )
        lines.append(
            f"dry run: {label}: about {e['tokens_in']:,} prompt tokens (mean "
            f"{e['prompt_tokens_mean']:.0f}, max {e['prompt_tokens_max']} per prompt: the "
            f"run's deals rendered, characters / {CHARS_PER_TOKEN}), at most "
            f"{e['tokens_out_max']:,} answer tokens; {money}"
        )
    return lines
