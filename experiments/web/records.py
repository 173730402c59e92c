"""A web game's files: what is stored of its seats, `game.json` written and read, the
hand log's rows, and (an option of the records) the people's decisions as
behaviour-cloning datasets.

A game is a folder `ROOT/web/<id>/`:

- `game.json` (`write_game`, `read_game`): the setup and every action so far, written
  atomically after each action, readable by the server's user only (0600), a person's
  seat token stored as its SHA-256 (`token_hash`) so a leaked file opens no seat; read
  only as a regular file of bounded size, never through a link, never blocking on a FIFO;
- `log.jsonl` (`log_row`, `log_hand`): one row per finished hand in the tournament log
  format (`experiments.tournament.results_log`), so `spades show`, `spades analyze` and
  the replay page read web games as they read tournaments;
- `reviews.json` (`write_reviews`, `read_reviews`): the review of each finished hand
  (`experiments.web.review`), written atomically when a review is done, so the reviews
  are there again after a restart; written and read as game.json is;
- `bc-seatN/` (`Decisions`, when the game's records keep datasets, the default; `spades
  serve --no-datasets` keeps none): each person's decisions with a choice, one shard per
  hand, in `training.bc_data`'s format: `spades train bc --extra-data
  ROOT/web/<id>/bc-seatN` trains on them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import secrets
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.spec import AgentSpec
from experiments.table.words import team_seats
from experiments.tournament.results_log import append_unit, read_rows, seal
from spades_env.cards import NUM_ACTIONS
from spades_env.rules import Rules
from spades_env.scoring import score_hand

GAME_FORMAT, GAME_VERSION = "spades-web-game", 1
#: the largest game.json a server reads (a whole game is well under 100 kB)
MAX_GAME_BYTES = 4 << 20
#: A person's seat in the log: `human:NAME`, so analyses tell people from bots.
HUMAN_PREFIX = "human:"
log = logging.getLogger("spades.web")


def new_token() -> str:
    """An unguessable seat token (128 bits from the OS's generator)."""
    return secrets.token_urlsafe(16)


def token_hash(token: str) -> str:
    """What a server stores of a seat token: its SHA-256 (a leaked game.json opens no seat)."""
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class SeatInfo:
    """Who sits in a seat: a person (name, token) or an agent (its name in the server's
    catalogue, `experiments.web.catalogue`, and the spec it stands for)."""

    kind: str  # "human" | "agent"
    name: str  # the person's name, or the agent as a client named it
    token: str = ""  # a new person's seat token: in memory only, for their link
    spec: AgentSpec | None = None  # an agent's spec (None: not offered by this server now)
    token_sha: str = ""  # what is stored of a person's token

    def __post_init__(self) -> None:
        if self.token and not self.token_sha:
            self.token_sha = token_hash(self.token)

    @property
    def label(self) -> str:
        """The seat in the log: `human:NAME` or the agent's display name."""
        if self.kind == "human":
            return HUMAN_PREFIX + self.name
        return self.spec.display if self.spec is not None else self.name


def read_game(path: Path) -> dict[str, Any]:
    """game.json's data: a regular file of at most MAX_GAME_BYTES, never followed out
    through a link, never blocking on a FIFO."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise ValueError("not a regular file")
        if info.st_size > MAX_GAME_BYTES:
            raise ValueError(f"{info.st_size} bytes, over the {MAX_GAME_BYTES} a game may have")
        with open(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_GAME_BYTES + 1)
    finally:
        os.close(fd)
    data = json.loads(raw.decode("utf-8"))
    if not isinstance(data, dict):
        raise ValueError("not a JSON object")
    return data


def seat_from_json(
    d: Any, s: int, rules: Rules, resolve: Callable[[str, Rules], AgentSpec] | None
) -> SeatInfo:
    if not isinstance(d, dict) or d.get("kind") not in ("human", "agent"):
        raise ValueError(f"seat {s} is not a person or an agent")
    name = d.get("name")
    if not isinstance(name, str):
        raise ValueError(f"seat {s} has no name")
    if d["kind"] == "human":
        sha = d.get("token_sha256")
        if not isinstance(sha, str) and isinstance(d.get("token"), str):
            sha = token_hash(d["token"])  # a game written before tokens were hashed
        if not isinstance(sha, str) or len(sha) != 64:
            raise ValueError(f"seat {s} has no seat token")
        return SeatInfo("human", name, token_sha=sha)
    spec = None
    if resolve is not None:
        try:
            spec = resolve(name, rules)
        except ValueError as exc:  # not offered now: the seat fails at its turn
            log.warning("seat %s agent %r is not offered by this server: %s", s, name, exc)
    return SeatInfo("agent", name, spec=spec)


def write_game(folder: Path, data: dict[str, Any], name: str = "game.json") -> None:
    """Write game.json (or another file of the game, `name`) atomically: a killed server
    never leaves half a file. (Not fsynced: a killed process loses nothing the kernel
    holds, and a sync per move would cost more than the move; each finished hand's log
    row is fsynced.)"""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / name
    tmp = path.with_name(name + ".tmp")
    text = json.dumps(data, separators=(",", ":"))  # the C encoder
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        with open(fd, "w", encoding="utf-8") as f:
            os.fchmod(f.fileno(), 0o600)
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


REVIEWS_FORMAT = "spades-web-reviews"


def write_reviews(folder: Path, reviews: dict[int, dict[str, Any]]) -> None:
    """Write the game's reviews (hand number from 0 -> review) to reviews.json."""
    data = {"format": REVIEWS_FORMAT, "reviews": {str(h): r for h, r in sorted(reviews.items())}}
    write_game(folder, data, "reviews.json")


def read_reviews(folder: Path) -> dict[int, dict[str, Any]]:
    """The reviews kept in the game's reviews.json ({} where there is none). A file that
    is not a reviews file, or a review that is not an object, is left out (logged): the
    reviews are made again."""
    path = folder / "reviews.json"
    if not path.exists():
        return {}
    try:
        data = read_game(path)
        if data.get("format") != REVIEWS_FORMAT or not isinstance(data.get("reviews"), dict):
            raise ValueError("not a reviews file")
        return {
            int(h): r
            for h, r in data["reviews"].items()
            if h.isdigit() and isinstance(r, dict) and "error" not in r
        }
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as exc:
        log.warning("%s: not read, the reviews are made again (%s)", path, exc)
        return {}


def seat_json(info: SeatInfo) -> dict[str, Any]:
    """A seat as game.json stores it (a person's token by its hash only)."""
    if info.kind == "human":
        return {
            "kind": info.kind,
            "name": info.name,
            "token_sha256": info.token_sha,
            "label": info.label,
        }
    return {"kind": info.kind, "name": info.name, "label": info.label}


def log_row(
    table_id: str, seats: list[SeatInfo], rules: Rules, record: dict[str, Any]
) -> dict[str, Any]:
    """A finished hand as a tournament log row (its checksum added)."""
    labels = [i.label for i in seats]
    t = rules.num_teams
    hs = score_hand(rules, [record["bids"]], [record["blind"]], [record["tricks"]])
    teams = [" & ".join(dict.fromkeys(labels[s] for s in team_seats(rules, k))) for k in range(t)]
    winner = record["winner"]
    row = {
        "tournament": f"web-{table_id}",
        "unit": record["hand_no"],
        "unit_rows": 1,
        "mode": "game",
        "deal": 0,
        "side": 0,
        "hand": record["hand_no"],
        "seats": labels,
        "teams": teams,
        "players": [{"kind": i.kind, "name": i.name} for i in seats],
        "rules": record["rules"],
        "dealer": record["dealer"],
        "bids": record["bids"],
        "blind": record["blind"],
        "tricks": record["tricks"],
        "contract": hs.contract[0].tolist(),
        "made": hs.made[0].tolist(),
        "hand_score": [record["scores"][k] - record["scores_before"][k] for k in range(t)],
        "bags_gained": record["bags_gained"],
        "bags": record["bags"],
        "scores": record["scores"],
        "game_over": record["game_over"],
        "winner": winner,
        "winner_agent": teams[winner] if winner >= 0 else None,
        "record": record,
    }
    return seal(row)


def log_hand(folder: Path, row: dict[str, Any]) -> None:
    """Append a hand's row to the game's log (0600)."""
    path = folder / "log.jsonl"
    append_unit(path, [row])
    os.chmod(path, 0o600)


def logged_hands(folder: Path) -> int:
    """The rows the game's log holds (LogError: a damaged line)."""
    path = folder / "log.jsonl"
    return len(read_rows(path)) if path.exists() else 0


@dataclass
class Decisions:
    """The people's decisions of the hand in play, per seat, written as one dataset shard
    per seat and hand when the hand ends (`write`); off (`keep=False`): nothing kept."""

    folder: Path
    keep: bool = True
    pending: dict[int, list[tuple]] = field(default_factory=dict)

    def collect(self, game: Any, seats: list[SeatInfo], action: int) -> None:
        """Keep a person's decision that had a choice: the seat's encoding, the legal
        mask, the action and the phase (a behaviour-cloning row)."""
        seat = game.to_act
        if not self.keep or seats[seat].kind != "human":
            return
        mask = game.legal_mask().astype(bool)
        if mask.sum() > 1:
            self.pending.setdefault(seat, []).append((game.observe(seat), mask, action, game.phase))

    def seat_folder(self, seat: int) -> Path:
        return self.folder / f"bc-seat{seat}"

    def write(self, record: dict[str, Any], rules: Rules, seats: list[SeatInfo]) -> None:
        """Write each person's decisions of a finished hand as one shard of a
        behaviour-cloning dataset (`training.bc_data`): `spades train bc --extra-data
        ROOT/web/<table>/bc-seatN` trains on them. The value target is the hand's points
        of the person's team minus the other team's, bag penalty included."""
        if not self.keep:
            return
        from training.bc_data import DatasetSpec, open_dataset, shard_path, write_shard

        hand = record["hand_no"]
        options = ",".join(rules.changed_options())
        net = [p - q for p, q in zip(record["points"], record["penalty"], strict=True)]
        for seat, rows in self.pending.items():
            team = rules.team_of(seat)
            outcome = net[team] - max(net[k] for k in range(len(net)) if k != team)
            spec = DatasetSpec(
                teacher=seats[seat].label,  # a person's decisions: their name, never played
                rules=rules,
                seed=0,
                shards=hand + 1,
                hands_per_shard=1,
                preset=rules.name,
                options=options,
            )
            folder = open_dataset(self.seat_folder(seat), spec)
            for k in range(hand):  # hands where this person had no choice: empty shards
                if not shard_path(folder, k).exists():
                    write_shard(folder, spec, k, bc_rows([], 0.0, rules))
            write_shard(folder, spec, hand, bc_rows(rows, float(outcome), rules))
        self.pending = {}


def bc_rows(rows: list[tuple], outcome: float, rules: Rules) -> dict[str, np.ndarray]:
    """The columns of a behaviour-cloning shard (`training.bc_data.COLUMNS`)."""
    from spades_env.observation import obs_size

    k = len(rows)
    obs = np.array([r[0] for r in rows], dtype=np.int16).reshape(k, obs_size(rules))
    mask = np.array([r[1] for r in rows], dtype=bool).reshape(k, NUM_ACTIONS)
    return {
        "obs": obs,
        "mask": np.packbits(mask, axis=1),
        "action": np.array([r[2] for r in rows], dtype=np.int16),
        "phase": np.array([r[3] for r in rows], dtype=np.int8),
        "outcome": np.full(k, outcome, dtype=np.float32),
    }
