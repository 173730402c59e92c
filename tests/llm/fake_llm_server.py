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

**Misbehaving endpoints.** A base URL ``http://127.0.0.1:PORT/m/MODE/v1`` gets the
endpoint MODE instead (`MODES`): error statuses with a message, a reasoning model (its
answer in ``reasoning_content``, or a 400 for ``max_tokens``), 200 replies that are not
a chat completion (HTML, truncated JSON, a null message, string choices, list content,
bad usage, an error object), bodies that never end or drip, a 12 MB answer, a
``Retry-After``, a delay. ``/stats`` also counts the most requests in flight at once
(``max_inflight``), and keeps each request's fields but its messages (``bodies``) and
each request's arrival time by prompt (``times``).
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
STATS: dict = {
    "requests": 0, "hashes": [], "prompts": [], "auth": [], "faults": {},
    "inflight": 0, "max_inflight": 0, "bodies": [], "times": {}, "modes": {},
}  # fmt: skip
#: the misbehaving endpoints, by the MODE of their base URL (see the module doc)
MODES = (
    "status-400", "status-401", "status-403", "status-404", "status-422",
    "reasoning", "reasoning-only", "empty-length",
    "html", "truncated", "null-message", "string-choices", "list-content", "bad-usage",
    "negative-usage", "error-200", "json-list", "no-choices",
    "endless", "drip", "huge", "retry-after", "delay",
)  # fmt: skip
MALFORMED = {
    "html": b"<html><body><h1>502 Bad Gateway</h1></body></html>",
    "truncated": b'{"id": "x", "choices": [{"index": 0, "message": {"role": "assis',
    "null-message": b'{"choices": [{"index": 0, "message": null}]}',
    "string-choices": b'{"choices": "Final answer: bid 3"}',
    "list-content": b'{"choices": [{"message": {"role": "assistant", '
    b'"content": [{"type": "text", "text": "bid 3"}]}}]}',
    "bad-usage": b'{"choices": [{"message": {"content": "Final answer: bid 3"}}], "usage": "lots"}',
    "negative-usage": b'{"choices": [{"message": {"content": "Final answer: bid 3"}}], '
    b'"usage": {"prompt_tokens": -4, "completion_tokens": "two"}}',
    "error-200": b'{"error": {"message": "the model is overloaded"}}',
    "json-list": b"[1, 2, 3]",
    "no-choices": b'{"choices": []}',
}
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

    def _raw(self, code: int, data: bytes, ctype: str = "application/json") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        with LOCK:
            STATS["inflight"] += 1
            STATS["max_inflight"] = max(STATS["max_inflight"], STATS["inflight"])
        try:
            self._post()
        except OSError:
            pass  # the client hung up (a deadline, a size cap)
        finally:
            with LOCK:
                STATS["inflight"] -= 1

    def _post(self) -> None:
        length = int(self.headers.get("Content-Length", 0))
        req = json.loads(self.rfile.read(length))
        messages = req["messages"]
        parts = self.path.split("/")
        mode = parts[2] if len(parts) > 3 and parts[1] == "m" else ""
        if mode:
            with LOCK:
                STATS["modes"][mode] = STATS["modes"].get(mode, 0) + 1
                STATS["bodies"].append({k: v for k, v in req.items() if k != "messages"})
                STATS["times"].setdefault(prompt_hash(messages), []).append(time.time())
            if self._misbehave(mode, req):
                return
        h = _hash(messages)
        reask = len(messages) > 2
        with LOCK:
            STATS["requests"] += 1
            STATS["hashes"].append(prompt_hash(messages))
            STATS["prompts"].append(messages[1]["content"])
            STATS.setdefault("systems", []).append(messages[0]["content"])
            if reask:  # what the agent said of the refused answer
                STATS.setdefault("reask_texts", []).append(messages[-1]["content"])
            STATS["auth"].append(self.headers.get("Authorization", ""))
            first = SEEN.get(f"{h}", 0) == 0
            SEEN[f"{h}"] = SEEN.get(f"{h}", 0) + 1
        answer = f"Final answer: {choose(messages)}"
        if self.faults and not mode:  # a misbehaving endpoint has only its own faults
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
        if mode in ("reasoning", "reasoning-only", "empty-length"):
            return self._reasoning(mode, answer, words)
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

    def _misbehave(self, mode: str, req: dict) -> bool:
        """Answer as the endpoint MODE does; False: answer as the good server does."""
        if mode.startswith("status-"):
            code = int(mode.split("-")[1])
            message = {
                400: "Unsupported parameter: 'max_tokens' is not supported with this model. "
                "Use 'max_completion_tokens' instead.",
                401: "Incorrect API key provided.",
                403: "You are not allowed to sample from this model.",
                404: "The model 'fake' does not exist or you do not have access to it.",
                422: "Input should be a valid number: temperature.",
            }[code]
            self._send(code, {"error": {"message": message, "type": "invalid_request_error"}})
            return True
        if mode == "reasoning" and "max_tokens" in req:
            self._misbehave("status-400", req)
            return True
        if mode in MALFORMED:
            ctype = "text/html" if mode == "html" else "application/json"
            self._raw(200, MALFORMED[mode], ctype)
            return True
        if mode == "endless":  # a chunked body that never ends
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            while True:
                self.wfile.write(b"1\r\n \r\n")
                self.wfile.flush()
                time.sleep(0.01)
        if mode == "drip":  # a whole reply, one byte every 50 ms
            data = b'{"choices": [{"message": {"content": "Final answer: bid 3"}}]}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            for k in range(len(data)):
                self.wfile.write(data[k : k + 1])
                self.wfile.flush()
                time.sleep(0.05)
            return True
        if mode == "huge":  # a 12 MB answer
            content = "Final answer: bid 3 " + "x" * 12_000_000
            self._send(200, {"choices": [{"message": {"content": content}}]})
            return True
        if mode == "retry-after":
            h = prompt_hash(req["messages"])
            if len(STATS["times"][h]) == 1:
                self._send(429, {"error": {"message": "slow down"}}, {"Retry-After": "1"})
                return True
        if mode == "delay":
            time.sleep(0.05)
        return False

    def _reasoning(self, mode: str, answer: str, words: int) -> None:
        """A reasoning model's reply: its thinking in reasoning_content, the answer in
        content (``reasoning``), or nothing in content (``reasoning-only``; or
        ``empty-length``: the token limit spent)."""
        content = answer if mode == "reasoning" else ""
        reasoning = "" if mode == "empty-length" else f"Let me think about it. {answer}"
        finish = "length" if mode == "empty-length" else "stop"
        self._send(200, {
            "choices": [{"index": 0, "finish_reason": finish, "message": {
                "role": "assistant", "content": content, "reasoning_content": reasoning}}],
            "usage": {
                "prompt_tokens": words, "completion_tokens": 60, "total_tokens": words + 60,
                "completion_tokens_details": {"reasoning_tokens": 50},
                "prompt_tokens_details": {"cached_tokens": 8},
            },
        })  # fmt: skip


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
