"""Distillation datasets: a teacher's decisions, written in shards that a killed run resumes.

A dataset is a folder:

- `meta.json`: what the data is (format, observation encoding version, action count,
  rules, the teacher's registry spec, the student checkpoint of DAgger data, the seed,
  the shard count and size). A second generation into the same folder must ask for the
  same data, or it is refused. In memory a `DatasetSpec` holds values (the teacher an
  `AgentSpec`, the rules a `Rules`), with the text they were given as, which only
  meta.json holds; `spec_of` reads meta.json back, building the rules once.
- `shard_000000.npz` ...: shard `i` holds the decisions of `hands_per_shard` hands dealt
  from 0-0 by the generator `numpy.random.default_rng([seed, i])`. It depends on nothing
  else, so generation goes shard by shard, skipping the shards already on disk: a killed
  generation resumes with no shard lost or written twice. Each shard is written to a
  temporary name and renamed, so a kill or a full disk leaves no half shard. One process
  generates into a folder at a time (`.lock`); a second one waits, then finds the shards.

Every decision with more than one legal action is a row: the seat's int16 encoding, the
legal mask (bit-packed), the teacher's action in that state, the phase, and the outcome of
the hand for the deciding seat's team (own team's hand points minus the other team's,
bag penalty included: the value target). Whoever acts, the teacher labels: in teacher
data the teacher plays every seat; in DAgger data (`student`) a share `student_frac` of
the seats plays the student's sampled action instead, so the labels cover the states
the student reaches. Each shard carries a header (dataset id, shard index, encoding
version, action count); `load_dataset` refuses a corrupt shard, or one from another
dataset, with one line naming the file.
"""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import os
import zipfile
import zlib
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from agents.play_loop import Turn, play
from agents.processes import check_workers, exit_with_parent
from agents.registry import AgentSpec, make_agent
from spades_env.cards import NUM_ACTIONS
from spades_env.engine import HandResult
from spades_env.observation import OBS_VERSION, obs_size
from spades_env.rules import Rules
from spades_env.state import init
from spades_env.tooling.files import atomic_write, lock_folder

FORMAT = "spades-bc-dataset"
FORMAT_VERSION = 1
META = "meta.json"
COLUMNS = ("obs", "mask", "action", "phase", "outcome")


class DatasetError(ValueError):
    """A dataset or shard that cannot be used; the message names the file and the fix."""


@dataclass(frozen=True)
class DatasetSpec:
    """What a dataset folder holds (its `meta.json`), as values.

    `teacher` is the labelling agent, parsed (`agents.registry.parse_agent`), or, for
    decisions that no agent made (a person's at a web table), the text naming who made
    them ("human:NAME"): such a spec is written and read, never played. `rules` are the
    rules, built once (`Rules.build(preset, options)`). meta.json keeps the text they were
    given as: `teacher_text` (default: the teacher's text or name), `options` (the rules
    options on top of `preset`, comma-separated) and `preset`; `from_fields` builds a spec
    from that text, as meta.json holds it."""

    teacher: AgentSpec | str
    rules: Rules
    seed: int
    shards: int
    hands_per_shard: int
    student: str = ""  # DAgger: checkpoint whose sampled actions some seats play
    student_frac: float = 0.0
    preset: str = "standard"  # rules preset (RULES.md §6), as given
    options: str = ""  # rules options on top of the preset, comma-separated, as given
    teacher_text: str = ""  # the teacher's spec as given ("": the teacher's text)

    def __post_init__(self) -> None:
        if not isinstance(self.rules, Rules):
            raise TypeError(
                "DatasetSpec.rules is a Rules value; from the options' text, build the spec "
                "with DatasetSpec.from_fields"
            )

    @classmethod
    def from_fields(
        cls,
        teacher: AgentSpec | str,
        rules: str,
        seed: int,
        shards: int,
        hands_per_shard: int,
        student: str = "",
        student_frac: float = 0.0,
        preset: str = "standard",
    ) -> DatasetSpec:
        """A spec from the fields meta.json writes (`fields`), the rules given as their
        options' text (`rules`) on top of `preset` and built here, once; a `teacher`
        given as text stays text (a name: read back, or a person's decisions)."""
        built = Rules.build(preset, [rules] if rules else [])
        return cls(teacher, built, seed, shards, hands_per_shard, student, student_frac,
                   preset, rules)  # fmt: skip

    def fields(self) -> dict[str, Any]:
        """The spec as text, as meta.json writes it (and a run's summary.json shows it)."""
        if self.teacher_text:
            teacher = self.teacher_text
        else:
            teacher = self.teacher if isinstance(self.teacher, str) else self.teacher.text
        return {
            "teacher": teacher,
            "rules": self.options,
            "seed": self.seed,
            "shards": self.shards,
            "hands_per_shard": self.hands_per_shard,
            "student": self.student,
            "student_frac": self.student_frac,
            "preset": self.preset,
        }

    def meta(self) -> dict[str, Any]:
        fields = self.fields()
        if self.preset == "standard":  # the key is only written for other presets
            del fields["preset"]
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "obs_version": OBS_VERSION,
            "num_actions": NUM_ACTIONS,
            "rules_dict": self.rules.to_dict(),
            **fields,
        }

    @property
    def dataset_id(self) -> str:
        """A hash of everything that decides the shards' content (not the shard count)."""
        m = self.meta()
        del m["shards"]
        return hashlib.sha256(json.dumps(m, sort_keys=True).encode()).hexdigest()[:16]


