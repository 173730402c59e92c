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
from typing import Any

MAX_MESSAGE = 2048  # bytes; the largest real message is well under 300

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
