"""The `llm:` agent against a real OpenAI-compatible HTTP server on 127.0.0.1
(fake_llm_server.py: its "model" reads only the prompt; on purpose it sometimes answers
illegally, with nonsense, slowly, or with a 429 or a 500).

- a duplicate tournament llm against heuristic finishes, with re-asks, fallbacks,
  transport errors and tokens counted, and the server saw exactly the requests counted;
- no prompt holds another seat's hidden cards, and the key is in no file of the run;
- a run killed with kill -9 resumes to the rows of an uninterrupted run without sending
  an answered prompt again;
- the spec refuses a key given as an option, without echoing it.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest
from cli_helpers import kill_9, spades, start, wait_for_rows, without_timing

from agents.llm.store import CACHE_FILE, EXCHANGES_FILE, read_records
from agents.registry import AgentSpecError, make_agent, parse_agent
from experiments.tournament.config import TournamentConfig
from experiments.tournament.llm_ladder import planned_requests
from experiments.tournament.results_log import read_rows
from experiments.tournament.runner import run_tournament
from spades_env.cards import str_to_card
from spades_env.rules import Rules
from spades_env.text import parse_text

pytest.importorskip("openai")


def _tournament(out: Path, spec: str, deals: int, chunk: int = 50) -> dict:
    cfg = TournamentConfig(
        agents=(spec, "heuristic"),
        mode="hand",
        rules=Rules().to_dict(),
        seed=4,
        deals=deals,
        chunk=chunk,
    )
    return run_tournament(out, cfg, workers=1)


@pytest.mark.cli
def test_tournament_through_a_flaky_server(tmp_path, fake_server, llm_key):
    # timeout 0.3 s: the server's slow answers (0.6 s) time out and are retried
    spec = fake_server.spec(reasks=1, timeout=0.3, on_invalid="mark")
    result = _tournament(tmp_path / "run", spec, deals=3)
    stats = result["llm"]["llm"]
    # its fallbacks pass the default limit: the run finishes, marked invalid, and says why
    assert stats["fallback_share"] == stats["fallbacks"] / stats["decisions"] > 0.05
    assert stats["invalid"] and "max_fallback_share" in stats["invalid_reason"]
    records = read_records(tmp_path / "run" / EXCHANGES_FILE)
    # every decision of the llm seats: 2 seats x (1 bid + 13 cards) x 2 sides x 3 deals
    assert stats["decisions"] == len(records) == 3 * 2 * 2 * 14
    planned = planned_requests(TournamentConfig(agents=(spec, "heuristic"), deals=3))
    assert planned["llm"]["decisions"] == stats["decisions"]  # what --dry-run says
    assert stats["reasks"] > 0 and stats["illegal"] > 0 and stats["unreadable"] > 0
    assert stats["fallbacks"] > 0 and stats["transport_errors"] > 0
    assert stats["tokens_in"] > 0 and stats["tokens_out"] > 0 and stats["seconds"] > 0
    assert all(r["fallback"] for r in records if r["illegal"] + r["unreadable"] == 2)
    served = fake_server.stats()
    answered = sum(r["requests"] - r["cached_requests"] for r in records)
    failed = sum(r["transport_errors"] for r in records)
    # every answer counted once; a failed request may not have reached the server
    assert answered <= served["requests"] <= answered + failed
    assert set(served["faults"]) == {"429", "500", "slow", "illegal", "nonsense"}
    rows = read_rows(tmp_path / "run")
    assert len(rows) == 6 and all(len(r["record"]["actions"]) >= 52 for r in rows)
    # the key went to the server, and into no file of the run
    assert all(a == f"Bearer {llm_key}" for a in served["auth"])
    for path in (tmp_path / "run").rglob("*"):
        if path.is_file():
            assert llm_key.encode() not in path.read_bytes(), path
    _no_hidden_cards(served["prompts"], rows)
    # the log as chat transcripts: every decision of the llm seats, the prompt they had
    chats = tmp_path / "chats.jsonl"
    out = spades("export-chat", str(tmp_path / "run"), "--out", str(chats), "--agent", "llm",
                 "--target", "action")  # fmt: skip
    assert out.returncode == 0, out.stderr
    lines = [json.loads(ln) for ln in chats.read_text().splitlines()]
    assert len(lines) == stats["decisions"]
    assert all(c["action"] in c["legal_actions"] and c["agent"] == "llm" for c in lines)
    assert all(c["messages"][-1]["content"].endswith(c["action"]) for c in lines)
    _no_hidden_cards([c["messages"][1]["content"] for c in lines], rows)


def _no_hidden_cards(prompts: list[str], rows: list[dict]) -> None:
    """Each prompt names only cards of its own seat's deal, except in the lines of the
    tricks (cards played, public): never a card still hidden in another hand."""
    deals = [[{str_to_card(c) for c in hand} for hand in row["record"]["deal"]] for row in rows]
    seats = ["North", "East", "South", "West"]
    for prompt in prompts:
        view = parse_text(prompt)
        seat = seats.index(view["seat"])
        mine = {str_to_card(c) for c in view["hand"] or []}
        played = {str_to_card(c) for t in view["tricks"] for _, c in t["plays"]}
        played |= {str_to_card(c) for _, c in view["current_trick"]}
        matches = [d for d in deals if mine <= d[seat] and played <= set().union(*d)]
        assert matches, prompt
        own = matches[0][seat]
        for line in prompt.splitlines():
            if line.startswith(("Trick", "Rules", "Spades")):
                continue
            for word in line.replace(",", " ").replace(".", " ").replace(";", " ").split():
                try:
                    card = str_to_card(word)
                except ValueError:
                    continue
                assert card in own, (line, word)


def test_a_rerun_replays_from_the_cache(tmp_path, fake_server, llm_key):
    """A log cut back to its first unit (what a kill leaves) is resumed from the cache
    alone: the same rows, and not one request sent again."""
    run = tmp_path / "run"
    _tournament(run, fake_server.spec(), deals=2, chunk=1)
    rows = read_rows(run)
    sent = fake_server.stats()["requests"]
    log = run / "log.jsonl"
    lines = log.read_text().splitlines(keepends=True)
    first = [ln for ln in lines if json.loads(ln)["unit"] == 0]
    assert 0 < len(first) < len(lines)
    log.write_text("".join(first))
    (run / "summary.json").unlink()
    result = run_tournament(run, resume=True, workers=1)
    assert fake_server.stats()["requests"] == sent  # all replayed from the cache
    assert without_timing(read_rows(run)) == without_timing(rows)
    assert result["llm"]["llm"]["cached"] > 0


@pytest.mark.slow
@pytest.mark.cli
def test_resume_after_kill_9_sends_no_answered_prompt_again(tmp_path, make_server, llm_key):
    args = ["--deals", "4", "--chunk", "1", "--workers", "1", "--seed", "9", "--no-progress"]
    whole_server = make_server()
    whole = tmp_path / "whole"
    done = spades("tournament", "--agents", whole_server.spec() + ";heuristic", *args,
                  "--out", str(whole))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Language-model agents" in done.stdout  # the table of the run

    server = make_server()
    cut = tmp_path / "cut"
    spec = server.spec() + ";heuristic"
    proc = start("tournament", "--agents", spec, *args, "--out", str(cut), quiet=True)
    wait_for_rows(proc, cut / "log.jsonl", size=1)
    time.sleep(0.5)
    kill_9(proc)
    before = server.stats()["requests"]
    with sqlite3.connect(cut / CACHE_FILE) as db:
        answered = {
            json.loads(v)["prompt_hash"] for (v,) in db.execute("SELECT value FROM answers")
        }
    assert answered and before > 0
    resumed = spades("tournament", "--resume", "--out", str(cut), "--no-progress")
    assert resumed.returncode == 0, resumed.stderr
    after = server.stats()["hashes"][before:]
    assert after and not set(after) & answered  # no answered prompt was sent again
    key = ("deal", "side", "seats", "bids", "tricks", "hand_score", "record")
    a = [{k: r[k] for k in key} for r in without_timing(read_rows(whole))]
    b = [{k: r[k] for k in key} for r in without_timing(read_rows(cut))]
    assert a == b
    # the same decisions, counted once each, whatever was replayed from the cache
    assert len(read_records(whole / EXCHANGES_FILE)) == len(read_records(cut / EXCHANGES_FILE))


@pytest.mark.cli
def test_a_key_in_a_spec_is_refused_without_echo(tmp_path):
    secret = "sk-should-never-be-echoed-123"
    with pytest.raises(AgentSpecError) as err:
        make_agent(parse_agent(f"llm:model=x,api_key={secret}"))
    assert secret not in str(err.value) and "api_key_env" in str(err.value)
    out = spades("tournament", "--agents", f"llm:model=x,api_key={secret};heuristic",
                 "--out", str(tmp_path / "r"))  # fmt: skip
    assert out.returncode == 2 and secret not in out.stderr + out.stdout
    assert not (tmp_path / "r").exists()


def test_missing_key_variable_is_one_clear_error(tmp_path, fake_server, monkeypatch):
    monkeypatch.delenv("FAKE_LLM_KEY", raising=False)
    agent = make_agent(parse_agent(fake_server.spec(store=str(tmp_path))), seed=1)
    from agents.llm.agent import LLMError
    from spades_env.state import init

    state = init(Rules(), 1, seeds=[1])
    with pytest.raises(LLMError, match="set the environment variable FAKE_LLM_KEY"):
        agent.act_state(state)
    assert fake_server.stats()["requests"] == 0


@pytest.mark.cli
def test_dry_run_says_how_many_requests_and_writes_nothing(tmp_path):
    out = tmp_path / "r"
    spec = "llm=llm:model=m,base_url=http://127.0.0.1:9/v1,reasks=1;heuristic"
    done = spades("tournament", "--agents", spec, "--deals", "5", "--out", str(out), "--dry-run")
    assert done.returncode == 0, done.stderr
    assert "280 decisions, so 280 requests, at most 560" in done.stdout  # 5 x 4 seats x 14
    assert not out.exists()
    ladder = spades("evaluate", "llm:model=m", "--ladder", "llm", "--dry-run")
    assert ladder.returncode == 0 and "896 decisions" in ladder.stdout, ladder.stderr


@pytest.mark.slow
@pytest.mark.cli
def test_the_short_ladder_through_a_server(tmp_path, fake_server, llm_key):
    """`spades evaluate SPEC --ladder llm`: both rungs, the requests in the table."""
    out = spades("evaluate", fake_server.spec(), "--ladder", "llm", "--dir", str(tmp_path / "l"))
    assert out.returncode == 0, out.stderr
    result = json.loads((tmp_path / "l" / "result.json").read_text())
    assert [r["opponent"] for r in result["rungs"]] == ["random", "heuristic"]
    assert all(r["deals"] == 8 and r["llm"]["llm"]["decisions"] == 448 for r in result["rungs"])
    assert "re-asks/dec" in out.stdout


@pytest.mark.cli
def test_a_refused_key_stops_the_run_in_one_line(tmp_path, llm_key):
    """A 401 from the endpoint would fail every request: one line, the key not in it."""
    import http.server
    import threading

    class Refuse(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def do_POST(self):
            body = (
                b'{"error": {"message": "Incorrect API key provided: ' + llm_key.encode() + b'"}}'
            )
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Refuse)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        url = f"http://127.0.0.1:{server.server_address[1]}/v1"
        spec = f"llm=llm:model=m,base_url={url},api_key_env=FAKE_LLM_KEY;heuristic"
        out = spades("tournament", "--agents", spec, "--deals", "1", "--workers", "1",
                     "--out", str(tmp_path / "r"), "--no-progress")  # fmt: skip
    finally:
        server.shutdown()
    assert out.returncode == 2 and "Traceback" not in out.stderr
    errors = [ln for ln in out.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and "AuthenticationError" in errors[0], out.stderr
    assert llm_key not in out.stderr + out.stdout  # the key the server echoed is removed
