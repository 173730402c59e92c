"""Duplicate tournaments between agents and what is read from their logs.

`config` defines a tournament (`TournamentConfig`, its id, the agents' seeds); `units`
plays one unit of it; `runner` runs, resumes and summarises a run folder, with the local
process pool or `ray_backend`; `deals`, `match`, `results_log` are the deal sets, the
batched games and the log; `summary`, `ratings`, `bid_stats`, `comparison` read the log;
`strength` and `sample_log` are runs built on the runner.
"""
