"""What the `llm:` agent pays, replays and keeps, against a real HTTP server on 127.0.0.1
(fake_llm_server.py), and the faults of its cache, its spec and its files.

- tokens paid and tokens replayed from the cache are kept apart; a replayed decision
  never rewrites the record of the one that paid; prices give dollars;
- the cache key holds the endpoint, and at temperature > 0 the agent and the decision
  (a model playing itself draws for each side);
- a damaged, foreign, locked or deleted cache is named in one line, and what was paid
  for is not lost without a word;
- no credential is echoed; templates are small regular UTF-8 files; a fallback may carry
  its options.
"""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time

import numpy as np
import pytest
from cli_helpers import ctrl_c_reaches_it, spades

from agents.llm.store import (
    CACHE_FILE,
    EXCHANGES_FILE,
    CacheError,
    ResponseCache,
    read_all_records,
    read_records,
    summarize_records,
)
from agents.registry import AgentSpecError, make_agent, parse_agent
from spades_env.agent_calls import AgentError
from spades_env.rules import Rules
from spades_env.state import init


def _agent(server, store, label="llm", seed=1, mode="", **options):
    opts = {"store": str(store), "retries": 1, "reasks": 0, **options}
    return make_agent(parse_agent(server.spec(label, mode=mode, **opts)), seed=seed)


def _state(games: int = 2):
    return init(Rules(), games, seeds=np.arange(1, games + 1, dtype=np.uint64))


def _summary(store) -> dict:
    return summarize_records(read_all_records(store / EXCHANGES_FILE))


def test_paid_and_replayed_tokens_are_kept_apart_and_nothing_is_rewritten(
    tmp_path, make_server, llm_key
):
    server = make_server(faults=False)
    store = tmp_path / "s"
    _agent(server, store, price_in=2.0, price_out=8.0).act_state(_state())
    paid = _summary(store)["llm"]
    assert paid["tokens_in"] > 0 and paid["replayed_tokens_in"] == 0 and paid["sent"] == 2
    # the same decisions again (what a resume does): replayed, not paid, not rewritten
    _agent(server, store, price_in=2.0, price_out=8.0).act_state(_state())
    assert server.stats()["requests"] == 2
    both = _summary(store)["llm"]
    assert both["decisions"] == 2 and both["superseded_records"] == 2
    assert both["tokens_in"] == paid["tokens_in"] and both["sent"] == 2
    assert both["replayed_tokens_in"] == paid["tokens_in"]
    assert both["dollars"] == pytest.approx(
        (paid["tokens_in"] * 2.0 + paid["tokens_out"] * 8.0) / 1e6
    )
    assert len(read_all_records(store / EXCHANGES_FILE)) == 4  # both kept, in order
    assert all(r["cached"] for r in read_records(store / EXCHANGES_FILE))


def test_a_resumed_decision_keeps_the_transport_errors_it_paid_for(tmp_path, make_server, llm_key):
    """The first try met a broken endpoint (errors, fallbacks); the replay after the fix
    is the decision's outcome, and the errors stay counted."""
    server = make_server(faults=False)
    store = tmp_path / "s"
    _agent(server, store, mode="html", on_invalid="mark").act_state(_state())
    _agent(server, store).act_state(_state())
    s = _summary(store)["llm"]
    assert s["decisions"] == 2 and s["fallbacks"] == 0 and s["transport_errors"] == 4


def test_prices_from_a_file(tmp_path, make_server, llm_key):
    server = make_server(faults=False)
    prices = tmp_path / "prices.json"
    prices.write_text('{"fake": {"in": 0.5, "out": 1.5}, "other": {"in": 9, "out": 9}}')
    _agent(server, tmp_path / "s", prices=str(prices)).act_state(_state())
    s = _summary(tmp_path / "s")["llm"]
    assert (s["price_in"], s["price_out"]) == (0.5, 1.5)
    assert s["dollars"] == pytest.approx((s["tokens_in"] * 0.5 + s["tokens_out"] * 1.5) / 1e6)


@pytest.mark.parametrize(
    ("text", "said"),
    [("[1]", "write"), ('{"fake": {"in": "cheap", "out": 1}}', "per million"), ("{", "not JSON")],
)
def test_a_bad_prices_file_is_one_line(tmp_path, text, said):
    prices = tmp_path / "p.json"
    prices.write_text(text)
    with pytest.raises(AgentSpecError, match=said):
        parse_agent(f"llm:model=fake,prices={prices}")


