"""`spades serve` as a subprocess, spoken to as a browser would (HTTP and websockets,
no browser): refused messages change nothing, a flooding client is cut off, paths stay
under the root, access keys, and a killed server resumes its games."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from cli_helpers import one_line_error, spades
from web_helpers import Seat, Server, seats, token_of

pytest.importorskip("starlette")
pytest.importorskip("websockets")
pytestmark = [pytest.mark.cli]


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("root")
    srv = Server(root, "--pace", "0", "--no-review")
    yield srv
    srv.stop()


def _my_turn(seat: Seat) -> dict:
    return seat.turn()


def test_refused_messages_change_nothing(server):
    table = server.new_table(seats(human=2, s0="partner"))
    me = Seat(server, token_of(table["links"][1]["link"]))
    partner = Seat(server, token_of(table["links"][0]["link"]))
    state = me.next("state")
    partner.next("state")
    acted_at = -1  # the move at which the partner last acted
    while not state["your_turn"]:  # the partner (seat 0) may bid before me
        # (a state sent before the partner's bid, a presence change, still says seat 0)
        if state["to_act"] == 0 and state["moves"] > acted_at:
            acted_at = state["moves"]
            partner.act()
        state = me.next("state")
    legal = state["legal"][0]["action"]
    for bad, why in [
        ("{not json", "one JSON object"),
        (json.dumps({"type": "act", "action": legal, "move": state["moves"], "seat": 0}), "forged"),
        (json.dumps({"type": "act", "action": legal, "move": state["moves"] - 1}), "out of date"),
        (json.dumps({"type": "teleport"}), "unknown message type"),
    ]:
        me.send(bad)
        assert why in me.next("error")["error"]
    # the partner's seat acting now is out of turn
    partner.send({"type": "act", "action": legal, "move": state["moves"]})
    assert "not your turn" in partner.next("error")["error"]
    me.send({"type": "state"})
    assert me.next("state")["moves"] == state["moves"]  # nothing changed
    assert me.act()["moves"] > state["moves"]
    me.close()
    partner.close()


def test_unknown_seat_token_is_refused(server):
    from websockets.exceptions import InvalidStatus, WebSocketException

    with pytest.raises((InvalidStatus, WebSocketException, OSError)):
        Seat(server, "not-a-real-token").next(timeout=30)


def test_a_flooding_client_is_cut_off_and_others_play_on(server):
    flood_table = server.new_table(seats(human=2))
    calm_table = server.new_table(seats(human=2))
    flood = Seat(server, token_of(flood_table["links"][0]["link"]))
    calm = Seat(server, token_of(calm_table["links"][0]["link"]))
    flood.next("state")
    from websockets.exceptions import ConnectionClosed

    with pytest.raises(ConnectionClosed):
        for _ in range(500):
            flood.send({"type": "ping"})
        while True:
            flood.next(timeout=30)
    assert flood.ws.close_code == 4429
    assert calm.act()["moves"] > 0
    calm.close()


def test_paths_outside_the_root_are_refused(server):
    for bad in ("../", "/etc", "..%2F..%2Fetc", "web/../../x"):
        status, data = server.get(f"/api/deals?run={bad}")
        assert status in (400, 404) and "error" in data


def test_bad_table_requests_get_one_line(server):
    status, data = server.post(
        "/api/tables", {"seats": [{"kind": "agent", "name": "heuristic"}] * 4}
    )
    assert status == 400 and "person" in data["error"]
    status, data = server.post("/api/tables", {"seats": seats(agent="no_such_agent")})
    assert status == 400 and "not an agent of this server" in data["error"]
    status, data = server.post("/api/tables", {"seats": seats(), "rules": "nope"})
    assert status == 400 and "unknown preset" in data["error"]
    status, data = server.post("/api/tables", {"seats": seats(), "options": "target=x"})
    assert status == 400 and "target" in data["error"]
    # options that only make sense together, as the lobby's text box sends them
    options = "blind_nil=never, open_hands=true"
    status, data = server.post("/api/tables", {"seats": seats(), "options": options})
    assert status == 200, data


def test_another_sites_page_cannot_start_a_table(server):
    """No cross-site request: a form or no-cors fetch (not JSON) and a foreign Origin."""
    body = json.dumps({"seats": seats()}).encode()
    for headers in (
        {"Content-Type": "text/plain"},
        {"Content-Type": "application/json", "Origin": "http://evil.example"},
    ):
        request = urllib.request.Request(server.url + "/api/tables", data=body, headers=headers)
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=30)
        assert refused.value.code == 400


def test_serve_is_listed_and_has_help():
    assert "serve" in spades().stdout
    out = spades("serve", "--help")
    assert out.returncode == 0 and "--token" in out.stdout and "%%" not in out.stdout


def test_a_non_loopback_bind_needs_a_token():
    line = one_line_error(spades("serve", "--host", "0.0.0.0", "--port", "0", timeout=120))
    assert "--token" in line


def test_an_access_key_guards_every_request(tmp_path):
    srv = Server(tmp_path, "--token", "s3cret-key", "--pace", "0")
    try:
        assert srv.url.endswith(":" + srv.url.rsplit(":", 1)[1])
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(srv.url + "/api/options", timeout=30)
        assert refused.value.code == 403
        with urllib.request.urlopen(srv.url + "/api/options?key=s3cret-key", timeout=30) as r:
            assert r.status == 200
        status, data = srv.post("/api/tables?key=s3cret-key", {"seats": seats(human=2)})
        link = data["links"][0]["link"]  # a person's link lets them in
        assert status == 200 and link.endswith("?key=s3cret-key")
        with urllib.request.urlopen(srv.url + link, timeout=30) as r:
            assert r.status == 200
        from websockets.sync.client import connect

        token = link.split("/")[-1].split("?")[0]
        with connect(f"{srv.ws_url}/ws/{token}?key=s3cret-key", open_timeout=60) as ws:
            assert json.loads(ws.recv(timeout=60))["type"] == "state"
    finally:
        srv.stop()


@pytest.mark.slow  # the browser test of the same resume runs by default
def test_a_killed_server_resumes_its_game(tmp_path):
    srv = Server(tmp_path, "--pace", "0", "--no-review")
    table = srv.new_table(seats(human=2))
    token = token_of(table["links"][0]["link"])
    me = Seat(srv, token)
    hands_done = 0
    while hands_done < 1 or me.latest["moves"] < 70:  # into the second hand
        hands_done = len(me.act(lambda s: s["legal"][-1]["action"])["sheet"])
    before = me.latest
    srv.kill()
    logged = (tmp_path / "web" / table["table"] / "log.jsonl").read_text().splitlines()
    again = Server(tmp_path, "--pace", "0", "--no-review")
    try:
        seat = Seat(again, token)
        state = seat.next("state")
        assert state["moves"] >= before["moves"]
        assert state["sheet"][: len(before["sheet"])] == before["sheet"]
        assert len(logged) == len(before["sheet"])
        seat.close()
    finally:
        again.stop()
        time.sleep(0)


def test_tables_in_memory_are_bounded_and_reload_from_disk(tmp_path):
    srv = Server(tmp_path, "--pace", "0", "--no-review", "--max-tables", "1")
    try:
        first = srv.new_table(seats(human=2))
        seat = Seat(srv, token_of(first["links"][0]["link"]))
        state = seat.act()
        status, data = srv.post("/api/tables", {"seats": seats(human=2)})
        assert status == 400 and "holds 1 tables" in data["error"]  # someone sits at the one
        seat.close()
        time.sleep(0.5)
        srv.new_table(seats(human=2))  # the idle table leaves memory (it is on disk)
        back = Seat(srv, token_of(first["links"][0]["link"]))  # and comes back on reconnect
        assert back.next("state")["moves"] >= state["moves"]
        back.close()
    finally:
        srv.stop()
