"""The `llm:` agent's own cost per decision, without the model's time.

``python -m experiments.bench.llm [--deals N]`` plays duplicate deals of `llm:` against
heuristic with the agent pointed at `standin_server`, an OpenAI-compatible server on
127.0.0.1 whose stand-in "model" answers at once with a legal action read from the
prompt, and reports seconds per decision of the agent:

- ``through the server``: the agent's whole act time per decision: the seat's view as
  text, the prompt, the request and its local HTTP round trip, reading the answer, the
  exchange log and the response cache (the model itself takes no time here);
- ``from the cache``: the same deals again with every answer in the response cache (a
  rerun): the agent's work with no request at all.

`standin_server` also serves the example `examples/llm_local_server.py` and a dry run of
a ladder before paying for a hosted model.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

STANDIN_KEY_ENV = "SPADES_STANDIN_KEY"


class _Standin(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: the first legal action of the prompt's list."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        legal = re.search(r"^Legal actions: (.+)\.$", prompt, flags=re.M)
        action = legal[1].split("; ")[0] if legal else "bid 3"
        answer = f"Final answer: {action}"
        data = json.dumps(
            {
                "id": "standin",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "standin"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(answer.split()),
                    "total_tokens": len(prompt.split()) + len(answer.split()),
                },
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def standin_server() -> Iterator[str]:
    """A stand-in OpenAI-compatible server on 127.0.0.1 for the block; yields its base
    URL (``http://127.0.0.1:PORT/v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Standin)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _play(spec: str, deals: int, seed: int) -> tuple[float, int]:
    """Play `deals` duplicate deals of `spec` against heuristic; (seconds in the llm
    agent's act, its decisions)."""
    import numpy as np

    from agents.play_loop import play
    from agents.registry import make_agent, parse_agent
    from experiments.tournament import deals as deals_mod
    from spades_env.duplicate import seat_agents
    from spades_env.rules import Rules
    from spades_env.state import init

    rules = Rules()
    ds = deals_mod.generate(rules, seed, deals)
    llm = make_agent(parse_agent(spec), seed=seed)
    heuristic = make_agent(parse_agent("heuristic"), seed=seed)
    spent = [0.0, 0]
    act = llm.act

    def timed(view, obs, mask):
        start = time.perf_counter()
        out = act(view, obs, mask)
        spent[0] += time.perf_counter() - start
        spent[1] += len(out)
        return out

    llm.act = timed
    seat_agent = seat_agents(rules, deals)
    state = init(
        rules,
        2 * deals,
        seeds=np.repeat(ds.game_seeds, 2),
        deals=np.repeat(ds.hands, 2, axis=0),
        dealer=np.repeat(ds.dealers, 2),
    )
    play(state, seat_agent, [llm, heuristic], one_hand=True)
    llm.close()
    return spent[0], spent[1]


def overhead(deals: int = 20, seed: int = 0) -> dict[str, float]:
    """Seconds per decision of the agent through the stand-in server and from the cache."""
    import os

    os.environ.setdefault(STANDIN_KEY_ENV, "standin")
    store = Path(tempfile.mkdtemp(prefix="spades-llm-bench-"))
    try:
        with standin_server() as url:
            spec = f"llm:model=standin,base_url={url},api_key_env={STANDIN_KEY_ENV},store={store}"
            sent, n = _play(spec, deals, seed)
            cached, m = _play(spec, deals, seed)
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return {
        "decisions": n,
        "through_server_ms": 1000 * sent / n,
        "from_cache_ms": 1000 * cached / m,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20)
    args = parser.parse_args()
    r = overhead(args.deals)
    print(
        f"llm: agent overhead over {r['decisions']} decisions: "
        f"{r['through_server_ms']:.2f} ms per decision through a local server (no model "
        f"time), {r['from_cache_ms']:.2f} ms per decision from the response cache"
    )


if __name__ == "__main__":
    main()
