"""`spades serve`'s flags, as a user gives them: every bad value is refused in one line
(exit status 2, no traceback, within seconds) before anything is served; the loopback
addresses start without --token, and every other address needs it; --public-url is what
the server prints; one server per --root, and a killed server's lock blocks nothing."""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from cli_helpers import spades
from fault_cases import error_line
from slow_cases import first_by_default
from web_helpers import Server

#: A refused command ends within this many seconds (it only imports and parses).
QUICK = 15
TOKEN = "abcdefgh12"


def refused(*args: str) -> str:
    """`spades serve ARGS` (port 0, so that a wrongly accepted case does not take a fixed
    port): its one line of error, checked to come quickly."""
    began = time.monotonic()
    try:
        out = spades("serve", *args, timeout=60)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"spades serve {' '.join(args)} was not refused (it served)") from None
    assert time.monotonic() - began < QUICK, f"refused only after {time.monotonic() - began:.1f}s"
    return error_line(out)


def can_bind(family: socket.AddressFamily, host: str) -> bool:
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.bind((host, 0))
        return True
    except OSError:
        return False


def fetch(url: str, host: str | None = None) -> int:
    """The status of GET `url` (with `host` as its Host header, when given)."""
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as r:
            return r.status
    except urllib.error.HTTPError as exc:
        return exc.code


def port_of(server: Server) -> int:
    return int(server.url.rsplit(":", 1)[1])


# ----------------------------------------------------------------------------- values
@pytest.mark.parametrize("value", first_by_default(["70000", "-1", "65536", str(2**63), "x", ""]))
def test_serve_refuses_a_port_out_of_range(tmp_path: Path, value: str) -> None:
    line = refused(f"--port={value}", "--root", str(tmp_path))
    assert "--port" in line and "Overflow" not in line


@pytest.mark.parametrize(
    "value", first_by_default(["nan", "inf", "-inf", "-1", "61", "1e400", "x", ""])
)
def test_serve_refuses_a_pace_that_is_not_0_to_60_seconds(tmp_path: Path, value: str) -> None:
    line = refused("--port", "0", f"--pace={value}", "--root", str(tmp_path))
    assert "--pace" in line


@pytest.mark.parametrize("value", ["0", "0.5", "60"])
def test_serve_takes_a_pace_of_0_to_60_seconds(value: str) -> None:
    from experiments.cli.app import build_parser

    args = build_parser().parse_args(["serve", "--pace", value])
    assert args.pace == float(value)


@pytest.mark.parametrize("value", first_by_default(["0", "nan", "-1", "inf", "x"]))
def test_serve_refuses_a_decision_timeout_not_above_0(tmp_path: Path, value: str) -> None:
    line = refused("--port", "0", f"--decision-timeout={value}", "--root", str(tmp_path))
    assert "--decision-timeout" in line


@pytest.mark.parametrize("value", first_by_default(["0", "-1", "x", "1.5"]))
def test_serve_refuses_max_games_below_1(tmp_path: Path, value: str) -> None:
    line = refused("--port", "0", f"--max-games={value}", "--root", str(tmp_path))
    assert "--max-games" in line


def test_serve_defaults_of_the_new_flags() -> None:
    from experiments.cli.app import build_parser

    args = build_parser().parse_args(["serve"])
    assert (args.decision_timeout, args.max_games, args.agents, args.public_url) == (
        30.0,
        1000,
        None,
        None,
    )


@pytest.mark.parametrize("specs", first_by_default(["=heuristic", "x=", "a=heuristic,a=random"]))
def test_serve_refuses_a_bad_agents_list_in_one_line(tmp_path: Path, specs: str) -> None:
    refused("--port", "0", f"--agents={specs}", "--root", str(tmp_path))


def test_serve_offers_the_agents_listed(tmp_path: Path) -> None:
    server = Server(tmp_path, "--agents", "mine=heuristic")
    try:
        status, options = server.get("/api/options")
        assert status == 200 and "mine" in options["agents"]
    finally:
        server.kill()


# ----------------------------------------------------------------------------- the root
def test_serve_refuses_a_root_that_is_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    line = refused("--port", "0", "--root", str(tmp_path / "f"))
    assert "is not a folder" in line and "File exists" not in line
    assert (tmp_path / "f").read_text() == "x"


