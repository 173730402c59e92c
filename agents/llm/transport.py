"""One chat-completions request to an OpenAI-compatible endpoint, bounded in every way a
real endpoint can fail.

`post_chat` sends one request (the standard library's `http.client`, in the calling
thread) and returns a `Reply`, or raises:

- `TransportError`: worth retrying. Connection errors, the whole-request deadline
  passed (connect, headers and body together: a body that never ends, or drips a byte
  at a time, is cut off at the deadline), an answer over the size cap, the statuses a
  retry can fix (408, 409, 425, 429, 5xx; ``Retry-After`` is read), and a 200 reply that
  is not a chat completion (HTML, truncated JSON, a null message, choices that are not a
  list, content that is not text, a usage block that is not counts).
- `EndpointRefusedError`: no retry can fix it (400, 401, 403, 404, 422, any other 4xx, a
  redirect): it carries the status and the server's own message, on one line, with
  anything shaped like a key removed.

`check_base_url` refuses, before any request, an endpoint that is not an http(s) URL or
that holds credentials (``http://user:secret@host``: they would be written into the
run's config and logs; the key goes in an environment variable).
"""

from __future__ import annotations

import contextlib
import email.utils
import http.client
import json
import re
import socket
import threading
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

#: shapes of secrets removed from any text shown: OpenAI-style keys, bearer tokens,
#: credentials in a URL
SECRET = re.compile(r"(sk-[A-Za-z0-9_\-*]{3,}|Bearer\s+\S+|(?<=://)[^/@\s]+@)")
#: statuses a retry can fix; any other non-200 is refused
RETRYABLE = frozenset({408, 409, 425, 429, 500, 502, 503, 504, 529})
_NAMES = {
    400: "BadRequest",
    401: "AuthenticationError",
    403: "PermissionDenied",
    404: "NotFound",
    422: "UnprocessableEntity",
}


def redact(text: str, secret: str | None = None) -> str:
    """`text` with the key (and anything shaped like a key, a bearer token or a URL's
    credentials) removed."""
    if secret:
        text = text.replace(secret, "***")
    return SECRET.sub("***", text)


class TransportError(Exception):
    """A failed request a retry may fix; `retry_after` is the server's ``Retry-After`` in
    seconds, when it gave one."""

    def __init__(self, what: str, retry_after: float | None = None) -> None:
        super().__init__(what)
        self.retry_after = retry_after


class EndpointRefusedError(Exception):
    """A request the endpoint refuses, which no retry can fix (the status, the server's
    message)."""

    def __init__(self, status: int, message: str) -> None:
        name = _NAMES.get(status, "refused")
        super().__init__(f"HTTP {status} {name}: {message}")
        self.status = status


@dataclass(frozen=True)
class Reply:
    """What a chat completion said: its text, the reasoning a reasoning model returned
    beside it, why it stopped, and its token counts (0 where the usage block has none)."""

    content: str
    reasoning: str
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    reasoning_tokens: int
    cached_tokens: int


def check_base_url(url: str | None) -> None:
    """Refuse (ValueError, one line, the URL never quoted: it may hold a secret) an
    endpoint that is not ``http(s)://host[:port][/path]`` or that holds credentials."""
    if url is None:
        return
    try:
        parts = urlsplit(url)
        port = parts.port  # raises on a port that is not a number
    except ValueError:
        raise ValueError("base_url is not a URL: write http(s)://HOST[:PORT]/v1") from None
    if parts.username is not None or parts.password is not None or "@" in parts.netloc:
        raise ValueError(
            "base_url holds credentials (user:password@): they would be written into the "
            "run's files; put the key in an environment variable and name it with api_key_env"
        )
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(
            "base_url must be an http:// or https:// URL with a host, e.g. "
            "http://localhost:11434/v1"
        )
    if parts.query or parts.fragment:
        raise ValueError("base_url has a query or a fragment: give the endpoint's path only")
    del port


def endpoint_of(base_url: str | None) -> str:
    """The endpoint a cache key holds: the base URL, lower-cased host, no trailing slash."""
    if not base_url:
        return "https://api.openai.com/v1"
    parts = urlsplit(base_url)
    return f"{parts.scheme}://{parts.netloc.lower()}{parts.path.rstrip('/')}"


