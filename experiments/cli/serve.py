"""`spades serve`: the table in the browser (experiments.web), on this machine by default.

Prints the URL (the `--public-url`, when given) and serves until Ctrl-C; opens nothing
else. On a wildcard bind (0.0.0.0, ::) it prints this machine's loopback URL, then the
URLs another machine opens: one per network address of this machine, and its host name.
Binding any address but a loopback one (127.0.0.0/8, ::1, localhost) needs an access key
(`--token`), which every request must carry; without one the command is refused in one
line. A request's Host header must name a loopback name, an IP literal, the `--host` name,
the machine's own names on a wildcard bind (0.0.0.0, ::), or the `--public-url` host.

One server per root: the server holds a lock on ROOT/.spades-serve.lock (its pid written
in it) while it runs, and a second `spades serve` on that root is refused in one line; the
lock goes with the process, so a killed server leaves nothing that blocks the next one.
Every refusal (a bad flag, a root that is not a folder, a port in use) is one line, exit
status 2. Needs the `web` extra (starlette, uvicorn).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import ipaddress
import os
import socket
from pathlib import Path
from urllib.parse import quote, urlsplit

from experiments.cli.values import positive_seconds, seconds_between, whole_number

#: The lock file in the root that one server holds while it runs.
LOCK_NAME = ".spades-serve.lock"
MAX_PACE = 60.0


def public_url(text: str) -> str:
    """`--public-url`: an http or https address with a host (no query, no fragment); the
    address with a path of at least "/"."""
    bad = argparse.ArgumentTypeError(
        f"give an http:// or https:// address with a host (such as "
        f"http://spades.example:8080/), got {text!r}"
    )
    if not text.isprintable() or any(c.isspace() for c in text):
        raise bad
    try:
        parts = urlsplit(text)
        _ = parts.port  # a port past 65535, or not a number, raises ValueError
    except ValueError:
        raise bad from None
    if parts.scheme.lower() not in ("http", "https") or not parts.hostname:
        raise bad
    if parts.query or parts.fragment or text.endswith(("?", "#")):
        raise argparse.ArgumentTypeError(
            f"give the address without a ?query or #fragment, got {text!r}"
        )
    return text if parts.path else text + "/"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="play, watch and replay in the browser (a local web app)",
        description="Serve the Spades table in the browser: play a game with and against "
        "any agents, several people at one table, replays of run folders, and a "
        "double-dummy review after each hand. Binds 127.0.0.1 unless --host says otherwise; "
        "any other address than a loopback one needs --token. One server per --root.",
    )
    p.add_argument(
        "--host",
        default="127.0.0.1",
        help="address or host name to bind (default 127.0.0.1; an IPv6 address with or "
        "without [brackets]; 0.0.0.0 or :: for every address, which needs --token)",
    )
    p.add_argument(
        "--port",
        type=whole_number(0, 65535),
        default=8000,
        help="port, 0..65535 (default 8000; 0: any free)",
    )
    p.add_argument(
        "--root",
        default="runs",
        metavar="DIR",
        help="folder of run folders to replay; web games are written to DIR/web "
        "(default runs; created if missing; one server per folder)",
    )
    p.add_argument(
        "--token",
        metavar="KEY",
        help="access key every request must carry (required off loopback); "
        "the printed URL holds it",
    )
    p.add_argument(
        "--public-url",
        type=public_url,
        metavar="URL",
        help="the address people open, when it is not the bound one (behind a proxy, or a "
        "name of this machine): http or https with a host, such as "
        "http://spades.example:8080/; printed as the URL, and its host is accepted in "
        "requests' Host header",
    )
    p.add_argument(
        "--pace",
        type=seconds_between(0.0, MAX_PACE),
        default=0.6,
        metavar="SECONDS",
        help=f"pause before each bot move, so people can follow (0 to {MAX_PACE:g}; "
        "default 0.6; 0: none)",
    )
    p.add_argument(
        "--agents",
        metavar="SPECS",
        help="more agents to offer at the tables, comma-separated, each NAME=SPEC (such as "
        "mine=bots/x.py:Mine or gpt=llm:model=m,base_url=http://localhost:8080/v1)",
    )
    p.add_argument(
        "--decision-timeout",
        type=positive_seconds,
        default=30.0,
        metavar="SECONDS",
        help="how long a seat's agent may think over one move before its seat is reported "
        "as failed (a finite number above 0; default 30)",
    )
    p.add_argument(
        "--max-tables",
        type=whole_number(1),
        default=64,
        metavar="N",
        help="tables held in memory at once (default 64; idle ones are reloaded from disk)",
    )
    p.add_argument(
        "--max-games",
        type=whole_number(1),
        default=1000,
        metavar="N",
        help="web games kept on disk under DIR/web (default 1000); new tables are refused past it",
    )
    p.add_argument(
        "--tables-per-minute",
        type=whole_number(1, 100_000),
        default=30,
        metavar="N",
        help="new tables the server makes per minute at most, a burst of N at once "
        "(default 30); more are refused until the allowance refills",
    )
    p.add_argument("--no-review", action="store_true", help="no double-dummy review after hands")
    p.add_argument(
        "--review-nodes",
        type=whole_number(0, 10**12),
        default=None,
        metavar="N",
        help="search nodes a hand's review spends judging its early cards in points before it "
        "is shown (default 12000000, a few seconds); the cards left are judged in the "
        "background and the review is updated",
    )
    p.add_argument(
        "--no-datasets",
        action="store_true",
        help="keep no behaviour-cloning dataset of the people's decisions (by default each "
        "game writes DIR/web/<table>/bc-seatN/)",
    )
    p.set_defaults(run=run)


def bind_host(text: str) -> str:
    """The `--host` to bind: an IPv6 address loses its [brackets]."""
    host = text[1:-1] if text.startswith("[") and text.endswith("]") else text
    if not host or not host.isprintable() or any(c.isspace() or c in "[]/" for c in host):
        raise ValueError(f"--host {text!r}: give an address (127.0.0.1, ::1) or a host name")
    return host


def ip_literal(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (127.0.0.0/8, ::1, localhost, [::1])."""
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    if host.lower() == "localhost":
        return True
    address = ip_literal(host)
    if address is not None:
        return address.is_loopback
    try:
        return all(
            ipaddress.ip_address(info[4][0]).is_loopback for info in socket.getaddrinfo(host, None)
        )
    except (OSError, ValueError):
        return False


