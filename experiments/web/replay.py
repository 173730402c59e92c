"""Replays of run folders: which runs there are under the root, their deals, and one deal
step by step, both tables of the duplicate side by side.

A run is a folder under the root holding a `log.jsonl` (a tournament, an evaluation's
tournaments, a web game: `experiments.tournament.results_log`), or a game saved by
`spades play` (a `.json` file of format `spades-play`). Paths come from the browser, so
`resolve` takes only a relative path without `..` that stays under the root once
resolved (symbolic links included); anything else is refused.

A deal's data is every action of each side with the position after it (the hands left,
the trick on the table, tricks won, bids), made by replaying the hand record through the
engine, plus the first action at which the two sides differ: the first decision where
the two tables of the duplicate went different ways.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from experiments.play.screen import card_label, seat_title
from experiments.tournament.results_log import LogError, read_rows
from experiments.tournament.summary import pair_of
from spades_env.cards import NUM_CARDS, str_to_action, str_to_card
from spades_env.engine import step
from spades_env.rules import Rules
from spades_env.state import PHASE_NAMES, init

MAX_RUNS = 500
MAX_DEPTH = 4


class ReplayError(ValueError):
    """A run path or deal that cannot be shown; one line for the page."""


def resolve(root: Path, rel: str) -> Path:
    """The run at `rel` under `root`, or ReplayError: no absolute path, no `..`, nothing
    that resolves outside the root."""
    if not isinstance(rel, str) or not rel or len(rel) > 500 or "\x00" in rel:
        raise ReplayError("no run folder given")
    parts = Path(rel).parts
    if Path(rel).is_absolute() or ".." in parts or rel.startswith(("/", "\\", "~")):
        raise ReplayError(f"{rel!r} is outside the runs folder")
    root = root.resolve()
    path = (root / rel).resolve()
    if not path.is_relative_to(root):
        raise ReplayError(f"{rel!r} is outside the runs folder")
    if not path.exists():
        raise ReplayError(f"no run folder {rel!r}")
    return path


def _kind(path: Path) -> str | None:
    if path.is_dir() and (path / "log.jsonl").is_file():
        if (path / "game.json").is_file():
            return "web game"
        return "tournament"
    if path.is_file() and path.suffix == ".json" and path.stat().st_size < 5_000_000:
        try:
            with open(path, encoding="utf-8") as f:
                head = f.read(200)
        except OSError:
            return None
        if '"spades-play"' in head:
            return "saved game"
    return None


def list_runs(root: Path) -> list[dict[str, Any]]:
    """The runs under `root` (newest first), at most `MAX_RUNS`, `MAX_DEPTH` levels deep."""
    root = root.resolve()
    found = []
    if not root.is_dir():
        return []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        depth = len(here.relative_to(root).parts)
        if depth >= MAX_DEPTH:
            dirnames[:] = []
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        candidates = [here] + [here / f for f in filenames if f.endswith(".json")]
        for path in candidates:
            kind = _kind(path)
            if kind and path != root:
                found.append(
                    {
                        "path": path.relative_to(root).as_posix(),
                        "kind": kind,
                        "mtime": (path / "log.jsonl" if path.is_dir() else path).stat().st_mtime,
                    }
                )
        if len(found) >= MAX_RUNS:
            break
    found.sort(key=lambda r: -r["mtime"])
    return found


def _rows(path: Path) -> list[dict[str, Any]]:
    """The log rows of a run; a saved `spades play` game's hands as one-side rows."""
    if path.is_file():
        from experiments.play.session import PlayError, load

        try:
            session = load(path)
        except PlayError as exc:
            raise ReplayError(str(exc)) from None
        labels = [
            "human" if p == "human" else p for p in session.setup.players
        ]  # the person and the agents' specs
        return [
            {
                "deal": 0,
                "side": 0,
                "hand": r["hand_no"],
                "seats": labels,
                "teams": labels[: Rules.from_dict(r["rules"]).num_teams],
                "hand_score": [
                    r["scores"][k] - r["scores_before"][k] for k in range(len(r["scores"]))
                ],
                "record": r,
            }
            for r in session.records
        ]
    try:
        return read_rows(path)
    except LogError as exc:
        raise ReplayError(str(exc)) from None


def deal_list(path: Path) -> dict[str, Any]:
    """One line per (deal, hand, pair) of the run: its sides and the points each gained."""
    rows = _rows(path)
    out: dict[tuple, dict[str, Any]] = {}
    for r in rows:
        pair = _pair(r)
        key = (r["deal"], r["hand"], pair)
        entry = out.setdefault(
            key,
            {"deal": r["deal"], "hand": r["hand"], "pair": ",".join(pair), "sides": {}},
        )
        entry["sides"][str(r.get("side", 0))] = r["hand_score"]
    deals = sorted(out.values(), key=lambda e: (e["deal"], e["hand"], e["pair"]))
    return {"deals": deals[:5000], "rows": len(rows)}