def post_chat(
    base_url: str | None,
    body: dict[str, Any],
    headers: dict[str, str],
    *,
    deadline: float,
    max_bytes: int,
) -> Reply:
    """POST `body` to ``{base_url}/chat/completions``; the whole exchange ends within
    `deadline` seconds and reads at most `max_bytes` of answer (see the module doc)."""
    parts = urlsplit(endpoint_of(base_url))
    cls = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    conn = cls(parts.hostname or "", parts.port, timeout=deadline)
    # the deadline holds for the whole request: a watchdog shuts the socket down, so a
    # read that a dripping server keeps alive returns at once
    expired = threading.Event()

    def cut() -> None:
        expired.set()
        sock = conn.sock
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)

    watchdog = threading.Timer(deadline, cut)
    watchdog.daemon = True
    watchdog.start()
    try:
        conn.request(
            "POST",
            parts.path + "/chat/completions",
            body=json.dumps(body, ensure_ascii=False).encode(),
            headers={"Content-Type": "application/json", **headers},
        )
        resp = conn.getresponse()
        status = resp.status
        retry_after = _retry_after(resp.getheader("Retry-After"))
        data = _read(resp, max_bytes, expired)
    except (OSError, http.client.HTTPException) as exc:
        if expired.is_set():
            raise TransportError(
                f"no complete answer within the timeout ({deadline:g} s)"
            ) from None
        raise TransportError(f"connection failed ({type(exc).__name__})") from None
    finally:
        watchdog.cancel()
        conn.close()
    if expired.is_set():
        raise TransportError(f"no complete answer within the timeout ({deadline:g} s)")
    if status in RETRYABLE:
        raise TransportError(f"HTTP {status}: {_message(data)}", retry_after)
    if status != 200:
        raise EndpointRefusedError(status, _message(data))
    return parse_reply(data)


def _read(resp: http.client.HTTPResponse, max_bytes: int, expired: threading.Event) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = resp.read1(65536)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            raise TransportError(f"the answer is over the size cap ({max_bytes} bytes)")
        chunks.append(chunk)
        if expired.is_set():
            break
    return b"".join(chunks)


def _retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds: a number, or an HTTP date."""
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            when = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        seconds = when.timestamp() - time.time()
    return max(0.0, seconds) if seconds == seconds else None  # NaN: none


def _message(data: bytes) -> str:
    """The server's message in an error body (OpenAI's ``{"error": {"message"}}``, or a
    ``message``/``detail`` field, else the start of the text), on one line."""
    text = data.decode("utf-8", errors="replace")
    try:
        obj = json.loads(text)
    except ValueError:
        obj = None
    found: Any = None
    if isinstance(obj, dict):
        err = obj.get("error")
        found = err.get("message") if isinstance(err, dict) else err
        found = found or obj.get("message") or obj.get("detail")
    shown = str(found) if found else (text.strip() or "(no message)")
    shown = " ".join(shown.split())
    return redact(shown[:300] + ("..." if len(shown) > 300 else ""))


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key, 0)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise TransportError(f"malformed reply: usage.{key} is not a count")
    return value


def _detail(usage: dict[str, Any], block: str, key: str) -> int:
    """A count inside a usage details block; 0 where the block does not say."""
    details = usage.get(block)
    value = details.get(key) if isinstance(details, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def parse_reply(data: bytes) -> Reply:
    """A 200 body as a `Reply`; anything that is not a chat completion is a
    `TransportError` (``malformed reply: ...``)."""
    try:
        obj = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        start = " ".join(data[:40].decode("utf-8", errors="replace").split())
        raise TransportError(f"malformed reply: not JSON (it starts {start!r})") from None
    if not isinstance(obj, dict):
        raise TransportError("malformed reply: not a JSON object")
    choices = obj.get("choices")
    if not isinstance(choices, list) or not choices:
        if obj.get("error"):
            raise TransportError(f"malformed reply: an error with status 200: {_message(data)}")
        raise TransportError("malformed reply: no list of choices")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise TransportError("malformed reply: the first choice has no message")
    content = message.get("content")
    if content is None:
        content = ""
    if not isinstance(content, str):
        raise TransportError(f"malformed reply: the content is a {type(content).__name__}")
    reasoning = message.get("reasoning_content") or message.get("reasoning") or ""
    if not isinstance(reasoning, str):
        reasoning = ""
    finish = choice.get("finish_reason")
    usage = obj.get("usage")
    if usage is None:
        usage = {}
    if not isinstance(usage, dict):
        raise TransportError("malformed reply: usage is not an object")
    return Reply(
        content=content,
        reasoning=reasoning,
        finish_reason=finish if isinstance(finish, str) else None,
        tokens_in=_count(usage, "prompt_tokens"),
        tokens_out=_count(usage, "completion_tokens"),
        reasoning_tokens=_detail(usage, "completion_tokens_details", "reasoning_tokens"),
        cached_tokens=_detail(usage, "prompt_tokens_details", "cached_tokens"),
    )
