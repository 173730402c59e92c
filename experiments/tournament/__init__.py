"""Duplicate tournaments between agents and what is read from their logs.

`config` defines a tournament (`TournamentConfig`, its id, the agents' seeds); `units`
plays one unit of it; `runner` runs, resumes and summarises a run folder (`folder`: the
folder's life; `schedule`: the units played with the local process pool or
`ray_backend`); `deals`, `match`, `results_log` are the deal sets, the batched games and
the log; `summary`, `ratings`, `bid_stats`, `comparison` read the log; `strength` and
`sample_log` are runs built on the runner; `ladder_protocol` and `llm_ladder` are the
evaluation ladders.

The Python entry that matches `spades tournament`:

    from experiments.tournament import TournamentConfig, run_tournament
    result = run_tournament("runs/mine", TournamentConfig(agents=("random", "heuristic")))
    print(result)  # the command line's tables; result.margins / .ratings / .bids: pandas

(`report.TournamentResult`; these names load on first use, so importing a submodule
stays light.)
"""

_LAZY = {
    "TournamentConfig": "experiments.tournament.config",
    "TournamentResult": "experiments.tournament.report",
    "run_tournament": "experiments.tournament.runner",
}
__all__ = list(_LAZY)


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
