"""A language-model seat at a web table (`spades serve --agents gpt=llm:...`), against
the fake OpenAI-compatible server of tests/llm: it plays whole hands in the table's
agents' process (its answer cache, SQLite, is opened and used there, in one thread), the
key is read from the server's environment and written nowhere, and a client can seat the
model only by the name the server's owner gave it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from web_helpers import Seat, Server, seats, token_of

pytest.importorskip("starlette")
pytest.importorskip("websockets")
pytest.importorskip("openai")
pytestmark = [pytest.mark.cli]

FAKE = Path(__file__).parents[1] / "llm" / "fake_llm_server.py"
KEY = "sk-fake-web-seat-key-5c1e"


@pytest.fixture
def fake_llm():
    proc = subprocess.Popen([sys.executable, str(FAKE)], stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline().split()[1])
    yield f"http://127.0.0.1:{port}/v1"
    proc.kill()
    proc.wait(timeout=30)


def test_an_llm_seat_plays_whole_hands_at_a_web_table(tmp_path, fake_llm, monkeypatch):
    monkeypatch.setenv("FAKE_WEB_LLM_KEY", KEY)
    store = tmp_path / "llm-store"
    spec = (
        f"gpt=llm:model=fake,base_url={fake_llm},api_key_env=FAKE_WEB_LLM_KEY,"
        f"timeout=10,backoff=0.01,store={store}"
    )
    root = tmp_path / "root"
    server = Server(root, "--pace", "0", "--no-review", "--agents", spec)
    try:
        # the model by its name only: no option, no endpoint of the client's
        status, data = server.post("/api/tables", {"seats": seats(agent="gpt:model=x")})
        assert status == 400 and "as the server lists it" in data["error"]
        table = server.new_table(seats(human=2, agent="gpt"))
        me = Seat(server, token_of(table["links"][0]["link"]))
        log = root / "web" / table["table"] / "log.jsonl"
        state = me.next("state")
        for _ in range(400):
            assert state.get("failure") is None, state["failure"]
            if log.exists() and log.read_text().count("\n") >= 2:
                break
            state = me.act() if state["your_turn"] else me.next("state")
        rows = [json.loads(line) for line in log.read_text().splitlines()]
        assert len(rows) >= 2 and rows[0]["seats"][0] == "gpt"
        assert store.exists()
        me.close()
    finally:
        server.stop()
    written = [p for p in root.rglob("*") if p.is_file()] + [
        p for p in store.rglob("*") if p.is_file()
    ]
    for path in written:  # the key is in no file, nor in what the server printed
        assert KEY.encode() not in path.read_bytes(), path
    assert KEY not in "".join(server.output)
