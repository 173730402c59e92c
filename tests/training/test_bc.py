"""Distillation: datasets in shards (resume, corrupt and foreign shards), agreement, --init."""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from slow_cases import first_by_default

torch = pytest.importorskip("torch")  # the train extra

from agents.learned.checkpoint import CheckpointError, read_checkpoint
from agents.registry import AgentSpec, parse_agent
from spades_env.cards import NUM_ACTIONS
from spades_env.observation import OBS_VERSION
from spades_env.rules import Rules
from training import bc, ppo_selfplay
from training.bc_data import (
    COLUMNS,
    DatasetError,
    DatasetSpec,
    generate,
    load_dataset,
    open_dataset,
    play_shard,
    read_meta,
    shard_path,
    spec_of,
)

ROOT = Path(__file__).resolve().parents[2]


def dataset(teacher: str = "heuristic", **kw) -> DatasetSpec:
    """A dataset of `teacher` (parsed), the standard rules unless `rules` gives options."""
    fields = {"rules": "", "seed": 3, "shards": 3, "hands_per_shard": 20, **kw}
    return DatasetSpec.from_fields(parse_agent(teacher), **fields)


SPEC = dataset()


def tiny_bc(runs: Path, **kw) -> bc.Args:
    base = {
        "runs_dir": str(runs),
        "hands": 600,
        "hands_per_shard": 150,
        "hidden": "128",
        "epochs": 3,
        "batch_size": 256,
        "holdout": 0.25,
        "eval_deals": 4,
    }
    return bc.Args(**{**base, **kw})


@pytest.fixture(scope="module")
def bc_run(tmp_path_factory) -> Path:
    return bc.train(tiny_bc(tmp_path_factory.mktemp("runs")))


def test_distillation_agrees_with_the_heuristic_on_held_out_states(bc_run):
    """600 hands, 3 epochs, one 128-unit layer: well above chance on held-out states."""
    summary = json.loads((bc_run.parent / "summary.json").read_text())
    last = summary["rounds"][-1]
    held = load_dataset(summary["data"][0], [3])  # the held-out shard (last quarter)
    chance = float((1.0 / held["mask"].sum(axis=1)).mean())  # a random legal action
    assert chance < 0.35
    assert last["agreement"] >= 0.5 and last["agreement"] >= chance + 0.2
    assert last["agreement_play"] >= 0.5 and last["agreement_bid"] >= 0.25
    ckpt = read_checkpoint(bc_run)
    assert ckpt["network"]["kind"] == "split" and "optimizer" not in ckpt
    assert summary["evaluation"]["heuristic"]["deals"] == 4


def test_a_distillation_run_logs_its_hyperparameters_for_tensorboard(bc_run):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.plugins.hparams import plugin_data_pb2

    ea = EventAccumulator(str(bc_run.parent))  # the run folder
    ea.Reload()
    assert "hyperparameters/text_summary" in ea.Tags()["tensors"]
    content = ea.PluginTagToContent("hparams")
    experiment = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/experiment"])
    metrics = {m.name.tag for m in experiment.experiment.metric_infos}
    assert metrics == {"eval/agreement", "eval/value_mse"} <= set(ea.Tags()["scalars"])
    start = plugin_data_pb2.HParamsPluginData.FromString(content["_hparams_/session_start_info"])
    assert start.session_start_info.hparams["epochs"].number_value == 3
    assert start.session_start_info.hparams["teacher"].string_value == "heuristic"


def test_dataset_rows_are_the_teachers_legal_decisions(tmp_path):
    generate(tmp_path / "d", SPEC)
    rows = load_dataset(tmp_path / "d")
    assert set(rows) == set(COLUMNS)
    k = len(rows["action"])
    assert rows["obs"].dtype == np.int16 and rows["mask"].shape == (k, NUM_ACTIONS)
    assert rows["mask"][np.arange(k), rows["action"]].all()  # the label is legal
    assert (rows["mask"].sum(axis=1) > 1).all()  # forced moves are left out
    assert 40 * 60 <= k <= 56 * 60


def _same_rows(a: Path, b: Path) -> None:
    ra, rb = load_dataset(a), load_dataset(b)
    for c in COLUMNS:
        np.testing.assert_array_equal(ra[c], rb[c])


