"""The registry's table: the agents a spec may name by a word (`REGISTRY`), how a script
adds one (`register`), and the names a spec may start with (`known_names`, with the
installed plugins', `plugin_names`), and the entry a parsed spec names (`entry_of`).

Each entry (`agents.adapters.sources.AgentEntry`) maps a name to a factory
`(seed, **params) -> Agent` and the options it takes with their types; the grammar
(`agents.registry.grammar`) reads a spec's text against it and the factory
(`agents.registry.factory`) builds the agent from it. To add an agent to the project,
add its entry here.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from typing import Any

from agents.adapters.sources import AgentEntry, load_entry, plugin_points
from agents.heuristic.agent import HeuristicAgent
from agents.random_agent import RandomAgent
from agents.spec import AgentImportError, AgentSpec, AgentSpecError

#: an agent's name, registered or given as `NAME=` (no `,;:=#` and no spaces)
AGENT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")

_HOUR_MS = 3_600_000.0


def lazy(target: str) -> Callable[..., Any]:
    """`"module:function"` -> the function, imported on first use (torch stays unloaded)."""
    module, _, name = target.partition(":")

    def call(*args: Any, **kwargs: Any) -> Any:
        return getattr(importlib.import_module(module), name)(*args, **kwargs)

    return call


#: the options of a network agent (`checkpoint:` and `learned`; agents.learned.agent)
_NETWORK_OPTIONS: dict[str, type] = {
    "sample": bool,
    "bid": str,
    "model": str,
    "endgame": int,
    "worlds": int,
    "nil": int,
    "nilplay": str,
    "setnil": int,
}


REGISTRY: dict[str, AgentEntry] = {
    "random": AgentEntry(RandomAgent, {}, "uniformly random legal actions"),
    "heuristic": AgentEntry(
        HeuristicAgent,
        {
            "aggression": float,
            "nil_risk": float,
            "blind_deficit": int,
            "bid": str,
            "model": str,
            "bag_cost": float,
            "set_tricks": int,
        },
        "rule text 000's rule-based strategy; bids of highest expected score under the fitted "
        "trick model (bid=model, model=PATH a model file, bag_cost the cost of a bag) or by "
        "rule text 000's count (bid=rules; "
        "aggression shades those bids, nil_risk their nils); blind_deficit the deficit for "
        "blind nil; set_tricks: once the contract is made, take tricks while that many set "
        "the opponents (3; 2 the play before)",
        check="agents.heuristic.agent:check_params",
        bounds={
            "aggression": (-13.0, 13.0),  # tricks a bid is shaded by
            "nil_risk": (-13.0, 13.0),
            "bag_cost": (-1000.0, 1000.0),  # points; below 0: none
            "blind_deficit": (-(10**6), 10**6),  # points (scores stay within +-10**6)
        },
    ),
    "checkpoint": AgentEntry(
        lazy("agents.learned.agent:checkpoint_agent"),
        {"path": str, "device": str, **_NETWORK_OPTIONS},
        "a trained network: checkpoint:PATH (greedy) or checkpoint:PATH,sample=true; "
        "endgame=K,worlds=W: an exact solve of the last K tricks (agents.learned.endgame), "
        "nil=N of the last N for a live nil of the team, nilplay=heuristic; "
        "bid=model|rules: the heuristic decides before card play (the fitted trick "
        "model | rule text 000's count), the network plays the cards",
        positional="path",
        check="agents.adapters.foreign_files:check_checkpoint",
        paths=("path",),
    ),
    "sb3": AgentEntry(
        lazy("agents.adapters.sb3:SB3Agent"),
        {"path": str, "algo": str, "sample": bool, "device": str},
        "a Stable-Baselines3 / sb3-contrib model trained on the Gym env: sb3:PATH.zip "
        "(PPO, A2C, MaskablePPO, DQN; algo=NAME when the file does not say); it plays the "
        "legal action of highest probability (sample=true: drawn) or Q-value",
        positional="path",
        check="agents.adapters.sb3:check_params",
        paths=("path",),
    ),
    "pimc": AgentEntry(
        lazy("agents.montecarlo.pimc:PIMCAgent"),
        {
            "worlds": int,
            "rollouts": int,
            "evaluator": str,
            "policy": str,
            "time_ms": float,
            "weight": str,
            "objective": str,
            "bid": str,
        },
        "PIMC search: sampled worlds x legal actions, rollouts (policy heuristic|greedy|"
        "random) or evaluator=dd; best mean team hand-score margin; bid=heuristic|model: "
        "the heuristic bids (rule text 000's count | the fitted trick model), search plays",
        check="agents.montecarlo.pimc:check_params",
        bounds={"worlds": (1, 100_000), "rollouts": (1, 10_000), "time_ms": (0.0, _HOUR_MS)},
    ),
    "search": AgentEntry(
        lazy("agents.netsearch.agent:SearchAgent"),
        {
            "worlds": int,
            "bid": str,
            "weight": str,
            "solve": int,
            "solve_worlds": int,
            "nil": int,
            "setnil": int,
        },
        "search with the learned network: the network's bids (bid=net; search|heuristic), "
        "PIMC card play over worlds=K sampled worlds (weight=bids|none), and an exact solve "
        "of the last solve=K tricks over solve_worlds=W worlds, of the last nil=N while a nil "
        "of its team is alive, of the last setnil=N to set the opponents' live nil "
        "(agents.netsearch.agent)",
        check="agents.netsearch.agent:check_params",
        bounds={"worlds": (1, 100_000)},
    ),
    "ismcts": AgentEntry(
        lazy("agents.montecarlo.ismcts:ISMCTSAgent"),
        {"iterations": int, "time_ms": float, "c": float, "policy": str, "bid": str},
        "Information Set MCTS (one determinization per iteration, availability UCB); "
        "policy random|greedy; bid=heuristic|model: the heuristic bids (rule text 000's count | "
        "the fitted trick model), search plays",
        check="agents.montecarlo.ismcts:check_params",
        bounds={"iterations": (0, 10**7), "time_ms": (0.0, _HOUR_MS), "c": (0.0, 100.0)},
    ),
    "learned": AgentEntry(
        lazy("agents.learned.agent:learned_agent"),
        dict(_NETWORK_OPTIONS),
        "the strongest learned agent: agents/learned/checkpoints/learned.pt (distilled from the "
        "heuristic, then fine-tuned; recipe in learned.json) for the bids and the first "
        "tricks, and an exact solve of the last endgame=K tricks over worlds=W sampled "
        "worlds (agents.learned.endgame; endgame=0: the network alone), and of the last nil=N "
        "tricks for a live nil of its team (nilplay=heuristic: the heuristic plays the "
        "team's cards while its nil is alive); bid=model|rules: the "
        "heuristic bids (trick model, model=PATH another model file | rule text 000's count), "
        "the network plays the cards",
        check="agents.learned.agent:check_learned",
    ),
    "learned2": AgentEntry(
        lazy("agents.learned.agent:learned2_agent"),
        dict(_NETWORK_OPTIONS),
        "the strongest network alone (no search by default): agents/learned/checkpoints/"
        "learned2.pt, learned's network fine-tuned by PPO against learned (its endgame "
        "solver included; recipe in learned2.json); endgame=K, nil=N, setnil=N add the "
        "solver as for learned",
        check="agents.learned.agent:check_learned2",
    ),
    "ppo": AgentEntry(
        lazy("agents.learned.agent:shipped_agent"),
        {"sample": bool, "bid": str, "model": str},
        "the PPO checkpoint shipped in agents/learned/checkpoints/ppo_small.pt (bid as learned)",
        check="agents.learned.agent:check_shipped",
    ),
    "llm": AgentEntry(
        lazy("agents.llm.agent:LLMAgent"),
        {
            "model": str,
            "base_url": str,
            "api_key_env": str,
            "temperature": float,
            "max_tokens": int,
            "max_completion_tokens": int,
            "extra": str,
            "read_reasoning": bool,
            "timeout": float,
            "retries": int,
            "reasks": int,
            "backoff": float,
            "retry_after_cap": float,
            "concurrency": int,
            "per_minute": int,
            "max_answer_bytes": int,
            "max_fallback_share": float,
            "on_invalid": str,
            "price_in": float,
            "price_out": float,
            "prices": str,
            "list_legal": bool,
            "template": str,
            "system": str,
            "strict": bool,
            "fallback": str,
            "store": str,
        },
        "a language model through an OpenAI-compatible chat endpoint (the llm extra): "
        "llm:model=NAME,base_url=URL; the key from the variable api_key_env names "
        "(OPENAI_API_KEY), temperature, max_tokens, timeout, retries (transport), reasks "
        "(refused answers), backoff, concurrency (requests in flight), list_legal, "
        "template=FILE, fallback=NAME (plays refused decisions; heuristic), store=DIR; "
        "max_completion_tokens, extra=FIELD=VALUE|..., read_reasoning, retry_after_cap, "
        "per_minute, max_answer_bytes, max_fallback_share, on_invalid=stop|mark, "
        "price_in, price_out, prices=FILE, system=FILE (the system message), strict (read "
        "only a final-answer tag) (docs/llm.md; agents.llm.agent)",
        check="agents.llm.agent:check_params",
        paths=("template", "store", "prices", "system"),
        agents={"fallback": "heuristic"},  # built by name, with the llm agent's seed
        agent_class="agents.llm.agent:LLMAgent",  # its run hooks: the run folder, a summary
        bounds={
            "temperature": (0.0, 2.0),
            "max_tokens": (1, 1_000_000),
            "timeout": (0.001, 3600.0),
            "retries": (0, 100),
            "reasks": (0, 20),
            "backoff": (0.0, 600.0),
            "concurrency": (1, 1024),
            "max_completion_tokens": (1, 1_000_000),
            "retry_after_cap": (0.0, 3600.0),
            "per_minute": (0, 1_000_000),
            "max_answer_bytes": (1024, 1 << 30),
            "max_fallback_share": (0.0, 1.0),
            "price_in": (0.0, 1e6),
            "price_out": (0.0, 1e6),
        },
    ),
}


def register(
    name: str,
    factory: Callable[..., Any],
    params: dict[str, type] | None = None,
    help: str = "",
    *,
    positional: str | None = None,
) -> None:
    """Give an agent a registry name, so that `name` and `name:key=value,...` build it.

    `factory(seed=seed, **params)` returns the agent: usually the agent class itself.
    `params` maps each option the spec may set to its type (int, float, bool, str), and
    `positional` names the option a bare first item sets (`name:VALUE`). `help` is the
    line `spades` shows for it.

    **The agent contract** (see `agents.base.BaseAgent`, the class to subclass): an agent
    has a `name` and `act(view, obs, mask) -> actions`, called on a batch of B games at
    once (bids and card plays may be mixed); it returns (B,) int64, one legal action per
    game (`mask[b, action]` is True). `obs` is the RL encoding, (B, obs_size) int16,
    passed only when the class sets `needs_obs = True` (else None: building it costs
    time). `view` is the `spades_env.observation.SeatView` of the acting seats. The seed
    passed to the factory decides all of the agent's randomness (a tournament seeds each
    unit's agents from the unit alone, so rows do not depend on the process that plays
    them).

    **Registration lives in the process that calls it.** A tournament's workers are new
    processes (`spawn`, and Ray's), so a name registered by a user's script is unknown
    there, and to `--resume`. For an agent of your own use a spec the workers rebuild by
    themselves: `path/to/file.py:Class` or `package.module:Class` (each with
    `:key=value` options), or ship it as a plugin: an installed package that declares
    `name = "module:Class"` in the entry-point group `spades_env.agents`
    (`PLUGIN_GROUP`), found by name in every process with no import in your script.
    """
    if not AGENT_NAME.fullmatch(name):
        raise AgentSpecError(f"agent name {name!r}: use letters, digits, _ . + -")
    REGISTRY[name] = AgentEntry(factory, dict(params or {}), help, positional)


def plugin_names() -> list[str]:
    """The names installed packages declare in `PLUGIN_GROUP` (nothing is imported)."""
    return sorted(set(plugin_points()) - set(REGISTRY))


def known_names() -> list[str]:
    """Every agent name a spec may start with: the registry's and the plugins'."""
    return sorted({*REGISTRY, *plugin_points()})


def entry_of(spec: AgentSpec) -> AgentEntry:
    """The registry entry of a parsed spec (a file, module or plugin imported once per
    process); nothing is parsed or checked again."""
    if spec.kind == "registry":
        try:
            return REGISTRY[spec.target]
        except KeyError:  # registered by a script of another process (see `register`)
            raise AgentImportError(
                f"unknown agent {spec.target!r} (registered in another process?); known "
                f"agents: {', '.join(known_names())}"
            ) from None
    return load_entry(spec.kind, spec.target, known_names)
