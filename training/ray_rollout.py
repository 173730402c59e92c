"""Self-play rollouts on Ray actors: `--backend ray --actors N` of the PPO and DMC scripts.

    spades train ppo --backend ray --actors 2 --total-timesteps 2000000

**Actors.** Each of the N actors (`RolloutWorker`, one Ray CPU each) owns a CPU copy of
the network, its own heuristic opponent and copy of the opponent pool, and its own
generator, seeded from the run seed, the actor's index, the update the session started
at and the actor's incarnation (`actor_seed`). It plays rollouts exactly as the local
backend does (`training.backend.mix_rollout`: `--num-games` hands, its own draw of the
opponent mix) and turns each into the learner's batch on the actor (the script's
`rollout_batch`: returns, GAE or Monte Carlo targets), so the learner only trains.

**Versions.** The policy version is the learner's update count. After each update the
learner puts the new weights into Ray's object store once (`ray.put` of the CPU
state_dict) and hands that reference, with its version, to the next rollout it asks of
an actor; the actor loads the weights only when the version is new. Every batch comes
back with the version it was played with. The pool's weights travel the same way,
re-sent only when the pool changes (a periodic checkpoint joins it).

**Asynchrony.** Every actor always has one rollout in flight. The learner takes whichever
batch is ready first (`ray.wait`), trains on it, publishes the new weights and only then
gives that actor its next rollout, with the new weights; the other actors keep playing
meanwhile. A batch's policy lag is the learner's version when it arrives minus the
version it was played with: with N actors it is about N - 1 in the steady state.

**Staleness.** A batch whose lag exceeds `--max-policy-lag K` (default 1) is dropped: not
trained on and not counted in `--total-timesteps` (the budget counts the decisions of the
batches trained on, as locally, so the update count is the local backend's), but counted
in `charts/dropped_batches` and `charts/dropped_decisions`; `charts/policy_lag` is the lag
of each batch trained on. Give K >= N - 1 to keep (nearly) every batch. A kept stale batch
is importance-corrected in PPO: it carries the behaviour policy's log-probabilities, so
PPO's ratio is new policy / behaviour policy, and the clip bounds it to 1 +- clip_coef
(its advantages use the behaviour network's value estimates, uncorrected). DMC regresses
on the returns the hands actually had, which do not depend on the behaviour policy: its
stale batches need no correction, only the drop past K.

**Failures.** An actor that dies (its process or node) is replaced by a fresh actor with
the next incarnation's seed, up to `MAX_ACTOR_RESTARTS` times per actor; past that the
learner goes on with the others (a warning says so), and stops with an error only when
none is left. The dead actor's rollout in flight is lost (it never reached the learner).
An error raised inside a rollout (a bug) stops the run with that error.

**Cluster.** The session connects (`connect`) before it makes the run folder. Without
`--address` a local Ray with one CPU per actor is started and shut down at the end; with
`--address auto|HOST:PORT` the learner joins a running cluster (every machine with the
project installed the same way) and the actors are spread over it. If Ray is already
initialised in this process, that connection is used as it is. With `--actors 1` there
is no overlap: the learner waits for the rollout, the actor for the new weights.

**What stays as locally.** Evaluation, checkpoints, the pool, TensorBoard and `--resume`
run on the learner exactly as with `--backend local`. A Ray run is asynchronous, so it
does not repeat exactly for a seed, and a resumed Ray run is not identical to an
uninterrupted one (the local backend's are).
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from contextlib import suppress
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch

from agents.learned.networks import build_network
from agents.registry import AgentSpec
from spades_env.rules import Rules
from spades_env.tooling.ray_address import check_address
from training.backend import (
    RAY_HINT,
    Behaviour,
    LearnerState,
    ToBatch,
    fixed_opponent,
    mix_rollout,
    pool_agent,
)

#: Times one actor's slot gets a fresh actor after its actor died; then it is left empty.
MAX_ACTOR_RESTARTS = 3


@dataclass(frozen=True)
class BatchRecord:
    """One batch as the learner received it."""

    slot: int  # the actor's index, 0..N-1
    incarnation: int  # 0 for the first actor of the slot, +1 per replacement
    version: int  # the policy version it was played with
    learner_version: int  # the learner's version when it arrived
    accepted: bool  # trained on (else dropped as too stale)


#: A test hook, called on the learner with (rollouts, record) after each accepted batch.
ON_BATCH: Callable[[RayRollouts, BatchRecord], None] | None = None


@dataclass
class RolloutResult:
    """What an actor sends back for one rollout."""

    slot: int
    incarnation: int
    version: int  # the policy version the rollout was played with
    decisions: int  # every seat's decisions (what --total-timesteps counts)
    learner_steps: int  # the learner's decisions among them
    batch: dict[str, np.ndarray]  # the learner's batch (training.rollout.learner_batch)
    stats: dict[str, Any]  # charts/ scalars of the rollout
    seconds: float  # time the actor spent on it


def require_ray() -> Any:
    """The `ray` module, or a one-line error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ValueError(f"--backend ray: {RAY_HINT}") from None
    return ray


