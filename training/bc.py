"""Distillation (behaviour cloning) from any registry agent, with optional DAgger rounds.

    spades train bc --teacher heuristic --hands 20000       # or: python -m training.bc

1. **Data.** The teacher (any registry spec: `heuristic`, `pimc:worlds=64`, ...) plays
   `--hands` hands of the batched engine in every seat; each decision with a choice is a
   row labelled with the teacher's action and the hand's outcome (`training.bc_data`).
   The dataset is a folder of shards (`--data`, default `runs/data/<teacher>__<seed>`):
   running the same command again after a kill writes only the missing shards.
2. **Training.** The loss is the cross-entropy of the masked policy against the teacher's
   action, plus `--vf-coef` times the squared error of the value against the hand's
   outcome (`--reward-scale` points per unit, as in PPO, so the value head is ready for
   fine-tuning). Adam, `--epochs` passes, the learning rate annealed linearly. The last
   `--holdout` share of each dataset's shards is held out: the run reports the agreement
   with the teacher (greedy action = teacher's action) on them, for bids and card play.
3. **DAgger** (`--dagger-rounds R`): after training, `--dagger-hands` more hands are
   played with the student's sampled actions in a share `--student-frac` of the seats and
   the teacher labelling every decision (`<data>_dagger<r>`), and training goes on over
   all the data so far; R times.
4. **Evaluation.** A duplicate match against the heuristic on `--eval-deals` fixed deals
   (`training.evaluation`), and against `--eval-search` when given.

The run folder `runs/{exp}__{seed}__{time}/` holds TensorBoard events, `final.pt` (a slim
checkpoint, `checkpoint:PATH` in tournaments, `--init PATH` for `spades train ppo`) and
`summary.json` (agreement, evaluation, wall time).
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn, optim
from torch.utils.tensorboard import SummaryWriter

from agents.learned.agent import RLAgent
from agents.learned.checkpoint import save_checkpoint
from agents.learned.networks import POLICY_KINDS, Network, build_network, network_config
from agents.registry import AgentSpec, make_agent, parse_agent
from spades_env.rules import Rules
from spades_env.state import PLAY
from spades_env.tooling.files import atomic_write, new_folder
from spades_env.tooling.flags import parse_args
from training.bc_data import DatasetSpec, generate, load_dataset, read_meta, spec_of
from training.evaluation import duplicate_eval, greedy_fn
from training.session import init_checkpoint, log_hyperparameters, pick_device

Progress = Callable[[int, int], None]


@dataclass
class Args:
    """Distillation of a teacher agent into a network (behaviour cloning, DAgger)."""

    #: Counts where 0 is allowed and means none (training.session.check_args).
    ZERO_MEANS_NONE = ("eval_deals",)

    exp_name: str = "bc"
    """the name of this experiment (the run folder is runs/{exp_name}__{seed}__{time})"""
    seed: int = 1
    """seed of the run: the dataset's deals, the initial weights, minibatch order"""
    device: str = "cpu"
    """torch device: cpu, cuda or auto (cuda when a GPU is visible)"""
    threads: int = 1
    """torch CPU threads"""
    rules: str = "standard"
    """rules preset (RULES.md §6)"""
    option: tuple[str, ...] = ()
    """rules option on top of the preset, e.g. nil_tricks=count (repeatable)"""
    runs_dir: str = "runs"
    """folder that holds the run folders (and runs/data, the default dataset folders)"""
    teacher: str = "heuristic"
    """registry spec of the agent to imitate (heuristic, pimc:worlds=64, ...)"""
    hands: int = 4000
    """hands the teacher plays for the dataset (about 45 decisions with a choice each)"""
    hands_per_shard: int = 500
    """hands per dataset shard (the unit a killed generation resumes from)"""
    data: str = ""
    """dataset folder (default runs/data/<teacher>__<seed>); an existing one is resumed"""
    extra_data: str = ""
    """more dataset folders to train on as well, comma-separated (made by earlier runs)"""
    init: str = ""
    """checkpoint to start from (a policy network: kind ppo or split) instead of new weights"""
    kind: str = "split"
    """network: split (separate bidding and card-play heads) or ppo (one policy head)"""
    hidden: str = "512,256"
    """hidden layer sizes of the MLP trunk (ignored with --init)"""
    epochs: int = 4
    """passes over the data (per DAgger round too)"""
    batch_size: int = 1024
    """rows per minibatch"""
    learning_rate: float = 1e-3
    """Adam learning rate, annealed linearly to 0 over each training phase"""
    vf_coef: float = 0.5
    """weight of the value loss"""
    reward_scale: float = 0.01
    """value target = (own team hand points - other team's) * reward_scale"""
    holdout: float = 0.1
    """share of each dataset's shards held out to measure the agreement (at least one
    shard when a dataset has two or more)"""
    dagger_rounds: int = 0
    """DAgger rounds after the first training (0 = plain behaviour cloning)"""
    dagger_hands: int = 2000
    """hands per DAgger round"""
    student_frac: float = 0.5
    """DAgger: share of seats where the student's sampled action is played"""
    student: str = ""
    """checkpoint whose sampled actions play a share --student-frac of the seats of the
    first dataset as well (labels on the states of that network's own play: with --init
    of the same file, expert iteration from the start)"""
    anchor_coef: float = 0.0
    """weight of a KL(initial network || network) term on every row (needs --init): keeps
    what the starting network knew where the teacher's labels are noise"""
    workers: int = 1
    """processes that generate the dataset's shards"""
    eval_deals: int = 300
    """duplicate deals of the final evaluation against the heuristic (0 = none)"""
    eval_search: str = ""
    """also evaluate against this agent spec (e.g. pimc:worlds=16), on --eval-search-deals"""
    eval_search_deals: int = 50
    """duplicate deals of the evaluation against --eval-search"""
    eval_seed: int = 12345
    """seed of the evaluation deal set"""


