"""`llm:`: a language model in a seat, through any OpenAI-compatible chat endpoint.

``llm:model=NAME,base_url=URL[,option=value...]`` (the registry's entry). Each decision
is a chat request: the system message of `agents.llm.prompt`, the seat's view in English
(`spades_env.text`: what the seat knows and nothing more), its legal actions unless
``list_legal=false``. The answer is read by `spades_env.text.parse_view_answer`; an
unreadable or illegal answer is re-asked with the reason (at most ``reasks`` times), then
the ``fallback`` agent (a registered name, default ``heuristic``) plays the decision and
it is counted as a fallback. Transport errors (timeouts, connection errors, 429, 5xx)
are retried ``retries`` times with exponential backoff (``backoff`` seconds, doubled each
time); a decision whose requests all fail is played by the fallback too, so no game is
lost. Authentication and permission errors (401, 403, 404) stop the run with one line:
they would fail every request.

The games of a batch are asked concurrently (`openai.AsyncOpenAI`, `asyncio.gather`),
at most ``concurrency`` requests in flight. Every decision is written to the store
(`agents.llm.store`: the run folder in a tournament, else ``store=DIR``, else the user's
cache folder) with its tokens, seconds, requests, re-asks and fallback, and every answer
is cached by model, messages and sampling settings, so a rerun or a ``--resume``
replays answered requests without sending them again.

The API key is read from the environment variable ``api_key_env`` names (default
``OPENAI_API_KEY``; an empty name sends none, for a local server) when the first request
is sent; it is never an option, never written, and removed from any error shown.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import re
import time
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import numpy.typing as npt

from agents.base import BaseAgent, ReportTable
from agents.heuristic.agent import HeuristicAgent
from agents.llm import prompt as prompts
from agents.llm import run as run_hooks
from agents.llm.store import (
    CACHE_FILE,
    EXCHANGES_FILE,
    RUN_DIR_ENV,
    ResponseCache,
    append_records,
    prompt_hash,
    request_key,
)
from spades_env.observation import SeatView
from spades_env.state import PHASE_NAMES
from spades_env.text import AnswerError, action_name, obs_extras, parse_view_answer, view_json

_SECRET = re.compile(r"(sk-[A-Za-z0-9_\-*]{3,}|Bearer\s+\S+)")


class LLMError(ValueError):
    """A request no retry can fix (the key is refused, the model does not exist): the run
    stops with this one line, and a ``--resume`` after the fix plays on from the cache."""


def check_params(params: dict[str, Any]) -> None:
    """The spec's options, checked before any game starts (ValueError, one line); the
    registry builds the fallback agent by its name (`agents.registry`)."""
    if not params.get("model"):
        raise ValueError("name the model: llm:model=NAME,base_url=URL")
    env = params.get("api_key_env", "OPENAI_API_KEY")
    if env and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
        raise ValueError(
            f"api_key_env={env!r} is not an environment variable's name; the key itself "
            "never goes in a spec"
        )
    if params.get("template"):
        prompts.load_template(params["template"])
    fallback = params.get("fallback", "heuristic")
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*", fallback) or fallback == "llm":
        raise ValueError(
            f"fallback={fallback!r}: name a registered agent that needs no model "
            "(heuristic, random, pimc, ...)"
        )


def redact(text: str, secret: str | None = None) -> str:
    """`text` with the key (and anything shaped like a key or a bearer token) removed."""
    if secret:
        text = text.replace(secret, "***")
    return _SECRET.sub("***", text)


def default_store() -> Path:
    """The store outside a tournament: the run folder named by `RUN_DIR_ENV`, else the
    user's cache folder."""
    run_dir = os.environ.get(RUN_DIR_ENV)
    if run_dir:
        return Path(run_dir)
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "spades-env" / "llm"


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
        timeout: float = 60.0,
        retries: int = 4,
        reasks: int = 2,
        backoff: float = 1.0,
        concurrency: int = 8,
        list_legal: bool = True,
        template: str | None = None,
        fallback: Any = None,
        store: str | None = None,
    ) -> None:
        super().__init__(seed)
        check_params({"model": model, "api_key_env": api_key_env})
        self.model, self.base_url, self.api_key_env = model, base_url, api_key_env
        self.temperature, self.max_tokens, self.timeout = temperature, max_tokens, timeout
        self.retries, self.reasks, self.backoff = retries, reasks, backoff
        self.concurrency, self.list_legal = concurrency, list_legal
        self.template = prompts.load_template(template) if template else None
        # the agent that plays refused decisions (the registry builds it from fallback=NAME)
        self.fallback = HeuristicAgent(seed=seed) if fallback is None else fallback
        self.store = Path(store).expanduser() if store else default_store()
        self.cache = ResponseCache(self.store / CACHE_FILE)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._client: Any = None
        self._secret: str | None = None
        self._jitter = random.Random(seed)  # backoff jitter only, never the play
        self._calls = 0
        self._tag = seed if seed is not None else f"x{random.getrandbits(48):012x}"
        self.sent = 0  # requests sent to the model by this agent (not from the cache)

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
        if self._loop is None:
            self._loop = asyncio.new_event_loop()
        outcomes = self._loop.run_until_complete(self._decide_all(view, views))
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
        return actions

    async def _decide_all(
        self, view: SeatView, views: list[dict[str, Any]]
    ) -> list[tuple[int | None, dict[str, Any]]]:
        if self._client is None:
            self._client = self._make_client()
            self._gate = asyncio.Semaphore(self.concurrency)
        return list(await asyncio.gather(*(self._decide(view, r, v) for r, v in enumerate(views))))

    # ------------------------------------------------------------------ one decision
    async def _decide(
        self, view: SeatView, row: int, seen: dict[str, Any]
    ) -> tuple[int | None, dict[str, Any]]:
        """(the action, or None for the fallback; the decision's record)."""
        msgs = prompts.messages(seen, self.list_legal, self.template)
        rec: dict[str, Any] = {
            "agent": self.name,
            "model": self.model,
            "seat": seen["seat"],
            "phase": PHASE_NAMES[int(view.phase[row])],
            "prompt_hash": prompt_hash(msgs),
            "answers": [],
            "requests": 0,
            "cached_requests": 0,
            "reasks": 0,
            "illegal": 0,
            "unreadable": 0,
            "transport_errors": 0,
            "tokens_in": 0,
            "tokens_out": 0,
            "seconds": 0.0,
            "fallback": False,
        }
        for attempt in range(self.reasks + 1):
            reply = await self._request(msgs, rec)
            if reply is None:
                rec["fallback"], rec["fallback_reason"] = True, "transport"
                break
            answer = reply["content"]
            rec["answers"].append(answer[:2000])
            try:
                action = parse_view_answer(answer, view, row)
            except AnswerError as exc:
                rec["illegal" if exc.kind == "illegal" else "unreadable"] += 1
                if attempt < self.reasks:
                    rec["reasks"] += 1
                    msgs = prompts.reask(msgs, answer, str(exc))
                continue
            rec["cached"] = rec["cached_requests"] == rec["requests"]
            rec["seconds"] = round(rec["seconds"], 4)
            return action, rec
        else:
            rec["fallback"], rec["fallback_reason"] = True, "refused answers"
        rec["cached"] = rec["requests"] > 0 and rec["cached_requests"] == rec["requests"]
        rec["seconds"] = round(rec["seconds"], 4)
        return None, rec

    async def _request(
        self, msgs: list[dict[str, str]], rec: dict[str, Any]
    ) -> dict[str, Any] | None:
        """The model's reply to `msgs`: from the cache, else sent (retried on transport
        errors with backoff); None when every try failed."""
        sampling = {"temperature": self.temperature, "max_tokens": self.max_tokens}
        key = request_key(self.model, msgs, sampling)
        hit = self.cache.get(key)
        if hit is not None:
            self._count(rec, hit)
            rec["cached_requests"] += 1
            return hit
        import openai

        transient = (
            openai.APITimeoutError,
            openai.APIConnectionError,
            openai.RateLimitError,
            openai.InternalServerError,
        )
        fatal = (openai.AuthenticationError, openai.PermissionDeniedError, openai.NotFoundError)
        for k in range(self.retries + 1):
            start = time.perf_counter()
            try:
                async with self._gate:
                    self.sent += 1
                    resp = await self._client.chat.completions.create(
                        model=self.model, messages=msgs, **sampling
                    )
            except fatal as exc:
                raise LLMError(
                    f"llm agent {self.name!r}: the endpoint refused the request "
                    f"({type(exc).__name__}): {redact(str(exc), self._secret)}"
                ) from None
            except transient:
                rec["transport_errors"] += 1
                if k == self.retries:
                    return None
                await asyncio.sleep(self.backoff * 2**k * (0.5 + self._jitter.random()))
                continue
            except openai.APIStatusError:  # e.g. 400 (a prompt too long): this decision only
                rec["transport_errors"] += 1
                return None
            usage = getattr(resp, "usage", None)
            choice = resp.choices[0] if resp.choices else None
            reply = {
                "prompt_hash": prompt_hash(msgs),
                "content": (choice.message.content if choice is not None else None) or "",
                "tokens_in": int(getattr(usage, "prompt_tokens", 0) or 0),
                "tokens_out": int(getattr(usage, "completion_tokens", 0) or 0),
                "seconds": time.perf_counter() - start,
            }
            self.cache.put(key, reply)
            self._count(rec, reply)
            return reply
        return None

    @staticmethod
    def _count(rec: dict[str, Any], reply: dict[str, Any]) -> None:
        rec["requests"] += 1
        rec["tokens_in"] += reply["tokens_in"]
        rec["tokens_out"] += reply["tokens_out"]
        rec["seconds"] += reply["seconds"]

    def _make_client(self) -> Any:
        try:
            from openai import AsyncOpenAI
        except ImportError:
            raise LLMError(
                "the llm agent needs the openai library: pip install -e '.[llm]'"
            ) from None
        if self.api_key_env:
            secret = os.environ.get(self.api_key_env)
            if not secret:
                raise LLMError(
                    f"llm agent {self.name!r}: set the environment variable "
                    f"{self.api_key_env} to the API key (api_key_env= names another; "
                    "api_key_env= with no value sends none, for a local server)"
                )
        else:
            secret = "none"
        self._secret = secret
        return AsyncOpenAI(
            api_key=secret, base_url=self.base_url, max_retries=0, timeout=self.timeout
        )

    def close(self) -> None:
        """Close the connections and the cache (also done when the agent is collected)."""
        if self._loop is not None and self._client is not None:
            self._loop.run_until_complete(self._client.close())
        if self._loop is not None:
            self._loop.close()
        self._loop, self._client = None, None
        self.cache.close()

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