def test_the_cache_key_holds_the_endpoint(tmp_path, make_server, llm_key):
    """Empty answers cached from a broken endpoint are not replayed against a good one."""
    server = make_server(faults=False)
    store = tmp_path / "s"
    _agent(server, store, mode="empty-length", on_invalid="mark").act_state(_state())
    _agent(server, store).act_state(_state())
    assert server.stats()["requests"] == 4
    assert not any(r["fallback"] for r in read_records(store / EXCHANGES_FILE)[-2:])


@pytest.mark.parametrize(("temperature", "sent"), [(0.0, 2), (0.7, 4)])
def test_a_model_playing_itself_draws_for_each_side_above_temperature_0(
    tmp_path, make_server, llm_key, temperature, sent
):
    server = make_server(faults=False)
    store = tmp_path / "s"
    for label in ("a", "b"):  # the same model, the same seed, the same prompts
        _agent(server, store, label=label, temperature=temperature).act_state(_state())
    assert server.stats()["requests"] == sent
    # and a rerun of one side replays that side's own draws, sending nothing
    _agent(server, store, label="b", temperature=temperature).act_state(_state())
    assert server.stats()["requests"] == sent


def _foreign(path) -> None:
    with sqlite3.connect(path) as db:
        db.execute("CREATE TABLE answers (a, b, c)")


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda p: p.write_bytes(b"this is not a database" * 100), "is damaged"),
        (lambda p: p.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000), "is damaged"),
        (
            lambda p: (
                sqlite3.connect(p).execute("CREATE TABLE answers (a, b, c)").connection.commit()
            ),
            "another schema",
        ),
    ],
)
def test_a_damaged_or_foreign_cache_is_one_line(tmp_path, fake_server, llm_key, damage, said):
    store = tmp_path / "s"
    store.mkdir()
    damage(store / CACHE_FILE)
    with pytest.raises((CacheError, AgentError)) as err:
        _agent(fake_server, store)
    text = str(err.value)
    assert said in text and CACHE_FILE in text and "\n" not in text


def test_a_locked_cache_is_named(tmp_path):
    path = tmp_path / CACHE_FILE
    ResponseCache(path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        cache = ResponseCache.__new__(ResponseCache)
        with pytest.raises(CacheError, match="is locked by another program"):
            ResponseCache.__init__(cache, path, timeout=0.1)
            cache.put("k", {"content": "x"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_cache_deleted_during_the_run_is_written_again(tmp_path, make_server, llm_key, capfd):
    server = make_server(faults=False)
    store = tmp_path / "s"
    agent = _agent(server, store)
    agent.act_state(_state())
    for suffix in ("", "-wal", "-shm"):
        (store / (CACHE_FILE + suffix)).unlink(missing_ok=True)
    agent.act_state(_state(3))  # a new game: one more answer
    assert "was deleted during the run" in capfd.readouterr().err
    agent.close()
    with sqlite3.connect(store / CACHE_FILE) as db:
        assert db.execute("SELECT count(*) FROM answers").fetchone()[0] == 3  # the 2 before, 1 new


SECRET = "sk-SECRETxyz123456789"


@pytest.mark.parametrize(
    "spec",
    [
        f"llm:model=x,api_key_env={SECRET}",
        f"llm:model=x,apikey={SECRET}",
        "llm:model=x,base_url=http://user:sk-SECRETxyz123456789@127.0.0.1/v1",
        "llm:model=x,base_url=http://user:SECRETxyz123456789@127.0.0.1/v1",
        "llm:model=x,api-key=SECRETxyz123456789",
    ],
)
def test_no_credential_is_echoed(spec):
    with pytest.raises(AgentSpecError) as err:
        parse_agent(spec)
    assert "SECRETxyz" not in str(err.value) and "environment variable" in str(err.value)


@pytest.mark.cli
def test_no_credential_is_echoed_by_the_command_line(tmp_path):
    spec = "llm:model=x,base_url=http://user:sk-SECRETxyz123456789@127.0.0.1/v1;heuristic"
    out = spades("tournament", "--agents", spec, "--out", str(tmp_path / "r"), "--deals", "1")
    assert out.returncode == 2 and "SECRETxyz" not in out.stdout + out.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("notaurl", "http:// or https://"),
        ("ftp://127.0.0.1/v1", "http:// or https://"),
        ("", "http:// or https://"),
        ("http://", "http:// or https://"),
        ("http://127.0.0.1:port/v1", "not a URL"),
        ("http://127.0.0.1/v1?x=1", "query"),
    ],
)
def test_base_url_is_checked_before_any_request(url, said):
    with pytest.raises(AgentSpecError, match=said):
        parse_agent(f"llm:model=x,base_url={url}")


def _fifo(tmp_path):
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (_fifo, "not a (regular )?file"),
        (lambda tmp_path: "/dev/zero", "not a (regular )?file"),
        (lambda tmp_path: tmp_path, "not a regular file"),
        (lambda tmp_path: _write(tmp_path, b"\xff\xfe\x00binary $view"), "not UTF-8"),
        (lambda tmp_path: _write(tmp_path, b"$view " * 20_000), "at most"),
        (lambda tmp_path: tmp_path / "missing.txt", "cannot be read"),
    ],
)
def test_a_template_is_a_small_regular_utf8_file(tmp_path, make, said):
    path = make(tmp_path)
    with pytest.raises(AgentSpecError, match=said):
        parse_agent(f"llm:model=x,template={path}")