def shard_path(folder: str | Path, i: int) -> Path:
    return Path(folder) / f"shard_{i:06d}.npz"


def _header(spec: DatasetSpec, i: int) -> npt.NDArray[np.uint8]:
    head = {"dataset_id": spec.dataset_id, "shard": i, "obs_version": OBS_VERSION}
    head["num_actions"] = NUM_ACTIONS
    return np.frombuffer(json.dumps(head).encode(), dtype=np.uint8)


def open_dataset(folder: str | Path, spec: DatasetSpec) -> Path:
    """Create the folder and its meta.json, or check that it holds the same data."""
    folder = Path(folder)
    meta_file = folder / META
    if meta_file.exists():
        old = read_meta(folder)
        mine = spec.meta()
        diff = [k for k in mine if k != "shards" and old.get(k) != mine[k]]
        if diff:
            raise DatasetError(
                f"dataset {str(folder)!r} holds other data ({', '.join(diff)} differ); "
                "give another --data folder, or the same settings to resume it"
            )
        if old["shards"] != spec.shards:  # growing (or shrinking) keeps the shards there
            atomic_write(meta_file, json.dumps({**old, "shards": spec.shards}, indent=1))
        return folder
    folder.mkdir(parents=True, exist_ok=True)
    atomic_write(meta_file, json.dumps(spec.meta(), indent=1))
    return folder


def read_meta(folder: str | Path) -> dict[str, Any]:
    meta_file = Path(folder) / META
    try:
        meta = json.loads(meta_file.read_text())
    except FileNotFoundError:
        raise DatasetError(
            f"{str(folder)!r} is not a dataset (no {META}); generate one with spades train bc"
        ) from None
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{str(meta_file)!r} is unreadable: {exc}") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DatasetError(f"{str(meta_file)!r} is not a spades distillation dataset")
    if meta.get("format_version") != FORMAT_VERSION:
        raise DatasetError(
            f"dataset {str(folder)!r} has format version {meta.get('format_version')}; "
            f"this release reads version {FORMAT_VERSION}"
        )
    if meta.get("obs_version") != OBS_VERSION or meta.get("num_actions") != NUM_ACTIONS:
        raise DatasetError(
            f"dataset {str(folder)!r} was made for observation version "
            f"{meta.get('obs_version')} with {meta.get('num_actions')} actions; this release "
            f"has version {OBS_VERSION} with {NUM_ACTIONS}: generate it again"
        )
    return meta


