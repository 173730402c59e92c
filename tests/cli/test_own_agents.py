"""A user's own agent in every command: by file path, by module, from an installed plugin,
and the SB3 adapter; named with `NAME=SPEC`, rebuilt by workers and by `--resume`
(agents.registry). The command line runs as a subprocess, as a newcomer would run it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
from cli_helpers import REPO, kill_9, one_line_error, spades, start, wait_for_rows, without_timing

from agents import from_function, from_module
from agents.adapters import sources
from agents.registry import AgentSpecError, make_agent, parse_agent, split_specs
from experiments.cli.app import main
from experiments.tournament.results_log import read_rows

LOWCARD = '''
"""A newcomer's bot, outside the project: the legal action of lowest (high=true: highest)
number."""
import numpy as np

from agents.base import BaseAgent


class LowCard(BaseAgent):
    def __init__(self, seed=None, high: bool = False):
        super().__init__(seed)
        self.high = high

    def act(self, view, obs, mask):
        idx = np.arange(mask.shape[1])
        return np.where(mask, idx if self.high else -idx, -(10**9)).argmax(axis=1)
'''

PLUGIN = '''
"""A pip-installed plugin's agent: a seeded random choice among the two lowest actions."""
import numpy as np

from agents.base import BaseAgent


class Lowish(BaseAgent):
    def act(self, view, obs, mask):
        out = []
        for row in mask:
            legal = np.flatnonzero(row)[:2]
            out.append(self.rng.choice(legal))
        return np.array(out, dtype=np.int64)
