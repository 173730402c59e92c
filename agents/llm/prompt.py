"""The prompt of one decision: a system message with the task, a user message with the
seat's view (`spades_env.text`), and, after an answer that is refused, the refusal.

A user's system message (``system=FILE``, a UTF-8 text file) replaces `SYSTEM`. A
user's template (``template=FILE``) replaces the user message: a text file with
``$``-placeholders (`string.Template`): ``$view`` (the seat's view in English),
``$view_json`` (the same as JSON), ``$legal`` (the legal actions, one per line),
``$seat``, ``$phase`` and ``$rules`` (the rules in one paragraph). Write ``$$`` for a
dollar sign.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from string import Template
from typing import Any

from spades_env.rules import Rules
from spades_env.text import AnswerError, rules_text, view_text

SYSTEM = (
    "You play Spades. Each turn you see what your seat knows and choose one action. Think "
    "briefly if you like, then end with a line 'Final answer: ACTION', ACTION written as in "
    "the legal actions (e.g. 'bid 4', 'nil', 'play Q♥')."
)
PLACEHOLDERS = ("view", "view_json", "legal", "seat", "phase", "rules")
#: a system message file's largest size (bytes)
MAX_SYSTEM_BYTES = 64 * 1024


def load_system(path: str) -> str:
    """A system message file's text, checked: a regular file (not a FIFO or a device) of
    at most `MAX_SYSTEM_BYTES`, in UTF-8, not empty (ValueError, one line)."""
    file = Path(path).expanduser()
    try:
        info = file.stat()
        if not stat.S_ISREG(info.st_mode):
            raise ValueError(f"system {path!r} is not a regular file (a folder, FIFO or device)")
        if info.st_size > MAX_SYSTEM_BYTES:
            raise ValueError(
                f"system {path!r} is {info.st_size} bytes; a system message holds at most "
                f"{MAX_SYSTEM_BYTES}"
            )
        text = file.read_bytes()[: MAX_SYSTEM_BYTES + 1].decode("utf-8")
    except OSError as exc:
        raise ValueError(f"system {path!r} cannot be read: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"system {path!r} is not UTF-8 text (byte {exc.start})") from None
    if not text.strip():
        raise ValueError(f"system {path!r} is empty")
    return text


def load_template(path: str) -> Template:
    """A template file, its placeholders checked (ValueError names an unknown one)."""
    try:
        text = Path(path).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise ValueError(f"template {path!r} cannot be read: {exc.strerror or exc}") from None
    template = Template(text)
    try:
        template.substitute(dict.fromkeys(PLACEHOLDERS, ""))
    except KeyError as exc:
        known = ", ".join("$" + p for p in PLACEHOLDERS)
        raise ValueError(
            f"template {path!r} has an unknown placeholder ${exc.args[0]}; known: {known}"
        ) from None
    except ValueError as exc:
        raise ValueError(f"template {path!r}: {exc} (write $$ for a dollar sign)") from None
    return template


def user_message(view: dict[str, Any], list_legal: bool, template: Template | None) -> str:
    """The user message of a decision: the view in English (its legal-actions line left
    out when `list_legal` is false), or the user's template filled in."""
    text = view_text(view)
    if not list_legal:
        text = "\n".join(ln for ln in text.splitlines() if not ln.startswith("Legal actions:"))
    if template is None:
        ask = "Choose your action." if list_legal else "Choose your action (it must be legal)."
        return f"{text}\n{ask}"
    shown = dict(view)
    if not list_legal:
        shown.pop("legal_actions", None)
    return template.substitute(
        view=text,
        view_json=json.dumps(shown, ensure_ascii=False),
        legal="\n".join(view["legal_actions"]) if list_legal else "",
        seat=view["seat"],
        phase=view["phase"],
        rules=rules_text(Rules.from_dict(view["rules"])),
    )


def messages(
    view: dict[str, Any],
    list_legal: bool,
    template: Template | None,
    system: str | None = None,
) -> list[dict[str, str]]:
    """The chat messages of a decision's first request (`system`: the system message,
    default `SYSTEM`)."""
    return [
        {"role": "system", "content": SYSTEM if system is None else system},
        {"role": "user", "content": user_message(view, list_legal, template)},
    ]


def refusal(exc: AnswerError, list_legal: bool) -> str:
    """Why an answer was refused, as the re-ask says it: without the legal actions when
    the prompt does not list them (``list_legal=false`` holds on every re-ask)."""
    return str(exc) if list_legal else exc.reason


def reask(previous: list[dict[str, str]], answer: str, refusal: str) -> list[dict[str, str]]:
    """The messages of a re-ask: the conversation so far, the answer, and why it was
    refused (`refusal`)."""
    return [
        *previous,
        {"role": "assistant", "content": answer},
        {
            "role": "user",
            "content": f"That answer was refused: {refusal}. Answer again, ending with "
            "'Final answer: ACTION'.",
        },
    ]
