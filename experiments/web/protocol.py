"""The messages a browser may send over its seat's websocket, and their checks.

Every message is one JSON object of at most `MAX_MESSAGE` bytes with a `type` from
`SCHEMAS` and exactly the fields that type allows, each of its type. A message that
names a seat (`seat`) must name the connection's own seat: the seat comes from the token
the connection opened with, never from the message, so a message claiming another seat
is forged and refused. Whether it is the seat's turn, and whether the move is legal, is
the table's to decide (`experiments.web.game.Table.act`). A refused message changes
nothing and gets an `error` reply to its sender alone.
"""

from __future__ import annotations

import json
import unicodedata
from typing import Any

from starlette.requests import Request

from experiments.table.words import seat_title
from experiments.web.catalogue import Catalogue
from experiments.web.game import TableError
from experiments.web.guards import same_origin
from experiments.web.records import SeatInfo
from spades_env.rules import Rules, RulesError

MAX_MESSAGE = 2048  # bytes; the largest real message is well under 300
MAX_BODY = 16_384  # bytes of a request's body (the lobby's form)
MAX_NAME = 40  # characters of a person's name
#: Unicode categories a name may not hold: control characters, line and paragraph breaks,
#: lone surrogates (any letter, mark, digit, symbol, emoji or format character is taken)
_NOT_IN_NAMES = frozenset({"Cc", "Zl", "Zp", "Cs"})

#: type -> {field: (python type, required)}
SCHEMAS: dict[str, dict[str, tuple[type, bool]]] = {
    "act": {"action": (int, True), "move": (int, True), "seat": (int, False)},
    "hint": {"agent": (str, False), "seat": (int, False)},
    "review": {"hand": (int, True)},
    "state": {},  # ask for the state again
    "ping": {},
    # a person's answer to a seat whose agent failed: retry it, or seat another agent
    "seat": {"do": (str, True), "agent": (str, False)},
}
#: the deepest nesting of arrays and objects a message or request body may have
MAX_DEPTH = 32


class MessageError(ValueError):
    """A message refused before it reaches the table; the text goes back to the sender."""


def load_json(raw: str | bytes) -> Any:
    """JSON text -> its value, refusing (ValueError, one line) text that is not JSON or
    nests deeper than MAX_DEPTH (the decoder would recurse once per level)."""
    text = raw.decode("utf-8") if isinstance(raw, bytes | bytearray) else raw
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:  # brackets outside strings: the nesting, before any decoding
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
            if deepest > MAX_DEPTH:
                raise ValueError(f"JSON nested deeper than {MAX_DEPTH} levels")
        elif ch in "]}":
            depth -= 1
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        raise ValueError("not JSON") from None


def parse_message(raw: str | bytes, seat: int) -> dict[str, Any]:
    """The checked message, or MessageError naming what is wrong with it."""
    if len(raw) > MAX_MESSAGE:
        raise MessageError(f"message too long ({len(raw)} bytes; at most {MAX_MESSAGE})")
    try:
        msg = load_json(raw)
    except (ValueError, UnicodeDecodeError):
        raise MessageError("a message is one JSON object") from None
    if not isinstance(msg, dict):
        raise MessageError("a message is one JSON object")
    kind = msg.get("type")
    if not isinstance(kind, str) or kind not in SCHEMAS:
        raise MessageError(f"unknown message type {str(kind)[:40]!r}; known: {', '.join(SCHEMAS)}")
    schema = SCHEMAS[kind]
    extra = sorted(set(msg) - set(schema) - {"type"})
    if extra:
        raise MessageError(f"{kind}: unexpected field {extra[0][:40]!r}")
    for name, (kind_of, required) in schema.items():
        if name not in msg:
            if required:
                raise MessageError(f"{kind}: the field {name!r} is missing")
            continue
        value = msg[name]
        if not isinstance(value, kind_of) or isinstance(value, bool):
            raise MessageError(
                f"{kind}: {name} must be {'a whole number' if kind_of is int else 'a text'}"
            )
    if "seat" in msg and msg["seat"] != seat:
        raise MessageError("forged message: this connection sits in another seat")
    return msg