def spec_of(meta: dict[str, Any], rules: Rules | None = None) -> DatasetSpec:
    """The spec a meta.json holds, its rules built once; `rules` (a run's, already built)
    stand for them when they are the ones it holds (`rules_dict`): not built again. Its
    teacher stays the text it was written as: a dataset read back is loaded, not played
    again (its teacher may be a person, or a checkpoint or plugin no longer here)."""
    names = ("teacher", "rules", "seed", "shards", "hands_per_shard", "student",
             "student_frac", "preset")  # fmt: skip
    fields = {k: meta[k] for k in names if k in meta}
    if rules is None or meta.get("rules_dict") != rules.to_dict():
        return DatasetSpec.from_fields(**fields)
    options = fields.pop("rules")
    return DatasetSpec(**fields, rules=rules, options=options)


# ----------------------------------------------------------------------------- playing
def play_shard(spec: DatasetSpec, i: int) -> dict[str, npt.NDArray]:
    """The rows of shard `i`: `hands_per_shard` hands, every non-forced decision labelled."""
    rules = spec.rules
    if isinstance(spec.teacher, str):
        raise DatasetError(
            f"the teacher {spec.teacher!r} is a name, not a parsed agent: no shard can be "
            "played from it (agents.registry.parse_agent)"
        )
    rng = np.random.default_rng([spec.seed, i])
    teacher = make_agent(spec.teacher, seed=int(rng.integers(2**62)), rules=rules)
    n, p = spec.hands_per_shard, rules.num_players
    student = None
    student_seat = np.zeros((n, p), dtype=bool)
    if spec.student:
        from agents.learned.agent import RLAgent

        student = RLAgent(seed=int(rng.integers(2**62)), path=spec.student, sample=True)
        student.check_rules(rules)
        student_seat = rng.random((n, p)) < spec.student_frac
    state = init(rules, n, rng)
    rows: dict[str, list[np.ndarray]] = {k: [] for k in ("obs", "mask", "action", "phase")}
    games, seats = [], []
    outcome = np.zeros((n, rules.num_teams), dtype=np.int32)
    teams = np.arange(p) % rules.num_teams

    def keep(turn: Turn) -> None:
        # every live decision with a choice, labelled by the teacher whoever played it
        rows_ = np.flatnonzero((turn.who >= 0) & (turn.mask.sum(axis=1) > 1))
        rows["obs"].append(turn.obs[rows_])
        rows["mask"].append(turn.mask[rows_])
        rows["action"].append(turn.labels[rows_])
        rows["phase"].append(turn.phase[rows_])
        games.append(rows_)
        seats.append(turn.seat[rows_].astype(np.int64))

    def score(res: HandResult) -> None:
        outcome[res.games] = res.points - res.penalty

    # seat owners: 0 the teacher, 1 the student (DAgger); the teacher labels every decision
    owner = student_seat.astype(np.int64)
    players = [teacher] if student is None else [teacher, student]
    play(state, owner, players, on_turn=keep, on_hand=score, labeller=teacher, obs_always=True)
    g, s = np.concatenate(games), np.concatenate(seats)
    own = outcome[g, teams[s]]
    other = outcome[g, (teams[s] + 1) % rules.num_teams]
    return {
        "obs": np.concatenate(rows["obs"]).astype(np.int16),
        "mask": np.packbits(np.concatenate(rows["mask"]), axis=1),
        "action": np.concatenate(rows["action"]).astype(np.int16),
        "phase": np.concatenate(rows["phase"]).astype(np.int8),
        "outcome": (own - other).astype(np.float32),
    }


def write_shard(folder: str | Path, spec: DatasetSpec, i: int, rows: dict[str, np.ndarray]) -> Path:
    buffer = io.BytesIO()  # whole in memory first: a full disk is a plain OSError
    np.savez_compressed(buffer, header=_header(spec, i), **rows)
    return atomic_write(shard_path(folder, i), buffer.getbuffer())


def missing_shards(folder: str | Path, spec: DatasetSpec) -> list[int]:
    return [i for i in range(spec.shards) if not shard_path(folder, i).exists()]


def _make_shard(folder: Path, spec: DatasetSpec, i: int) -> int:
    write_shard(folder, spec, i, play_shard(spec, i))
    return i