def bind_address(host: str, port: int) -> tuple[socket.AddressFamily, tuple]:
    """The family and address that `host` (an address or a name; IPv4 first) binds to."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        why = getattr(exc, "strerror", None) or exc
        raise ValueError(f"--host {host}: no address of this machine ({why})") from None
    family, _, _, _, address = min(infos, key=lambda info: info[0] != socket.AF_INET)
    return family, address


def listen(family: socket.AddressFamily, address: tuple, host: str, port: int) -> socket.socket:
    """A socket bound to `address` and listening; one line (ValueError) where it cannot be."""
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
        sock.listen(512)  # connections wait in the backlog from the moment the URL is printed
    except OSError as exc:
        sock.close()
        hint = ""
        if isinstance(exc, PermissionError) and 0 < port < 1024:
            hint = ": a port below 1024 needs privileges; give another --port (0: any free)"
        elif exc.errno == getattr(os, "EADDRINUSE", None) or "in use" in str(exc):
            hint = ": another program holds it; give another --port (0: any free)"
        raise ValueError(
            f"cannot listen on --host {host} --port {port} ({exc.strerror or exc}){hint}"
        ) from None
    return sock


def prepare_root(text: str) -> Path:
    """`--root` as a folder, created if missing; one line (ValueError) where it cannot be."""
    root = Path(text)
    not_a_folder = ValueError(f"--root {text} is not a folder: give a folder (or a new name)")
    if root.exists() and not root.is_dir():
        raise not_a_folder
    try:
        root.mkdir(parents=True, exist_ok=True)
    except FileExistsError:  # a dangling link, or a file made meanwhile
        raise not_a_folder from None
    except OSError as exc:
        raise ValueError(
            f"--root {text}: cannot create the folder ({exc.strerror or exc}); give a folder "
            "this user may write"
        ) from None
    return root


def lock_root(root: Path, text: str) -> int:
    """Hold ROOT/.spades-serve.lock (flock, exclusive) for the life of the process, the
    pid written in it; its file descriptor. Refused in one line (ValueError) while another
    process holds it. The kernel drops the lock when the process ends, however it ends."""
    path = root / LOCK_NAME
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o644)
    except OSError as exc:
        raise ValueError(
            f"--root {text}: cannot open its lock file {LOCK_NAME} ({exc.strerror or exc}); "
            "give a folder this user may write"
        ) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        try:
            pid = os.pread(fd, 32, 0).decode("ascii", "replace").strip()
        except OSError:
            pid = ""
        os.close(fd)
        raise ValueError(
            f"--root {text} is in use by another spades serve "
            f"(pid {pid if pid.isdigit() else 'unknown'}): stop it, or give another --root"
        ) from None
    except OSError as exc:
        os.close(fd)
        raise ValueError(
            f"--root {text}: cannot lock {LOCK_NAME} ({exc.strerror or exc})"
        ) from None
    with contextlib.suppress(OSError):  # the pid is for the message above; the lock is what counts
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
    return fd


def allowed_hosts(host: str, public: str | None) -> tuple[str, ...]:
    """The names a request's Host header may give besides loopback names and IP literals:
    the --host name, the machine's names on a wildcard bind, the --public-url host."""
    names: list[str] = []
    address = ip_literal(host)
    if address is None:
        names.append(host)
    elif address.is_unspecified:
        names += [socket.gethostname(), socket.getfqdn()]
    if public is not None:
        names.append(urlsplit(public).hostname or "")
    return tuple(dict.fromkeys(n.lower() for n in names if n))