@pytest.mark.cli
def test_a_killed_generation_resumes_without_lost_or_doubled_shards(tmp_path):
    spec = dataset(seed=4, shards=8, hands_per_shard=60)
    generate(tmp_path / "whole", spec)
    code = (
        "import sys; from agents.registry import parse_agent; "
        "from training.bc_data import DatasetSpec, generate; "
        "generate(sys.argv[1], DatasetSpec.from_fields(parse_agent('heuristic'), '', 4, 8, 60))"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    killed = tmp_path / "killed"
    proc = subprocess.Popen([sys.executable, "-c", code, str(killed)], env=env, cwd=ROOT)
    deadline = time.monotonic() + 120
    while not shard_path(killed, 1).exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done_before = sorted(p.name for p in killed.glob("shard_*.npz"))
    assert 1 < len(done_before) < spec.shards  # killed in the middle
    generate(killed, spec)
    assert sorted(p.name for p in killed.iterdir()) == sorted(
        p.name for p in (tmp_path / "whole").iterdir()
    )  # no temporary files left, no shard missing or extra
    _same_rows(killed, tmp_path / "whole")


def test_a_grown_dataset_keeps_its_shards(tmp_path):
    generate(tmp_path / "d", SPEC)
    first = shard_path(tmp_path / "d", 0).stat().st_mtime_ns
    grown = dataclasses.replace(SPEC, shards=4)
    generate(tmp_path / "d", grown)
    assert shard_path(tmp_path / "d", 0).stat().st_mtime_ns == first
    generate(tmp_path / "e", grown)
    _same_rows(tmp_path / "d", tmp_path / "e")


def test_shards_made_by_two_processes_are_the_shards_of_one(tmp_path):
    spec = dataset(seed=5, shards=4, hands_per_shard=30)
    generate(tmp_path / "one", spec)
    seen = []
    generate(tmp_path / "two", spec, progress=lambda done, total: seen.append((done, total)),
             workers=2)  # fmt: skip
    assert seen == [(1, 4), (2, 4), (3, 4), (4, 4)]
    _same_rows(tmp_path / "one", tmp_path / "two")


def test_a_student_dataset_holds_the_states_of_the_students_play(bc_run, tmp_path):
    """--student: the first dataset's seats are the checkpoint's (all of them here); the
    teacher still labels every decision, so the labels differ from the actions played."""
    args = tiny_bc(tmp_path, hands=60, hands_per_shard=30, epochs=1, eval_deals=0,
                   student=str(bc_run), student_frac=1.0, teacher="random")  # fmt: skip
    bc.train(args)
    meta = json.loads((tmp_path / "data" / "random__1" / "meta.json").read_text())
    assert meta["student"] == str(bc_run) and meta["student_frac"] == 1.0
    teacher_only = dataset("random", seed=1, shards=2, hands_per_shard=30)
    generate(tmp_path / "teacher", teacher_only)
    a, b = load_dataset(tmp_path / "data" / "random__1"), load_dataset(tmp_path / "teacher")
    assert len(a["obs"]) != len(b["obs"]) or (a["obs"] != b["obs"]).any()  # other states


def test_the_anchor_keeps_the_network_near_its_start(bc_run, tmp_path):
    """Random labels pull the distilled network away; the KL term holds it back."""
    init = read_checkpoint(bc_run)
    held = load_dataset(json.loads((bc_run.parent / "summary.json").read_text())["data"][0], [3])
    obs, mask = torch.from_numpy(held["obs"]), torch.from_numpy(held["mask"])
    start = bc.build_network(init["network"], bc.Rules())
    start.load_state_dict(init["model"])

    def drift(anchor_coef: float) -> float:
        runs = tmp_path / f"a{anchor_coef}"
        final = bc.train(tiny_bc(runs, teacher="random", init=str(bc_run), epochs=4,
                                 learning_rate=3e-3, eval_deals=0, vf_coef=0.0,
                                 anchor_coef=anchor_coef))  # fmt: skip
        net = bc.build_network(init["network"], bc.Rules())
        net.load_state_dict(read_checkpoint(final)["model"])
        with torch.no_grad():
            p = torch.log_softmax(start(obs, mask)[0], dim=1)
            q = torch.log_softmax(net(obs, mask)[0], dim=1)
        return float((p.exp() * (p - q)).sum(dim=1).mean())

    free, anchored = drift(0.0), drift(5.0)
    assert free > 0.2 and anchored < free / 3


def test_another_dataset_in_the_same_folder_is_refused(tmp_path):
    generate(tmp_path / "d", SPEC)
    other = dataclasses.replace(SPEC, teacher=parse_agent("random"))
    with pytest.raises(DatasetError, match=r"holds other data .*teacher"):
        generate(tmp_path / "d", other)


def test_meta_json_holds_the_text_the_spec_was_given_as(tmp_path):
    """In memory the teacher and the rules are values; meta.json holds the text they were
    given as (the teacher as written, the options on top of the preset), its keys in the
    order they always had, and reads back (its rules built once) to the same data."""
    rules = Rules.build("standard", ["target=300", "nil_tricks=count"])
    spec = DatasetSpec(parse_agent(" random "), rules, 1, 2, 3,
                       options="target=300,nil_tricks=count", teacher_text=" random ")  # fmt: skip
    folder = open_dataset(tmp_path / "d", spec)
    assert (folder / "meta.json").read_text() == json.dumps(spec.meta(), indent=1)
    meta = read_meta(folder)
    assert list(meta) == [
        "format", "format_version", "obs_version", "num_actions", "rules_dict", "teacher",
        "rules", "seed", "shards", "hands_per_shard", "student", "student_frac",
    ]  # fmt: skip
    assert meta["teacher"] == " random " and meta["rules"] == "target=300,nil_tricks=count"
    assert meta["rules_dict"] == rules.to_dict()
    back = spec_of(meta)
    assert back.teacher == " random " and back.rules == rules
    assert back.meta() == spec.meta() and back.dataset_id == spec.dataset_id
    assert back.fields() == {
        **{k: meta[k] for k in spec.fields() if k in meta},
        "preset": "standard",
    }
    other = DatasetSpec.from_fields(parse_agent("random"), "", 1, 2, 3, preset="cutthroat")
    assert list(other.meta())[-1] == "preset" and other.meta()["preset"] == "cutthroat"
    assert spec_of(other.meta()).rules == other.rules == Rules.build("cutthroat")


def test_a_dataset_of_a_persons_decisions_is_named_not_played(tmp_path):
    """A person's decisions (a web table's) have a name, not an agent spec: the dataset
    is written and read back under it, and no shard is played from it."""
    spec = DatasetSpec.from_fields("human:p1", "", 0, 1, 1)
    meta = read_meta(open_dataset(tmp_path / "d", spec))
    assert meta["teacher"] == "human:p1" and spec_of(meta).teacher == "human:p1"
    with pytest.raises(DatasetError, match="human:p1"):
        play_shard(spec, 0)
    with pytest.raises(TypeError, match="from_fields"):
        DatasetSpec(parse_agent("random"), "", 0, 1, 1)  # the rules' text, not a Rules


def test_check_args_reads_each_spec_once_and_builds_no_agent(tmp_path, monkeypatch):
    seen = []
    real = bc.parse_agent
    monkeypatch.setattr(
        bc, "parse_agent", lambda text, rules=None: seen.append(text) or real(text, rules)
    )
    monkeypatch.setattr(bc, "make_agent", lambda *a, **k: pytest.fail("an agent was built"))
    checked = bc.check_args(tiny_bc(tmp_path, teacher="random", eval_search="heuristic"))
    assert seen == ["random", "heuristic"]
    assert isinstance(checked.teacher, AgentSpec) and checked.teacher.text == "random"
    assert checked.eval_search is not None and checked.eval_search.text == "heuristic"
    assert checked.rules == Rules()


def test_a_distillation_run_reads_its_teacher_and_rules_once(tmp_path, monkeypatch):
    """The teacher's text is read once, where the flag comes in, and is the evaluation's
    heuristic too; the rules are built from the flags once: reading back the run's own
    dataset (its training and held-out shards, the summary) builds them no more."""
    parsed, built = [], []
    real_parse, real_build = bc.parse_agent, Rules.build.__func__

    def build(cls, preset="standard", options=()):
        built.append((preset, tuple(options)))
        return real_build(cls, preset, options)

    monkeypatch.setattr(
        bc, "parse_agent", lambda text, rules=None: parsed.append(text) or real_parse(text, rules)
    )
    monkeypatch.setattr(Rules, "build", classmethod(build))
    bc.train(tiny_bc(tmp_path, hands=40, hands_per_shard=20, epochs=1, eval_deals=2,
                     option=("target=300",)))  # fmt: skip
    assert parsed == ["heuristic"]
    assert built == [("standard", ("target=300",))]


@pytest.mark.parametrize(
    ("damage", "message"),
    [
        ("garbage", "is corrupt"),
        ("truncated", "is corrupt"),
        ("foreign", "belongs to another dataset"),
        ("missing", "lacks 1 of its 3 shards"),
    ],
)
def test_a_corrupt_or_foreign_shard_gets_a_clear_error(damage, message, tmp_path):
    generate(tmp_path / "d", SPEC)
    target = shard_path(tmp_path / "d", 1)
    if damage == "garbage":
        target.write_bytes(b"not a shard" * 50)
    elif damage == "truncated":
        target.write_bytes(target.read_bytes()[:1000])
    elif damage == "foreign":  # the same shard index of another dataset
        other = dataclasses.replace(SPEC, seed=99)
        generate(tmp_path / "o", other)
        target.write_bytes(shard_path(tmp_path / "o", 1).read_bytes())
    else:
        target.unlink()
    with pytest.raises(DatasetError, match=message) as err:
        load_dataset(tmp_path / "d")
    assert len(str(err.value).splitlines()) == 1 and str(target.parent) in str(err.value)


def test_ppo_init_starts_from_the_distilled_weights(bc_run, tmp_path):
    args = ppo_selfplay.Args(
        runs_dir=str(tmp_path),
        init=str(bc_run),
        total_timesteps=12 * 56,
        num_games=12,
        num_minibatches=2,
        eval_deals=4,
        eval_every=0,
        kl_coef=0.5,
    )
    final = ppo_selfplay.train(args)
    start, end = read_checkpoint(bc_run), read_checkpoint(final)
    assert end["network"] == start["network"]  # the split net, not --hidden's MLP
    moved = [k for k in start["model"] if not torch.equal(start["model"][k], end["model"][k])]
    assert moved  # it trained from there


def _variant(good: Path, tmp_path: Path, key: str, value) -> Path:
    ckpt = dict(torch.load(good, weights_only=True))
    ckpt[key] = value
    path = tmp_path / f"{key}.pt"
    torch.save(ckpt, path)
    return path


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("obs_version", OBS_VERSION + 1, "observation encoding version"),
        ("num_actions", NUM_ACTIONS - 4, f"with {NUM_ACTIONS - 4} actions"),
    ],
)
def test_init_refuses_another_encoding_or_action_count(key, value, message, bc_run, tmp_path):
    path = _variant(bc_run, tmp_path, key, value)
    args = ppo_selfplay.Args(runs_dir=str(tmp_path / "runs"), init=str(path), eval_every=0)
    with pytest.raises(CheckpointError, match=message) as err:
        ppo_selfplay.train(args)
    assert len(str(err.value).splitlines()) == 1
    assert not (tmp_path / "runs").exists()  # refused before the run folder is made


