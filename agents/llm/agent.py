"""`llm:`: a language model in a seat, through any OpenAI-compatible chat endpoint.

``llm:model=NAME,base_url=URL[,option=value...]`` (the registry's entry; the options are
listed in docs/llm.md). Each decision is a chat request: the system message of
`agents.llm.prompt`, the seat's view in English (`spades_env.text`: what the seat knows
and nothing more), its legal actions unless ``list_legal=false``. The answer is read by
`spades_env.text.parse_view_answer`; an answer not understood, empty, or illegal is
re-asked with the reason (at most ``reasks`` times), then the ``fallback`` agent (a
registered spec, default ``heuristic``) plays the decision and it is counted as a
fallback, with its reason.

**Nothing fails silently.** Transport errors (timeouts, connection errors, 408/429/5xx, a
200 reply that is not a chat completion, an answer over ``max_answer_bytes``) are
retried ``retries`` times with exponential backoff (``backoff`` seconds, doubled each
time; a ``Retry-After`` is honoured up to ``retry_after_cap``); a decision whose requests
all fail is played by the fallback. A request the endpoint refuses (400, 401, 403, 404,
422, ...) would fail every decision: the run stops with one line holding the server's
message (`LLMError`). When more than ``max_fallback_share`` of an agent's decisions are
fallbacks (after at least `MIN_DECISIONS`), the run stops (``on_invalid=stop``, the
default) or goes on with its result marked invalid (``on_invalid=mark``); the summary
marks it invalid either way (`agents.llm.store.summarize_records`).

**The transport** (`agents.llm.transport`): one deadline (``timeout``) for the whole
request, a size cap on the answer, the base URL checked before any request. The games
of a batch are asked at once from threads; `agents.llm.limits` keeps the requests in
flight (``concurrency``) and per minute (``per_minute``) under one limit for the whole
run, across worker processes. Reasoning models: ``max_completion_tokens`` replaces
``max_tokens``, ``extra=reasoning_effort=low|seed=7`` adds request fields, and an answer
is read from ``reasoning_content`` only with ``read_reasoning=true`` (else an empty
answer is refused with the reason).

Every decision is written to the store (`agents.llm.store`: the run folder in a
tournament, else ``store=DIR``, else the user's cache folder) with the messages sent,
the raw answers, the tokens paid and those replayed, the wall seconds, and every answer
is cached by endpoint, model, messages and request settings (at temperature > 0, by
agent and decision too: each draw its own), so a rerun or a ``--resume`` replays
answered requests without sending them again.

The API key is read from the environment variable ``api_key_env`` names (default
``OPENAI_API_KEY``; an empty name sends none, for a local server) when the first request
is sent; it is never an option, never written, and removed from any error shown.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import random
import re
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent, ReportTable
from agents.heuristic.agent import HeuristicAgent
from agents.llm import prompt as prompts
from agents.llm import run as run_hooks
from agents.llm.limits import RunLimits
from agents.llm.store import (
    CACHE_FILE,
    EXCHANGES_FILE,
    MAX_FALLBACK_SHARE,
    RUN_DIR_ENV,
    ResponseCache,
    append_records,
    prompt_hash,
    request_key,
    view_hash,
)
from agents.llm.transport import (
    EndpointRefusedError,
    TransportError,
    check_base_url,
    endpoint_of,
    post_chat,
    redact,
)
from spades_env.observation import SeatView
from spades_env.state import PHASE_NAMES
from spades_env.text import AnswerError, action_name, obs_extras, parse_view_answer, view_json

__all__ = ["LLMAgent", "LLMError", "check_params", "redact"]

#: a template file's largest size (bytes): a prompt, not a book
MAX_TEMPLATE_BYTES = 64 * 1024
#: decisions an agent makes before its fallback share may stop the run
MIN_DECISIONS = 20
#: characters of a refused answer sent back in a re-ask (a huge answer is not re-sent)
REASK_ECHO = 4000
#: request fields `extra=` may not set: the agent sets them, or they change the reply's shape
_RESERVED = frozenset({"model", "messages", "stream", "n", "max_tokens", "max_completion_tokens",
                       "temperature", "api_key", "key", "authorization"})  # fmt: skip
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class LLMError(ValueError):
    """A request no retry can fix (the key is refused, the model does not exist, a field
    the model does not take), or a run past its fallback limit: the run stops with this
    one line, and a ``--resume`` after the fix plays on from the cache."""


# ----------------------------------------------------------------------------- options
def check_params(params: dict[str, Any]) -> None:
    """The spec's options, checked before any game starts (ValueError, one line that
    never quotes a value that may be a secret); the registry builds the fallback agent by
    its spec (`agents.registry`)."""
    if not params.get("model"):
        raise ValueError("name the model: llm:model=NAME,base_url=URL")
    env = params.get("api_key_env", "OPENAI_API_KEY")
    if env and not _VAR.fullmatch(env):
        raise ValueError(
            "api_key_env is not an environment variable's name (letters, digits, _); the "
            "key itself never goes in a spec"
        )
    if "base_url" in params:
        check_base_url(params["base_url"])
    if params.get("template"):
        load_template(params["template"])
    if params.get("system"):
        prompts.load_system(params["system"])
    fallback = params.get("fallback", "heuristic")
    name = fallback.partition(":")[0]
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", name) or name == "llm":
        raise ValueError(
            f"fallback={fallback!r}: name a registered agent that needs no model, with "
            "its options if any (heuristic, random, pimc:worlds=2, ...)"
        )
    if params.get("extra"):
        parse_extra(params["extra"])
    if params.get("on_invalid", "stop") not in ("stop", "mark"):
        raise ValueError("on_invalid must be stop (the run stops) or mark (marked invalid)")
    share = params.get("max_fallback_share", MAX_FALLBACK_SHARE)
    if not 0.0 <= share <= 1.0:
        raise ValueError("max_fallback_share must be a share, 0 to 1")
    for price in ("price_in", "price_out"):
        if params.get(price, 0.0) < 0:
            raise ValueError(f"{price} is dollars per million tokens: 0 or more")
    if params.get("prices"):
        read_prices(params["prices"], params["model"])


def load_template(path: str) -> Any:
    """A template file, checked: a regular file (not a FIFO or a device) of at most
    `MAX_TEMPLATE_BYTES`, in UTF-8, its placeholders known (`agents.llm.prompt`)."""
    try:
        info = os.stat(Path(path).expanduser())
    except OSError as exc:
        raise ValueError(f"template {path!r} cannot be read: {exc.strerror or exc}") from None
    if not stat.S_ISREG(info.st_mode):
        raise ValueError(f"template {path!r} is not a regular file (a folder, FIFO or device)")
    if info.st_size > MAX_TEMPLATE_BYTES:
        raise ValueError(
            f"template {path!r} is {info.st_size} bytes; a template holds at most "
            f"{MAX_TEMPLATE_BYTES}"
        )
    try:
        with open(Path(path).expanduser(), "rb") as f:
            f.read(MAX_TEMPLATE_BYTES + 1).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(
            f"template {path!r} is not UTF-8 text (byte {exc.start} is not UTF-8)"
        ) from None
    except OSError as exc:
        raise ValueError(f"template {path!r} cannot be read: {exc.strerror or exc}") from None
    return prompts.load_template(path)


def parse_extra(text: str) -> dict[str, Any]:
    """``extra=field=value|field=value``: request fields added as they are (a value that
    reads as JSON, a number or true/false, is sent as that; else as text)."""
    out: dict[str, Any] = {}
    for item in filter(None, (p.strip() for p in text.split("|"))):
        key, eq, raw = item.partition("=")
        key = key.strip()
        if not eq or not _VAR.fullmatch(key):
            raise ValueError(
                "extra= takes request fields as field=value|field=value, e.g. "
                "extra=reasoning_effort=low|seed=7|top_p=0.9"
            )
        if key.lower() in _RESERVED:
            raise ValueError(
                f"extra= may not set {key!r}: the agent sets it (or it would change the "
                "reply's shape); use the agent's own option"
            )
        try:
            out[key] = json.loads(raw)
        except ValueError:
            out[key] = raw
    return out


def read_prices(path: str, model: str) -> tuple[float, float] | None:
    """A prices file: JSON ``{"MODEL": {"in": dollars, "out": dollars}}``, dollars per
    million tokens; the model's prices, or None when the file does not list it."""
    try:
        info = os.stat(Path(path).expanduser())
        if not stat.S_ISREG(info.st_mode) or info.st_size > 1 << 20:
            raise ValueError(f"prices {path!r} is not a regular file of at most 1 MB")
        data = json.loads(Path(path).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        raise ValueError(f"prices {path!r} cannot be read: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ValueError(f"prices {path!r} is not JSON") from None
    if not isinstance(data, dict):
        raise ValueError(f'prices {path!r}: write {{"MODEL": {{"in": 0.15, "out": 0.6}}}}')
    entry = data.get(model)
    if entry is None:
        return None
    ok = isinstance(entry, dict) and all(
        isinstance(entry.get(k), (int, float)) and not isinstance(entry.get(k), bool)
        and 0 <= entry[k] < 1e6 for k in ("in", "out")
    )  # fmt: skip
    if not ok:
        raise ValueError(
            f"prices {path!r}: the entry of model {model!r} must be "
            '{"in": dollars, "out": dollars} per million tokens'
        )
    return float(entry["in"]), float(entry["out"])


def default_store() -> Path:
    """The store outside a tournament: the run folder named by `RUN_DIR_ENV`, else the
    user's cache folder."""
    run_dir = os.environ.get(RUN_DIR_ENV)
    if run_dir:
        return Path(run_dir)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "spades-env" / "llm"


# ----------------------------------------------------------------------------- the agent
class LLMAgent(BaseAgent):
    """A language model through an OpenAI-compatible chat endpoint; see the module doc."""

    needs_obs: ClassVar[bool] = True  # the open hands and two_player's stock are read from it
    #: no decision time limit (`spades_env.agent_calls`): a batch is many requests, each
    #: bounded by its own `timeout` and retries
    decision_timeout: ClassVar[float | None] = None
    #: its section of a run's summary.json: per agent, requests, re-asks, fallbacks, tokens
    run_section: ClassVar[str | None] = run_hooks.SECTION

    @classmethod
    def in_run_folder(cls, run_dir: Path) -> contextlib.AbstractContextManager[None]:
        """A tournament's agents keep their exchanges and cache in its run folder."""
        return run_hooks.run_dir_env(run_dir)

    @classmethod
    def run_summary(cls, run_dir: Path) -> dict[str, Any] | None:
        return run_hooks.run_stats(run_dir)

    @classmethod
    def report_tables(cls, section: dict[str, Any]) -> list[ReportTable]:
        return [run_hooks.stats_table(section)]

    def __init__(
        self,
        seed: int | None = None,
        *,
        model: str,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        temperature: float = 0.0,
        max_tokens: int = 512,
        max_completion_tokens: int | None = None,
        extra: str | None = None,
        read_reasoning: bool = False,
        timeout: float = 60.0,
        retries: int = 4,
        reasks: int = 2,
        backoff: float = 1.0,
        retry_after_cap: float = 60.0,
        concurrency: int = 8,
        per_minute: int = 0,
        max_answer_bytes: int = 1_000_000,
        max_fallback_share: float = MAX_FALLBACK_SHARE,
        on_invalid: str = "stop",
        price_in: float | None = None,
        price_out: float | None = None,
        prices: str | None = None,
        list_legal: bool = True,
        template: str | None = None,
        system: str | None = None,
        strict: bool = False,
        fallback: Any = None,
        store: str | None = None,
    ) -> None:
        super().__init__(seed)
        check_params({"model": model, "api_key_env": api_key_env, "base_url": base_url,
                      "extra": extra, "on_invalid": on_invalid,
                      "max_fallback_share": max_fallback_share})  # fmt: skip
        self.model, self.base_url, self.api_key_env = model, base_url, api_key_env
        self.endpoint = endpoint_of(base_url)
        self.temperature, self.timeout = temperature, timeout
        self.retries, self.reasks, self.backoff = retries, reasks, backoff
        self.retry_after_cap, self.read_reasoning = retry_after_cap, read_reasoning
        self.concurrency, self.list_legal = concurrency, list_legal
        self.max_answer_bytes = max_answer_bytes
        self.max_fallback_share, self.on_invalid = max_fallback_share, on_invalid
        # the request's settings besides the messages: they are part of the cache key
        limit = ("max_completion_tokens", max_completion_tokens) if max_completion_tokens \
            else ("max_tokens", max_tokens)  # fmt: skip
        self.settings: dict[str, Any] = {
            "temperature": temperature,
            limit[0]: limit[1],
            **(parse_extra(extra) if extra else {}),
        }
        if prices:
            found = read_prices(prices, model)
            price_in, price_out = (price_in, price_out) if found is None else found
        self.prices = (price_in, price_out) if price_in is not None and price_out is not None \
            else None  # fmt: skip
        self.template = load_template(template) if template else None
        self.system = prompts.load_system(system) if system else None  # None: prompts.SYSTEM
        self.strict = strict  # read only a final-answer tag
        # the agent that plays refused decisions (the registry builds it from fallback=SPEC)
        self.fallback = HeuristicAgent(seed=seed) if fallback is None else fallback
        self.store = Path(store).expanduser() if store else default_store()
        self.cache = ResponseCache(self.store / CACHE_FILE)
        self.limits = RunLimits(self.store, self.endpoint, concurrency, per_minute or None)
        self._headers: dict[str, str] | None = None
        self._secret: str | None = None
        self._jitter = random.Random(seed)  # backoff jitter only, never the play
        self._calls = 0
        self._tag = seed if seed is not None else f"x{random.getrandbits(48):012x}"
        self._count_lock = threading.Lock()
        self.sent = 0  # requests sent to the model by this agent (not from the cache)
        self.decisions = 0
        self.fallbacks = 0

    # ------------------------------------------------------------------ the batch
    def act(
        self,
        view: SeatView,
        obs: npt.NDArray[np.int16] | None,
        mask: npt.NDArray[np.bool_],
    ) -> npt.NDArray[np.int64]:
        n = view.batch_size
        call = self._calls
        self._calls += 1
        views = [
            view_json(view, r, **(obs_extras(view, obs, r) if obs is not None else {}))
            for r in range(n)
        ]
        if self._headers is None:
            self._headers = self._make_headers()
        jobs = [
            (lambda r=r: self._decide(view, r, views[r], [self.name, self._tag, call, r]))
            for r in range(n)
        ]
        outcomes = self._run_all(jobs)
        actions = np.array([a if a is not None else -1 for a, _ in outcomes], dtype=np.int64)
        fall = np.flatnonzero(actions < 0)
        if fall.size:
            sub = view.take(fall)
            sub_obs = obs[fall] if obs is not None and self.fallback.needs_obs else None
            actions[fall] = self.fallback.act(sub, sub_obs, mask[fall])
        records = []
        for r, (_, rec) in enumerate(outcomes):
            rec["decision"] = [self._tag, call, r]
            rec["action"] = action_name(int(actions[r]))
            records.append(rec)
        append_records(self.store / EXCHANGES_FILE, records)
        self.decisions += n
        self.fallbacks += int(fall.size)
        self._check_share(records)
        return actions

    def _run_all(self, jobs: list[Callable[[], Any]]) -> list[Any]:
        """Run the jobs on at most `concurrency` daemon threads (a Ctrl-C is not held up
        by them); the first error of a job stops the others from starting and is raised."""
        results: list[Any] = [None] * len(jobs)
        todo: queue.SimpleQueue[int] = queue.SimpleQueue()
        for i in range(len(jobs)):
            todo.put(i)
        failed: list[BaseException] = []

        def work() -> None:
            while not failed:
                try:
                    i = todo.get_nowait()
                except queue.Empty:
                    return
                try:
                    results[i] = jobs[i]()
                except BaseException as exc:  # raised in the caller's thread below
                    failed.append(exc)

        threads = [
            threading.Thread(target=work, daemon=True, name=f"llm-{k}")
            for k in range(min(self.concurrency, len(jobs)))
        ]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if failed:
            raise failed[0]
        return results

    def _check_share(self, records: list[dict[str, Any]]) -> None:
        """Stop the run once its fallback share passes the limit (``on_invalid=stop``)."""
        if self.on_invalid != "stop" or self.decisions < MIN_DECISIONS:
            return
        share = self.fallbacks / self.decisions
        if share <= self.max_fallback_share:
            return
        reasons = [r.get("fallback_reason") for r in records if r.get("fallback")]
        cause = max(set(reasons), key=reasons.count) if reasons else "unknown"
        raise LLMError(
            f"llm agent {self.name!r}: {self.fallbacks} of {self.decisions} decisions "
            f"({share:.0%}) were played by the fallback agent, over max_fallback_share="
            f"{self.max_fallback_share:g}; most often: {cause}. The result would not be the "
            "model's: fix the cause and --resume, or set on_invalid=mark to finish it marked "
            "invalid"
        )

    # ------------------------------------------------------------------ one decision
    def _decide(
        self, view: SeatView, row: int, seen: dict[str, Any], draw: list[Any]
    ) -> tuple[int | None, dict[str, Any]]:
        """(the action, or None for the fallback; the decision's record)."""
        start = time.perf_counter()
        msgs = prompts.messages(seen, self.list_legal, self.template, self.system)
        rec: dict[str, Any] = {
            "agent": self.name,
            "model": self.model,
            "seat": seen["seat"],
            "phase": PHASE_NAMES[int(view.phase[row])],
            "prompt_hash": prompt_hash(msgs),
            "view_hash": view_hash(seen),  # finds the decision in a replayed log (export-chat)
            "answers": [],
            "verdicts": [],
            "requests": 0,
            "cached_requests": 0,
            "sent": 0,
            "reasks": 0,
            "illegal": 0,
            "unreadable": 0,
            "empty": 0,
            "transport_errors": 0,
            "tokens_in": 0,
            "tokens_out": 0,
            "replayed_tokens_in": 0,
            "replayed_tokens_out": 0,
            "reasoning_tokens": 0,
            "cached_prompt_tokens": 0,
            "seconds": 0.0,
            "fallback": False,
            "max_fallback_share": self.max_fallback_share,
        }
        if self.prices is not None:
            rec["price_in"], rec["price_out"] = self.prices
        action: int | None = None
        why_empty = ""
        draw_key = draw if self.temperature > 0 else None
        for attempt in range(self.reasks + 1):
            rec["messages"] = msgs  # the messages of the latest request, exactly as sent
            reply = self._request(msgs, rec, draw_key)
            if reply is None:
                rec["fallback"] = True
                rec["fallback_reason"] = f"transport: {rec.get('last_error', 'failed')}"
                break
            answer = reply["content"]
            if not answer.strip() and self.read_reasoning:
                answer = reply.get("reasoning", "")
            rec["answers"].append(answer)
            try:
                if not answer.strip():
                    why_empty = _why_empty(reply, self.read_reasoning)
                    raise AnswerError("empty", why_empty)
                action = parse_view_answer(answer, view, row, strict=self.strict)
            except AnswerError as exc:
                kind = "illegal" if exc.kind == "illegal" else "unreadable"
                rec[kind] += 1
                rec["empty"] += exc.kind == "empty"
                rec["verdicts"].append({"verdict": exc.kind, "reason": str(exc)})
                if attempt < self.reasks:
                    rec["reasks"] += 1
                    why = prompts.refusal(exc, self.list_legal)
                    msgs = prompts.reask(msgs, answer[:REASK_ECHO], why)
                continue
            rec["verdicts"].append({"verdict": "read"})
            break
        else:
            rec["fallback"] = True
            rec["fallback_reason"] = (
                f"empty answers: {why_empty}" if rec["empty"] == len(rec["answers"])
                else "refused answers"
            )  # fmt: skip
        rec["cached"] = rec["requests"] > 0 and rec["cached_requests"] == rec["requests"]
        rec["seconds"] = round(time.perf_counter() - start, 4)  # retries and waits included
        return action, rec

    def _request(
        self, msgs: list[dict[str, str]], rec: dict[str, Any], draw: Any
    ) -> dict[str, Any] | None:
        """The model's reply to `msgs`: from the cache, else sent (retried on transport
        errors with backoff); None when every try failed."""
        key = request_key(self.model, msgs, self.settings, self.endpoint, draw)
        hit = self.cache.get(key)
        if hit is not None:
            rec["requests"] += 1
            rec["cached_requests"] += 1
            rec["replayed_tokens_in"] += int(hit.get("tokens_in", 0))
            rec["replayed_tokens_out"] += int(hit.get("tokens_out", 0))
            return hit
        body = {"model": self.model, "messages": msgs, **self.settings}
        for k in range(self.retries + 1):
            try:
                with self.limits.slot():
                    with self._count_lock:
                        self.sent += 1
                    rec["sent"] += 1
                    reply = post_chat(
                        self.base_url, body, self._headers or {},
                        deadline=self.timeout, max_bytes=self.max_answer_bytes,
                    )  # fmt: skip
            except EndpointRefusedError as exc:
                raise LLMError(
                    f"llm agent {self.name!r}: the endpoint refused the request ({exc}); "
                    "no retry can fix it"
                ) from None
            except TransportError as exc:
                rec["transport_errors"] += 1
                rec["last_error"] = redact(str(exc), self._secret)
                if k == self.retries:
                    return None
                wait = self.backoff * 2**k * (0.5 + self._jitter.random())
                if exc.retry_after is not None:
                    wait = max(wait, min(exc.retry_after, self.retry_after_cap))
                time.sleep(wait)
                continue
            value = {
                "prompt_hash": prompt_hash(msgs),
                "content": reply.content,
                "reasoning": reply.reasoning,
                "finish_reason": reply.finish_reason,
                "tokens_in": reply.tokens_in,
                "tokens_out": reply.tokens_out,
                "reasoning_tokens": reply.reasoning_tokens,
                "cached_tokens": reply.cached_tokens,
            }
            self.cache.put(key, value)
            rec["requests"] += 1
            rec["tokens_in"] += reply.tokens_in
            rec["tokens_out"] += reply.tokens_out
            rec["reasoning_tokens"] += reply.reasoning_tokens
            rec["cached_prompt_tokens"] += reply.cached_tokens
            return value
        return None

    def _make_headers(self) -> dict[str, str]:
        if not self.api_key_env:
            return {}
        secret = os.environ.get(self.api_key_env)
        if not secret:
            raise LLMError(
                f"llm agent {self.name!r}: set the environment variable "
                f"{self.api_key_env} to the API key (api_key_env= names another; "
                "api_key_env= with no value sends none, for a local server)"
            )
        self._secret = secret
        return {"Authorization": f"Bearer {secret}"}

    def close(self) -> None:
        """Close the cache (also done when the agent is collected)."""
        self.cache.close()

    def __del__(self) -> None:
        with contextlib.suppress(BaseException):
            self.close()


def _why_empty(reply: dict[str, Any], read_reasoning: bool) -> str:
    """Why an answer held no text, and what to do about it."""
    if reply.get("reasoning") and not read_reasoning:
        return (
            "the answer was empty and its reasoning_content held the text (a reasoning "
            "model): set read_reasoning=true to read it there, or raise "
            "max_completion_tokens"
        )
    if reply.get("finish_reason") == "length":
        return (
            "the answer was empty: the token limit was spent before any text "
            "(finish_reason=length); raise max_tokens or max_completion_tokens"
        )
    return "the answer was empty"