def actor_seed(seed: int, slot: int, start_update: int, incarnation: int) -> int:
    """The seed of one actor: distinct per actor, per resumed session and per replacement."""
    seq = np.random.SeedSequence([seed, slot, start_update, incarnation])
    return int(seq.generate_state(1, np.uint64)[0] >> np.uint64(2))


def state_dict_cpu(net: torch.nn.Module) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu().clone() for k, v in net.state_dict().items()}


class RolloutWorker:
    """The body of one Ray actor: batched self-play with a CPU copy of the network."""

    def __init__(
        self,
        args: Any,
        network: dict[str, Any],
        rules: Rules,
        opponent: AgentSpec | None,
        behaviour: Behaviour,
        to_batch: ToBatch,
        slot: int,
        incarnation: int,
        seed: int,
    ) -> None:
        torch.set_num_threads(args.threads)
        self.args, self.network, self.rules = args, network, rules
        self.slot, self.incarnation = slot, incarnation
        self.rng = np.random.default_rng(seed)
        self.torch_rng = torch.Generator().manual_seed(int(self.rng.integers(2**62)))
        self.heuristic = fixed_opponent(opponent, int(self.rng.integers(2**62)))
        self.net = build_network(network, rules).eval()
        cpu = torch.device("cpu")
        self.behaviour = behaviour
        self.learner = behaviour(args, self.net, cpu, self.rng, self.torch_rng)
        self.to_batch = to_batch
        self.version, self.pool_version = -1, -1
        self.pool: list[Any] = []

    def ready(self) -> int:
        return self.slot

    def collect(
        self, version: int, weights: list[Any], pool_version: int, pool: list[Any]
    ) -> RolloutResult:
        """One rollout with the weights of `version`.

        `weights` and `pool` each wrap one object-store reference in a list, so Ray does
        not fetch them with the call: they are fetched only when their version is new.
        """
        import ray

        start = time.perf_counter()
        if version != self.version:
            self.net.load_state_dict(ray.get(weights[0]))
            self.version = version
            # the acting function reads the weights as they are when it is built
            cpu = torch.device("cpu")
            self.learner = self.behaviour(self.args, self.net, cpu, self.rng, self.torch_rng)
        if pool_version != self.pool_version:
            self.pool = [
                pool_agent(self._net_from(sd), self.rules, self.args) for sd in ray.get(pool[0])
            ]
            self.pool_version = pool_version
        hands = mix_rollout(
            self.args, self.rules, self.learner, self.heuristic, self.pool, self.rng
        )
        batch, stats = self.to_batch(self.args, self.rules, hands)
        return RolloutResult(
            slot=self.slot,
            incarnation=self.incarnation,
            version=version,
            decisions=hands.decisions,
            learner_steps=hands.learner_decisions,
            batch=batch,
            stats=stats,
            seconds=time.perf_counter() - start,
        )

    def _net_from(self, state: dict[str, torch.Tensor]) -> torch.nn.Module:
        net = build_network(self.network, self.rules)
        net.load_state_dict(state)
        return net.eval()