def shown_address(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def shown_url(host: str, port: int, token: str | None, public: str | None) -> str:
    """The URL to open: the --public-url, else the bound one; ?key= with an access key."""
    base = public or f"http://{shown_address(host, port)}/"
    return base + (f"?key={quote(token, safe='')}" if token else "")


#: addresses of documentation networks (RFC 5737, RFC 3849): a UDP socket "connected" to
#: one learns the source address the machine's routes would use, and sends nothing
_ROUTE_PROBES = ((socket.AF_INET, "192.0.2.1"), (socket.AF_INET6, "2001:db8::1"))


def machine_addresses(family: socket.AddressFamily) -> list[str]:
    """The addresses of this machine that another machine may reach (no loopback,
    link-local or unspecified address), of `family` (with AF_INET6, IPv4 ones too: a
    wildcard IPv6 bind takes both): those its host name resolves to and those its routes
    use. Nothing is sent on the network."""
    found: list[str] = []
    with contextlib.suppress(OSError, UnicodeError):
        for info in socket.getaddrinfo(socket.gethostname(), None, type=socket.SOCK_STREAM):
            found.append(str(info[4][0]))
    for probe_family, probe in _ROUTE_PROBES:
        with contextlib.suppress(OSError), socket.socket(probe_family, socket.SOCK_DGRAM) as udp:
            udp.connect((probe, 9))
            found.append(str(udp.getsockname()[0]))
    out = []
    for text in dict.fromkeys(a.split("%")[0] for a in found):
        address = ip_literal(text)
        if address is None or address.is_loopback or address.is_link_local:
            continue
        if address.is_unspecified or (family == socket.AF_INET and address.version == 6):
            continue
        out.append(text)
    return sorted(out, key=lambda a: ":" in a)  # IPv4 first


def friend_urls(family: socket.AddressFamily, port: int, token: str | None) -> list[str]:
    """On a wildcard bind: the URLs another machine opens, one per address of this
    machine, then its host name (which needs a name service that knows it)."""
    urls = [shown_url(a, port, token, None) for a in machine_addresses(family)]
    return [*urls, shown_url(socket.gethostname(), port, token, None)]


def run(args: argparse.Namespace) -> int:
    host = bind_host(args.host)
    if args.token is not None and (len(args.token) < 8 or not args.token.isprintable()):
        raise ValueError("--token: at least 8 printable characters")
    family, address = bind_address(host, args.port)
    loopback = is_loopback(host) and ipaddress.ip_address(address[0].split("%")[0]).is_loopback
    if not loopback and not args.token:
        raise ValueError(
            f"--host {args.host} is reachable from other machines: give --token KEY "
            "(an access key every request must carry), or bind 127.0.0.1"
        )
    try:
        import uvicorn

        from experiments.web.server import create_app
    except ImportError as exc:
        if (exc.name or "").partition(".")[0] in ("experiments", "agents", "spades_env"):
            raise  # this project's own code: a broken checkout, not a missing extra
        raise ValueError(
            f"spades serve needs the web extra ({exc.name} is missing): "
            "pip install 'spades-env[web]'"
        ) from None
    root = prepare_root(args.root)
    lock = lock_root(root, args.root)  # held until the process ends
    try:
        sock = listen(family, address, host, args.port)
        try:
            app = create_app(
                root,
                key=args.token,
                pace=args.pace,
                max_tables=args.max_tables,
                review=not args.no_review,
                agents=args.agents,
                decision_timeout=args.decision_timeout,
                hosts=allowed_hosts(host, args.public_url),
                max_games=args.max_games,
                tables_per_minute=args.tables_per_minute,
                datasets=not args.no_datasets,
                review_nodes=args.review_nodes,
            )
            port = sock.getsockname()[1]
            wildcard = ipaddress.ip_address(address[0].split("%")[0]).is_unspecified
            if wildcard and not args.public_url:  # 0.0.0.0 is no address a browser opens
                here = "::1" if family == socket.AF_INET6 else "127.0.0.1"
                url = shown_url(here, port, args.token, None)
                print(f"spades serve: {url}  (this machine; root {root.resolve()}; Ctrl-C stops)")
                others = "  ".join(friend_urls(family, port, args.token))
                print(f"spades serve: from other machines: {others}", flush=True)
            else:
                url = shown_url(host, port, args.token, args.public_url)
                where = f"listening on {shown_address(host, port)}; " if args.public_url else ""
                print(
                    f"spades serve: {url}  ({where}root {root.resolve()}; Ctrl-C stops)", flush=True
                )
            config = uvicorn.Config(app, log_level="warning", ws_max_size=65536)
            server = uvicorn.Server(config)
            with contextlib.suppress(KeyboardInterrupt):
                server.run(sockets=[sock])
        finally:
            sock.close()
    finally:
        os.close(lock)
    return 0
