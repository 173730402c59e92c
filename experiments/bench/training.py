"""`spades bench --only training`: PPO's throughput, learner included, against the engine alone.

The default `spades train ppo` configuration (its `Args` defaults: the opponent mix, the
batch of `num_games` hands, the network, the PPO epochs) runs here for a few updates with
no evaluation and no periodic checkpoint. A first short run warms up (numba kernels,
torch); the measured run then plays and learns for about `seconds`. Two rates: the
learner's own decisions (forced moves included; its batches keep the others) and every
decision played (opponents' too), per second of wall time, rollouts and updates
together. The reference is the engine alone in the same process: random legal play of
the same batch of hands (`experiments.bench.engine.engine_rate`). A third PPO row counts
the learner's decisions per second of the process's CPU time (`time.process_time`: one
torch thread, one process), against the engine alone measured the same way: on a machine
shared with other jobs, wall-clock rates fall with the load while these hold better.

A third row is a tournament's play: `learned` against `heuristic`, duplicate seating, in
chunks of `TOURNAMENT_GAMES` games through `experiments.tournament.match.play_batch` (the
network called once per step on all its games of the chunk), hand records included,
against the engine alone at the same batch.
"""

from __future__ import annotations

import tempfile
import time
from typing import Any

Row = dict[str, Any]
#: Games per chunk of the tournament row: 250 duplicate deals, each played twice.
TOURNAMENT_GAMES = 500


def ppo_rates(seconds: float) -> tuple[float, float, float, int]:
    """(learner decisions/s, all decisions/s, learner decisions per CPU-second, batch) of
    the default PPO config."""
    import torch

    from agents.learned.checkpoint import read_checkpoint
    from training import ppo_selfplay

    with tempfile.TemporaryDirectory() as tmp:
        base = {"runs_dir": tmp, "eval_every": 0, "save_every": 10**9}
        start = time.perf_counter()
        ppo_selfplay.train(ppo_selfplay.Args(**base, exp_name="warmup", stop_after=1))
        per_update = time.perf_counter() - start
        updates = max(1, round(seconds / max(per_update, 1e-3)))
        threads = torch.get_num_threads()
        start, cpu = time.perf_counter(), time.process_time()
        last = ppo_selfplay.train(ppo_selfplay.Args(**base, stop_after=updates))
        elapsed, cpu = time.perf_counter() - start, time.process_time() - cpu
        torch.set_num_threads(threads)
        counters = read_checkpoint(last)["counters"]
    batch = ppo_selfplay.Args().num_games
    learner = counters["learner_steps"]
    return learner / elapsed, counters["global_step"] / elapsed, learner / cpu, batch