def _write(tmp_path, data: bytes):
    path = tmp_path / "t.txt"
    path.write_bytes(data)
    return path


def test_a_fallback_may_carry_its_options(tmp_path):
    agent = make_agent(
        parse_agent(f"llm:model=x,base_url=http://127.0.0.1:9/v1,fallback=pimc:worlds=2,"
                    f"store={tmp_path}"), seed=1)  # fmt: skip
    assert type(agent.fallback).__name__ == "PIMCAgent" and agent.fallback.worlds == 2
    with pytest.raises(AgentSpecError, match="fallback="):
        parse_agent("llm:model=x,fallback=llm:model=y")


@pytest.mark.cli
@pytest.mark.parametrize("workers", [1, pytest.param(2, marks=pytest.mark.slow)])
def test_ctrl_c_prints_one_line(tmp_path, fake_server, llm_key, workers):
    """Interrupted while requests are in flight: one line, no traceback."""
    spec = fake_server.spec(mode="endless", timeout=30) + ";heuristic"
    env = {**os.environ, "FAKE_LLM_KEY": llm_key, "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "experiments.cli", "tournament", "--agents", spec, "--deals",
         str(workers), "--chunk", "1", "--workers", str(workers), "--out", str(tmp_path / "r"),
         "--no-progress"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
        preexec_fn=ctrl_c_reaches_it,  # SIGINT at its default, as in a terminal
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while fake_server.stats()["modes"].get("endless", 0) < workers and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(2)
    try:
        _, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # where it hangs: its threads' stacks (faulthandler)
        proc.send_signal(6)
        raise AssertionError(f"still running 60 s after Ctrl-C:\n{proc.communicate()[1]}") from None
    assert proc.returncode != 0 and "Traceback" not in err, err
    assert "interrupted" in err and "Exception ignored" not in err, err
    assert err.count("interrupted") == 1


def test_dry_run_estimates_tokens_from_the_runs_own_prompts(tmp_path, make_server, llm_key):
    """The estimate renders the run's deals as the agent would (its template too): it is
    within 10% of the prompts a real run of the same deals sent."""
    from experiments.tournament import deals as deals_mod
    from experiments.tournament.config import TournamentConfig
    from experiments.tournament.llm_estimate import estimate
    from experiments.tournament.llm_ladder import planned_requests
    from experiments.tournament.runner import run_tournament

    server = make_server(faults=False)
    template = tmp_path / "t.txt"
    template.write_text("Think hard. " * 200 + "\n$view\n$legal\n")
    for options, bigger in (({}, 0), ({"template": str(template)}, 2400 / 4)):
        spec = server.spec(price_in=1.0, price_out=2.0, **options)
        cfg = TournamentConfig(agents=(spec, "heuristic"), mode="hand", seed=5, deals=2)
        deal_set = deals_mod.generate(cfg.play_rules(), cfg.seed, cfg.deals)
        est = estimate(cfg, deal_set, planned_requests(cfg))["llm"]
        run = tmp_path / f"run{bigger}"
        run_tournament(run, cfg, workers=1)
        records = read_records(run / EXCHANGES_FILE)
        sent = [
            sum(len(m["content"]) for m in r["messages"][:2]) / 4 for r in records
        ]  # each decision's first request
        assert len(sent) == planned_requests(cfg)["llm"]["decisions"]
        assert est["tokens_in"] == pytest.approx(sum(sent), rel=0.1)
        assert est["prompt_tokens_mean"] > 200 + bigger
        assert est["dollars_in"] == pytest.approx(est["tokens_in"] / 1e6)


@pytest.mark.cli
def test_dry_run_prints_tokens_and_dollars(tmp_path):
    spec = "llm=llm:model=m,base_url=http://127.0.0.1:9/v1,price_in=0.15,price_out=0.6;heuristic"
    done = spades("tournament", "--agents", spec, "--deals", "2", "--out", str(tmp_path / "r"),
                  "--dry-run")  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "prompt tokens (mean" in done.stdout and "$" in done.stdout
    assert not (tmp_path / "r").exists()
