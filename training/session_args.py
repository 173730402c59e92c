"""The arguments of a self-play run: its flags (`SessionArgs`) and their one reading.

`prepare_args` is the one preparation of a run's arguments, shared by `spades train`
and `training.session.Session`: with `--resume`, the run's checkpoint and its saved args
(`resume_args`, `migrate_args`, `check_resume_kind`); then every check, each bad value
refused in one line before anything is written (`check_args`, `check_backend`). What the
checks read comes out as values (`PreparedArgs`): the rules, built once, and the
`--opponent` and `--eval-search` specs, each parsed once (`agents.registry.parse_agent`);
the session trusts them. `pick_device` and `init_checkpoint` read `--device` and
`--init` (the training scripts share them).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Any, Literal

import torch

from agents.learned.agent import rules_mismatch
from agents.learned.checkpoint import CheckpointError, read_checkpoint
from agents.learned.networks import POLICY_KINDS, resolve_precision
from agents.registry import AgentSpec, parse_agent
from spades_env.rules import Rules
from training.backend import RAY_HINT
from training.checkpoint import resume_checkpoint

#: Flags that a resumed run takes from its command line rather than from the checkpoint.
RESUME_FLAGS = ("resume", "stop_after", "device", "threads", "backend", "actors", "address")
BACKENDS = ("local", "ray")


@dataclasses.dataclass
class SessionArgs:
    """The flags of a self-play run that every `Session` script shares (the `Args` of
    `training/ppo_selfplay.py` and `training/dmc.py` add their algorithm's). A script
    restates a field here only to give it its own default or docstring; one restated
    without a docstring keeps this one (`spades_env.tooling.flags.field_docs`)."""

    exp_name: str = "run"
    """the name of this experiment (the run folder is runs/{exp_name}__{seed}__{time})"""
    seed: int = 1
    """seed of the run: deals, the learner's moves, initial weights"""
    device: str = "cpu"
    """torch device: cpu, cuda or auto (cuda when a GPU is visible)"""
    threads: int = 1
    """torch CPU threads (a run repeats exactly with the same seed and threads; more than
    one thread is slower on a machine whose cores are busy)"""
    rules: str = "standard"
    """rules preset (RULES.md §6)"""
    option: tuple[str, ...] = ()
    """rules option on top of the preset, e.g. nil_tricks=count (repeatable)"""
    runs_dir: str = "runs"
    """folder that holds the run folders"""
    total_timesteps: int = 2_000_000
    """environment decisions to play (every seat's, opponents' included; the default
    takes a few minutes on two cores, a strong agent needs tens of millions)"""
    num_games: int = 512
    """hands played in parallel per rollout (about 56 decisions each)"""
    selfplay_frac: float = 0.25
    """share of each rollout's games where the latest network holds all four seats"""
    heuristic_frac: float = 0.5
    """share of games against the heuristic agent (the rest: past checkpoints)"""
    opponent: str = "heuristic"
    """registry spec of the fixed opponent of the --heuristic-frac games (e.g. learned,
    for a stronger one); the evaluations stay against the heuristic"""
    pool_size: int = 5
    """past checkpoints kept as opponents (0 = none: those games become self-play)"""
    save_every: int = 20
    """updates between checkpoints (each joins the opponent pool)"""
    eval_every: int = 20
    """updates between duplicate evaluations against the heuristic (0 = never)"""
    eval_deals: int = 300
    """duplicate deals per evaluation (each played twice, the network and the heuristic
    swapping seats between the two plays)"""
    eval_seed: int = 12345
    """seed of the evaluation deal set (fixed, so evaluations are comparable)"""
    resume: str = ""
    """run folder to resume from its last checkpoint (its saved args are used, except
    --stop-after, --device, --threads, --backend, --actors and --address)"""
    stop_after: int = 0
    """stop after this many updates in this session, checkpointing (0 = run to the end)"""
    backend: Literal["local", "ray"] = "local"
    """where rollouts are played: local (here, between updates) or ray (on Ray actors,
    asynchronously; see training/ray_rollout.py)"""
    actors: int = 2
    """ray backend: rollout actors, each with its own batched games and a CPU copy of the net"""
    address: str = ""
    """ray backend: join this running cluster (auto or HOST:PORT; default: start a local Ray)"""
    max_policy_lag: int = 1
    """ray backend: drop a batch collected with weights more than this many updates old"""
    init: str = ""
    """checkpoint to start from instead of new weights; it stays, frozen, as the teacher"""
    pool_teacher: bool = True
    """with --init: the teacher is a permanent member of the opponent pool"""
    eval_search: str = ""
    """also evaluate against this agent spec (e.g. pimc:worlds=16) at every evaluation"""
    eval_search_deals: int = 50
    """duplicate deals of each evaluation against --eval-search"""
    reward_scale: float = 0.01
    """return = (own team hand points - other team's) * reward_scale"""
    anneal_lr: bool = True
    """anneal the learning rate linearly to 0 over the run"""


def pick_device(name: str) -> torch.device:
    """`auto` is cuda when a GPU is visible, else cpu."""
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(name)
    except RuntimeError:
        raise ValueError(
            f"--device {name!r} is not a torch device; use cpu, cuda, cuda:N or auto"
        ) from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise ValueError(f"--device {name}: no CUDA GPU is visible; use --device cpu")
    return device


#: Args that must be at least 1, at least 0, or a share in [0, 1] (when a script has them).
_POSITIVE = (
    "total_timesteps",
    "num_games",
    "num_minibatches",
    "update_epochs",
    "save_every",
    "eval_deals",
    "threads",
    "actors",
)
_NON_NEGATIVE = ("pool_size", "eval_every", "stop_after", "max_policy_lag")
_SHARES = ("selfplay_frac", "heuristic_frac", "epsilon", "gamma", "gae_lambda")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


#: Float args that must be above 0 (when a script has them).
_ABOVE_ZERO = ("learning_rate", "clip_coef", "max_grad_norm", "reward_scale")


def check_args(args: Any) -> tuple[Rules, AgentSpec | None]:
    """Refuse values no run can use, in one line, before anything is written; return
    the rules and the `--opponent` spec (None: the heuristic), each read once."""
    for f in dataclasses.fields(args):
        value = getattr(args, f.name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ValueError(f"{_flag(f.name)} must be a finite number, got {value}")
    zero_means_none = getattr(type(args), "ZERO_MEANS_NONE", ())
    for name in _POSITIVE + _NON_NEGATIVE + _SHARES:
        value = getattr(args, name, None)
        if value is None:
            continue
        if name in zero_means_none and value == 0:
            continue
        if name in _POSITIVE and value < 1:
            raise ValueError(f"{_flag(name)} must be at least 1, got {value}")
        if name in _NON_NEGATIVE and value < 0:
            raise ValueError(f"{_flag(name)} must be at least 0, got {value}")
        if name in _SHARES and not 0 <= value <= 1:
            raise ValueError(f"{_flag(name)} must be a share between 0 and 1, got {value}")
    for name in _ABOVE_ZERO:
        if getattr(args, name, 1.0) <= 0:
            raise ValueError(f"{_flag(name)} must be positive, got {getattr(args, name)}")
    games, minibatches = getattr(args, "num_games", None), getattr(args, "num_minibatches", None)
    if games is not None and minibatches is not None and minibatches > games:
        # each game gives at least one decision per seat: a minibatch is never empty
        raise ValueError(
            f"--num-minibatches {minibatches} is more than --num-games {games}; "
            "a rollout of so few games cannot be cut so finely"
        )
    hidden = getattr(args, "hidden", None)
    if hidden is not None:
        parts = str(hidden).split(",")
        if not all(p.strip().isdigit() and int(p) >= 1 for p in parts):
            raise ValueError(f"--hidden {hidden!r}: give layer widths of at least 1, e.g. 128,128")
    name = getattr(args, "exp_name", None)
    if name is not None and (not name or name in (".", "..") or any(c in name for c in "/\\\0")):
        raise ValueError(
            f"--exp-name {name!r}: give a plain name (no / or \\); the run folder is made "
            "under --runs-dir"
        )
    if hasattr(args, "precision"):
        resolve_precision(args.precision, torch.device("cpu"))  # a bad name, in one line
    rules = Rules.build(args.rules, args.option)  # a bad preset or option names itself
    opponent = None
    if getattr(args, "opponent", "heuristic") != "heuristic":
        # an unknown or bad spec, or rules it cannot play, in one line; no agent is built
        opponent = parse_agent(args.opponent, rules)
    return rules, opponent


@dataclasses.dataclass(frozen=True)
class PreparedArgs:
    """A run's arguments read and checked once (`prepare_args`), with what the checks
    built: `args` (a resumed run's: the checkpoint's, with the resume flags), `ckpt` (the
    checkpoint a resume continues, else None), the `rules`, the `--opponent` spec
    (None: the heuristic) and the `--eval-search` spec (None: none). `spades train`
    prepares them before its progress bar and hands them to the session, which then
    checks nothing again."""

    args: Any
    ckpt: dict[str, Any] | None
    rules: Rules
    opponent: AgentSpec | None
    eval_search: AgentSpec | None = None


def prepare_args(
    args: Any,
    kind: str,
    given: set[str] | None = None,
    on_note: Callable[[str], None] | None = None,
) -> PreparedArgs:
    """The one preparation of a training run's arguments, shared by `spades train` and
    `Session`: with `--resume`, the run's checkpoint (a damaged last one: the one before,
    `on_note` hears it), refused if it trained another `kind`, and its args with the
    resume flags (`given`: the flags the command line gave, which must agree with the
    run); then every check (`check_args`, `check_backend`), each value refused in one
    line before anything is written. The rules are built once, here, and each agent
    spec read once."""
    ckpt = None
    if getattr(args, "resume", ""):
        ckpt = resume_checkpoint(args.resume, on_note)[1]
        check_resume_kind(args.resume, ckpt, kind)
        args = resume_args(args, ckpt, given)
    rules, opponent = check_args(args)
    eval_search = None
    if hasattr(args, "backend"):  # a self-play session's flags (bc reads its own)
        check_backend(args)
        if args.eval_search and opponent is not None and args.eval_search == args.opponent:
            eval_search = opponent  # the same text, read once
        elif args.eval_search:  # a bad spec, or rules it cannot play; no agent is built
            eval_search = parse_agent(args.eval_search, rules)
    return PreparedArgs(args, ckpt, rules, opponent, eval_search)


def migrate_args(saved: dict[str, Any]) -> dict[str, Any]:
    """Saved args of older runs, in today's fields: `rules` was an options string on top
    of the standard preset; it is now a preset, with the options in `option`."""
    saved = dict(saved)
    if "option" not in saved:
        text = saved.get("rules", "")
        saved["rules"], saved["option"] = "standard", (text,) if text else ()
    saved["option"] = tuple(saved["option"])
    return saved


def resume_args(args: Any, ckpt: dict[str, Any], given: set[str] | None = None) -> Any:
    """The args of a resumed run: the checkpoint's, with `RESUME_FLAGS` taken from `args`.

    `given` names the flags given on the command line (`spades train`): any of them
    outside `RESUME_FLAGS` must agree with the run, as `spades tournament --resume`
    demands; one that differs is an error, not silently dropped. Without `given` (the
    Python API) the other fields of `args` are ignored, as the `resume` field documents.
    """
    cls = type(args)
    saved = migrate_args(ckpt["args"])
    defaults = cls()
    for f in dataclasses.fields(cls):
        name = f.name
        if name in RESUME_FLAGS:
            continue
        if given is None or name not in given:
            continue
        ours, theirs = getattr(args, name), saved.get(name, getattr(defaults, name))
        if ours != theirs:
            raise ValueError(
                f"{_flag(name)} {ours!r} differs from the run in {str(args.resume)!r} "
                f"({theirs!r}); drop it to resume, or start a new run"
            )
    known = {f.name for f in dataclasses.fields(cls)}
    kept = {k: v for k, v in saved.items() if k in known and k not in RESUME_FLAGS}
    return dataclasses.replace(cls(**kept), **{k: getattr(args, k) for k in RESUME_FLAGS})


def check_resume_kind(run_dir: Any, ckpt: dict[str, Any], kind: str) -> None:
    """`spades train dmc --resume` of a PPO run (or the reverse) is an error."""
    saved = ckpt["network"].get("kind")
    if saved != kind and not (kind == "ppo" and saved in POLICY_KINDS):  # PPO trains split
        raise ValueError(
            f"--resume {str(run_dir)!r}: that run trained {saved}, not {kind}; "
            f"resume it with spades train {'ppo' if saved in POLICY_KINDS else saved}"
        )


def check_backend(args: Any) -> None:
    """Refuse bad `--backend`, `--actors`, `--address`, `--max-policy-lag` in one line."""
    if args.backend not in BACKENDS:
        raise ValueError(f"--backend {args.backend!r}: choose local or ray")
    if args.actors < 1:
        raise ValueError(f"--actors {args.actors}: give 1 or more rollout actors")
    if args.max_policy_lag < 0:
        raise ValueError(f"--max-policy-lag {args.max_policy_lag}: give 0 or more updates")
    if args.address and args.backend != "ray":
        raise ValueError("--address needs --backend ray")
    if args.address:
        from spades_env.tooling.ray_address import check_address

        check_address(args.address)  # before any folder is made
    if args.backend == "ray":
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ValueError(f"--backend ray: {RAY_HINT}") from None


def init_checkpoint(args: Any, kinds: tuple[str, ...], rules: Rules) -> dict[str, Any]:
    """The `--init` checkpoint, refused in one line if it cannot start this run."""
    ckpt = read_checkpoint(args.init)  # format, encoding version, action count, weights
    kind = ckpt["network"]["kind"]
    if kind not in kinds:
        raise CheckpointError(
            f"--init {args.init!r} holds a {kind} network; this algorithm trains "
            f"{' or '.join(kinds)} networks"
        )
    diff = rules_mismatch(Rules.from_dict(ckpt["rules"]), rules)
    if diff:
        raise CheckpointError(
            f"--init {args.init!r} was trained on other rules (trained/now: {', '.join(diff)})"
        )
    return ckpt