def default_data(args: Args) -> Path:
    name = re.sub(r"[^A-Za-z0-9=._-]+", "_", args.teacher)
    return Path(args.runs_dir) / "data" / f"{name}__{args.seed}"


def split_shards(shards: int, holdout: float) -> tuple[list[int], list[int]]:
    """(training shards, held-out shards): the last ceil(holdout * shards), if 2 or more."""
    held = min(shards - 1, math.ceil(holdout * shards)) if shards >= 2 and holdout > 0 else 0
    return list(range(shards - held)), list(range(shards - held, shards))


def load_split(
    folders: list[Path], holdout: float, rules: Rules | None = None
) -> tuple[dict, dict | None]:
    """Concatenated training rows and held-out rows of the dataset folders (`rules`: the
    run's, not built again for a dataset of them)."""
    train_parts, held_parts = [], []
    for folder in folders:
        train, held = split_shards(read_meta(folder)["shards"], holdout)
        train_parts.append(load_dataset(folder, train, rules))
        if held:
            held_parts.append(load_dataset(folder, held, rules))

    def cat(parts: list[dict]) -> dict:
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    return cat(train_parts), (cat(held_parts) if held_parts else None)


def to_tensors(rows: dict[str, np.ndarray], device: torch.device) -> dict[str, torch.Tensor]:
    out = {k: torch.from_numpy(v).to(device) for k, v in rows.items()}
    out["action"] = out["action"].long()
    return out