# ----------------------------------------------------------------------------- the lobby's form
async def read_body(request: Request) -> dict[str, Any]:
    # JSON only, and from this server's own pages: another site's page cannot make a
    # cross-site JSON request without a CORS preflight, which this server never grants
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        raise TableError("send the request as application/json")
    if not same_origin(request.headers, request.headers.get("host")):
        raise TableError("requests come from this server's own pages only")
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            raise TableError(f"request too large (over {MAX_BODY} bytes)")
    try:
        data = load_json(raw or b"{}")
    except ValueError as exc:
        raise TableError(f"the request body: {exc}") from None
    if not isinstance(data, dict):
        raise TableError("the request body is a JSON object")
    return data


def _text(data: dict[str, Any], key: str, default: str, limit: int = 300) -> str:
    value = data.get(key, default)
    if value is None:
        value = default
    if not isinstance(value, str) or len(value) > limit:
        raise TableError(f"{key}: a text of at most {limit} characters")
    return value.strip()


def person_name(value: Any, who: str) -> str:
    """A person's name as typed: any text of letters, digits, marks, symbols, emoji and
    spaces in any script, at most MAX_NAME characters, outer spaces dropped; TableError
    (one line, naming `who`) for anything else. The pages show a name as text, never as
    markup, so no character needs to be refused for their sake."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise TableError(f"{who}: a name is a text")
    name = value.strip()
    if len(name) > MAX_NAME:
        raise TableError(
            f"{who}: a name has at most {MAX_NAME} characters (this one has {len(name)})"
        )
    if any(unicodedata.category(ch) in _NOT_IN_NAMES for ch in name):
        raise TableError(f"{who}: a name is one line of text, without control characters")
    return name


def _rules_words(text: str) -> str:
    """A rules error in the lobby's words: the command line's `--rules X: ` and
    `--option ITEM: ` prefixes dropped (the lobby has no flags)."""
    for prefix in ("--rules ", "--option "):
        if text.startswith(prefix) and ": " in text:
            text = text.split(": ", 1)[1]
    return text


def parse_new_table(
    data: dict[str, Any], catalogue: Catalogue
) -> tuple[Rules, list[SeatInfo], tuple[str, Any]]:
    """The rules, seats and hint agent a lobby form asks for, every field checked; agents
    only from the server's `catalogue`. Errors name a seat by its place (North, East, ...)
    and an option by its name, as the lobby shows them."""
    preset = _text(data, "rules", "standard", 40) or "standard"
    options = data.get("options", [])
    if isinstance(options, str):
        if len(options) > 2000:
            raise TableError("rules options: at most 2000 characters")
        options = [o for o in options.replace("\n", ",").split(",") if o.strip()]
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise TableError("rules options: a list of NAME=VALUE texts")
    if len(options) > 30 or any(len(o) > 200 for o in options):
        raise TableError("rules options: at most 30, each at most 200 characters")
    # one item, so that options that only make sense together are taken together
    joined = ",".join(o.strip() for o in options if o.strip())
    try:
        rules = Rules.build(preset, [joined] if joined else [])
    except RulesError as exc:
        raise TableError(f"the rules: {_rules_words(str(exc))}") from None
    seats_in = data.get("seats")
    if not isinstance(seats_in, list) or len(seats_in) != rules.num_players:
        raise TableError(f"seats: {rules.name} has {rules.num_players} seats")
    seats = []
    for s, seat in enumerate(seats_in):
        where = seat_title(s)
        if not isinstance(seat, dict):
            raise TableError(f"{where}: say who sits there (kind and name)")
        kind = seat.get("kind")
        if kind == "human":
            name = person_name(seat.get("name"), where) or f"player {s + 1}"
            seats.append(SeatInfo("human", name))
        elif kind == "agent":
            text = _text(seat, "name", "")
            spec = catalogue.spec(text, rules, f"{where}'s agent")
            seats.append(SeatInfo("agent", text, spec=spec))
        else:
            raise TableError(f"{where}: a person or an agent sits there (kind human or agent)")
    hint_text = _text(data, "hint", "heuristic") or "heuristic"
    hint = catalogue.spec(hint_text, rules, "hint")
    return rules, seats, (hint_text, hint)
