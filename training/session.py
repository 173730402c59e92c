"""What every training script shares: the run folder, logging, the pool, eval, checkpoints.

A `Session` owns the parts of a run that are not the learning algorithm:

- the run folder `runs/{exp}__{seed}__{time}/` (`-2`, `-3`, ... for runs started in the
  same second: each run gets a folder of its own), locked while the run trains (a
  second `--resume` of it is refused), with TensorBoard events (`charts/`,
  `losses/`, `eval/` tags, a `hyperparameters` table and the HParams tab's entry, with
  the `eval/` metrics) and `checkpoints/`;
- seeding: one `numpy.random.Generator` (deals, the pool draw, minibatch order) and one
  `torch.Generator` (action sampling), both seeded from `--seed`; the initial weights come
  from `--seed` too. With the same seed and `--threads`, a CPU run repeats exactly
  (`torch.use_deterministic_algorithms` is on while the session runs);
- `--init CHECKPOINT`: start from a trained network (a distilled one, `training.bc`)
  instead of new weights; its network config replaces `--hidden`. A checkpoint of another
  observation version or action count, of another network kind or other rules is
  refused in one line. The starting network is kept, frozen, as the *teacher*: it joins
  the opponent pool for good (`--pool-teacher`) and PPO's optional KL term pulls towards it;
- the opponent pool: the heuristic agent and the last `--pool-size` periodic checkpoints
  (past selves, sampling as in training), plus the teacher, mixed per rollout as the
  args say;
- periodic duplicate evaluation against the heuristic, and against `--eval-search` (a
  search agent, on fewer deals since it is slow) when given (`training.evaluation`);
- checkpoints every `--save-every` updates and at the end, and `--resume RUN_DIR`, which
  reloads the last checkpoint (weights, optimizer, generators, counters, pool) and goes
  on as if never stopped. A resumed run keeps its saved args except `--resume`,
  `--stop-after`, `--device`, `--threads`, `--backend`, `--actors` and `--address`
  (where to run, not what to learn);
- where the experience comes from (`open_rollouts`): `--backend local` plays each rollout
  here, on the run's generators, between updates; `--backend ray` collects on Ray actors
  (`training.ray_rollout`). Both hand the learner one rollout's batch at a time.

Its arguments (`SessionArgs`) are read and checked once, before anything is written, by
`training.session_args.prepare_args`; the session trusts what that returns (the rules,
the `--opponent` and `--eval-search` specs). Those names are importable from here too.
"""

from __future__ import annotations

import copy
import dataclasses
import shutil
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack, suppress
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch.utils.tensorboard import SummaryWriter
from torch.utils.tensorboard.summary import hparams

from agents.heuristic.agent import HeuristicAgent
from agents.learned.agent import NetworkAgent, load_network
from agents.learned.checkpoint import read_checkpoint, save_checkpoint, slim
from agents.learned.networks import build_network
from agents.registry import make_agent
from spades_env.tooling.files import LOCK_FILE, lock_folder, new_folder
from training.backend import Behaviour, ToBatch, fixed_opponent, mix_rollout, pool_agent
from training.checkpoint import CHECKPOINT_DIR, restore_rngs, saved_updates, update_path
from training.evaluation import duplicate_eval, greedy_fn
from training.rollout import Hands, LearnerFn
from training.session_args import (
    BACKENDS,
    RESUME_FLAGS,
    PreparedArgs,
    SessionArgs,
    check_args,
    check_backend,
    check_resume_kind,
    init_checkpoint,
    migrate_args,
    pick_device,
    prepare_args,
    resume_args,
)

#: this module's names, and those of the arguments' module (`training.session_args`) it
#: has always offered
__all__ = [
    "BACKENDS",
    "FINAL",
    "HPARAM_METRICS",
    "RESUME_FLAGS",
    "LocalRollouts",
    "PreparedArgs",
    "Session",
    "SessionArgs",
    "check_args",
    "check_backend",
    "check_resume_kind",
    "hparam_table",
    "hparam_values",
    "init_checkpoint",
    "log_hyperparameters",
    "margin_scalars",
    "migrate_args",
    "pick_device",
    "prepare_args",
    "resume_args",
]

FINAL = "final.pt"