def _pair(row: dict[str, Any]) -> tuple[str, ...]:
    try:
        return tuple(pair_of(row))
    except (KeyError, IndexError, TypeError):
        return tuple(row.get("teams", ()))


def start_state(record: dict[str, Any]):
    """The engine state at the start of a record's hand (as `records.replay` builds it)."""
    rules = Rules.from_dict(record["rules"])
    if rules.draw:
        raise ReplayError("two_player games are not replayed here (their hands are drawn)")
    deal = np.array([[[str_to_card(c) for c in hand] for hand in record["deal"]]])
    state = init(
        rules,
        1,
        seeds=np.array([record["seed"]], dtype=np.uint64),
        deals=deal,
        dealer=record["dealer"],
        scores=np.array(record["scores_before"])[None],
        bags=np.array(record["bags_before"])[None],
    )
    state.hand_no[:] = record["hand_no"]
    return state


def _cards(mask: int) -> list[dict[str, Any]]:
    from experiments.play.screen import sort_hand

    return [
        {"id": c, "label": card_label(c), "suit": c // 13 if c < 52 else 4}
        for c in sort_hand(mask)
        if c < NUM_CARDS
    ]


def frames(record: dict[str, Any]) -> list[dict[str, Any]]:
    """The position before the first action and after each one, for the page's stepping.
    A finished trick stays on the table until the next card is led, and the last frame
    is the hand's end (no cards left, the recorded tricks), not the next deal."""
    state = start_state(record)
    p = state.rules.num_players
    current: dict[int, int] = {}  # the trick being played (or just taken): seat -> card

    def snap(action: dict[str, Any] | None, finished: bool) -> dict[str, Any]:
        played = int(state.played[0])
        trick: list[dict[str, Any] | None] = [None] * p
        for seat, c in current.items():
            trick[seat] = _cards(1 << c)[0]
        return {
            "action": action,
            "hands": [[] for _ in range(p)]
            if finished
            else [_cards(int(h) & ~played) for h in state.hands[0].tolist()],
            "trick": trick,
            "tricks_won": record["tricks"] if finished else state.tricks_won[0].tolist(),
            "bids": record["bids"] if finished else state.bids[0].tolist(),
            "phase": "done" if finished else PHASE_NAMES[int(state.phase[0])],
        }

    out = [snap(None, False)]
    for k, (seat, text) in enumerate(record["actions"]):
        phase = PHASE_NAMES[int(state.phase[0])]
        action = str_to_action(text)
        trick_no = int(state.tricks_played[0]) + 1
        info = step(state, [action])
        if phase == "play":
            if len(current) == p:
                current = {}
            current[seat] = action
        label = card_label(action) if 0 <= action < NUM_CARDS and phase == "play" else text
        step_info = {
            "index": k,
            "seat": seat,
            "who": seat_title(seat),
            "phase": phase,
            "text": label,
            "trick": trick_no if phase == "play" else None,
        }
        out.append(snap(step_info, info.finished is not None))
    return out


def first_difference(a: list[list], b: list[list]) -> int | None:
    """The index of the first action where two sides' hands differ (None: identical)."""
    for k, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return k
    return None if len(a) == len(b) else min(len(a), len(b))


def deal_data(path: Path, deal: int, hand: int = 0, pair: str | None = None) -> dict[str, Any]:
    """Both sides of one deal (one pair: `pair`, else the first), ready to step through."""
    rows = [r for r in _rows(path) if r["deal"] == deal and r["hand"] == hand]
    if not rows:
        raise ReplayError(f"no deal {deal} hand {hand} in this run")
    pairs = sorted({_pair(r) for r in rows})
    want = tuple(pair.split(",")) if pair else pairs[0]
    rows = sorted((r for r in rows if _pair(r) == want), key=lambda r: r.get("side", 0))
    if not rows:
        raise ReplayError(f"no pair {pair!r} at deal {deal}")
    sides = []
    for r in rows:
        rec = r["record"]
        sides.append(
            {
                "side": r.get("side", 0),
                "seats": r["seats"],
                "teams": r.get("teams"),
                "bids": rec["bids"],
                "blind": rec["blind"],
                "tricks": rec["tricks"],
                "points": rec["points"],
                "hand_score": r["hand_score"],
                "scores": rec["scores"],
                "scores_before": rec["scores_before"],
                "actions": [list(a) for a in rec["actions"]],
                "frames": frames(rec),
            }
        )
    diff = first_difference(sides[0]["actions"], sides[1]["actions"]) if len(sides) == 2 else None
    return {
        "deal": deal,
        "hand": hand,
        "pair": list(want),
        "pairs": [",".join(p) for p in pairs],
        "sides": sides,
        "first_difference": diff,
    }
