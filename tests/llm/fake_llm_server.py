"""An OpenAI-compatible chat-completions server on 127.0.0.1 whose "model" reads only
the prompt it is sent, for the tests of the `llm:` agent (and examples/llm_local_server.py).

``python fake_llm_server.py [--port N] [--faults]`` prints ``PORT <n>`` once it listens.
``POST /v1/chat/completions`` answers from the prompt text alone: it reads the legal
actions from the ``Legal actions:`` line of the prompt (without that line, the hand and
the phase) and answers one, chosen by the hash of the prompt. With ``--faults``, chosen by
the hash too, so that a rerun meets the same ones: an illegal answer, nonsense, a slow
answer, a 429 or a 500 (these two only on a prompt's first request). ``GET /stats``
returns the requests served (their count, each one's hash, the prompts' texts) and the
``Authorization`` headers seen, so a test can check what was sent.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

LOCK = threading.Lock()
STATS: dict = {"requests": 0, "hashes": [], "prompts": [], "auth": [], "faults": {}}
SEEN: dict[str, int] = {}


def prompt_hash(messages: list[dict]) -> str:
    """The hash the agent's exchange log and cache give a prompt (agents.llm.store)."""
    blob = json.dumps(messages, sort_keys=True, ensure_ascii=False).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def _hash(messages: list[dict]) -> int:
    return int(prompt_hash(messages)[:12], 16)


def choose(messages: list[dict]) -> str:
    """A legal action read from the prompt (the first user message holds the view)."""
    view = next(m["content"] for m in messages if m["role"] == "user")
    h = _hash(messages[:2])
    legal = re.search(r"^Legal actions: (.+)\.$", view, flags=re.M)
    if legal:
        options = legal[1].split("; ")
        return options[h % len(options)]
    phase = re.search(r"^Phase: (\w+)", view, flags=re.M)[1]
    if phase in ("bid", "blind"):
        return "bid 3" if phase == "bid" else "see hand"
    hand = re.search(r"^Your hand: (.+)\.$", view, flags=re.M)[1].split()
    return f"play {hand[-1]}"  # may be illegal: the agent re-asks with the reason


class Handler(BaseHTTPRequestHandler):
    faults = False

    def log_message(self, *args) -> None:  # quiet
        pass

    def _send(self, code: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        if self.path.rstrip("/").endswith("/stats"):
            with LOCK:
                self._send(200, STATS)
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(length))
        messages = req["messages"]
        h = _hash(messages)
        reask = len(messages) > 2
        with LOCK:
            STATS["requests"] += 1
            STATS["hashes"].append(prompt_hash(messages))
            STATS["prompts"].append(messages[1]["content"])
            STATS["auth"].append(self.headers.get("Authorization", ""))
            first = SEEN.get(f"{h}", 0) == 0
            SEEN[f"{h}"] = SEEN.get(f"{h}", 0) + 1
        answer = f"Final answer: {choose(messages)}"
        if self.faults:
            kind = None
            if first and h % 23 == 3:
                kind = "429"
            elif first and h % 29 == 4:
                kind = "500"
            elif first and h % 31 == 5:
                kind = "slow"
            elif not reask and h % 7 == 0:
                kind = "illegal"
            elif (not reask and h % 11 == 1) or (reask and h % 4 == 0):
                kind = "nonsense"  # a quarter of the re-asks too: some fallbacks
            if kind:
                with LOCK:
                    STATS["faults"][kind] = STATS["faults"].get(kind, 0) + 1
            if kind == "429":
                return self._send(
                    429, {"error": {"message": "rate limited", "type": "rate_limit"}},
                    {"Retry-After": "0"},
                )  # fmt: skip
            if kind == "500":
                return self._send(500, {"error": {"message": "server error"}})
            if kind == "slow":
                time.sleep(0.6)
            if kind == "illegal":
                answer = "I bid fourteen. Final answer: bid 14"
            if kind == "nonsense":
                answer = "The weather is lovely today."
        words = sum(len(m["content"].split()) for m in messages)
        self._send(
            200,
            {
                "id": f"chatcmpl-{h:x}",
                "object": "chat.completion",
                "created": 0,
                "model": req.get("model", "fake"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": words,
                    "completion_tokens": len(answer.split()),
                    "total_tokens": words + len(answer.split()),
                },
            },
        )


class Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that timed out and hung up: nothing to report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--faults", action="store_true")
    args = parser.parse_args()
    Handler.faults = args.faults
    server = Server(("127.0.0.1", args.port), Handler)
    print(f"PORT {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