'''


def _env(*paths: Path) -> dict[str, str]:
    """The environment of a `spades` subprocess with `paths` on its PYTHONPATH."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([*map(str, paths), env.get("PYTHONPATH", "")])
    return env


@pytest.fixture(scope="module")
def user_file(tmp_path_factory) -> Path:
    """lowcard.py in a folder of the user's, outside the project."""
    path = tmp_path_factory.mktemp("user") / "lowcard.py"
    path.write_text(LOWCARD)
    return path


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory) -> Path:
    """A site folder holding an 'installed' plugin package: its module and a dist-info
    whose entry_points.txt declares `lowish` in the group spades_env.agents, as pip
    would install it (nothing goes into the shared environment)."""
    site = tmp_path_factory.mktemp("site")
    (site / "lowish_plugin.py").write_text(PLUGIN)
    info = site / "lowish_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: lowish-plugin\nVersion: 0.1\n")
    (info / "entry_points.txt").write_text("[spades_env.agents]\nlowish = lowish_plugin:Lowish\n")
    return site


def rows_without_timing(run_dir: Path) -> list[dict]:
    return without_timing(read_rows(run_dir / "log.jsonl"))


# ----------------------------------------------------------------------------- command line
def test_a_file_agent_and_a_plugin_play_a_two_worker_tournament_under_their_names(
    tmp_path, user_file, plugin_site
):
    out = tmp_path / "r"
    agents = f"low={user_file}:LowCard,lowish,{user_file}:LowCard:high=true"
    proc = spades(
        "tournament", "--agents", agents, "--deals", "2", "--chunk", "2", "--workers", "2",
        "--no-progress", "--out", str(out), env=_env(plugin_site),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    for name in ("low", "lowish", "lowcard.py:LowCard:high=true"):
        assert name in proc.stdout
    assert str(user_file) not in proc.stdout  # no long path in the tables
    summary = json.loads((out / "summary.json").read_text())
    names = {r["agent"] for r in summary["ratings"]}
    assert names == {"low", "lowish", "lowcard.py:LowCard:high=true"}
    stored = json.loads((out / "config.json").read_text())["config"]["agents"]
    assert stored[0] == f"low={user_file.resolve()}:LowCard"  # absolute: workers find it
    assert {r["seats"][0] for r in read_rows(out / "log.jsonl")} == names


def test_a_relative_file_path_is_stored_absolute(tmp_path, user_file):
    """Run from the user's folder with `./lowcard.py`: the run's config holds the
    absolute path, so a resume from elsewhere finds the file."""
    out = tmp_path / "r"
    proc = subprocess.run(
        [sys.executable, "-m", "experiments.cli", "tournament", "--agents",
         "./lowcard.py:LowCard,random", "--deals", "2", "--workers", "1", "--no-progress",
         "--out", str(out)],
        cwd=user_file.parent, capture_output=True, text=True, env=_env(REPO), timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    stored = json.loads((out / "config.json").read_text())["config"]["agents"]
    assert stored == [f"{user_file.resolve()}:LowCard", "random"]
    assert "lowcard.py:LowCard" in proc.stdout


@pytest.mark.slow  # the kill -9 resume itself is tests/cli/test_cli_tournament.py's
def test_resume_after_kill_9_with_a_file_agent_and_a_plugin_equals_an_uninterrupted_run(
    tmp_path, user_file, plugin_site, monkeypatch, capsys
):
    args = ["--agents", f"low={user_file}:LowCard,lowish", "--deals", "80", "--chunk", "1"]
    args += ["--no-progress"]
    env = _env(plugin_site)
    killed = tmp_path / "killed"
    # two spawned workers, each rebuilding both agents
    proc = start("tournament", *args, "--out", str(killed), env=env, quiet=True)
    log = killed / "log.jsonl"
    wait_for_rows(proc, log, 20_001)
    kill_9(proc)  # the run's process group: the workers too
    assert len(read_rows(log)) < 160, "the kill came too late to test resume"

    resumed = spades("tournament", "--resume", "--out", str(killed), "--workers", "1", env=env)
    assert resumed.returncode == 0, resumed.stderr
    monkeypatch.syspath_prepend(str(plugin_site))  # the plugin, installed in this process
    sources.plugin_points.cache_clear()
    ref = tmp_path / "ref"
    try:
        assert main(["tournament", *args, "--workers", "1", "--out", str(ref)]) == 0
    finally:
        sources.plugin_points.cache_clear()
    capsys.readouterr()
    assert rows_without_timing(killed) == rows_without_timing(ref)
    assert len(rows_without_timing(ref)) == 160


def test_resume_with_an_agent_that_cannot_be_imported_says_what_to_do(
    tmp_path, user_file, plugin_site
):
    """The config is fine: the file moved, or the plugin is not installed here. One line
    names the file or the plugin, never 'damaged'; put back, the run resumes."""
    moved = tmp_path / "lowcard.py"
    shutil.copy(user_file, moved)
    out = tmp_path / "r"
    agents = f"low={moved}:LowCard,lowish"
    first = spades(
        "tournament", "--agents", agents, "--deals", "2", "--workers", "1", "--no-progress",
        "--out", str(out), env=_env(plugin_site),
    )  # fmt: skip
    assert first.returncode == 0, first.stderr

    no_plugin = spades("tournament", "--resume", "--out", str(out), "--no-progress")
    line = one_line_error(no_plugin)
    assert "damaged" not in line and "'lowish'" in line and "install its package" in line

    moved.rename(tmp_path / "elsewhere.py")
    gone = spades("tournament", "--resume", "--out", str(out), env=_env(plugin_site))
    line = one_line_error(gone)
    assert "damaged" not in line and str(moved) in line and "does not exist" in line

    (tmp_path / "elsewhere.py").rename(moved)
    back = spades(
        "tournament", "--resume", "--out", str(out), "--no-progress", env=_env(plugin_site)
    )
    assert back.returncode == 0, back.stderr


@pytest.mark.parametrize(
    "spec, words",
    [
        ("sb3", ["sb3:PATH"]),
        ("sb3x", ["unknown agent 'sb3x'", "path/to/file.py:Class"]),
        ("mybots.low:LowCard", ["'mybots'", "PYTHONPATH", "install"]),
        ("/no/such/lowcard.py:LowCard", ["/no/such/lowcard.py", "does not exist"]),
        ("my bot=heuristic", ["'my bot'", "letters"]),
    ],
)
def test_an_agent_that_cannot_be_found_is_one_line_saying_what_to_do(tmp_path, spec, words):
    proc = spades("tournament", "--agents", f"random,{spec}", "--out", str(tmp_path / "r"))
    line = one_line_error(proc)
    for word in words:
        assert word in line
    assert not (tmp_path / "r").exists()


def test_a_missing_class_names_the_agents_the_file_defines(tmp_path, user_file):
    proc = spades("tournament", "--agents", f"random,{user_file}:LowCrad", "--out", str(tmp_path))
    line = one_line_error(proc)
    assert "'LowCrad'" in line and "LowCard" in line


def test_a_name_given_twice_is_refused(tmp_path):
    proc = spades("tournament", "--agents", "a=random,a=heuristic", "--out", str(tmp_path / "r"))
    assert "'a'" in one_line_error(proc)


@pytest.fixture(scope="module")
def foreign_files(tmp_path_factory) -> dict[str, Path]:
    """Files a newcomer might give to checkpoint:: an SB3 zip (its layout: data and
    policy.pth), random bytes, a plain torch state_dict."""
    torch = pytest.importorskip("torch")
    d = tmp_path_factory.mktemp("foreign")
    with zipfile.ZipFile(d / "model.zip", "w") as z:
        z.writestr("data", json.dumps({"policy_class": {"__module__": "x"}}))
        z.writestr("policy.pth", b"")
    (d / "noise.pt").write_bytes(np.random.default_rng(0).bytes(4096).replace(b"\x80", b"\x00"))
    torch.save({"fc.weight": torch.zeros(2, 2), "fc.bias": torch.zeros(2)}, d / "weights.pt")
    return {"sb3": d / "model.zip", "noise": d / "noise.pt", "state_dict": d / "weights.pt"}


def test_checkpoint_given_an_sb3_zip_names_the_sb3_prefix(tmp_path, foreign_files):
    path = foreign_files["sb3"]
    proc = spades("tournament", "--agents", f"random,checkpoint:{path}", "--out", str(tmp_path))
    line = one_line_error(proc)
    assert "Stable-Baselines3" in line and f"sb3:{path}" in line
    assert "inline_container" not in line


@pytest.mark.parametrize(
    "kind, words",
    [("noise", ["not a torch checkpoint"]), ("state_dict", ["state_dict", "from_module"])],
)
def test_checkpoint_given_another_foreign_file_says_what_it_is(foreign_files, kind, words):
    with pytest.raises(AgentSpecError) as info:
        make_agent(parse_agent(f"checkpoint:{foreign_files[kind]}"))
    for word in words:
        assert word in str(info.value)


def test_sb3_without_stable_baselines3_installed_is_one_line(tmp_path, foreign_files):
    code = (
        "import sys; sys.modules['stable_baselines3'] = None; sys.modules['sb3_contrib'] = None\n"
        "from experiments.cli.app import main\n"
        f"sys.exit(main(['tournament', '--agents', 'random,sb3:{foreign_files['sb3']},algo=ppo',"
        f" '--out', {str(tmp_path / 'r')!r}]))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    line = one_line_error(proc)
    assert "stable_baselines3" in line and "pip install" in line


def test_demo_seats_a_file_agent_under_its_name(user_file):
    proc = spades("demo", "--hands", "1", "--agents", f"low={user_file}:LowCard,heuristic")
    assert proc.returncode == 0, proc.stderr
    assert "seats: North low, East heuristic, South low, West heuristic" in proc.stdout


# ----------------------------------------------------------------------------- Python
def test_named_agents_in_the_comma_list():
    text = (
        "mine=bots/x.py:Bot,pimc:worlds=16,policy=random,h2=heuristic,bot=m.n:C:depth=2,"
        "heuristic:bid=model,model=agents/heuristic/data/trick_model.json,p=sb3:m.zip"
    )
    assert split_specs(text) == (
        "mine=bots/x.py:Bot",
        "pimc:worlds=16,policy=random",
        "h2=heuristic",
        "bot=m.n:C:depth=2",
        "heuristic:bid=model,model=agents/heuristic/data/trick_model.json",
        "p=sb3:m.zip",
    )


def test_file_spec_options_are_typed_by_the_signature(user_file):
    agent = make_agent(parse_agent(f"hi={user_file}:LowCard:high=true"), seed=3)
    assert agent.name == "hi" and agent.high is True and agent.seed == 3
    with pytest.raises(AgentSpecError, match="no parameter 'depth'; known: high"):
        make_agent(parse_agent(f"{user_file}:LowCard:depth=2"))


def test_gym_and_vector_env_take_spec_strings_as_opponents():
    import gymnasium as gym

    import spades_env  # noqa: F401  (registers the env)
    from spades_env.vector_env import SpadesVectorEnv

    env = gym.make("spades_env/Spades-v0", opponents="heuristic")
    seats = env.unwrapped.opponents
    assert {a.name for a in seats.values()} == {"heuristic"}
    assert len({id(a) for a in seats.values()}) == 1  # one agent, batched over its seats
    _, info = env.reset(seed=0)
    for _ in range(30):
        _, _, done, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if done:
            break
    venv = SpadesVectorEnv(2, opponents={1: "heuristic", 2: "random", 3: "heuristic"})
    assert venv.reset(seed=0)[0].shape[0] == 2
    with pytest.raises(TypeError, match="agent spec"):
        gym.make("spades_env/Spades-v0", opponents=42)


def test_the_opponents_layer_builds_each_spec_once():
    """`agents.opponents` turns an env's `opponents=` value into agents: one agent per
    distinct spec string, objects and None kept."""
    from agents.opponents import OPPONENT_SEED, opponents
    from spades_env.rules import Rules

    table = opponents({1: "heuristic", 2: "random", 3: "heuristic"}, Rules())
    assert table[1] is table[3] and table[1].name == "heuristic"
    assert table[2].name == "random" and table[2].seed == OPPONENT_SEED
    mine = table[2]
    assert opponents(mine, Rules()) is mine and opponents(None, Rules()) is None
    assert [a.name for a in opponents(["heuristic", mine], Rules())] == ["heuristic", "random"]


def test_the_envs_resolve_spec_strings_only_through_the_resolver(monkeypatch):
    """The envs name no agents package: with no resolver registered and none declared, a
    spec string is refused in one line; pyproject declares agents.opponents.build."""
    import importlib.metadata
    import tomllib

    from agents.opponents import build
    from spades_env import spec_resolver
    from spades_env.env_common import opponent_table
    from spades_env.rules import Rules

    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    assert declared[spec_resolver.GROUP] == {"agents": "agents.opponents:build"}
    assert build("heuristic", Rules()).name == "heuristic"
    monkeypatch.setattr(spec_resolver, "_RESOLVER", [])
    monkeypatch.setattr(importlib.metadata, "entry_points", lambda group: [])
    with pytest.raises(TypeError, match="no installed package builds agents"):
        opponent_table("heuristic", (0,), Rules())
    assert opponent_table(None, (0,), Rules()) == {1: None, 2: None, 3: None}


def test_a_fresh_process_finds_the_resolver_through_its_entry_point(tmp_path):
    """In a process that never imported `agents`, the env finds the resolver the
    installed metadata declares (here a dist-info written as `pip install` writes one)."""
    dist = tmp_path / "spades_resolver_probe-0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: spades-resolver-probe\n")
    (dist / "entry_points.txt").write_text(
        "[spades_env.spec_resolvers]\nagents = agents.opponents:build\n"
    )
    code = (
        "import sys, gymnasium as gym, spades_env\n"
        "assert 'agents' not in sys.modules\n"  # the envs import no agents package
        "env = gym.make('spades_env/Spades-v0', opponents='heuristic')\n"
        "print(sorted({a.name for a in env.unwrapped.opponents.values()}))\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), str(tmp_path)])}
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['heuristic']"


def test_from_function_and_from_module_play_legal_actions(tmp_path):
    torch = pytest.importorskip("torch")
    from spades_env.cards import NUM_ACTIONS
    from spades_env.engine import legal_action_mask
    from spades_env.observation import encode, seat_view
    from spades_env.rules import Rules
    from spades_env.state import init

    state = init(Rules(), 8, np.random.default_rng(0))
    view, obs, mask = seat_view(state), encode(state), legal_action_mask(state)
    lowest = from_function(lambda o, m: np.flatnonzero(m)[0], name="lowest")
    assert (lowest.act(view, obs, mask) == mask.argmax(axis=1)).all()
    net = torch.nn.Linear(obs.shape[1], NUM_ACTIONS)
    for agent in (from_module(net), from_module(net, sample=True, seed=1)):
        actions = agent.act(view, obs, mask)
        assert mask[np.arange(8), actions].all()
    bad = from_function(lambda o, m: 79 if not m[79] else 0)
    with pytest.raises(ValueError, match="illegal action"):
        bad.act(view, obs, mask)
    # an agent object in a file is copied and reseeded for each use
    (tmp_path / "bots.py").write_text(
        "import numpy as np\nfrom agents import from_function\n"
        "bot = from_function(lambda o, m, rng: rng.choice(np.flatnonzero(m)))\n"
    )
    a, b = (make_agent(parse_agent(f"{tmp_path / 'bots.py'}:bot"), seed=5) for _ in range(2))
    assert a is not b and a.name == "bots.py:bot"
    assert (a.act(view, obs, mask) == b.act(view, obs, mask)).all()


def test_sb3_models_play_legal_actions_with_the_mask(tmp_path):
    """Untrained PPO, DQN and MaskablePPO models on the Gym env, saved and played by
    `sb3:PATH`: each algorithm is read from the file, every action is legal."""
    pytest.importorskip("stable_baselines3")
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import gymnasium as gym
    from stable_baselines3 import DQN, PPO

    import spades_env  # noqa: F401
    from spades_env.engine import legal_action_mask
    from spades_env.observation import encode, seat_view
    from spades_env.rules import Rules
    from spades_env.state import init

    env = gym.make("spades_env/Spades-v0")
    small = {"policy_kwargs": {"net_arch": [16]}, "seed": 0}
    for cls, algo in ((PPO, "ppo"), (DQN, "dqn"), (sb3_contrib.MaskablePPO, "maskable_ppo")):
        kw = {"buffer_size": 100} if cls is DQN else {"n_steps": 16, "batch_size": 16}
        cls("MlpPolicy", env, **small, **kw).save(tmp_path / f"{algo}.zip")
    state = init(Rules(), 16, np.random.default_rng(1))
    view, obs, mask = seat_view(state), encode(state), legal_action_mask(state)
    for algo in ("ppo", "dqn", "maskable_ppo"):
        agent = make_agent(parse_agent(f"m=sb3:{tmp_path / algo}.zip"), seed=0)
        assert agent.algo == algo and agent.name == "m"
        assert mask[np.arange(16), agent.act(view, obs, mask)].all()


def test_a_module_spec_builds_the_class_it_names(plugin_site, monkeypatch):
    monkeypatch.syspath_prepend(str(plugin_site))
    agent = make_agent(parse_agent("lowish_plugin:Lowish"), seed=1)
    assert type(agent).__name__ == "Lowish" and agent.name == "lowish_plugin:Lowish"


# ----------------------------------------------------------------------------- slow
@pytest.mark.slow
def test_a_ray_tournament_plays_a_file_agent(tmp_path, user_file):
    pytest.importorskip("ray")
    out = tmp_path / "r"
    proc = spades(
        "tournament", "--agents", f"low={user_file}:LowCard,random", "--deals", "4",
        "--chunk", "2", "--backend", "ray", "--workers", "2", "--no-progress", "--out",
        str(out),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert "low" in proc.stdout
    local = tmp_path / "local"
    proc = spades(
        "tournament", "--agents", f"low={user_file}:LowCard,random", "--deals", "4",
        "--chunk", "2", "--workers", "1", "--no-progress", "--out", str(local),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert rows_without_timing(out) == rows_without_timing(local)


TRAIN = """
import sys
import gymnasium as gym
import spades_env
from sb3_contrib import MaskablePPO

env = gym.make("spades_env/Spades-v0")
model = MaskablePPO("MlpPolicy", env, n_steps=256, batch_size=64, seed=0,
                    policy_kwargs={"net_arch": [64]})
model.learn(total_timesteps=512)
model.save(sys.argv[1])
"""


@pytest.mark.slow
def test_a_maskable_ppo_model_enters_a_tournament_by_sb3_path_with_no_user_code(tmp_path):
    """The newcomer's 16 lines of training, then `--agents ppo=sb3:PATH`: nothing else."""
    pytest.importorskip("sb3_contrib")
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent(TRAIN))
    model = tmp_path / "model.zip"
    trained = subprocess.run(
        [sys.executable, str(script), str(model)], cwd=REPO, capture_output=True, text=True
    )
    assert trained.returncode == 0, trained.stderr
    proc = spades(
        "tournament", "--agents", f"ppo=sb3:{model},random", "--deals", "4", "--chunk", "2",
        "--workers", "2", "--no-progress", "--out", str(tmp_path / "r"),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert {r["agent"] for r in summary["ratings"]} == {"ppo", "random"}
