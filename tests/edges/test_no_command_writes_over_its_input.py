"""No command writes over what it reads, every refusal names the file and field at fault,
and an input that never ends (a named pipe, a device) is refused at once.

- `check_output` (the one helper every writing command uses) refuses an output that is
  one of the inputs, however it is written (a relative path, a link, a hard link), or
  that lies inside a run folder read; `--overwrite-input` lets it through.
- A hand-edited config.json is refused on `--resume` naming config.json and the field.
- Durations at their edges (1e-400 underflows, 1e308 overflows the clocks) are refused
  while the flags are read, naming the flag and the range.
- An agent file in a folder whose name holds a colon, and a quoted comma in a label, get
  an error that says what happened.
- Names are escaped where they are written into Markdown.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import one_line_error

from agents.registry import AgentSpecError, parse_agent, split_specs
from experiments.tournament import deals as deals_mod
from experiments.tournament.config import TournamentConfig, TournamentError
from experiments.tournament.folder import CONFIG_FILE, create_run, load_context
from experiments.tournament.report import markdown_text
from spades_env.tooling.files import OverwritesInputError, UnsafeFileError, check_output, open_input


def spades(*args: str, cwd: Path, input: str | None = None, timeout: float = 300):
    """`spades ARGS` run in `cwd` (a test's own folder), its output captured as text."""
    return subprocess.run(
        [sys.executable, "-m", "experiments.cli", *args],
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


# ----------------------------------------------------------------------------- check_output
def _input(tmp_path: Path) -> Path:
    path = tmp_path / "in.bin"
    path.write_bytes(b"precious")
    return path


@pytest.mark.parametrize(
    "written_as",
    ["same", "relative", "dotted", "symlink", "hardlink"],
)
def test_an_output_that_is_an_input_is_refused_however_it_is_written(
    tmp_path, monkeypatch, written_as
):
    source = _input(tmp_path)
    monkeypatch.chdir(tmp_path)
    out = {
        "same": source,
        "relative": Path("in.bin"),
        "dotted": Path("sub/../in.bin"),
        "symlink": tmp_path / "link.bin",
        "hardlink": tmp_path / "hard.bin",
    }[written_as]
    (tmp_path / "sub").mkdir()
    if written_as == "symlink":
        out.symlink_to(source)
    if written_as == "hardlink":
        os.link(source, out)
    with pytest.raises(OverwritesInputError, match=r"--out .* is the log this command reads"):
        check_output(out, {"the log": source})
    assert source.read_bytes() == b"precious"


def test_an_output_inside_a_run_folder_read_is_refused(tmp_path):
    run = tmp_path / "run"
    (run / "deep").mkdir(parents=True)
    for out in (run, run / "x.json", run / "deep" / "y.json"):
        with pytest.raises(OverwritesInputError, match="inside the run folder"):
            check_output(out, run_folders={"the run folder": run}, flag="--out")


def test_overwrite_input_lets_it_through_and_others_pass(tmp_path):
    source = _input(tmp_path)
    assert check_output(source, {"the log": source}, allow=True) == source
    assert check_output(tmp_path / "other.bin", {"the log": source}, {"x": tmp_path / "r"})


# ----------------------------------------------------------------------------- commands
@pytest.mark.cli
def test_dd_table_refuses_an_out_that_is_its_cache(tmp_path):
    cache = tmp_path / "dd.npz"
    cache.write_bytes(b"not touched")
    line = one_line_error(
        spades(
            "dd-table",
            "--deals",
            "1",
            "--cache",
            str(cache),
            "--out",
            str(cache),
            "--no-progress",
            cwd=tmp_path,
        )
    )
    assert "--out" in line and "double-dummy cache" in line and "--overwrite-input" in line
    assert cache.read_bytes() == b"not touched"


@pytest.mark.cli
@pytest.mark.parametrize("where", ["agent file", "inside --dir"])
def test_evaluate_refuses_an_out_over_its_agent_or_inside_its_folder(tmp_path, where):
    bot = tmp_path / "bot.py"
    bot.write_text("from agents.random_agent import RandomAgent as Bot\n")
    folder = tmp_path / "ev"
    folder.mkdir()
    out = bot if where == "agent file" else folder / "1-random" / "log.jsonl"
    line = one_line_error(
        spades(
            "evaluate",
            f"{bot}:Bot",
            "--dir",
            str(folder),
            "--out",
            str(out),
            "--test-deals",
            "1",
            "--no-progress",
            cwd=tmp_path,
        )
    )
    assert "--out" in line and ("agent file" in line or "evaluation folder" in line)
    assert bot.read_text().startswith("from agents.random_agent")
    assert not out.exists() or out == bot


@pytest.mark.cli
def test_play_refuses_to_save_over_an_agent_file(tmp_path):
    bot = tmp_path / "bot.py"
    bot.write_text("from agents.random_agent import RandomAgent as Bot\n")
    game = tmp_path / "game.json"
    first = spades(
        "play",
        "--opponents",
        f"{bot}:Bot",
        "--seed",
        "1",
        "--save",
        str(game),
        cwd=tmp_path,
        input="",
    )
    assert first.returncode == 0, first.stderr
    line = one_line_error(
        spades("play", "--load", str(game), "--save", str(bot), cwd=tmp_path, input="")
    )
    assert "--save" in line and "agent file" in line
    assert bot.read_text().startswith("from agents.random_agent")


# ----------------------------------------------------------------------------- inputs
@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "pipe"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("kind", ["fifo", "device", "folder"])
def test_an_input_that_never_ends_is_refused_at_once(tmp_path, fifo, kind):
    path = {"fifo": fifo, "device": Path("/dev/zero"), "folder": tmp_path}[kind]
    with pytest.raises(UnsafeFileError, match=r"is a (named pipe|character device|folder)"):
        open_input(path, "log")


@pytest.mark.cli
@pytest.mark.parametrize("kind", ["fifo", "device"])
@pytest.mark.parametrize(
    "command",
    [
        ("show", "{p}", "--deal", "0"),
        ("analyze", "{p}", "--no-dd"),
        ("tournament", "--deal-file", "{p}", "--dry-run"),
    ],
    ids=["show", "analyze", "tournament"],
)
def test_commands_refuse_a_fifo_or_device_as_their_input(tmp_path, fifo, kind, command):
    path = str(fifo if kind == "fifo" else "/dev/zero")
    argv = [a.format(p=path) for a in command]
    line = one_line_error(spades(*argv, cwd=tmp_path, timeout=60))
    assert path in line and "not a file" in line


# ----------------------------------------------------------------------------- resume
EDITS = {
    "agents swapped": ("agents", lambda c: c["agents"].reverse()),
    "deal count": ("deals", lambda c: c.update(deals=1)),
    "mode": ("mode", lambda c: c.update(mode="game")),
    "target": ("rules", lambda c: c["rules"].update(target=300)),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_hand_edited_config_is_refused_naming_the_file_and_field(tmp_path, edit):
    config = TournamentConfig(agents=("random", "heuristic"), deals=2, chunk=1)
    run = tmp_path / "run"
    create_run(run, config, deals_mod.generate(config.play_rules(), 0, 2))
    field, change = EDITS[edit]
    saved = json.loads((run / CONFIG_FILE).read_text())
    change(saved["config"])
    (run / CONFIG_FILE).write_text(json.dumps(saved))
    with pytest.raises(TournamentError) as err:
        load_context(run)
    text = str(err.value)
    assert CONFIG_FILE in text and repr(field) in text and "deals.json" not in text


def test_a_replaced_deal_set_is_still_blamed_on_deals_json(tmp_path):
    config = TournamentConfig(agents=("random", "heuristic"), deals=2, chunk=1)
    run = tmp_path / "run"
    create_run(run, config, deals_mod.generate(config.play_rules(), 0, 2))
    deals_mod.save(deals_mod.generate(config.play_rules(), 7, 2), run / "deals.json")
    with pytest.raises(TournamentError, match=r"deals\.json' is not the deal set"):
        load_context(run)


@pytest.mark.cli
def test_resume_of_a_hand_edited_config_names_it_on_the_command_line(tmp_path):
    done = spades(
        "tournament",
        "--agents",
        "a=random,b=random",
        "--deals",
        "2",
        "--chunk",
        "1",
        "--workers",
        "1",
        "--no-progress",
        "--out",
        "run",
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    path = tmp_path / "run" / CONFIG_FILE
    saved = json.loads(path.read_text())
    saved["config"]["agents"].reverse()
    path.write_text(json.dumps(saved))
    line = one_line_error(spades("tournament", "--resume", "--out", "run", cwd=tmp_path))
    assert "config.json" in line and "'agents'" in line


# ----------------------------------------------------------------------------- durations
def _command_flags() -> list[tuple[str, str]]:
    from edge_sweep import build_parser, subparsers

    out = []
    for command, p in subparsers(build_parser()).items():
        for action in p._actions:
            for flag in action.option_strings:
                if flag in ("--decision-timeout", "--seconds", "--pace"):
                    out.append((command, flag))
    return out


@pytest.mark.parametrize("value", ["1e-400", "5e-324", "1e308", "1e400", "nan", "-inf"])
@pytest.mark.parametrize(("command", "flag"), _command_flags())
def test_durations_at_their_edges_are_refused_while_the_flags_are_read(
    command, flag, value, capsys
):
    from edge_sweep import build_parser

    if flag == "--pace" and value == "5e-324":
        pytest.skip("--pace takes 0..60 (a subnormal rounds to no pause at all: it is one)")
    with pytest.raises(SystemExit) as exit_:
        build_parser().parse_args([command, f"{flag}={value}"])
    assert exit_.value.code == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and flag in line and " to " in line  # the allowed range


@pytest.mark.cli
def test_a_decision_timeout_of_1e308_never_starts_the_run(tmp_path):
    line = one_line_error(spades("tournament", "--decision-timeout", "1e308", cwd=tmp_path))
    assert "--decision-timeout" in line and "0.001 to 86400" in line
    assert not (tmp_path / "runs").exists()


# ----------------------------------------------------------------------------- specs
@pytest.mark.parametrize("relative", [True, False])
def test_an_agent_file_in_a_folder_with_a_colon_gets_the_right_advice(tmp_path, relative):
    folder = tmp_path / "we:ird"
    folder.mkdir()
    (folder / "bot.py").write_text("from agents.random_agent import RandomAgent as Bot\n")
    path = "we:ird/bot.py" if relative else str(folder / "bot.py")
    with pytest.raises(AgentSpecError, match=r"holds a ':'.*rename the folder, or link it"):
        parse_agent(f"{path}:Bot")


@pytest.mark.parametrize(
    "text", ["'a,b'=random,heuristic", '"a,b"=random,heuristic', "random,x='p;q'=heuristic"]
)
def test_a_quoted_comma_is_said_to_be_cut_not_an_unknown_agent(text):
    with pytest.raises(AgentSpecError, match="quoted text was cut") as err:
        split_specs(text)
    assert "unknown agent" not in str(err.value)


@pytest.mark.cli
def test_a_quoted_comma_names_the_flag(tmp_path):
    line = one_line_error(
        spades("tournament", "--agents", "'a,b'=random,heuristic", "--dry-run", cwd=tmp_path)
    )
    assert line.startswith("spades tournament: error: --agents:") and "quoted" in line


# ----------------------------------------------------------------------------- markdown
@pytest.mark.parametrize(
    "name", ["a|b", "<script>alert(1)</script>", "two\nlines", "*bold* _it_ [l](u)", "x\\|y"]
)
def test_a_name_in_markdown_is_shown_literally_on_one_line(name):
    text = markdown_text(name)
    assert "\n" not in text and "<" not in text
    unescaped_pipes = text.replace("\\|", "")
    assert "|" not in unescaped_pipes  # a table cell is never closed by a name
    for special in "*_[]":
        assert special not in text.replace("\\" + special, "")
