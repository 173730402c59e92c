"""`spades export-chat` on a run of the `llm:` agent through a real HTTP server
(fake_llm_server.py, which sometimes answers illegally or with nonsense): the messages
exactly as sent and the raw answers, re-asks, illegal answers and fallbacks marked, the
action as the target on request; an output inside the run folder is refused, an unknown
agent is an error naming those present, and a failure leaves no file behind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import spades

from agents.llm.store import EXCHANGES_FILE, read_records
from experiments.tournament.config import TournamentConfig
from experiments.tournament.runner import run_tournament
from spades_env.rules import Rules


@pytest.fixture
def llm_run(tmp_path, fake_server, llm_key) -> Path:
    spec = fake_server.spec(reasks=1, on_invalid="mark")
    cfg = TournamentConfig(
        agents=(spec, "heuristic"), mode="hand", rules=Rules().to_dict(), seed=4, deals=1
    )
    run_tournament(tmp_path / "run", cfg, workers=1)
    return tmp_path / "run"


def _export(run: Path, out: Path, *extra: str):
    return spades("export-chat", str(run), "--out", str(out), *extra)


@pytest.mark.cli
def test_export_writes_what_was_sent_and_answered(tmp_path, llm_run):
    out = tmp_path / "chats.jsonl"
    done = _export(llm_run, out)
    assert done.returncode == 0, done.stderr
    chats = [json.loads(ln) for ln in out.read_text().splitlines()]
    model = [c for c in chats if c["source"] == "model"]
    records = read_records(llm_run / EXCHANGES_FILE)
    assert len(model) == len(records) == 2 * 2 * 14  # every llm decision found
    assert {c["agent"] for c in chats if c["source"] == "replayed"} == {"heuristic"}
    sent = {json.dumps(r["messages"]) for r in records}
    for c in model:
        assert json.dumps(c["messages"][:-1]) in sent  # exactly as sent
        assert c["messages"][-1] == {"role": "assistant", "content": c["answers"][-1]}
    reasked = [c for c in model if c["reasks"]]
    assert reasked and all(
        [m["role"] for m in c["messages"]] == ["system", "user", "assistant", "user", "assistant"]
        for c in reasked
    )
    assert any(c["illegal"] for c in model) and any(c["not_understood"] for c in model)
    falls = [c for c in model if c["fallback"]]
    assert falls and all(c["fallback_reason"] for c in falls)
    # the target on request: the first request, then the action played
    target = tmp_path / "target.jsonl"
    assert _export(llm_run, target, "--target", "action", "--agent", "llm").returncode == 0
    chats = [json.loads(ln) for ln in target.read_text().splitlines()]
    assert len(chats) == len(model)
    for c in chats:
        assert [m["role"] for m in c["messages"]] == ["system", "user", "assistant"]
        assert c["messages"][-1]["content"] == f"Final answer: {c['action']}"


@pytest.mark.cli
@pytest.mark.parametrize("name", ["log.jsonl", "config.json", "llm_exchanges.jsonl", "new.jsonl"])
def test_export_refuses_to_write_inside_the_run_it_reads(llm_run, name):
    target = llm_run / name
    before = target.read_bytes() if target.exists() else None
    done = _export(llm_run, target)
    assert done.returncode == 2 and "inside the run folder" in done.stderr
    assert "--overwrite-input" in done.stderr and "Traceback" not in done.stderr
    assert (target.read_bytes() if target.exists() else None) == before


@pytest.mark.cli
def test_export_with_overwrite_input_writes_inside_the_run(llm_run):
    done = _export(llm_run, llm_run / "chats.jsonl", "--overwrite-input")
    assert done.returncode == 0 and (llm_run / "chats.jsonl").stat().st_size > 0


@pytest.mark.cli
def test_export_of_an_unknown_agent_names_those_present(tmp_path, llm_run):
    out = tmp_path / "x.jsonl"
    done = _export(llm_run, out, "--agent", "nosuch")
    assert done.returncode == 2 and "'nosuch'" in done.stderr
    assert "heuristic, llm" in done.stderr
    assert not out.exists()


@pytest.mark.cli
def test_a_failed_export_leaves_no_file(tmp_path, llm_run):
    lines = (llm_run / "log.jsonl").read_text().splitlines(keepends=True)
    (llm_run / "log.jsonl").write_text(lines[0] + "{damaged\n" + "".join(lines[1:]))
    out = tmp_path / "x.jsonl"
    out.write_text("kept\n")
    done = _export(llm_run, out)
    assert done.returncode != 0 and "Traceback" not in done.stderr
    assert out.read_text() == "kept\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["run", "x.jsonl"])