def connect(args: Any) -> bool:
    """Start a local Ray or join `args.address`; True when this call started it."""
    ray = require_ray()
    if ray.is_initialized():
        return False
    options: dict[str, Any] = {"include_dashboard": False, "log_to_driver": True}
    if not args.address:
        ray.init(num_cpus=args.actors, **options)
        return True
    check_address(args.address)
    try:
        ray.init(address=args.address, **options)
    except (ConnectionError, RuntimeError, ValueError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise ValueError(f"--address {args.address}: cannot join a Ray cluster: {first}") from None
    return True


class RayRollouts:
    """The learner's side: N actors, one rollout each in flight, batches as they come."""

    def __init__(self, session: LearnerState, behaviour: Behaviour, to_batch: ToBatch) -> None:
        self.ray = ray = require_ray()
        self.session = session
        args = session.args
        self.max_lag = args.max_policy_lag
        self.actors: dict[int, Any] = {}
        self.inflight: dict[Any, int] = {}  # object ref -> slot
        self.restarts = dict.fromkeys(range(args.actors), 0)
        self.history: list[BatchRecord] = []
        self.dropped = self.dropped_decisions = 0
        self._pending: int | None = None  # the slot whose batch the learner is training on
        try:
            cpus = ray.cluster_resources().get("CPU", 0)
            if cpus < args.actors:
                raise ValueError(
                    f"--actors {args.actors}: the Ray cluster has {cpus:g} CPUs, one per actor "
                    "is needed; ask for fewer actors or add machines"
                )
            self._remote = ray.remote(num_cpus=1, max_restarts=0)(RolloutWorker)
            self._spec = (
                args, session.network, session.rules, session.opponent_spec, behaviour,
                to_batch,
            )  # fmt: skip
            self.start_update = session.update
            self.version, self.pool_version = -1, -1
            self._publish()
            for slot in range(args.actors):
                self._spawn(slot)
            ray.get([actor.ready.remote() for actor in self.actors.values()])
            for slot in range(args.actors):
                self._submit(slot)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ the learner's calls
    def next_batch(self) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
        """The next batch fresh enough to train on, and its charts/ scalars."""
        self._publish()
        if self._pending is not None and self._pending in self.actors:
            self._submit(self._pending)
        self._pending = None
        while True:
            result = self._next_result()
            lag = self.version - result.version
            record = BatchRecord(
                result.slot, result.incarnation, result.version, self.version, lag <= self.max_lag
            )
            self.history.append(record)
            if not record.accepted:
                self.dropped += 1
                self.dropped_decisions += result.decisions
                self._submit(result.slot)
                continue
            s = self.session
            s.global_step += result.decisions
            s.learner_steps += result.learner_steps
            self._pending = result.slot
            if ON_BATCH is not None:
                ON_BATCH(self, record)
            stats = {
                **result.stats,
                "charts/policy_lag": lag,
                "charts/dropped_batches": self.dropped,
                "charts/dropped_decisions": self.dropped_decisions,
                "charts/actors": len(self.actors),
                "charts/actor_restarts": sum(self.restarts.values()),
                "charts/actor_rollout_seconds": result.seconds,
            }
            # Arrays from the object store are read-only views of it: the learner's own copy.
            return {k: np.array(v) for k, v in result.batch.items()}, stats

    def close(self) -> None:
        """Stop the actors; their rollouts in flight are dropped."""
        for actor in self.actors.values():
            with suppress(Exception):
                self.ray.kill(actor, no_restart=True)
        self.actors.clear()
        self.inflight.clear()

    # ------------------------------------------------------------------ internals
    def _publish(self) -> None:
        """Put the learner's weights (and the pool, when it changed) in the object store."""
        s = self.session
        if s.update != self.version:
            self._weights = self.ray.put(state_dict_cpu(s.net))
            self.version = s.update
        if s.pool_version != self.pool_version:
            self._pool = self.ray.put([state_dict_cpu(agent.net) for agent in s.pool])
            self.pool_version = s.pool_version

    def _spawn(self, slot: int) -> None:
        incarnation = self.restarts[slot]
        seed = actor_seed(self.session.args.seed, slot, self.start_update, incarnation)
        self.actors[slot] = self._remote.remote(*self._spec, slot, incarnation, seed)

    def _submit(self, slot: int) -> None:
        ref = self.actors[slot].collect.remote(
            self.version, [self._weights], self.pool_version, [self._pool]
        )
        self.inflight[ref] = slot

    def _next_result(self) -> RolloutResult:
        """The first rollout to finish; a dead actor is replaced on the way."""
        ray = self.ray
        while True:
            if not self.inflight:
                raise RuntimeError(
                    f"every rollout actor died (each slot was restarted {MAX_ACTOR_RESTARTS} "
                    "times); the last checkpoint can be resumed with --resume"
                )
            [ref], _ = ray.wait(list(self.inflight), num_returns=1)
            slot = self.inflight.pop(ref)
            try:
                return ray.get(ref)
            except ray.exceptions.RayActorError:
                self._replace(slot)
            except ray.exceptions.RayTaskError as exc:  # raised by the rollout: a bug
                cause = getattr(exc, "cause", None)
                raise (cause if isinstance(cause, Exception) else exc) from None

    def _replace(self, slot: int) -> None:
        with suppress(Exception):
            self.ray.kill(self.actors.pop(slot), no_restart=True)
        if self.restarts[slot] >= MAX_ACTOR_RESTARTS:
            warnings.warn(
                f"rollout actor {slot} died {MAX_ACTOR_RESTARTS + 1} times; "
                f"going on with {len(self.actors)} actors",
                RuntimeWarning,
                stacklevel=2,
            )
            return
        self.restarts[slot] += 1
        self._spawn(slot)
        self._submit(slot)
