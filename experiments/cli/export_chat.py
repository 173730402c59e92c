"""`spades export-chat RUN`: a tournament's log as chat transcripts, for fine-tuning.

Every decision of every hand of the run's log becomes one JSON line: the chat the `llm:`
agent would have been sent at that decision (`agents.llm.prompt`: the task, the seat's
view in English with its legal actions), then the action taken as the assistant's
answer (``Final answer: play Q♥``), with the legal actions, the agent that played it,
the seat, and the hand's outcome for the seat's team (its points this hand, bag penalty
included, and the margin over the best other team). The hands are replayed from their
records (`spades_env.records`), so the prompts hold only what the seat knew.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from agents.llm.prompt import messages
from experiments.tournament.config import TournamentError
from experiments.tournament.results_log import read_rows
from spades_env.cards import str_to_action, str_to_card
from spades_env.engine import start_hand, step
from spades_env.rules import Rules
from spades_env.state import init
from spades_env.text import seat_json


def add_parser(sub) -> None:
    p = sub.add_parser(
        "export-chat",
        help="a tournament's decisions as chat transcripts (JSONL) for fine-tuning",
        description="Write every decision of a run folder's log as a chat: the prompt the "
        "llm: agent would get, the legal actions, the action taken, the hand's outcome.",
    )
    p.add_argument("folder", metavar="RUN", help="a tournament's run folder")
    p.add_argument("--out", metavar="FILE", required=True, help="the JSONL file to write")
    p.add_argument("--agent", metavar="NAME", help="only the decisions of this agent")
    p.set_defaults(run=run)


def transcripts(row: dict[str, Any], agent: str | None = None) -> Iterator[dict[str, Any]]:
    """The chats of one log row (one hand), decision by decision."""
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
            yield {
                "messages": [
                    *messages(view, True, None),
                    {"role": "assistant", "content": f"Final answer: {chosen}"},
                ],
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


def _legal_index(state, action: int) -> int:
    from spades_env.engine import legal_actions

    return legal_actions(state, 0).index(action)


def run(args: argparse.Namespace) -> int:
    run_dir = Path(args.folder)
    if not (run_dir / "log.jsonl").is_file():
        raise TournamentError(f"{str(run_dir)!r} holds no tournament log (log.jsonl)")
    out = Path(args.out)
    n = 0
    with out.open("w", encoding="utf-8") as f:
        for row in read_rows(run_dir):
            for chat in transcripts(row, args.agent):
                f.write(json.dumps(chat, ensure_ascii=False) + "\n")
                n += 1
    print(f"{n} decisions written to {out}")
    return 0
