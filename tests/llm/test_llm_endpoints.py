"""The `llm:` agent against misbehaving endpoints (fake_llm_server.py's MODES, a real HTTP
server on 127.0.0.1): every fault is contained and named, nothing becomes a result
silently.

- a request the endpoint refuses (400, 401, 403, 404, 422) stops at once with the
  server's message; a 200 reply that is not a chat completion, a body that never ends or
  drips, an answer over the size cap are transport errors, retried, then fallbacks with
  their reason; a run of fallbacks past the limit stops;
- reasoning models: max_completion_tokens and extra fields are sent, reasoning_content is
  read only when asked, an empty answer says why, reasoning and cached tokens are kept;
- Retry-After is honoured, and its wait is part of the decision's seconds;
- the run-wide limit on requests in flight holds across worker processes.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.llm.agent import LLMError
from agents.llm.store import EXCHANGES_FILE, read_all_records, read_records, summarize_records
from agents.registry import make_agent, parse_agent
from spades_env.rules import Rules
from spades_env.state import init


def _agent(server, tmp_path, mode: str = "", seed: int = 1, **options):
    opts = {"store": str(tmp_path / "store"), "retries": 1, "reasks": 0, "timeout": 5}
    return make_agent(parse_agent(server.spec(mode=mode, **{**opts, **options})), seed=seed)


def _state(games: int = 2):
    return init(Rules(), games, seeds=np.arange(1, games + 1, dtype=np.uint64))


def _records(tmp_path) -> list[dict]:
    return read_records(tmp_path / "store" / EXCHANGES_FILE)


@pytest.mark.parametrize(
    ("status", "said"),
    [
        (400, "Use 'max_completion_tokens' instead"),
        (401, "Incorrect API key provided"),
        (403, "not allowed to sample"),
        (404, "does not exist"),
        (422, "valid number"),
    ],
)
def test_a_refused_request_stops_with_the_servers_message(
    tmp_path, fake_server, llm_key, status, said
):
    agent = _agent(fake_server, tmp_path, f"status-{status}", retries=3)
    with pytest.raises(LLMError) as err:
        agent.act_state(_state())
    text = str(err.value)
    assert f"HTTP {status}" in text and said in text and "\n" not in text
    assert fake_server.stats()["modes"][f"status-{status}"] <= 2  # never retried
    assert llm_key not in text


@pytest.mark.parametrize(
    ("mode", "why"),
    [
        ("html", "not JSON"),
        ("truncated", "not JSON"),
        ("null-message", "no message"),
        ("string-choices", "no list of choices"),
        ("no-choices", "no list of choices"),
        ("json-list", "not a JSON object"),
        ("list-content", "content is a list"),
        ("bad-usage", "usage is not an object"),
        ("negative-usage", "usage.prompt_tokens is not a count"),
        ("error-200", "the model is overloaded"),
        ("huge", "over the size cap"),
        ("endless", "within the timeout"),
        ("drip", "within the timeout"),
    ],
)
def test_a_faulty_reply_is_a_transport_error_then_a_named_fallback(
    tmp_path, fake_server, llm_key, mode, why
):
    timeout = 0.5 if mode in ("endless", "drip") else 20  # only those two wait for it
    agent = _agent(fake_server, tmp_path, mode, timeout=timeout, on_invalid="mark")
    actions = agent.act_state(_state())
    assert actions.shape == (2,) and (actions >= 0).all()  # the fallback played
    records = _records(tmp_path)
    assert len(records) == 2
    for rec in records:
        assert rec["fallback"] and rec["transport_errors"] == 2  # tried, retried once
        assert rec["fallback_reason"].startswith("transport: ") and why in rec["fallback_reason"]
        assert rec["tokens_in"] == 0 and rec["answers"] == []
    summary = summarize_records(read_all_records(tmp_path / "store" / EXCHANGES_FILE))["llm"]
    assert summary["fallback_share"] == 1.0 and summary["invalid"]
    assert "transport: " in summary["invalid_reason"]


def test_a_run_past_its_fallback_limit_stops_in_one_line(tmp_path, fake_server, llm_key):
    agent = _agent(fake_server, tmp_path, "html", retries=0)
    with pytest.raises(LLMError) as err:
        agent.act_state(_state(24))  # 24 decisions, every one a fallback
    text = str(err.value)
    assert "24 of 24 decisions" in text and "max_fallback_share=0.05" in text
    assert "malformed reply: not JSON" in text and "on_invalid=mark" in text
    assert len(_records(tmp_path)) == 24  # what was paid for is kept


def test_a_reasoning_model_gets_max_completion_tokens_and_extra_fields(
    tmp_path, fake_server, llm_key
):
    # max_tokens: the 400 reasoning models give, with their message
    with pytest.raises(LLMError, match="max_completion_tokens"):
        _agent(fake_server, tmp_path, "reasoning").act_state(_state())
    agent = _agent(
        fake_server, tmp_path, "reasoning", max_completion_tokens=300,
        extra="reasoning_effort=low|seed=7|top_p=0.9",
    )  # fmt: skip
    agent.act_state(_state())
    body = fake_server.stats()["bodies"][-1]
    assert body["max_completion_tokens"] == 300 and "max_tokens" not in body
    assert body["reasoning_effort"] == "low" and body["seed"] == 7 and body["top_p"] == 0.9
    records = _records(tmp_path)
    assert all(not r["fallback"] for r in records)
    assert all(r["reasoning_tokens"] == 50 and r["cached_prompt_tokens"] == 8 for r in records)


@pytest.mark.parametrize("extra", ["model=x", "stream=true", "messages=[]", "seed7", "a b=1"])
def test_extra_refuses_fields_it_may_not_set(extra):
    from agents.registry import AgentSpecError

    with pytest.raises(AgentSpecError, match="extra="):
        parse_agent(f"llm:model=m,extra={extra}")


def test_reasoning_content_is_read_only_when_asked(tmp_path, fake_server, llm_key):
    agent = _agent(fake_server, tmp_path, "reasoning-only", on_invalid="mark", reasks=1)
    agent.act_state(_state())
    records = _records(tmp_path)
    assert all(r["fallback"] and r["empty"] == 2 for r in records)
    assert all("read_reasoning=true" in r["fallback_reason"] for r in records)
    assert all(r["unreadable"] == 2 and r["illegal"] == 0 for r in records)
    reader = _agent(fake_server, tmp_path / "b", "reasoning-only", read_reasoning=True)
    reader.act_state(_state())
    assert all(not r["fallback"] for r in _records(tmp_path / "b"))


def test_an_answer_cut_by_the_token_limit_says_so(tmp_path, fake_server, llm_key):
    _agent(fake_server, tmp_path, "empty-length", on_invalid="mark").act_state(_state())
    assert all("finish_reason=length" in r["fallback_reason"] for r in _records(tmp_path))


def test_retry_after_is_honoured_up_to_its_cap(tmp_path, fake_server, llm_key):
    # the server asks for 1 s; the cap is 0.3 s; backoff alone would be about 0.01 s
    agent = _agent(fake_server, tmp_path, "retry-after", retry_after_cap=0.3, backoff=0.01)
    agent.act_state(_state())
    times = fake_server.stats()["times"]
    assert len(times) == 2 and all(len(t) == 2 for t in times.values())
    assert all(t[1] - t[0] >= 0.3 for t in times.values())
    records = _records(tmp_path)
    # the decision's wall seconds hold the wait and the failed try
    assert all(r["transport_errors"] == 1 and r["seconds"] >= 0.3 for r in records)


@pytest.mark.slow  # two worker processes start (and load the kernels)
@pytest.mark.cli
def test_requests_in_flight_are_limited_across_workers(tmp_path, fake_server, llm_key):
    """concurrency=2 with 2 worker processes: never 3 requests in flight at once (each
    worker's batch alone would send 2)."""
    from experiments.tournament.config import TournamentConfig
    from experiments.tournament.runner import run_tournament

    spec = fake_server.spec(mode="delay", concurrency=2)
    cfg = TournamentConfig(
        agents=(spec, "heuristic"), mode="hand", rules=Rules().to_dict(), seed=3, deals=2,
        chunk=1,
    )  # fmt: skip
    run_tournament(tmp_path / "run", cfg, workers=2)
    stats = fake_server.stats()
    assert stats["modes"]["delay"] >= 2 * 2 * 2 * 14
    assert 1 <= stats["max_inflight"] <= 2


def test_the_exchange_log_holds_the_messages_sent_and_the_raw_answers(
    tmp_path, fake_server, llm_key
):
    _agent(fake_server, tmp_path, reasks=2).act_state(_state())
    served = fake_server.stats()
    for rec in _records(tmp_path):
        assert rec["messages"][0]["role"] == "system" and rec["messages"][-1]["role"] == "user"
        assert len(rec["answers"]) == len(rec["verdicts"]) == rec["requests"]
        assert rec["messages"][1]["content"] in served["prompts"]
    assert json.dumps(_records(tmp_path)).count(llm_key) == 0


@pytest.mark.cli
@pytest.mark.parametrize(
    ("command", "mode", "said"),
    [
        ("tournament", "status-400", "Use 'max_completion_tokens' instead"),
        ("evaluate", "status-400", "Use 'max_completion_tokens' instead"),
        ("evaluate", "reasoning-only", "set read_reasoning=true"),
    ],
)
def test_a_model_that_never_answers_gives_no_result(
    tmp_path, fake_server, llm_key, command, mode, said
):
    """A 400 for every request, or every answer left in reasoning_content: the command
    fails in one line that says why, and writes no result."""
    from cli_helpers import spades

    spec = fake_server.spec(mode=mode)
    if command == "tournament":
        out = spades("tournament", "--agents", spec + ";heuristic", "--deals", "1",
                     "--out", str(tmp_path / "r"), "--no-progress")  # fmt: skip
    else:
        out = spades("evaluate", spec, "--ladder", "llm", "--dir", str(tmp_path / "l"))
    assert out.returncode != 0 and "Traceback" not in out.stderr
    errors = [ln for ln in out.stderr.splitlines() if "error:" in ln]
    assert len(errors) == 1 and said in errors[0], out.stderr
    assert not list(tmp_path.rglob("summary.json")) and not list(tmp_path.rglob("result.json"))
