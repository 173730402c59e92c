"""The web app's gates, before any handler: the Host header (`HostCheck`, against DNS
rebinding), the access key (`AccessKey`, token mode), and the Origin of a request
(`same_origin`)."""

from __future__ import annotations

import hmac
import ipaddress

from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send
from starlette.websockets import WebSocket

KEY_COOKIE = "spades_key"


class AccessKey:
    """ASGI middleware: every request carries the server's access key (query or cookie)."""

    def __init__(self, app: ASGIApp, key: str | None) -> None:
        self.app, self.key = app, key

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if self.key is None or scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        request = Request(scope) if scope["type"] == "http" else WebSocket(scope, receive, send)
        given = request.query_params.get("key") or request.cookies.get(KEY_COOKIE) or ""
        if hmac.compare_digest(given.encode(), self.key.encode()):
            if scope["type"] == "http" and request.query_params.get("key"):

                async def send_cookie(message):
                    if message["type"] == "http.response.start":
                        cookie = f"{KEY_COOKIE}={self.key}; Path=/; HttpOnly; SameSite=Strict"
                        message.setdefault("headers", []).append((b"set-cookie", cookie.encode()))
                    await send(message)

                await self.app(scope, receive, send_cookie)
                return
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403})
            return
        response = Response("access key required: open the link spades serve printed\n", 403)
        await response(scope, receive, send)


#: names a Host header may give for any server: this machine's loopback names
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost"})


def host_name(header: str | None) -> str | None:
    """The name of a Host header (or of an Origin's authority), lowercase, without the
    port and the brackets of an IPv6 address; None for a header that is not one."""
    if not header or len(header) > 300:
        return None
    header = header.strip().lower()
    if header.startswith("["):
        end = header.find("]")
        if end < 0 or (header[end + 1 :] not in ("",) and not header[end + 1 :].startswith(":")):
            return None
        return header[1:end]
    name, _, port = header.partition(":")
    if port and not port.isdigit():
        return None
    return name.rstrip(".") or None


def allowed_host(name: str | None, hosts: frozenset[str]) -> bool:
    """A name this server answers to: a loopback name, an IP literal (a page cannot be
    rebound to an address), or one of `hosts` (the names it was started with)."""
    if name is None:
        return False
    if name in LOOPBACK_NAMES or name in hosts:
        return True
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


class HostCheck:
    """ASGI middleware: a request whose Host header names another server is refused (403
    over HTTP, close code 4403 over a websocket). A page on a domain that resolves to this
    machine (DNS rebinding) sends its own name, and is refused here."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] = frozenset()) -> None:
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if allowed_host(host_name(host), self.hosts):
            await self.app(scope, receive, send)
            return
        if scope["type"] == "websocket":
            await send({"type": "websocket.close", "code": 4403})
            return
        response = Response("unknown host: open this server by the address it printed\n", 403)
        await response(scope, receive, send)


def same_origin(headers, host: str | None) -> bool:
    """A request a page of this server made: no Origin header (not a browser's
    cross-site request), or one naming this server's own host."""
    origin = headers.get("origin")
    if origin is None:
        return True
    return host is not None and origin.split("://", 1)[-1].rstrip("/") == host