def test_a_checkpoint_with_nan_weights_is_refused(bc_run, tmp_path):
    ckpt = dict(torch.load(bc_run, weights_only=True))
    model = dict(ckpt["model"])
    name = next(k for k in model if k.endswith("weight"))
    model[name] = model[name].clone()
    model[name][0, 0] = float("nan")
    ckpt["model"] = model
    torch.save(ckpt, tmp_path / "nan.pt")
    with pytest.raises(CheckpointError, match=r"non-finite .*NaN or inf") as err:
        read_checkpoint(tmp_path / "nan.pt")
    assert len(str(err.value).splitlines()) == 1 and name in str(err.value)


def _cli(*argv: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    cmd = [sys.executable, "-m", "experiments.cli", *argv]
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.cli
def test_cli_train_bc_then_ppo_init(tmp_path):
    runs = tmp_path / "runs"
    bc_flags = ["--hands", "100", "--hands-per-shard", "50", "--epochs", "1", "--hidden", "32"]
    done = _cli("train", "bc", *bc_flags, "--eval-deals", "2", "--runs-dir", str(runs),
                "--no-progress", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    [final] = runs.glob("bc__1__*/final.pt")
    assert len(list((runs / "data" / "heuristic__1").glob("shard_*.npz"))) == 2
    done = _cli("train", "ppo", "--init", str(final), "--total-timesteps", "600",
                "--num-games", "12", "--eval-every", "0", "--runs-dir", str(runs),
                "--no-progress", cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert read_checkpoint(next(runs.glob("ppo_selfplay__1__*/final.pt")))["network"]["kind"] == (
        "split"
    )


@pytest.mark.cli
def test_cli_init_refuses_a_foreign_checkpoint_in_one_line(bc_run, tmp_path):
    path = _variant(bc_run, tmp_path, "num_actions", NUM_ACTIONS + 1)
    done = _cli("train", "ppo", "--init", str(path), "--runs-dir", str(tmp_path / "runs"),
                "--no-progress", cwd=tmp_path)  # fmt: skip
    assert done.returncode != 0
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert "actions" in done.stderr and not (tmp_path / "runs").exists()


def test_the_learned_agent_is_shipped_with_its_recipe():
    from agents.learned.agent import LEARNED
    from agents.registry import make_agent, parse_agent
    from spades_env.engine import legal_action_mask
    from spades_env.rules import Rules
    from spades_env.state import init

    assert LEARNED.stat().st_size < 5_000_000
    agent = make_agent(parse_agent("learned"))
    state = init(Rules(), 4, np.random.default_rng(0))
    actions = agent.act_state(state)
    assert actions.shape == (4,) and legal_action_mask(state)[np.arange(4), actions].all()
    meta = json.loads(LEARNED.with_suffix(".json").read_text())
    assert meta["recipe"] and all("command" in step for step in meta["recipe"])
    assert "margin_vs_heuristic" in meta["results"]


def test_learned2_is_the_network_alone_and_differs_from_learned():
    """`learned2` plays from its own file, without the solver unless asked."""
    from agents.learned.agent import LEARNED, LEARNED2
    from agents.registry import make_agent, parse_agent
    from spades_env.engine import legal_action_mask
    from spades_env.observation import encode
    from spades_env.rules import Rules
    from spades_env.state import init

    assert LEARNED2.stat().st_size < 5_000_000
    agent = make_agent(parse_agent("learned2"))
    assert agent.path == str(LEARNED2) and agent.endgame is None
    assert make_agent(parse_agent("learned2:endgame=3")).endgame is not None
    state = init(Rules(), 64, np.random.default_rng(0))
    actions = agent.act_state(state)
    assert legal_action_mask(state)[np.arange(64), actions].all()
    obs, mask = encode(state), legal_action_mask(state)
    new = agent.preferences(obs, mask)
    old = make_agent(parse_agent("learned:endgame=0")).preferences(obs, mask)
    assert not np.allclose(new, old)  # other weights
    meta = json.loads(LEARNED2.with_suffix(".json").read_text())
    assert meta["file"] == LEARNED2.name and meta["recipe_wall_minutes"] <= 120
    assert str(LEARNED.name) not in meta["file"]


@pytest.mark.parametrize(
    ("flags", "message"),
    first_by_default(
        [
            (["--teacher", "nosuch"], "unknown agent 'nosuch'"),
            (["--hands", "0"], "--hands 0"),
            (["--extra-data", "."], "is not a dataset"),
            (["--anchor-coef", "1"], "--anchor-coef needs --init"),
            (["--workers", "0"], "--workers 0"),
            (["--student", "nosuch.pt"], "nosuch.pt"),
        ],
        keep=2,
        several=True,
    ),
)
@pytest.mark.cli
def test_cli_train_bc_refuses_bad_flags_in_one_line(flags, message, tmp_path):
    done = _cli("train", "bc", *flags, "--runs-dir", str(tmp_path / "runs"), cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()] and message in done.stderr
    assert not (tmp_path / "runs").exists()