def test_serve_refuses_a_root_under_a_file(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("x")
    line = refused("--port", "0", "--root", str(tmp_path / "f" / "sub"))
    assert "--root" in line and "cannot create" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any folder")
def test_serve_refuses_a_root_it_may_not_write(tmp_path: Path) -> None:
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        assert "cannot create" in refused("--port", "0", "--root", str(locked / "sub"))
        assert "lock file" in refused("--port", "0", "--root", str(locked))
    finally:
        locked.chmod(0o700)


def test_serve_refuses_a_second_server_on_a_root_until_the_first_is_killed(
    tmp_path: Path,
) -> None:
    first = Server(tmp_path)
    try:
        line = refused("--port", "0", "--root", str(tmp_path))
        assert line == (
            f"spades serve: error: --root {tmp_path} is in use by another spades serve "
            f"(pid {first.proc.pid}): stop it, or give another --root"
        )
        assert fetch(first.url + "/") == 200  # the first one serves on
    finally:
        first.kill()  # SIGKILL: its lock file stays behind
    assert (tmp_path / ".spades-serve.lock").exists()
    second = Server(tmp_path)
    try:
        assert fetch(second.url + "/") == 200
    finally:
        second.kill()


def test_serve_refuses_a_port_in_use_in_one_line(tmp_path: Path) -> None:
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen(1)
        port = holder.getsockname()[1]
        line = refused("--port", str(port), "--root", str(tmp_path))
    assert f"--port {port}" in line and "cannot listen" in line


# ----------------------------------------------------------------------------- the host
LOOPBACK = [
    pytest.param("[::1]", socket.AF_INET6, "::1", id="[::1]"),
    pytest.param("::1", socket.AF_INET6, "::1", id="::1"),
    pytest.param("localhost", socket.AF_INET, "127.0.0.1", id="localhost"),
    pytest.param("127.0.0.2", socket.AF_INET, "127.0.0.2", id="127.0.0.2"),
]


@pytest.mark.parametrize(("host", "family", "address"), LOOPBACK)
def test_serve_binds_a_loopback_host_without_a_token(
    tmp_path: Path, host: str, family: socket.AddressFamily, address: str
) -> None:
    if not can_bind(family, address):
        pytest.skip(f"this machine cannot bind {address}")
    server = Server(tmp_path, "--host", host)
    try:
        assert "?key=" not in "".join(server.output)
        assert fetch(server.url + "/") == 200
    finally:
        server.kill()


@pytest.mark.parametrize(
    "host", first_by_default(["0.0.0.0", "::", "[::]", "192.0.2.1", "example.invalid"])
)
def test_serve_refuses_any_other_host_without_a_token(tmp_path: Path, host: str) -> None:
    line = refused("--port", "0", "--host", host, "--root", str(tmp_path))
    assert "--host" in line
    assert not (tmp_path / "web").exists()


@pytest.mark.parametrize("host", first_by_default(["", "[::1", "a b", "[]"]))
def test_serve_refuses_a_host_that_is_no_address(tmp_path: Path, host: str) -> None:
    assert "--host" in refused("--port", "0", f"--host={host}", "--root", str(tmp_path))


def test_serve_binds_every_address_with_a_token(tmp_path: Path) -> None:
    if not can_bind(socket.AF_INET, "0.0.0.0"):
        pytest.skip("this machine cannot bind 0.0.0.0")
    server = Server(tmp_path, "--host", "0.0.0.0", "--token", TOKEN)
    try:
        # the URLs printed are ones a browser opens: this machine's loopback one, then one
        # per network address of the machine and its host name (never 0.0.0.0)
        for _ in range(200):
            if "from other machines:" in "".join(server.output):
                break
            time.sleep(0.05)
        first, others = "".join(server.output).splitlines()[:2]
        assert first.startswith("spades serve: http://127.0.0.1:")
        assert f"/?key={TOKEN}" in first and "0.0.0.0" not in first + others
        assert others.startswith("spades serve: from other machines: http://")
        urls = others.split(": ", 2)[2].split()
        assert urls[-1].startswith(f"http://{socket.gethostname()}:")
        assert all(url.endswith(f"/?key={TOKEN}") for url in urls)
        for url in urls[:-1]:  # each address of this machine opens the lobby
            with urllib.request.urlopen(url, timeout=60) as r:
                assert r.status == 200
    finally:
        server.kill()


# ----------------------------------------------------------------------------- public URL
@pytest.mark.parametrize(
    "url",
    first_by_default(
        [
            "",
            "spades.example:8080",
            "ftp://spades.example/",
            "http://",
            "http:///path",
            "http://:8080/",
            "http://spades.example:99999/",
            "http://spades.example:port/",
            "http://spades.example/?a=1",
            "http://spades.example/#top",
            "http://spades example/",
            "javascript:alert(1)",
        ],
        keep=2,
    ),
)
def test_serve_refuses_a_public_url_that_is_not_http_with_a_host(tmp_path: Path, url: str) -> None:
    assert "--public-url" in refused("--port", "0", f"--public-url={url}", "--root", str(tmp_path))


@pytest.mark.parametrize(
    ("token", "printed"),
    [
        (None, "http://Spades.example:8080/"),
        (TOKEN, f"http://Spades.example:8080/?key={TOKEN}"),
    ],
)
def test_serve_prints_the_public_url(tmp_path: Path, token: str | None, printed: str) -> None:
    extra = ("--token", token) if token else ()
    server = Server(tmp_path, "--public-url", "http://Spades.example:8080", *extra)
    try:
        line = next(x for x in server.output if "http://" in x)
        assert line.startswith(f"spades serve: {printed}  (listening on 127.0.0.1:")
        port = int(line.split("listening on 127.0.0.1:")[1].split(";")[0])
        local = f"http://127.0.0.1:{port}/" + (f"?key={token}" if token else "")
        # its host (any case) is a name requests may give; a name nobody gave is not
        assert fetch(local, host="spades.example:8080") == 200
        assert fetch(local, host="SPADES.EXAMPLE") == 200
        assert fetch(local, host="elsewhere.example") != 200
    finally:
        server.kill()
