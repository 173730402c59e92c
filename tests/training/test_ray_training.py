"""`spades train ppo|dmc --backend ray`: rollouts on Ray actors, versions, stale batches
dropped, a killed actor replaced, resume. On a local Ray with two CPUs (skipped without
the ray extra); the flag checks run without Ray."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")  # the train extra: training

from agents.learned.checkpoint import read_checkpoint
from agents.registry import make_agent, parse_agent
from experiments.cli.app import main as spades
from spades_env.rules import Rules
from spades_env.state import init
from training import dmc, ppo_selfplay, ray_rollout
from training.rollout import play_hands

TB = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
ROOT = Path(__file__).resolve().parents[2]
GAMES, DECISIONS = 12, 56  # hands per rollout; decisions per hand of the standard rules
UPDATES = 6
SCRIPTS = {"ppo": ppo_selfplay, "dmc": dmc}


def tiny(algo: str, runs: Path, **kw):
    """A Ray run of UPDATES updates of GAMES hands, 2 actors, small network, tiny eval."""
    base = {
        "runs_dir": str(runs),
        "total_timesteps": UPDATES * GAMES * DECISIONS,
        "num_games": GAMES,
        "hidden": "32",
        "num_minibatches": 2,
        "eval_deals": 4,
        "eval_every": 3,
        "save_every": 2,
        "pool_size": 2,
        "selfplay_frac": 0.34,
        "heuristic_frac": 0.33,
        "backend": "ray",
        "actors": 2,
    }
    return SCRIPTS[algo].Args(**{**base, **kw})


def scalars(run_dir: Path) -> dict[str, list[float]]:
    ea = TB.EventAccumulator(str(run_dir))
    ea.Reload()
    return {t: [e.value for e in ea.Scalars(t)] for t in ea.Tags()["scalars"]}


def train_watched(algo: str, args, hook=None):
    """Train; return the final path and the run's `RayRollouts` (seen by the hook).

    After each batch trained on, the learner waits until every actor's rollout in flight
    is ready (lockstep), so the order of arrivals, and what is stale, does not depend on
    how busy the machine is.
    """
    import ray

    seen: list[ray_rollout.RayRollouts] = []

    def on_batch(rollouts, record):
        if not seen:
            seen.append(rollouts)
        if hook is not None:
            hook(rollouts, record)
        ray.wait(list(rollouts.inflight), num_returns=len(rollouts.inflight))

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(ray_rollout, "ON_BATCH", on_batch)
        path = SCRIPTS[algo].train(args)
    return path, seen[0]


@pytest.fixture(scope="module")
def ppo_run(local_ray, tmp_path_factory):
    """PPO on 2 actors with --max-policy-lag 0: only batches of the latest weights train.

    Both actors start on version 0; after the first update the other actor's first batch
    is one update late, so it is dropped, and so on.
    """
    runs = tmp_path_factory.mktemp("ppo")
    return train_watched("ppo", tiny("ppo", runs, max_policy_lag=0))


@pytest.fixture(scope="module")
def dmc_run(local_ray, tmp_path_factory):
    """DMC on 2 actors (--max-policy-lag 1): actor 1 killed once mid-run, the run stopped
    after 3 updates and resumed on Ray."""
    runs = tmp_path_factory.mktemp("dmc")
    killed: list[int] = []

    def kill_actor_1(rollouts, record):
        if not killed and 1 in rollouts.actors:
            local_ray.kill(rollouts.actors[1], no_restart=True)
            killed.append(record.learner_version)

    stopped, first = train_watched("dmc", tiny("dmc", runs, stop_after=3), kill_actor_1)
    run_dir = stopped.parent.parent
    final, resumed = train_watched("dmc", tiny("dmc", runs, resume=str(run_dir)))
    return stopped, first, final, resumed, killed


# ----------------------------------------------------------------------------- PPO
def test_a_stale_batch_is_dropped_and_not_counted(ppo_run):
    final, rollouts = ppo_run
    assert {r.slot for r in rollouts.history} == {0, 1}
    kept = [r for r in rollouts.history if r.accepted]
    dropped = [r for r in rollouts.history if not r.accepted]
    assert [r.learner_version for r in kept] == list(range(UPDATES))  # one update per batch
    assert all(r.version == r.learner_version for r in kept)  # lag 0: the latest weights
    assert dropped and all(r.learner_version - r.version == 1 for r in dropped)
    assert rollouts.dropped == len(dropped)
    counters = read_checkpoint(final)["counters"]
    assert counters["update"] == UPDATES  # what the budget implies, as locally
    assert counters["global_step"] == UPDATES * GAMES * DECISIONS  # drops not counted
    tags = scalars(final.parent)
    assert tags["charts/dropped_batches"][-1] == len(dropped)
    assert set(tags["charts/policy_lag"]) == {0.0}


def test_ray_run_logs_evaluates_and_checkpoints(ppo_run):
    final, _ = ppo_run
    tags = scalars(final.parent)
    assert {"eval/margin", "charts/SPS", "losses/policy_loss", "charts/actors"} <= set(tags)
    assert len(tags["eval/margin"]) == 1 + UPDATES // 3  # before training, every 3 updates
    saved = sorted(p.name for p in (final.parent / "checkpoints").iterdir())
    assert saved == [f"update_{u:06d}.pt" for u in (2, 4, 6)]


def test_the_ray_checkpoint_plays_a_legal_hand(ppo_run):
    final, _ = ppo_run
    agent = make_agent(parse_agent(f"checkpoint:{final}"))
    state = init(Rules(), 4, np.random.default_rng(3))
    owner = np.ones((4, 4), dtype=np.int64)  # the agent in every seat
    hands = play_hands(state, owner, learner=None, opponents=[agent])  # the engine checks
    assert (hands.tricks.sum(axis=1) == 13).all()


# ----------------------------------------------------------------------------- DMC
@pytest.mark.slow  # the DMC run on two actors: 20 s
def test_batches_come_from_both_actors_with_advancing_versions(dmc_run):
    *_, resumed, _ = dmc_run
    kept = [r for r in resumed.history if r.accepted]
    assert {r.slot for r in kept} == {0, 1} and resumed.dropped == 0
    assert all(r.learner_version - r.version <= 1 for r in kept)  # --max-policy-lag 1
    for slot in (0, 1):
        versions = [r.version for r in kept if r.slot == slot]
        assert versions == sorted(set(versions))  # each actor's weights move forward


@pytest.mark.slow  # the DMC run on two actors: 20 s
def test_a_killed_actor_is_replaced_and_training_completes(dmc_run):
    stopped, first, _, _, killed = dmc_run
    assert killed  # actor 1 was killed mid-run
    assert first.restarts == {0: 0, 1: 1}
    assert stopped.name == "update_000003.pt"
    assert read_checkpoint(stopped)["counters"]["update"] == 3


@pytest.mark.slow  # the DMC run on two actors: 20 s
def test_a_ray_run_resumes_on_ray(dmc_run):
    stopped, _, final, resumed, _ = dmc_run
    assert final.name == "final.pt" and final.parent == stopped.parent.parent
    assert read_checkpoint(final)["counters"]["update"] == UPDATES
    kept = [r for r in resumed.history if r.accepted]
    assert [r.learner_version for r in kept] == list(range(3, UPDATES))  # from the checkpoint
    assert resumed.start_update == 3  # the actors' seeds differ from the first session's


@pytest.mark.slow
def test_past_its_restarts_a_dead_actor_is_left_and_the_others_go_on(
    local_ray, tmp_path, monkeypatch
):
    monkeypatch.setattr(ray_rollout, "MAX_ACTOR_RESTARTS", 0)

    def kill_actor_1(rollouts, record):
        if 1 in rollouts.actors:
            local_ray.kill(rollouts.actors[1], no_restart=True)

    with pytest.warns(RuntimeWarning, match="going on with 1 actors"):
        final, rollouts = train_watched("ppo", tiny("ppo", tmp_path), kill_actor_1)
    assert read_checkpoint(final)["counters"]["update"] == UPDATES
    assert scalars(final.parent)["charts/actors"][-1] == 1  # closed now; logged as it ran
    assert {r.slot for r in rollouts.history if r.learner_version >= 2} == {0}


# ----------------------------------------------------------------------------- flags
def test_actor_seeds_differ_per_actor_session_and_replacement():
    seeds = {
        ray_rollout.actor_seed(1, slot, start, inc)
        for slot in range(3)
        for start in (0, 20)
        for inc in range(2)
    }
    assert len(seeds) == 12 and all(0 <= s < 2**62 for s in seeds)


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--backend", "mpi"], "--backend: invalid choice: 'mpi' (choose from 'local', 'ray')"),
        (["--backend", "ray", "--actors", "0"], "--actors must be at least 1, got 0"),
        (["--address", "auto"], "--address needs --backend ray"),
        (["--backend", "ray", "--max-policy-lag", "-1"], "--max-policy-lag must be at least 0"),
    ],
)
def test_bad_backend_flags_are_refused_in_one_line(flags, message, tmp_path, capsys):
    try:
        code = spades(["train", "ppo", "--runs-dir", str(tmp_path), "--no-progress", *flags])
    except SystemExit as exc:  # argparse's own refusal (a value outside the choices)
        code = exc.code
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and "\n" not in err
    assert not any(tmp_path.iterdir())  # refused before the run folder is made


@pytest.mark.parametrize(
    ("address", "message"),
    [("headnode", "give auto or HOST:PORT"), ("127.0.0.1:1", "nothing answers there")],
)
def test_a_bad_cluster_address_is_refused_at_once(address, message):
    with pytest.raises(ValueError, match=message):
        ray_rollout.check_address(address, timeout=2.0)


def test_without_ray_the_error_says_how_to_install_it(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError
    code = spades(["train", "dmc", "--backend", "ray", "--runs-dir", str(tmp_path)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and err.endswith("install the ray extra: pip install -e '.[ray]'")
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.cli
def test_cli_trains_on_ray_actors_in_a_subprocess(tmp_path):
    pytest.importorskip("ray")
    flags = ["--backend", "ray", "--actors", "2", "--runs-dir", str(tmp_path)]
    flags += ["--total-timesteps", str(4 * GAMES * DECISIONS), "--num-games", str(GAMES)]
    flags += ["--hidden", "16", "--eval-deals", "2", "--save-every", "2", "--no-progress"]
    out = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "train", "ppo", *flags],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert out.returncode == 0, out.stderr
    [run_dir] = tmp_path.iterdir()
    assert (run_dir / "final.pt").exists() and "run folder" in out.stderr
    assert "charts/policy_lag" in scalars(run_dir)