def bc_loss(
    net: Network,
    b: dict[str, torch.Tensor],
    idx: torch.Tensor,
    args: Args,
    anchor: Network | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """(total loss, policy cross-entropy, value MSE, KL to `anchor`) of the rows `idx`."""
    obs, mask = b["obs"][idx], b["mask"][idx]
    logits, value = net(obs, mask)
    ce = nn.functional.cross_entropy(logits, b["action"][idx])
    v_loss = ((value - b["outcome"][idx] * args.reward_scale) ** 2).mean()
    loss = ce + args.vf_coef * v_loss
    kl = torch.zeros(())
    if anchor is not None:  # KL(anchor || net) over the legal actions (masked: p = 0)
        with torch.no_grad():
            a_logp = torch.log_softmax(anchor(obs, mask)[0], dim=1)
        kl = (a_logp.exp() * (a_logp - torch.log_softmax(logits, dim=1))).sum(dim=1).mean()
        loss = loss + args.anchor_coef * kl
    return loss, ce, v_loss, kl


def agreement(net: Network, b: dict[str, torch.Tensor], args: Args) -> dict[str, float]:
    """Share of held-out rows where the greedy action is the teacher's (bids, play, all)."""
    net.eval()
    hits, vals = [], []
    with torch.no_grad():
        for lo in range(0, len(b["action"]), 8192):
            idx = torch.arange(lo, min(lo + 8192, len(b["action"])))
            logits, value = net(b["obs"][idx], b["mask"][idx])
            hits.append(logits.argmax(dim=1) == b["action"][idx])
            vals.append(value)
    net.train()
    hit = torch.cat(hits).float()
    play = b["phase"] == PLAY
    bid = b["phase"] < PLAY  # RULES.md §2: blind nil and bid
    v_err = ((torch.cat(vals) - b["outcome"] * args.reward_scale) ** 2).mean()
    result = {"agreement": hit.mean().item(), "value_mse": v_err.item()}
    if play.any():
        result["agreement_play"] = hit[play].mean().item()
    if bid.any():
        result["agreement_bid"] = hit[bid].mean().item()
    return result


def fit(
    net: Network,
    train: dict[str, np.ndarray],
    held: dict[str, np.ndarray] | None,
    args: Args,
    device: torch.device,
    gen: torch.Generator,
    log: Callable[[dict[str, float], int], None],
    step0: int,
    progress: Callable[[int], None],
    anchor: Network | None = None,
) -> tuple[int, dict[str, float]]:
    """`args.epochs` passes of Adam over `train`; returns (rows seen so far, last held-out)."""
    b = to_tensors(train, device)
    hb = to_tensors(held, device) if held is not None else None
    size = len(b["action"])
    optimizer = optim.Adam(net.parameters(), lr=args.learning_rate)
    total = args.epochs * max(1, size // args.batch_size)
    k, seen, scores = 0, step0, {}
    for _epoch in range(args.epochs):
        order = torch.randperm(size, generator=gen).to(device)
        ce_sum, v_sum, kl_sum, nb = 0.0, 0.0, 0.0, 0
        for lo in range(0, size - args.batch_size + 1, args.batch_size):
            optimizer.param_groups[0]["lr"] = args.learning_rate * (1.0 - k / total)
            idx = order[lo : lo + args.batch_size]
            loss, ce, v_loss, kl = bc_loss(net, b, idx, args, anchor)
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            optimizer.step()
            ce_sum, v_sum, kl_sum = ce_sum + ce.item(), v_sum + v_loss.item(), kl_sum + kl.item()
            nb, k = nb + 1, k + 1
            seen += args.batch_size
            progress(1)
        scalars = {"losses/policy_ce": ce_sum / max(nb, 1), "losses/value_mse": v_sum / max(nb, 1)}
        if anchor is not None:
            scalars["losses/kl_anchor"] = kl_sum / max(nb, 1)
        if hb is not None:
            scores = agreement(net, hb, args)
            scalars.update({f"eval/{k2}": v for k2, v in scores.items()})
        log(scalars, seen)
    return seen, scores


def initial_network(args: Args, rules: Rules, device: torch.device) -> tuple[Network, dict]:
    """A new network (seeded), or the one `--init` names, checked."""
    if args.init:
        ckpt = init_checkpoint(args, POLICY_KINDS, rules)
        net = build_network(ckpt["network"], rules)
        net.load_state_dict(ckpt["model"])
        return net.to(device), ckpt["network"]
    if args.kind not in POLICY_KINDS:
        raise ValueError(f"--kind {args.kind!r}: choose {' or '.join(POLICY_KINDS)}")
    hidden = [int(h) for h in args.hidden.split(",")]
    extra = {"bid_hidden": 128} if args.kind == "split" else {}
    config = network_config(args.kind, hidden, **extra)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(args.seed)
        net = build_network(config, rules)
    return net.to(device), config


@dataclass(frozen=True)
class Checked:
    """The flags `check_args` read, once: the rules, the teacher and the `--eval-search`
    agent (None: none), parsed and checked against the rules, and the heuristic the
    evaluation plays (None: `--eval-deals 0`); no agent is built."""

    rules: Rules
    teacher: AgentSpec
    eval_search: AgentSpec | None
    heuristic: AgentSpec | None = None


def check_args(args: Args, rules: Rules | None = None) -> Checked:
    """Refuse bad flags in one line, before anything is written; return what they say,
    each spec's text read once (`rules`: already built from `--rules` and `--option`)."""
    if rules is None:
        rules = Rules.build(args.rules, args.option)
    teacher = parse_agent(args.teacher, rules)  # an unknown teacher fails here
    read = {args.teacher: teacher}  # a text given twice is read once
    eval_search = None
    if args.eval_search:
        eval_search = read.get(args.eval_search) or parse_agent(args.eval_search, rules)
        read[args.eval_search] = eval_search
    heuristic = None
    if args.eval_deals > 0:  # the evaluation's opponent (its rules checked when it is built)
        heuristic = read.get("heuristic") or parse_agent("heuristic")
    for flag in ("hands", "hands_per_shard", "epochs", "batch_size"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} {getattr(args, flag)}: give 1 or more")
    if not 0 <= args.holdout < 1:
        raise ValueError(f"--holdout {args.holdout}: give a share in [0, 1)")
    if not 0 <= args.student_frac <= 1:
        raise ValueError(f"--student-frac {args.student_frac}: give a share in [0, 1]")
    if args.anchor_coef < 0:
        raise ValueError(f"--anchor-coef {args.anchor_coef}: give 0 or more")
    if args.anchor_coef > 0 and not args.init:
        raise ValueError("--anchor-coef needs --init: the KL term is towards the starting network")
    if args.workers < 1:
        raise ValueError(f"--workers {args.workers}: give 1 or more")
    if args.student:
        RLAgent(seed=0, path=args.student).check_rules(rules)
    for folder in filter(None, args.extra_data.split(",")):
        read_meta(folder)
    return Checked(rules, teacher, eval_search, heuristic)


def evaluate(net: Network, args: Args, checked: Checked, device: torch.device) -> dict[str, Any]:
    """Duplicate matches against the heuristic and `--eval-search` (as `check_args` read
    them), the results keyed by the specs as given."""
    out: dict[str, Any] = {}
    net.eval()
    rules = checked.rules
    opponents = [
        ("heuristic", checked.heuristic, args.eval_deals),
        (args.eval_search, checked.eval_search, args.eval_search_deals),
    ]
    for name, spec, deals in opponents:
        if spec is not None and deals > 0:
            opponent = make_agent(spec, seed=args.eval_seed, rules=rules)
            res = duplicate_eval(greedy_fn(net, device), opponent, rules, deals, args.eval_seed)
            out[name] = {k: v for k, v in res.items() if k != "decisions_per_s"}
    net.train()
    return out


def train(args: Args, progress: Progress | None = None, checked: Checked | None = None) -> Path:
    """Generate (or resume) the data, train, run the DAgger rounds; return final.pt.
    `checked`: the flags already read (`check_args`), which are then not read again."""
    if checked is None:
        checked = check_args(args)
    rules = checked.rules
    device = pick_device(args.device)
    threads = torch.get_num_threads()
    torch.set_num_threads(args.threads)
    start = time.perf_counter()
    data = Path(args.data) if args.data else default_data(args)
    shards = math.ceil(args.hands / args.hands_per_shard)
    options = ",".join(args.option)
    student = str(Path(args.student)) if args.student else ""
    spec = DatasetSpec(
        checked.teacher, rules, args.seed, shards, args.hands_per_shard, preset=args.rules,
        student=student, student_frac=args.student_frac if student else 0.0,
        options=options, teacher_text=args.teacher,
    )  # fmt: skip
    gen_rows = args.hands + args.dagger_rounds * args.dagger_hands
    # progress units: hands generated and minibatches trained (a first guess until the
    # data is loaded)
    est_batches = 45 * args.hands * args.epochs // args.batch_size
    total = [gen_rows + est_batches * (1 + args.dagger_rounds)]
    done = [0]

    def tick(units: int) -> None:
        done[0] += units
        if progress is not None:
            progress(min(done[0], total[0]), total[0])

    try:
        generate(data, spec, progress=None, workers=args.workers)
        tick(args.hands)
        folders = [data, *map(Path, filter(None, args.extra_data.split(",")))]
        # the data is read (a corrupt shard refused) before the run folder is made
        first_split = load_split(folders, args.holdout, rules)
        net, config = initial_network(args, rules, device)
        anchor = None
        if args.anchor_coef > 0:  # a frozen copy of the starting network
            anchor = build_network(config, rules).to(device)
            anchor.load_state_dict(net.state_dict())
            anchor.eval().requires_grad_(False)
        stamp = time.strftime("%Y%m%d-%H%M%S")
        run_dir = new_folder(args.runs_dir, f"{args.exp_name}__{args.seed}__{stamp}")
        writer = SummaryWriter(str(run_dir))
        log_hyperparameters(writer, args, ("eval/agreement", "eval/value_mse"))
        gen = torch.Generator().manual_seed(args.seed)

        def log(scalars: dict[str, float], step: int) -> None:
            for tag, value in scalars.items():
                writer.add_scalar(tag, value, step)

        seen, rounds = 0, []
        for r in range(args.dagger_rounds + 1):
            if r:  # DAgger: the student plays, the teacher labels
                student = save_checkpoint(
                    run_dir / "checkpoints" / f"round_{r - 1}.pt", net, config,
                    dataclasses.asdict(args), rules, {"rows_seen": seen},
                )  # fmt: skip
                shards_r = math.ceil(args.dagger_hands / args.hands_per_shard)
                spec_r = dataclasses.replace(
                    spec, seed=args.seed + r, shards=shards_r, student=str(student),
                    student_frac=args.student_frac,
                )  # fmt: skip
                folders.append(generate(Path(f"{data}_dagger{r}"), spec_r, workers=args.workers))
                tick(args.dagger_hands)
            train_rows, held = first_split if r == 0 else load_split(folders, args.holdout, rules)
            if r == 0:  # the real row count, now known
                batches = len(train_rows["action"]) // args.batch_size * args.epochs
                total[0] = gen_rows + batches * (1 + args.dagger_rounds)
            seen, scores = fit(
                net, train_rows, held, args, device, gen, log, seen,
                tick, anchor,
            )  # fmt: skip
            rounds.append({"round": r, "rows": len(train_rows["action"]), **scores})
            print(f"round {r}: {rounds[-1]}", flush=True)
        results = evaluate(net, args, checked, device)
        for spec_name, res in results.items():
            log({f"eval/margin_vs_{spec_name}": res["margin"]["mean"]}, seen)
        writer.close()
        wall = time.perf_counter() - start
        final = save_checkpoint(
            run_dir / "final.pt", net, config, dataclasses.asdict(args), rules,
            {"rows_seen": seen, "update": 0, "global_step": 0, "learner_steps": 0},
        )  # fmt: skip
        summary = {
            "data": [str(f) for f in folders],
            "teacher": args.teacher,
            "spec": spec_of(read_meta(data), rules).fields(),
            "rounds": rounds,
            "evaluation": results,
            "wall_seconds": round(wall, 1),
        }
        atomic_write(run_dir / "summary.json", json.dumps(summary, indent=1, default=str))
        if progress is not None:
            progress(total[0], total[0])
        return final
    finally:
        torch.set_num_threads(threads)


def main(argv: Sequence[str] | None = None, prog: str | None = None) -> Path:
    return train(parse_args(Args, argv, prog))


if __name__ == "__main__":
    main()
