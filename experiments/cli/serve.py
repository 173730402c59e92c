"""`spades serve`: the table in the browser (experiments.web), on this machine by default.

Prints the URL and serves until Ctrl-C; opens nothing else. Binding any address but a
loopback one needs an access key (`--token`), which every request must carry; without
one the command is refused in one line. Needs the `web` extra (starlette, uvicorn).
"""

from __future__ import annotations

import argparse
import contextlib
import ipaddress
import socket
from pathlib import Path

from experiments.cli.values import whole_number


def add_parser(sub) -> None:
    p = sub.add_parser(
        "serve",
        help="play, watch and replay in the browser (a local web app)",
        description="Serve the Spades table in the browser: play a game with and against "
        "any agents, several people at one table, replays of run folders, and a "
        "double-dummy review after each hand. Binds 127.0.0.1 unless --host says otherwise; "
        "any other address needs --token.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument(
        "--port", type=whole_number(0), default=8000, help="port (default 8000; 0: any free)"
    )
    p.add_argument(
        "--root",
        default="runs",
        metavar="DIR",
        help="folder of run folders to replay; web games are written to DIR/web (default runs)",
    )
    p.add_argument(
        "--token",
        metavar="KEY",
        help="access key every request must carry (required off loopback); "
        "the printed URL holds it",
    )
    p.add_argument(
        "--pace",
        type=float,
        default=0.6,
        metavar="SECONDS",
        help="pause before each bot move, so people can follow (default 0.6; 0: none)",
    )
    p.add_argument(
        "--max-tables",
        type=whole_number(1),
        default=64,
        metavar="N",
        help="tables held in memory at once (default 64; idle ones are reloaded from disk)",
    )
    p.add_argument("--no-review", action="store_true", help="no double-dummy review after hands")
    p.set_defaults(run=run)


def is_loopback(host: str) -> bool:
    """Whether `host` names only this machine (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        try:
            return all(
                ipaddress.ip_address(info[4][0]).is_loopback
                for info in socket.getaddrinfo(host, None)
            )
        except (OSError, ValueError):
            return False


def run(args: argparse.Namespace) -> int:
    loopback = is_loopback(args.host)
    if not loopback and not args.token:
        raise ValueError(
            f"--host {args.host} is reachable from other machines: give --token KEY "
            "(an access key every request must carry), or bind 127.0.0.1"
        )
    if args.token is not None and (len(args.token) < 8 or not args.token.isprintable()):
        raise ValueError("--token: at least 8 printable characters")
    if args.pace < 0 or args.pace > 60:
        raise ValueError(f"--pace {args.pace}: give 0 to 60 seconds")
    try:
        import uvicorn

        from experiments.web.server import create_app
    except ImportError as exc:
        raise ValueError(
            f"spades serve needs the web extra ({exc.name} is missing): "
            "pip install 'spades-env[web]'"
        ) from None
    root = Path(args.root)
    root.mkdir(parents=True, exist_ok=True)
    app = create_app(
        root,
        key=args.token,
        pace=args.pace,
        max_tables=args.max_tables,
        allow_code=loopback,
        review=not args.no_review,
    )
    sock = socket.socket(socket.AF_INET6 if ":" in args.host else socket.AF_INET)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((args.host, args.port))
    sock.listen(512)  # connections wait in the backlog from the moment the URL is printed
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    query = f"/?key={args.token}" if args.token else "/"
    print(
        f"spades serve: http://{shown}:{port}{query}  (root {root.resolve()}; Ctrl-C stops)",
        flush=True,
    )
    config = uvicorn.Config(app, log_level="warning", ws_max_size=65536)
    server = uvicorn.Server(config)
    with contextlib.suppress(KeyboardInterrupt):
        server.run(sockets=[sock])
    return 0
