"""The `llm:` agent's own cost per decision, without the model's time.

``python -m experiments.bench.llm [--deals N]`` plays duplicate deals of `llm:` against
heuristic with the agent pointed at `standin_server`, an OpenAI-compatible server on
127.0.0.1 whose stand-in "model" answers at once with a legal action read from the
prompt, and reports seconds per decision of the agent:

- ``through the server``: the agent's whole act time per decision: the seat's view as
  text, the prompt, the request and its local HTTP round trip, reading the answer, the
  exchange log and the response cache (the model itself takes no time here);
- ``from the cache``: the same deals again with every answer in the response cache (a
  rerun): the agent's work with no request at all.

`standin_server` also serves the example `examples/llm_local_server.py` and a dry run of
a ladder before paying for a hosted model.

The ``llm`` section of ``spades bench`` (`llm_section`) measures what a model pays and
what the reader costs, without a server: the prompt's tokens per decision (characters /
4, the system message and the user message of `agents.llm.prompt`; mean and max, bids and
card plays) over every decision of `PROMPT_HANDS` hands of standard rules played by the
heuristic, and the answer reader's time per answer on answers in the styles models write
(terse, tagged, reasoning first), with its time on two hostile answers (a 5,000-digit
number, ``"<answer>" * 16000``) beside it.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

STANDIN_KEY_ENV = "SPADES_STANDIN_KEY"


class _Standin(BaseHTTPRequestHandler):
    """``POST /v1/chat/completions``: the first legal action of the prompt's list."""

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
        prompt = next(m["content"] for m in body["messages"] if m["role"] == "user")
        legal = re.search(r"^Legal actions: (.+)\.$", prompt, flags=re.M)
        action = legal[1].split("; ")[0] if legal else "bid 3"
        answer = f"Final answer: {action}"
        data = json.dumps(
            {
                "id": "standin",
                "object": "chat.completion",
                "created": 0,
                "model": body.get("model", "standin"),
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": answer},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {
                    "prompt_tokens": len(prompt.split()),
                    "completion_tokens": len(answer.split()),
                    "total_tokens": len(prompt.split()) + len(answer.split()),
                },
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@contextmanager
def standin_server() -> Iterator[str]:
    """A stand-in OpenAI-compatible server on 127.0.0.1 for the block; yields its base
    URL (``http://127.0.0.1:PORT/v1``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Standin)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()


def _play(spec: str, deals: int, seed: int) -> tuple[float, int]:
    """Play `deals` duplicate deals of `spec` against heuristic; (seconds in the llm
    agent's act, its decisions)."""
    import numpy as np

    from agents.play_loop import play
    from agents.registry import make_agent, parse_agent
    from experiments.tournament import deals as deals_mod
    from spades_env.duplicate import seat_agents
    from spades_env.rules import Rules
    from spades_env.state import init

    rules = Rules()
    ds = deals_mod.generate(rules, seed, deals)
    llm = make_agent(parse_agent(spec), seed=seed)
    heuristic = make_agent(parse_agent("heuristic"), seed=seed)
    spent = [0.0, 0]
    act = llm.act

    def timed(view, obs, mask):
        start = time.perf_counter()
        out = act(view, obs, mask)
        spent[0] += time.perf_counter() - start
        spent[1] += len(out)
        return out

    llm.act = timed
    seat_agent = seat_agents(rules, deals)
    state = init(
        rules,
        2 * deals,
        seeds=np.repeat(ds.game_seeds, 2),
        deals=np.repeat(ds.hands, 2, axis=0),
        dealer=np.repeat(ds.dealers, 2),
    )
    play(state, seat_agent, [llm, heuristic], one_hand=True)
    llm.close()
    return spent[0], spent[1]


def overhead(deals: int = 20, seed: int = 0) -> dict[str, float]:
    """Seconds per decision of the agent through the stand-in server and from the cache."""
    import os

    os.environ.setdefault(STANDIN_KEY_ENV, "standin")
    store = Path(tempfile.mkdtemp(prefix="spades-llm-bench-"))
    try:
        with standin_server() as url:
            spec = f"llm:model=standin,base_url={url},api_key_env={STANDIN_KEY_ENV},store={store}"
            sent, n = _play(spec, deals, seed)
            cached, m = _play(spec, deals, seed)
    finally:
        shutil.rmtree(store, ignore_errors=True)
    return {
        "decisions": n,
        "through_server_ms": 1000 * sent / n,
        "from_cache_ms": 1000 * cached / m,
    }


PROMPT_HANDS = 8


def _decisions(hands: int = PROMPT_HANDS, seed: int = 0) -> list[tuple[Any, int, dict, str]]:
    """(seat view, row, its JSON view, the action played) of every decision of `hands`
    hands of standard rules played by the heuristic, the seat to act's view."""
    import numpy as np

    from agents.heuristic.agent import HeuristicAgent
    from spades_env.engine import legal_action_mask, step
    from spades_env.observation import seat_view
    from spades_env.rules import Rules
    from spades_env.state import init
    from spades_env.text import action_name, view_json

    state = init(Rules(), hands, np.random.default_rng(seed))
    player = HeuristicAgent(seed)
    out = []
    over = np.zeros(hands, dtype=bool)
    while not over.all():
        view, mask = seat_view(state), legal_action_mask(state)
        actions = player.act(view, None, mask)
        for g in np.flatnonzero(~over):
            out.append((view, int(g), view_json(view, int(g)), action_name(int(actions[g]))))
        over |= step(state, actions).hand_over
    return out


def _answers(name: str) -> list[str]:
    """An action named in the styles models answer in."""
    return [
        name,
        f"Final answer: {name}",
        f"Let me think. My partner is strong and the trick is open, so the choice is "
        f"clear.\n\nI'll go with **{name}**.",
        f'{{"reasoning": "safe", "action": "{name}"}}',
    ]


def prompt_stats(hands: int = PROMPT_HANDS) -> dict[str, Any]:
    """Tokens per decision (characters / 4) of the prompt, mean and max, for bids and
    card plays, and the reader's seconds per answer (`llm_section`)."""
    from agents.llm import prompt as prompts
    from spades_env.state import PLAY
    from spades_env.text import parse_view_answer

    tokens: dict[str, list[float]] = {"bid": [], "play": []}
    items = _decisions(hands)
    for view, row, seen, _ in items:
        msgs = prompts.messages(seen, True, None)
        kind = "play" if int(view.phase[row]) == PLAY else "bid"
        tokens[kind].append(sum(len(m["content"]) for m in msgs) / 4)
    answers = [(view, row, a) for view, row, _, name in items for a in _answers(name)]
    start = time.perf_counter()
    for view, row, answer in answers:
        parse_view_answer(answer, view, row)
    per_answer = (time.perf_counter() - start) / len(answers)
    hostile = {}
    view, row = items[0][0], items[0][1]
    for label, answer in (("digits", "bid " + "7" * 5000), ("tags", "<answer>" * 16000)):
        start = time.perf_counter()
        with suppress(ValueError):
            parse_view_answer(answer, view, row)
        hostile[label] = time.perf_counter() - start
    return {
        "tokens": {k: (sum(v) / len(v), max(v), len(v)) for k, v in tokens.items()},
        "reader_s": per_answer,
        "answers": len(answers),
        "hostile_s": hostile,
    }


def llm_section(seconds: float) -> list[dict[str, Any]]:
    """`spades bench --only llm`: the prompt's tokens per decision and the reader's time
    (`prompt_stats`; the work is fixed, `seconds` is not used)."""
    r = prompt_stats()
    rows = []
    for kind, (mean, top, n) in r["tokens"].items():
        rows.append({
            "name": f"llm: prompt tokens per {kind}",
            "batch": 1,
            "rate": mean,
            "unit": "tokens/decision",
            "reference": None,
            "reference_rate": None,
            "ratio": None,
            "mean_tokens": round(mean, 1),
            "max_tokens": top,
            "decisions": n,
        })  # fmt: skip
    rows.append({
        "name": "llm: answer reader",
        "batch": 1,
        "rate": 1 / r["reader_s"],
        "unit": "answers/s",
        "reference": None,
        "reference_rate": None,
        "ratio": None,
        "us_per_answer": round(r["reader_s"] * 1e6, 1),
        "answers": r["answers"],
        "ms_5000_digit_number": round(r["hostile_s"]["digits"] * 1e3, 2),
        "ms_16000_answer_tags": round(r["hostile_s"]["tags"] * 1e3, 2),
    })  # fmt: skip
    return rows


def detail(row: dict[str, Any]) -> str:
    """The extra figures of an llm row, one indented line."""
    keys = ("mean_tokens", "max_tokens", "decisions", "us_per_answer", "answers")
    keys += ("ms_5000_digit_number", "ms_16000_answer_tags")
    return "    " + ", ".join(f"{k}={row[k]}" for k in keys if k in row)


SECTIONS = {"llm": llm_section}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--deals", type=int, default=20)
    args = parser.parse_args()
    r = overhead(args.deals)
    print(
        f"llm: agent overhead over {r['decisions']} decisions: "
        f"{r['through_server_ms']:.2f} ms per decision through a local server (no model "
        f"time), {r['from_cache_ms']:.2f} ms per decision from the response cache"
    )


if __name__ == "__main__":
    main()