class LocalRollouts:
    """`--backend local`: each rollout played here, on the run's own generators."""

    def __init__(self, session: Session, behaviour: Behaviour, to_batch: ToBatch) -> None:
        self.session, self.behaviour, self.to_batch = session, behaviour, to_batch

    def next_batch(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        s = self.session
        learner = self.behaviour(s.args, s.net, s.device, s.rng, s.torch_rng)
        return self.to_batch(s.args, s.rules, s.rollout(learner))

    def close(self) -> None:
        pass


#: The metrics TensorBoard's HParams tab sets against the hyperparameters (`evaluate`).
HPARAM_METRICS = ("eval/margin", "eval/bid_error", "eval/set_rate", "eval/nil_rate")


def hparam_values(args: Any) -> dict[str, bool | int | float | str]:
    """The args as TensorBoard hparams: numbers, flags and text as they are, others as text."""
    return {
        k: v if isinstance(v, bool | int | float | str) else str(v)
        for k, v in dataclasses.asdict(args).items()
    }


def log_hyperparameters(
    writer: SummaryWriter, args: Any, metrics: Sequence[str] = HPARAM_METRICS
) -> None:
    """The args as a `hyperparameters` text table and as TensorBoard's HParams entry, set
    against `metrics` (scalar tags of the run). The entry goes into the run's own event
    file, not the subfolder `SummaryWriter.add_hparams` would make."""
    writer.add_text("hyperparameters", hparam_table(args))
    for summary in hparams(hparam_values(args), dict.fromkeys(metrics, 0.0)):
        writer.file_writer.add_summary(summary)


def hparam_table(args: Any) -> str:
    rows = "\n".join(f"|{k}|{v}|" for k, v in dataclasses.asdict(args).items())
    return f"|param|value|\n|-|-|\n{rows}"


def margin_scalars(prefix: str, margin: dict[str, Any]) -> dict[str, float | None]:
    """An evaluation's mean margin and its 95% interval (None without one) as the scalars
    `{prefix}margin`, `{prefix}margin_ci_low` and `{prefix}margin_ci_high`."""
    lo, hi = margin["ci"] if margin["ci"] else (None, None)
    return {
        f"{prefix}margin": margin["mean"],
        f"{prefix}margin_ci_low": lo,
        f"{prefix}margin_ci_high": hi,
    }


def _holds_files(folder: Path) -> bool:
    """Whether a run folder holds more than its lock and empty files (a start that failed
    at once, on a full disk)."""
    return any(
        p.is_file() and p.name != LOCK_FILE and p.stat().st_size > 0 for p in folder.rglob("*")
    )


class Session:
    """One training run's folder, generators, network, pool, evaluation and checkpoints."""

    def __init__(
        self,
        args: Any,
        network: dict[str, Any],
        progress=None,
        init_kinds: tuple[str, ...] = ("ppo", "split"),
        prepared: PreparedArgs | None = None,
    ) -> None:
        if prepared is None:  # the Python API: `spades train` prepares them beforehand
            prepared = prepare_args(args, network["kind"])
        args, ckpt = prepared.args, prepared.ckpt
        if ckpt is not None:
            network = ckpt["network"]
        device = pick_device(args.device)
        self.ray_started = False
        if args.backend == "ray":  # join or start Ray before anything is written
            from training.ray_rollout import connect

            self.ray_started = connect(args)
        self.args, self.network = args, network
        self.progress: Callable[[int, int], None] | None = progress
        self._torch_state = (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled())
        self.device = device
        torch.set_num_threads(args.threads)
        # CPU runs repeat exactly; on CUDA this would need CUBLAS_WORKSPACE_CONFIG, and GPU
        # runs are for speed, so they are left free.
        torch.use_deterministic_algorithms(self.device.type == "cpu")
        self.rules = prepared.rules
        self.rng = np.random.default_rng(args.seed)
        self.torch_rng = torch.Generator().manual_seed(args.seed)
        self.teacher: torch.nn.Module | None = None
        if args.init:
            init = init_checkpoint(args, init_kinds, self.rules)
            self.network = network = init["network"]
            self.teacher = load_network(init, str(self.device))
            for p in self.teacher.parameters():
                p.requires_grad_(False)
        self.eval_search = None
        if prepared.eval_search is not None:  # parsed and checked by `prepare_args`
            self.eval_search = make_agent(prepared.eval_search, seed=args.eval_seed)
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(args.seed)
            self.net = build_network(network, self.rules).to(self.device)
        if self.teacher is not None:
            self.net.load_state_dict(self.teacher.state_dict())
        self.update, self.global_step, self.learner_steps = 0, 0, 0
        self.heuristic = HeuristicAgent(seed=0)
        self.opponent_spec = prepared.opponent  # the Ray actors build theirs from it
        self.opponent = fixed_opponent(self.opponent_spec, 0)
        self.pool: list[NetworkAgent] = []
        self.pool_version = 0  # counts the pool's changes (Ray actors copy the pool anew)
        self.pinned: list[NetworkAgent] = []  # the teacher, never pushed out of the pool
        if self.teacher is not None and args.pool_teacher:
            self.pinned = [pool_agent(copy.deepcopy(self.teacher).cpu(), self.rules, args)]
            self.pool = list(self.pinned)
        self.rollouts: LocalRollouts | Any = None
        self._lock = ExitStack()
        self._made: Path | None = None  # the new run's folder, once made
        try:
            self._open(args, ckpt)
        except BaseException:
            self._lock.close()
            if self._made is not None and not _holds_files(self._made):
                shutil.rmtree(self._made, ignore_errors=True)  # a failed start leaves nothing
            raise

    def _open(self, args: Any, ckpt: dict[str, Any] | None) -> None:
        """Lock the run folder (a new one, or the resumed one), reload a resumed run's
        state, and open its event file."""
        if ckpt is not None:
            self.run_dir = Path(args.resume)
            self._hold(self.run_dir)
            for stale in (self.run_dir / CHECKPOINT_DIR).glob("*.tmp"):
                stale.unlink()  # a killed run's part file (the lock says no one writes it)
            self.net.load_state_dict(ckpt["model"])
            self.update = ckpt["counters"]["update"]
            self.global_step = ckpt["counters"]["global_step"]
            self.learner_steps = ckpt["counters"]["learner_steps"]
            restore_rngs(ckpt, self.rng, self.torch_rng)
            members = [
                u
                for u in saved_updates(self.run_dir)
                if u % args.save_every == 0 and u <= self.update  # not a damaged later one
            ]
            for u in members[-args.pool_size :] if args.pool_size else []:
                self._add_to_pool(load_network(read_checkpoint(update_path(self.run_dir, u))))
        else:
            stamp = time.strftime("%Y%m%d-%H%M%S")
            self.run_dir = self._made = new_folder(
                args.runs_dir, f"{args.exp_name}__{args.seed}__{stamp}"
            )
            self._hold(self.run_dir)
        self._resume_ckpt = ckpt
        # Events logged after the checkpoint by the killed run are dropped on resume.
        self.writer = SummaryWriter(str(self.run_dir), purge_step=self.global_step + 1)
        if ckpt is None:
            log_hyperparameters(self.writer, args)
        self.session_updates = 0
        self.last_eval: dict[str, Any] | None = None
        if ckpt is None and args.eval_every:
            self.evaluate()  # the starting point of the learning curve
        self._clock, self._steps_at = time.perf_counter(), self.global_step

    def _hold(self, run_dir: Path) -> None:
        """One process at a time trains in a run folder: a second `--resume` of a run in
        progress is refused in one line (`spades_env.tooling.files.lock_folder`)."""
        self._lock.enter_context(
            lock_folder(
                run_dir,
                "training run",
                "wait for it to end (two processes would overwrite each other's checkpoints)",
            )
        )

    # ------------------------------------------------------------------ state
    @property
    def done(self) -> bool:
        stopped = self.args.stop_after and self.session_updates >= self.args.stop_after
        return self.global_step >= self.args.total_timesteps or bool(stopped)

    @property
    def progress_fraction(self) -> float:
        return min(1.0, self.global_step / self.args.total_timesteps)

    def restore_optimizer(self, optimizer: torch.optim.Optimizer) -> None:
        if self._resume_ckpt is not None:
            optimizer.load_state_dict(self._resume_ckpt["optimizer"])

    # ------------------------------------------------------------------ play
    def open_rollouts(self, behaviour: Behaviour, to_batch: ToBatch) -> LocalRollouts | Any:
        """The run's source of batches for `--backend` (closed by `close`).

        `behaviour` builds the acting function from a network and generators, `to_batch`
        turns played hands into the learner's batch and its scalars; both are module-level
        functions of the training script, so Ray actors can import them.
        """
        if self.args.backend == "ray":
            from training.ray_rollout import RayRollouts  # ray is imported only here

            self.rollouts = RayRollouts(self, behaviour, to_batch)
        else:
            self.rollouts = LocalRollouts(self, behaviour, to_batch)
        return self.rollouts

    def rollout(self, learner: LearnerFn) -> Hands:
        """`num_games` fresh hands: the learner against this rollout's pool mix."""
        hands = mix_rollout(self.args, self.rules, learner, self.opponent, self.pool, self.rng)
        self.global_step += hands.decisions
        self.learner_steps += hands.learner_decisions
        return hands

    def _add_to_pool(self, net: torch.nn.Module) -> None:
        past = self.pool[len(self.pinned) :]
        past = [*past, pool_agent(net, self.rules, self.args)][-self.args.pool_size :]
        self.pool = [*self.pinned, *past]
        self.pool_version += 1

    # ------------------------------------------------------------------ bookkeeping
    def log(self, scalars: dict[str, float]) -> None:
        for tag, value in scalars.items():
            if value is not None:
                self.writer.add_scalar(tag, value, self.global_step)

    def end_update(self, optimizer: torch.optim.Optimizer, scalars: dict[str, float]) -> None:
        """Count the update, log it, and evaluate and save when due."""
        self.update += 1
        self.session_updates += 1
        now = time.perf_counter()
        sps = (self.global_step - self._steps_at) / max(now - self._clock, 1e-9)
        self.log({**scalars, "charts/SPS": sps, "charts/pool_size": len(self.pool)})
        last = self.done
        if self.args.eval_every and (self.update % self.args.eval_every == 0 or last):
            self.evaluate()
        if self.update % self.args.save_every == 0 or last:
            self.save(optimizer)
        if self.progress is not None:
            self.progress(self.global_step, self.args.total_timesteps)
        self._clock, self._steps_at = time.perf_counter(), self.global_step

    def evaluate(self) -> dict[str, Any]:
        """Duplicate evaluation against the heuristic; logged under eval/."""
        self.net.eval()
        result = self._duplicate(self.heuristic, self.args.eval_deals)
        if self.eval_search is not None and self.args.eval_search_deals > 0:
            search = self._duplicate(self.eval_search, self.args.eval_search_deals)
            self.log(margin_scalars("eval/search_", search["margin"]))
            result["search"] = search
        self.net.train()
        self.log(
            {
                **margin_scalars("eval/", result["margin"]),
                "eval/bid_error": result["bid_error"],
                "eval/set_rate": result["set_rate"],
                "eval/nil_rate": result["nil_rate"],
                "eval/nil_success": result["nil_success"],
                "eval/SPS": result["decisions_per_s"],
            }
        )
        self.last_eval = result
        return result

    def _duplicate(self, opponent: Any, deals: int) -> dict[str, Any]:
        """The greedy network against `opponent` on `deals` duplicate deals of `--eval-seed`."""
        greedy = greedy_fn(self.net, self.device)
        return duplicate_eval(greedy, opponent, self.rules, deals, self.args.eval_seed)

    def counters(self) -> dict[str, int]:
        return {
            "update": self.update,
            "global_step": self.global_step,
            "learner_steps": self.learner_steps,
        }

    def save(self, optimizer: torch.optim.Optimizer) -> Path:
        """A checkpoint; the periodic ones (every `save_every`) join the opponent pool."""
        path = save_checkpoint(
            update_path(self.run_dir, self.update),
            self.net,
            self.network,
            dataclasses.asdict(self.args),
            self.rules,
            self.counters(),
            optimizer,
            self.rng,
            self.torch_rng,
        )
        if self.args.pool_size and self.update % self.args.save_every == 0:
            self._add_to_pool(copy.deepcopy(self.net).cpu())
        return path

    def close(self) -> Path:
        """Write the slim final checkpoint when the run is complete; restore torch state."""
        if self.rollouts is not None:
            with suppress(Exception):  # the run's own error, if any, is the one to see
                self.rollouts.close()
        if self.ray_started:
            import ray

            ray.shutdown()
            self.ray_started = False
        self.writer.close()
        torch.set_num_threads(self._torch_state[0])
        torch.use_deterministic_algorithms(self._torch_state[1])
        with self._lock:  # released once the last file is written
            if self.global_step >= self.args.total_timesteps:
                return slim(update_path(self.run_dir, self.update), self.run_dir / FINAL)
            return update_path(self.run_dir, self.update)
