"""Training scripts on tiny budgets: TensorBoard tags, checkpoints, resume, RL agents."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")  # the train extra

from agents.learned.agent import (
    SHIPPED,
    RLAgent,
)
from agents.learned.checkpoint import CheckpointError, read_checkpoint, save_checkpoint
from agents.learned.networks import PolicyValueNet
from agents.registry import AgentSpecError, make_agent, parse_agent, parse_spec
from experiments.cli.app import main as spades
from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import run_tournament
from spades_env.cards import NUM_ACTIONS
from spades_env.engine import legal_action_mask
from spades_env.observation import OBS_VERSION, encode
from spades_env.rules import Rules
from spades_env.state import init
from training import dmc, ppo_selfplay
from training.checkpoint import (
    latest_checkpoint,
    restore_rngs,
)
from training.rollout import LEARNER, duplicate_owners, learner_batch, play_hands, seat_owners

TB = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
SCRIPTS = {"ppo": ppo_selfplay, "dmc": dmc}
COMMON_TAGS = {
    "charts/SPS",
    "charts/learning_rate",
    "charts/return_vs_heuristic",
    "eval/margin",
    "eval/margin_ci_low",
    "eval/margin_ci_high",
    "eval/bid_error",
    "eval/set_rate",
    "eval/nil_rate",
    "eval/SPS",
}
ALGO_TAGS = {
    "ppo": {"losses/value_loss", "losses/policy_loss", "losses/entropy", "losses/approx_kl"},
    "dmc": {"losses/q_loss", "charts/epsilon"},
}


def tiny(algo: str, runs: Path, **kw):
    """Args of a run of 3 updates of 12 hands, evaluated on 6 deals, small network."""
    base = {
        "runs_dir": str(runs),
        "total_timesteps": 3 * 12 * 56,
        "num_games": 12,
        "hidden": "32",
        "num_minibatches": 2,
        "eval_deals": 6,
        "eval_every": 2,
        "save_every": 2,
        "pool_size": 2,
        "selfplay_frac": 0.34,
        "heuristic_frac": 0.33,
    }
    return SCRIPTS[algo].Args(**{**base, **kw})


@pytest.fixture(scope="module")
def ppo_ckpt(tmp_path_factory) -> Path:
    runs = tmp_path_factory.mktemp("runs")
    return ppo_selfplay.train(tiny("ppo", runs))


def scalars(run_dir: Path) -> dict[str, list[tuple[int, float]]]:
    ea = TB.EventAccumulator(str(run_dir))
    ea.Reload()
    return {t: [(e.step, e.value) for e in ea.Scalars(t)] for t in ea.Tags()["scalars"]}


def hparams_of(ea: TB.EventAccumulator) -> dict[str, object]:
    """The hyperparameters of a run's HParams session, as TensorBoard's plugin decodes them."""
    from tensorboard.plugins.hparams import plugin_data_pb2

    data = plugin_data_pb2.HParamsPluginData.FromString(
        ea.SummaryMetadata("_hparams_/session_start_info").plugin_data.content
    )
    out: dict[str, object] = {}
    for name, value in data.session_start_info.hparams.items():
        kind = value.WhichOneof("kind")
        out[name] = getattr(value, kind)
    return out


# ----------------------------------------------------------------------------- runs
@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_tiny_run_writes_tensorboard_tags_and_checkpoints(algo, tmp_path):
    final = SCRIPTS[algo].train(tiny(algo, tmp_path))
    run_dir = final.parent
    assert final.name == "final.pt" and run_dir.name.startswith(
        f"{'ppo_selfplay' if algo == 'ppo' else 'dmc'}__1__"
    )
    tags = scalars(run_dir)
    assert COMMON_TAGS | ALGO_TAGS[algo] <= set(tags)
    assert tags["eval/margin"][0][0] == 0  # evaluated before training
    ea = TB.EventAccumulator(str(run_dir))
    ea.Reload()
    assert "hyperparameters/text_summary" in ea.Tags()["tensors"]
    hp = hparams_of(ea)  # TensorBoard's HParams tab reads these
    assert hp["seed"] == 1 and hp["exp_name"] == run_dir.name.split("__")[0]
    assert hp["total_timesteps"] == dataclasses.asdict(tiny(algo, tmp_path))["total_timesteps"]
    ckpt = read_checkpoint(final)
    assert ckpt["counters"]["update"] == 3 and ckpt["network"]["kind"] == algo
    assert "optimizer" not in ckpt  # the final checkpoint is slim
    assert sorted(p.name for p in (run_dir / "checkpoints").iterdir()) == [
        "update_000002.pt",
        "update_000003.pt",
    ]


@pytest.mark.parametrize("algo", ["ppo", "dmc"])
def test_resumed_run_equals_the_uninterrupted_one(algo, tmp_path):
    whole = SCRIPTS[algo].train(tiny(algo, tmp_path / "a", total_timesteps=5 * 12 * 56))
    stopped = SCRIPTS[algo].train(
        tiny(algo, tmp_path / "b", total_timesteps=5 * 12 * 56, stop_after=3)
    )
    assert stopped.name == "update_000003.pt"
    run_dir = stopped.parent.parent
    resumed = SCRIPTS[algo].train(tiny(algo, tmp_path / "ignored", resume=str(run_dir)))
    a, b = read_checkpoint(whole), read_checkpoint(resumed)
    assert a["counters"] == b["counters"]
    for k, v in a["model"].items():
        assert torch.equal(v, b["model"][k]), k
    steps = [s for s, _ in scalars(run_dir)["charts/SPS"]]
    assert steps == sorted(set(steps)) and len(steps) == 5  # no update logged twice


def test_same_seed_same_run(tmp_path):
    a = ppo_selfplay.train(tiny("ppo", tmp_path / "a", total_timesteps=12 * 56))
    b = ppo_selfplay.train(tiny("ppo", tmp_path / "b", total_timesteps=12 * 56))
    for k, v in read_checkpoint(a)["model"].items():
        assert torch.equal(v, read_checkpoint(b)["model"][k])


def test_resume_needs_a_run_folder_with_checkpoints(tmp_path):
    with pytest.raises(CheckpointError, match="no checkpoint"):
        latest_checkpoint(tmp_path)


# ----------------------------------------------------------------------------- checkpoints
def test_checkpoint_round_trip(tmp_path):
    args = tiny("ppo", tmp_path)
    net = ppo_selfplay.PolicyValueNet(Rules(), [16])
    opt = torch.optim.Adam(net.parameters())
    net(torch.zeros(2, 775, dtype=torch.int16), torch.ones(2, NUM_ACTIONS, dtype=torch.bool))[
        1
    ].sum().backward()
    opt.step()
    rng, gen = np.random.default_rng(5), torch.Generator().manual_seed(5)
    path = save_checkpoint(
        tmp_path / "c.pt",
        net,
        {"kind": "ppo", "hidden": [16]},
        dataclasses.asdict(args),
        Rules(target=300),
        {"update": 7, "global_step": 99, "learner_steps": 80},
        opt,
        rng,
        gen,
    )
    ckpt = read_checkpoint(path)
    assert ckpt["obs_version"] == OBS_VERSION and ckpt["counters"]["update"] == 7
    assert Rules.from_dict(ckpt["rules"]) == Rules(target=300)
    assert ckpt["args"] == dataclasses.asdict(args)
    for k, v in net.state_dict().items():
        assert torch.equal(v, ckpt["model"][k])
    opt2 = torch.optim.Adam(ppo_selfplay.PolicyValueNet(Rules(), [16]).parameters())
    opt2.load_state_dict(ckpt["optimizer"])
    expect = (rng.random(3), torch.rand(3, generator=gen))
    rng2, gen2 = np.random.default_rng(0), torch.Generator()
    restore_rngs(ckpt, rng2, gen2)
    assert (rng2.random(3) == expect[0]).all() and torch.equal(
        torch.rand(3, generator=gen2), expect[1]
    )


def _broken(kind: str, good: Path, tmp_path: Path) -> Path:
    path = tmp_path / f"{kind}.pt"
    if kind == "missing":
        return path
    if kind == "garbage":
        path.write_bytes(b"not a checkpoint at all" * 10)
    elif kind == "truncated":
        path.write_bytes(good.read_bytes()[:300])
    elif kind == "foreign":
        torch.save({"state_dict": {}}, path)
    elif kind == "obs_version":
        ckpt = dict(torch.load(good, weights_only=True))
        ckpt["obs_version"] = OBS_VERSION + 1
        torch.save(ckpt, path)
    elif kind == "nan_weights":  # a diverged run
        ckpt = dict(torch.load(good, weights_only=True))
        ckpt["model"] = {k: v.clone() for k, v in ckpt["model"].items()}
        ckpt["model"]["policy.bias"][3] = float("nan")
        torch.save(ckpt, path)
    return path


BROKEN = {
    "missing": "does not exist",
    # the agent reads it as a damaged checkpoint; the spec's check first asks what the file
    # is (agents/adapters/foreign_files.py): neither a zip nor a pickle
    "garbage": "not a (readable|torch) checkpoint",
    "truncated": "not a (readable|torch) checkpoint",
    "foreign": "not a spades checkpoint",
    "obs_version": "observation encoding version",
    "nan_weights": "non-finite",
}


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_a_bad_checkpoint_is_refused_with_its_reason(kind, ppo_ckpt, tmp_path):
    path = _broken(kind, ppo_ckpt, tmp_path)
    with pytest.raises(CheckpointError, match=BROKEN[kind]):
        RLAgent(path=path)
    with pytest.raises(AgentSpecError, match=BROKEN[kind]):
        make_agent(parse_agent(f"checkpoint:{path}"))


@pytest.mark.parametrize("kind", sorted(BROKEN))
def test_the_cli_refuses_a_bad_checkpoint_in_one_line(kind, ppo_ckpt, tmp_path, capsys):
    path = _broken(kind, ppo_ckpt, tmp_path)
    out = tmp_path / "t"
    code = spades(
        [
            "tournament",
            "--agents",
            f"checkpoint:{path},heuristic",
            "--deals",
            "2",
            "--out",
            str(out),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and re.search(BROKEN[kind], err)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert not out.exists()  # refused before the run folder is made


def test_other_rules_are_refused_game_length_is_not(ppo_ckpt, tmp_path, capsys):
    agent = RLAgent(path=ppo_ckpt)
    for rules in (Rules(target=300), Rules(max_hands=5)):
        state = init(rules, 2, np.random.default_rng(0))
        agent.act_state(state)  # game length may differ
    state = init(Rules(nil_tricks="count"), 2, np.random.default_rng(0))
    with pytest.raises(CheckpointError, match="nil_tricks=bags/count"):
        agent.act_state(state)
    code = spades(
        [
            "tournament",
            "--agents",
            f"checkpoint:{ppo_ckpt},heuristic",
            "--deals",
            "2",
            "--option",
            "nil_tricks=count",
            "--workers",
            "1",
            "--out",
            str(tmp_path / "t"),
            "--no-progress",
        ]
    )
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    # The tournament announces itself first; the refusal is one line, the last.
    [error] = [line for line in err.splitlines() if "error" in line]
    assert error == err.strip().splitlines()[-1] and "trained on other rules" in error


# ----------------------------------------------------------------------------- agents
def test_checkpoint_spec_takes_a_path_and_options(ppo_ckpt):
    assert parse_spec(f"checkpoint:{ppo_ckpt},sample=true") == (
        "checkpoint",
        {"path": str(ppo_ckpt), "sample": True},
    )
    with pytest.raises(AgentSpecError, match="checkpoint:PATH"):
        parse_spec("checkpoint")


@pytest.mark.parametrize("sample", [False, True])
def test_checkpoint_agent_plays_a_duplicate_tournament(sample, ppo_ckpt, tmp_path):
    spec = f"checkpoint:{ppo_ckpt}" + (",sample=true" if sample else "")
    cfg = TournamentConfig(agents=(spec, "heuristic"), deals=4, chunk=4)
    summary = run_tournament(tmp_path / "t", cfg, workers=1)
    [pair] = summary["pairs"]
    assert pair["deals"] == 4 and pair["a"] == spec


def test_train_cli_runs_and_resumes(tmp_path, capsys):
    flags = [
        "--runs-dir",
        str(tmp_path),
        "--total-timesteps",
        "700",
        "--num-games",
        "8",
        "--hidden",
        "16",
        "--eval-deals",
        "2",
        "--save-every",
        "1",
        "--no-progress",
    ]
    assert spades(["train", "dmc", *flags, "--stop-after", "1"]) == 0
    [run_dir] = tmp_path.iterdir()
    assert spades(["train", "dmc", "--resume", str(run_dir), "--no-progress"]) == 0
    assert (run_dir / "final.pt").exists()
    assert "run folder" in capsys.readouterr().err


# ----------------------------------------------------------------------------- rollouts
def test_rollout_mix_and_duplicate_seating():
    owner = seat_owners(8, Rules(), 0.25, 0.25, 2, np.random.default_rng(0))
    assert (owner[:2] == LEARNER).all()  # self-play games
    assert ((owner[2:4] == 1).sum(axis=1) == 2).all()  # one partnership is the heuristic
    assert ((owner[4:] >= 2).sum(axis=1) == 2).all()  # past selves
    dup = duplicate_owners(2, Rules())  # the tournament's seating (spades_env.duplicate)
    assert dup.tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]] * 2
    cutthroat = duplicate_owners(1, Rules.preset("cutthroat"))  # teams of one: every 2nd seat
    assert cutthroat.tolist() == [[0, 1, 0, 1], [1, 0, 1, 0]]
    assert duplicate_owners(1, Rules.preset("cutthroat_5"), opponent=3).tolist() == [
        [0, 3, 0, 3, 0],
        [3, 0, 3, 0, 3],
    ]


def test_learner_batch_targets_are_the_seat_returns():
    rules = Rules()
    state = init(rules, 3, np.random.default_rng(1))

    def learner(obs, mask):
        acts = (np.random.default_rng(0).random(mask.shape) * mask).argmax(axis=1)
        return acts, np.zeros(len(acts), np.float32), np.full(len(acts), 0.5, np.float32)

    hands = play_hands(state, np.zeros((3, 4), dtype=np.int64), learner, [])
    returns = hands.seat_returns(rules, 0.01)
    assert np.allclose(returns[:, 0], -returns[:, 1]) and np.allclose(returns[:, 0], returns[:, 2])
    batch = learner_batch(hands, returns, gamma=1.0, lam=1.0)
    assert (batch["mask"].sum(axis=1) > 1).all()  # forced moves dropped
    assert np.allclose(batch["adv"], batch["mc"] - 0.5)  # lambda = 1: return minus value
    assert set(np.round(batch["mc"], 4)) <= set(np.round(returns.ravel(), 4))


@pytest.mark.parametrize("rows", [1, 63, 64, 70])
def test_rollout_sampling_pads_rows_without_changing_them(rows):
    """The rollout's forward pass pads its rows to a multiple of `PAD_ROWS` (one compiled
    product per shape): each row's value and log-probability are the network's own."""
    rules = Rules()
    state = init(rules, rows, np.random.default_rng(2))
    obs, mask = encode(state), legal_action_mask(state)
    net = PolicyValueNet(rules, [16]).eval()
    act = ppo_selfplay.sampling_fn(net, torch.device("cpu"), torch.Generator().manual_seed(0))
    action, logp, value = act(obs, mask)
    assert action.shape == logp.shape == value.shape == (rows,)
    assert mask[np.arange(rows), action].all()
    with torch.no_grad():
        logits, v = net(torch.from_numpy(obs), torch.from_numpy(mask))
        want = torch.log_softmax(logits, 1)[torch.arange(rows), torch.from_numpy(action)]
    assert np.allclose(value, v.numpy(), atol=1e-5) and np.allclose(logp, want.numpy(), atol=1e-5)


@pytest.mark.parametrize("kind", ["ppo", "split"])
def test_the_rollouts_bf16_copy_computes_what_the_network_does(kind):
    """`half_copy` stores the weights in bf16 once; under autocast its outputs are the
    network's own, bit for bit (the input scales stay float32)."""
    from agents.learned.networks import autocast, build_network, network_config

    rules = Rules()
    state = init(rules, 50, np.random.default_rng(4))
    obs, mask = torch.from_numpy(encode(state)), torch.from_numpy(legal_action_mask(state))
    net = build_network(network_config(kind, [32, 16]), rules).eval()
    half = ppo_selfplay.half_copy(net, torch.bfloat16)
    assert half.scaler.inv_scale.dtype == torch.float32
    with torch.inference_mode(), autocast(torch.device("cpu"), "bf16"):
        mine, want = half(obs, mask), net(obs, mask)
    assert all(torch.equal(a, b) for a, b in zip(mine, want, strict=True))


