"""Every parameter of the public constructors through the values at its edges:
`SpadesVectorEnv`, `spades_v0.env`, `Rules`, `TournamentConfig` (each read from its
signature, so a new parameter is swept without anyone listing it), and every option of
every agent in the registry table (`agents.registry.table.REGISTRY`, given as spec text).

Each value either works (the object is built and, for an env, reset; for rules, a game
is dealt; for an agent option, the spec is read and a cheap agent built) or is refused
with an exception of the API's own kinds (ValueError, TypeError and their subclasses)
whose message names the parameter. A hang, a crash, an OverflowError, an IndexError or a
message that names nothing is a failure. Each case runs in a forked child with a time
limit and a memory limit, so a value that would allocate without end fails alone."""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import inspect
import math
import os
import pickle
import resource
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
from edge_sweep import REPORT, ended_within

#: value class -> the Python value given to a parameter
API_EDGES: dict[str, Any] = {
    "zero": 0,
    "minus-one": -1,
    "tiny-float": float("1e-400"),
    "subnormal": 5e-324,
    "huge-float": 1e308,
    "nan": math.nan,
    "inf": math.inf,
    "minus-inf": -math.inf,
    "2**31": 2**31,
    "2**63": 2**63,
    "2**64": 2**64,
    "empty": "",
    "10k-chars": "x" * 10_000,
    "odd-unicode": "\u202e\u0301\u540d\U0001f0a1\ufeff",
    "none": None,
    "true": True,
    "empty-list": [],
    "five-items": [0, 1, 2, 3, 4],  # more than there are seats
}
#: value class -> the text given to an agent option in a spec (`name:key=TEXT`)
SPEC_EDGES: dict[str, str] = {
    "zero": "0",
    "minus-one": "-1",
    "tiny-float": "1e-400",
    "subnormal": "5e-324",
    "huge-float": "1e308",
    "overflow-float": "1e400",
    "nan": "nan",
    "inf": "inf",
    "2**31": str(2**31),
    "2**63": str(2**63),
    "2**64": str(2**64),
    "empty": "",
    "10k-chars": "x" * 10_000,
    "odd-unicode": "\u202e\u540d\U0001f0a1",
    "device": "/dev/zero",
    "folder": "/",
}
#: the exception kinds an API refusal may take (their subclasses included)
REFUSALS = (ValueError, TypeError)
TIMEOUT = 30.0
MEMORY = 6 * 2**30  # bytes of address space a case may map


def _vector_env(**kw: Any) -> None:
    from spades_env.vector_env import SpadesVectorEnv

    env = SpadesVectorEnv(**kw)
    env.reset(seed=0)
    env.close()


def _aec_env(**kw: Any) -> None:
    from spades_env import spades_v0

    env = spades_v0.env(**kw)
    env.reset(seed=0)
    env.close()


def _rules(**kw: Any) -> None:
    import numpy as np

    from spades_env.rules import Rules
    from spades_env.state import init

    init(Rules(**kw), 1, np.random.default_rng(0))


def _tournament_config(**kw: Any) -> None:
    from experiments.tournament.config import TournamentConfig

    TournamentConfig(**kw).play_rules()


def _params(target: Callable[..., Any]) -> list[str]:
    return [
        n
        for n, p in inspect.signature(target).parameters.items()
        if p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL) and n != "self"
    ]


def _constructors() -> dict[str, tuple[Callable[..., None], list[str]]]:
    from experiments.tournament.config import TournamentConfig
    from spades_env import spades_v0
    from spades_env.rules import Rules
    from spades_env.vector_env import SpadesVectorEnv

    aec = [*_params(spades_v0.raw_env.__init__), "illegal_reward"]
    return {
        "SpadesVectorEnv": (_vector_env, _params(SpadesVectorEnv.__init__)),
        "spades_v0.env": (_aec_env, aec),
        "Rules": (_rules, _params(Rules)),
        "TournamentConfig": (_tournament_config, _params(TournamentConfig)),
    }


