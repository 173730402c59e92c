"""`spades export-chat RUN`: a tournament's decisions as chat transcripts, for fine-tuning.

Every decision of every hand of the run's log becomes one JSON line, with the legal
actions, the action played, the agent, the seat, and the hand's outcome for the seat's
team (its points this hand, bag penalty included, and the margin over the best other
team). The hands are replayed from their records (`spades_env.records`), so every view
holds only what the seat knew.

- A decision of an ``llm:`` agent (``"source": "model"``) is taken from the run's
  exchange log (`agents.llm.store`): the messages exactly as they were sent (the
  agent's template, ``list_legal`` and re-asks included) and the model's raw answer,
  with the re-asks, the illegal answers, the answers not understood, and whether the
  fallback agent played (then the answer is not the action). ``--target action`` puts
  the action played in the assistant's turn instead (``Final answer: play Q♥``), after
  the first request's messages.
- Any other decision (``"source": "replayed"``: a bot's) gets the chat the ``llm:``
  agent's default prompt would have sent, and the action played as its answer.

The output is written to a temporary file beside it and renamed at the end, so no
failure leaves a partial file; an output inside the run folder (the log itself, say) is
refused unless ``--overwrite-input`` (the check every command makes,
`experiments.cli.checks.output_file`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agents.llm.prompt import messages
from agents.llm.store import EXCHANGES_FILE, read_records, view_hash
from experiments.cli.checks import add_overwrite_input, output_file
from experiments.tournament.config import TournamentError
from experiments.tournament.results_log import iter_rows
from spades_env.cards import str_to_action, str_to_card
from spades_env.engine import start_hand, step
from spades_env.rules import Rules
from spades_env.state import init
from spades_env.text import seat_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "export-chat",
        help="a tournament's decisions as chat transcripts (JSONL) for fine-tuning",
        description="Write every decision of a run folder's log as a chat: for an llm: agent "
        "the messages it sent and the model's raw answer (re-asks, illegal answers and "
        "fallbacks marked), for a bot the prompt an llm: agent would get; the legal "
        "actions, the action taken, the hand's outcome.",
    )
    p.add_argument("folder", metavar="RUN", help="a tournament's run folder")
    p.add_argument("--out", metavar="FILE", required=True, help="the JSONL file to write")
    p.add_argument("--agent", metavar="NAME", help="only the decisions of this agent")
    p.add_argument(
        "--target",
        choices=("answer", "action"),
        default="answer",
        help="the assistant's turn of an llm: agent's decision: the model's raw answer "
        "(default) or the action played",
    )
    add_overwrite_input(p)
    p.set_defaults(run=run)


def transcripts(
    row: dict[str, Any],
    agent: str | None = None,
    records: dict[tuple[str, str], list[dict[str, Any]]] | None = None,
    target: str = "answer",
) -> Iterator[dict[str, Any]]:
    """The chats of one log row (one hand), decision by decision; `records`: the llm
    agents' decision records by (agent, view hash), each used once."""
    rec = row["record"]
    rules = Rules.from_dict(rec["rules"])
    deal = np.array([[[str_to_card(c) for c in hand] for hand in rec["deal"]]])
    state = init(
        rules,
        1,
        seeds=np.array([rec["seed"]], dtype=np.uint64),
        deals=None if rules.draw else deal,
        dealer=rec["dealer"],
        scores=np.array(rec["scores_before"])[None],
        bags=np.array(rec["bags_before"])[None],
    )
    state.hand_no[:] = rec["hand_no"]
    if rules.draw:
        start_hand(state, np.zeros(1, dtype=np.int64))
    score = [p - q for p, q in zip(rec["points"], rec["penalty"], strict=True)]
    for seat, text in rec["actions"]:
        who = row["seats"][seat]
        action = str_to_action(text)
        if agent is None or who == agent:
            view = seat_json(state, 0, seat)
            team = rules.team_of(seat)
            chosen = view["legal_actions"][_legal_index(state, action)]
            others = [s for t, s in enumerate(score) if t != team]
            found = (records or {}).get((who, view_hash(view)))
            chat = _from_record(found.pop(0), chosen, target) if found else _replayed(view, chosen)
            yield {
                **chat,
                "legal_actions": view["legal_actions"],
                "action": chosen,
                "agent": who,
                "seat": view["seat"],
                "tournament": row.get("tournament"),
                "deal": row.get("deal"),
                "side": row.get("side"),
                "outcome": {
                    "team_points": score[team],
                    "margin": score[team] - max(others) if others else score[team],
                },
            }
        step(state, [action])


def _replayed(view: dict[str, Any], chosen: str) -> dict[str, Any]:
    """A bot's decision: the default prompt, the action played as the answer."""
    return {
        "messages": [
            *messages(view, True, None),
            {"role": "assistant", "content": f"Final answer: {chosen}"},
        ],
        "source": "replayed",
    }


def _from_record(rec: dict[str, Any], chosen: str, target: str) -> dict[str, Any]:
    """An llm agent's decision from its record: the messages sent and the raw answer
    (or, with target "action", the first request and the action played)."""
    sent = list(rec.get("messages") or [])
    answers = list(rec.get("answers") or [])
    if target == "action":
        first = next((i for i, m in enumerate(sent) if m.get("role") == "assistant"), len(sent))
        chat = [*sent[:first], {"role": "assistant", "content": f"Final answer: {chosen}"}]
    else:
        chat = sent + ([{"role": "assistant", "content": answers[-1]}] if answers else [])
    return {
        "messages": chat,
        "source": "model",
        "answers": answers,
        "verdicts": rec.get("verdicts", []),
        "reasks": rec.get("reasks", 0),
        "illegal": rec.get("illegal", 0),
        "not_understood": rec.get("unreadable", 0),
        "fallback": bool(rec.get("fallback")),
        "fallback_reason": rec.get("fallback_reason"),
    }


def _legal_index(state, action: int) -> int:
    from spades_env.engine import legal_actions

    return legal_actions(state, 0).index(action)


def _records_by_view(run_dir: Path) -> dict[tuple[str, str], list[dict[str, Any]]]:
    out: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for rec in read_records(run_dir / EXCHANGES_FILE):
        if rec.get("view_hash") and rec.get("messages") is not None:
            out[(rec["agent"], rec["view_hash"])].append(rec)
    return out


def run(args: argparse.Namespace) -> int:
    run_dir = Path(args.folder)
    if not (run_dir / "log.jsonl").is_file():
        raise TournamentError(f"RUN {args.folder!r} holds no tournament log (log.jsonl)")
    out = output_file(args.out, run_folders={"the run folder": run_dir}, allow=args.overwrite_input)
    out.parent.mkdir(parents=True, exist_ok=True)
    if args.agent is not None:
        present = sorted({who for row in iter_rows(run_dir) for who in row["seats"]})
        if args.agent not in present:
            raise TournamentError(
                f"--agent {args.agent!r}: no such agent in this run; its agents: "
                f"{', '.join(present)}"
            )
    records = _records_by_view(run_dir)
    fd, tmp = tempfile.mkstemp(dir=out.resolve().parent, prefix=f".{out.name}.", suffix=".tmp")
    n = 0
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            for row in iter_rows(run_dir):
                for chat in transcripts(row, args.agent, records, args.target):
                    f.write(json.dumps(chat, ensure_ascii=False) + "\n")
                    n += 1
        os.replace(tmp, out)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    print(f"{n} decisions written to {out}")
    return 0