def test_shipped_checkpoint_is_small_and_plays():
    path = SHIPPED  # agents/learned/checkpoints/ppo_small.pt, which the `ppo` entry loads
    assert path.exists(), f"{path}: the shipped checkpoint is missing"
    assert path.stat().st_size < 5_000_000
    agent = make_agent(parse_agent("ppo"))
    state = init(Rules(), 4, np.random.default_rng(0))
    assert agent.act_state(state).shape == (4,)
    meta = json.loads(path.with_suffix(".json").read_text())
    assert "command" in meta


def test_learning_curve_png_from_tensorboard(ppo_ckpt, tmp_path):
    pytest.importorskip("matplotlib")
    from training.curves import plot_learning_curve, read_scalars

    run_dir = ppo_ckpt.parent
    assert "eval/margin" in set(read_scalars(run_dir)["tag"])
    png = plot_learning_curve(run_dir, tmp_path / "curve.png")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_the_fixed_opponent_is_the_agent_opponent_names():
    """--opponent SPEC plays the --heuristic-frac games: the same untrained network
    scores far more against random than against the shipped `learned`."""
    from training.backend import fixed_opponent, mix_rollout
    from training.evaluation import greedy_fn
    from training.session import prepare_args

    rules = Rules()
    torch.manual_seed(0)
    net = PolicyValueNet(rules, [32])
    learner = greedy_fn(net, torch.device("cpu"))
    means = {}
    for spec in ("random", "learned"):
        args = tiny("ppo", Path("unused"), num_games=64, selfplay_frac=0.0,
                    heuristic_frac=1.0, opponent=spec)  # fmt: skip
        opponent = fixed_opponent(prepare_args(args, "ppo").opponent, 0)
        assert opponent.name == spec
        hands = mix_rollout(args, rules, learner, opponent, [], np.random.default_rng(1))
        owner = hands.owner == LEARNER
        means[spec] = float(hands.seat_returns(rules, 1.0)[owner].mean())
    assert means["random"] > means["learned"] + 50
    assert type(fixed_opponent(None, 0)).__name__ == "HeuristicAgent"  # no --opponent


def test_an_unknown_opponent_is_refused_before_the_run(tmp_path):
    from training.session import check_args

    with pytest.raises(AgentSpecError, match="nosuch"):
        check_args(tiny("ppo", tmp_path, opponent="nosuch"))
    assert not any(tmp_path.iterdir())