#: agents built after their spec is read (cheap, no network, no torch)
BUILT = {"random", "heuristic", "pimc", "ismcts"}


def _agent_option(name: str, key: str, text: str) -> None:
    from agents.registry import make_agent, parse_agent

    spec = parse_agent(f"{name}:{key}={text}")
    if name in BUILT:
        make_agent(spec, seed=0)


def in_child(call: Callable[[], None], names: tuple[str, ...]) -> str:
    """Run `call` in a forked child (time and memory limited); its outcome."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        outcome = "worked"
        try:
            os.setsid()
            resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
            call()
        except REFUSALS as exc:
            text = str(exc)
            named = any(n in text or "--" + n.replace("_", "-") in text for n in names)
            one = "\n" not in text.strip()
            outcome = "error" if named and one else f"FAILED: {type(exc).__name__}: {text[:200]}"
        except BaseException as exc:  # the finding: any other kind
            outcome = f"FAILED: {type(exc).__name__}: {str(exc)[:200]}"
        with contextlib.suppress(BaseException):
            os.write(write, pickle.dumps(outcome))
        os._exit(0)
    os.close(write)
    status = ended_within(pid, TIMEOUT, poll=0.005)
    data = b""
    with os.fdopen(read, "rb") as f:
        data = f.read()
    if status is None:
        return f"FAILED: no answer within {TIMEOUT:g} s"
    if not data:
        return f"FAILED: the child died ({os.waitstatus_to_exitcode(status)})"
    return pickle.loads(data)


@pytest.fixture(scope="module", autouse=True)
def compiled() -> None:
    """Each constructor built once here, with its defaults, before any child forks: the
    kernels compile (or load from the cache) once, not in every child."""
    for build, _params in _constructors().values():
        build()
    _agent_option("heuristic", "aggression", "0")
    from agents.registry.table import REGISTRY

    for entry in REGISTRY.values():  # each entry's checks imported (torch among them) once
        for target in (entry.check, entry.rules_check):
            if isinstance(target, str):
                importlib.import_module(target.partition(":")[0])


#: the default run forks one case in `SAMPLE_EVERY` (a stable choice); `-m slow` all
SAMPLE_EVERY = 12
EVERY = [
    pytest.param(SAMPLE_EVERY, id="sample"),
    pytest.param(1, id="all", marks=pytest.mark.slow),
]


def _chosen(every: int, *key: str) -> bool:
    digest = hashlib.sha256(" ".join(key).encode()).digest()
    return digest[0] % every == 0


@pytest.mark.parametrize("every", EVERY)
def test_every_constructor_parameter_at_its_edges(every: int) -> None:
    failed = []
    for ctor, (build, params) in _constructors().items():
        for param in params:
            for value_class, value in API_EDGES.items():
                if not _chosen(every, ctor, param, value_class):
                    continue
                outcome = in_child(partial(build, **{param: value}), (param,))
                REPORT.add("api", f"{ctor}({param}=)", value_class, outcome)
                if outcome.startswith("FAILED"):
                    failed.append(f"{ctor}({param}={value_class}): {outcome}")
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("every", EVERY)
def test_every_agent_option_at_its_edges(every: int) -> None:
    from agents.registry.table import REGISTRY

    failed = []
    for name, entry in sorted(REGISTRY.items()):
        for key in sorted(entry.params):
            for value_class, text in SPEC_EDGES.items():
                if not _chosen(every, name, key, value_class):
                    continue
                names = (key, text) if len(text) >= 3 else (key,)
                outcome = in_child(partial(_agent_option, name, key, text), names)
                REPORT.add("agent options", f"{name}:{key}=", value_class, outcome)
                if outcome.startswith("FAILED"):
                    failed.append(f"{name}:{key}={value_class}: {outcome}")
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("ctor", ["SpadesVectorEnv", "spades_v0.env", "Rules", "TournamentConfig"])
def test_the_sweep_reads_each_signature(ctor: str) -> None:
    """Each constructor's parameters come from its signature: none is missed."""
    _build, params = _constructors()[ctor]
    assert len(params) >= 3