def generate(folder: str | Path, spec: DatasetSpec, progress=None, workers: int = 1) -> Path:
    """Write every missing shard of the dataset (`progress(done, total)` after each).

    With `workers` > 1 the shards are played in that many processes; a shard depends on
    `(seed, i)` alone, so the dataset is the same whatever the count or the order."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    # one process at a time: a second run asking for the same data (a sweep of training
    # runs started together) waits, then finds the shards written
    with lock_folder(folder, "dataset", wait=True):
        open_dataset(folder, spec)
        for stale in folder.glob("shard_*.tmp"):  # a killed run's half shard
            stale.unlink()
        return _generate(folder, spec, progress, workers)


def _generate(folder: Path, spec: DatasetSpec, progress, workers: int) -> Path:
    todo = missing_shards(folder, spec)
    done = spec.shards - len(todo)

    def tick() -> None:
        nonlocal done
        done += 1
        if progress is not None:
            progress(done, spec.shards)

    if workers <= 1 or len(todo) <= 1:
        for i in todo:
            _make_shard(folder, spec, i)
            tick()
        return folder
    check_workers(min(workers, len(todo)))  # each worker costs about 230 MB
    context = multiprocessing.get_context("spawn")  # no forked torch or numba threads
    with ProcessPoolExecutor(
        min(workers, len(todo)),
        mp_context=context,
        initializer=exit_with_parent,  # a killed run leaves no worker behind
        initargs=(os.getpid(),),
    ) as pool:
        for future in as_completed([pool.submit(_make_shard, folder, spec, i) for i in todo]):
            future.result()
            tick()
    return folder


# ----------------------------------------------------------------------------- reading
def read_shard(path: str | Path, dataset_id: str, rules: Rules) -> dict[str, np.ndarray]:
    """One shard's rows, checked against its dataset (DatasetError names the file)."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as z:
            data = {k: z[k] for k in ("header", *COLUMNS)}
        head = json.loads(data.pop("header").tobytes().decode())
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, zlib.error) as exc:
        reason = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise DatasetError(
            f"shard {str(path)!r} is corrupt ({reason[:120]}); delete it and run the "
            "generation again to rewrite it"
        ) from None
    if not isinstance(head, dict) or head.get("dataset_id") != dataset_id:
        raise DatasetError(
            f"shard {str(path)!r} belongs to another dataset; delete it and run the "
            "generation again to rewrite it"
        )
    k, d = len(data["action"]), obs_size(rules)
    shapes_ok = data["obs"].shape == (k, d) and data["mask"].shape == (k, (NUM_ACTIONS + 7) // 8)
    if not shapes_ok or any(len(data[c]) != k for c in COLUMNS):
        raise DatasetError(f"shard {str(path)!r} has inconsistent arrays; delete and regenerate it")
    data["mask"] = np.unpackbits(data["mask"], axis=1, count=NUM_ACTIONS).astype(bool)
    action = data["action"]
    if action.dtype.kind not in "iu" or ((action < 0) | (action >= NUM_ACTIONS)).any():
        raise DatasetError(
            f"shard {str(path)!r} holds actions outside 0..{NUM_ACTIONS - 1}; delete and "
            "regenerate it"
        )
    if k and not data["mask"][np.arange(k), action].all():
        raise DatasetError(
            f"shard {str(path)!r} holds an action its row's mask forbids; delete and regenerate it"
        )
    return data


def load_dataset(
    folder: str | Path, shards: list[int] | None = None, rules: Rules | None = None
) -> dict[str, np.ndarray]:
    """The rows of a dataset's shards (all, or those listed), concatenated (`rules`: the
    rules the caller has built, used when they are the dataset's, `spec_of`)."""
    meta = read_meta(folder)
    spec = spec_of(meta, rules)
    dataset_id = spec.dataset_id
    todo = range(spec.shards) if shards is None else shards
    missing = [i for i in todo if not shard_path(folder, i).exists()]
    if missing:
        raise DatasetError(
            f"dataset {str(folder)!r} lacks {len(missing)} of its {spec.shards} shards "
            f"(first: {missing[0]}); run the generation again to finish it"
        )
    parts = [read_shard(shard_path(folder, i), dataset_id, spec.rules) for i in todo]
    if not parts:
        raise DatasetError(f"dataset {str(folder)!r} has no shards")
    return {c: np.concatenate([p[c] for p in parts]) for c in COLUMNS}