def tournament_run(games: int = TOURNAMENT_GAMES, spec: str = "learned"):
    """A run of one chunk of `spec` (`learned`) against `heuristic` (hand mode, duplicate seating:
    game 2k has `spec` North-South, 2k+1 the same deal East-West), as a tournament
    unit plays it; returns the decisions played."""
    import numpy as np

    from agents.registry import make_agent, parse_agent
    from experiments.tournament.deals import generate
    from experiments.tournament.match import play_batch
    from spades_env.duplicate import seat_agents
    from spades_env.rules import Rules

    rules = Rules()
    agents = [make_agent(parse_agent(s), seed=0, rules=rules) for s in (spec, "heuristic")]
    seat_agent = seat_agents(rules, games // 2)
    chunks = iter(range(10**9))

    def run() -> int:
        ds = generate(rules, next(chunks), games // 2)
        played = play_batch(
            rules, agents, seat_agent, np.repeat(ds.game_seeds, 2), np.repeat(ds.dealers, 2),
            np.repeat(ds.hands, 2, axis=0), one_hand=True,
        )  # fmt: skip
        return sum(len(rec["actions"]) for _, rec in played)

    return run


def training_section(seconds: float, games: int = TOURNAMENT_GAMES) -> list[Row]:
    import torch

    from experiments.bench.engine import engine_rate, engine_run, timed
    from spades_env.rules import Rules

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        tournament = timed(tournament_run(games), seconds)
    finally:
        torch.set_num_threads(threads)
    tour_ref = engine_rate(Rules(), games, seconds)
    learner, played, learner_cpu, batch = ppo_rates(seconds)
    reference = engine_rate(Rules(), batch, seconds)
    cpu_reference = timed(engine_run(Rules(), batch, agent=True), seconds, time.process_time)
    ref = f"engine alone, random play, batch {batch}"
    rows = [
        {
            "name": f"train ppo: {name} (default config)",
            "batch": batch,
            "rate": rate,
            "unit": unit,
            "reference": ref if unit == "decisions/s" else f"{ref}, per CPU-second",
            "reference_rate": base,
            "ratio": rate / base,
        }
        for name, rate, unit, base in (
            ("learner decisions", learner, "decisions/s", reference),
            ("all decisions", played, "decisions/s", reference),
            ("learner decisions per CPU-s", learner_cpu, "decisions/CPU-s", cpu_reference),
        )
    ]
    rows.append(
        {
            "name": "tournament: learned vs heuristic (hand records included)",
            "batch": games,
            "rate": tournament,
            "unit": "decisions/s",
            "reference": f"engine alone, random play, batch {games}",
            "reference_rate": tour_ref,
            "ratio": tournament / tour_ref,
        }
    )
    return rows


SECTIONS = {"training": training_section}


def decision_latency(
    spec: str = "learned", hands: int = 40, seed: int = 0
) -> list[tuple[int, float]]:
    """(trick, seconds) of each decision of `spec` at batch 1 (trick 1-13 of a card
    played, 0 for a decision before card play): `hands` one-hand games against the
    heuristic (`spec` North-South), each `agent.act` timed on its prepared encoding
    (torch one thread), as a game with one user plays it."""
    import numpy as np
    import torch

    from agents.play_loop import play
    from agents.registry import make_agent, parse_agent
    from spades_env.rules import Rules
    from spades_env.state import PLAY, init

    rules = Rules()
    agent, opponent = (
        make_agent(parse_agent(s), seed=seed, rules=rules) for s in (spec, "heuristic")
    )
    times: list[tuple[int, float]] = []
    act = agent.act

    def timed_act(view, obs, mask):
        start = time.perf_counter()
        out = act(view, obs, mask)
        trick = int(view.tricks_played[0]) + 1 if view.phase[0] == PLAY else 0
        times.append((trick, time.perf_counter() - start))
        return out

    agent.act = timed_act
    agent.needs_view = True  # the trick of each decision (the view is built outside the timing)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        for h in range(hands):
            state = init(rules, 1, np.random.default_rng([seed, h]))
            play(state, np.array([[0, 1, 0, 1]]), [agent, opponent], one_hand=True)
    finally:
        torch.set_num_threads(threads)
    return times


def latency_table(times: list[tuple[int, float]]) -> str:
    """Median and 90th percentile (ms) of `decision_latency`'s times, overall and per
    trick (0: before card play)."""
    import numpy as np

    trick = np.array([t for t, _ in times])
    ms = np.array([s for _, s in times]) * 1e3
    lines = ["| trick | decisions | median ms | p90 ms |", "|---|---:|---:|---:|"]
    for label, sel in [("all", trick >= 0)] + [(str(k), trick == k) for k in range(14)]:
        if sel.any():
            med, p90 = np.median(ms[sel]), np.percentile(ms[sel], 90)
            lines.append(f"| {label} | {sel.sum()} | {med:.2f} | {p90:.2f} |")
    return "\n".join(lines)


if __name__ == "__main__":  # python -m experiments.bench.training [SPEC [HANDS]]
    import sys

    args = sys.argv[1:]
    print(latency_table(decision_latency(*(args[:1] or ["learned"]), *map(int, args[1:2]))))
