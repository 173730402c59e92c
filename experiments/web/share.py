"""Replays to share: a run's hands exported as hand records, a record file imported and
checked action by action, and the showdown of a hand whose end no play can change.

- **Export** (`export_records`): the hand records (`spades_env.records`, the format every
  log row carries in its `record` field, which `records.replay` plays again) of a run, or
  of one deal of it, as JSON Lines: one record a line.
- **Import** (`import_records`): a file of hand records as the export writes them, or of
  tournament log rows (`experiments.tournament.results_log`: a record in each row's
  `record`), or one record, or a JSON list of them. Each hand is played again through
  the engine action by action: the first action that is not its seat's turn, that the
  rules forbid, or that comes after the hand ended is a `ShareError` naming the hand, the
  action's number, the seat, the action and the rule (RULES.md's section where the
  engine names one); so is a recorded outcome (bids, tricks, points, scores) the rules do
  not give. A good file comes back as deals the replay page steps through.
- **Showdown** (`claims`): at each position of the play with at most `CLAIM_TRICKS`
  tricks left, whether every way of playing the rest ends with the same tricks for every
  seat (found by trying every legal card, equal cards once): then the outcome is proven
  whatever anyone plays, and the page may claim the rest of the hand.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from agents.dd.position import Position, PositionError, check_rules
from agents.dd.solver import equivalent_groups
from experiments.table.words import seat_title
from experiments.web.replay import RECORD_ERRORS as _RECORD_ERRORS
from experiments.web.replay import RECORD_FIELDS as _RECORD_FIELDS
from experiments.web.replay import ReplayError, frames, start_state
from experiments.web.replay import read_log as _read
from experiments.web.replay import type_name as _type
from spades_env.cards import str_to_action
from spades_env.engine import IllegalActionError, step
from spades_env.records import hand_records
from spades_env.rules import Rules
from spades_env.state import PLAY

#: The largest file imported (bytes): a whole game of hand records is well under it.
MAX_IMPORT_BYTES = 2_000_000
#: Hands one import may hold.
MAX_IMPORT_HANDS = 200
#: Tricks left at most for a showdown (every line of play is tried).
CLAIM_TRICKS = 4
#: The outcome fields of a record that the replay must give again.
_OUTCOME = ("bids", "blind", "tricks", "points", "penalty", "scores", "bags")


class ShareError(ReplayError):
    """A record file that cannot be imported, or a run that cannot be exported; one line."""


# ----------------------------------------------------------------------------- export
def export_records(
    path: Path, deal: int | None = None, hand: int | None = None, pair: str | None = None
) -> str:
    """The hand records of the run at `path` (of one deal and hand, one pair's sides,
    where `deal` is given) as JSON Lines."""
    log = _read(path)
    rows = [r.row for r in log.rows]
    if deal is not None:
        rows = [r for r in rows if r["deal"] == deal and r["hand"] == (hand or 0)]
        if pair:
            rows = [r for r in rows if ",".join(r.get("teams", [])) == pair or _pair(r) == pair]
        if not rows:
            raise ShareError(f"no deal {deal} hand {hand or 0} in this run")
    rows.sort(key=lambda r: (r["deal"], r["hand"], r.get("side", 0)))
    return "".join(json.dumps(r["record"], separators=(",", ":")) + "\n" for r in rows)


def _pair(row: dict[str, Any]) -> str:
    from experiments.web.replay import log_pair as pair_of

    return ",".join(pair_of(row))


# ----------------------------------------------------------------------------- import
def _items(text: str) -> list[Any]:
    """The JSON values of a file: one value (a list is its items), or one a line."""
    try:
        whole = json.loads(text)
    except (ValueError, RecursionError):
        whole = None
    else:
        return whole if isinstance(whole, list) else [whole]
    items = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(json.loads(line))
        except (ValueError, RecursionError) as exc:
            msg = str(exc).splitlines()[0][:80]
            raise ShareError(f"line {number} is not JSON ({msg})") from None
    return items


def _check_fields(rec: Any) -> None:
    if not isinstance(rec, dict):
        raise ShareError(f"is {_type(rec)}, not a hand record (a JSON object)")
    for key, ok, kind in _RECORD_FIELDS:
        if key not in rec:
            raise ShareError(f"lacks the field {key!r}")
        if not ok(rec[key]):
            raise ShareError(f"its {key!r} is {_type(rec[key])}, not {kind}")


def check_record(rec: dict[str, Any]) -> None:
    """Play the record again action by action (ShareError at the first wrong one), and
    check its outcome against the engine's."""
    _check_fields(rec)
    try:
        rules = Rules.from_dict(rec["rules"])
        if rules.draw:
            raise ShareError("two_player hands (drawn from a stock) are not imported")
        state = start_state(rec)
    except ShareError:
        raise
    except _RECORD_ERRORS as exc:
        raise ShareError(f"its deal or rules are not valid ({str(exc)[:120]})") from None
    finished = None
    for k, (seat, text) in enumerate(rec["actions"]):
        where = f"action {k + 1} ({seat_title(seat) if 0 <= seat < 5 else seat} {text})"
        if finished is not None:
            raise ShareError(f"{where}: the hand already ended at action {k}")
        try:
            action = str_to_action(text)
        except (ValueError, KeyError):
            raise ShareError(f"{where}: not an action") from None
        if int(state.to_act[0]) != seat:
            raise ShareError(f"{where}: it is {seat_title(int(state.to_act[0]))}'s turn")
        try:
            info = step(state, [action])
        except IllegalActionError as exc:
            raise ShareError(f"{where}: {exc.reason}") from None
        finished = info.finished
    if finished is None:
        raise ShareError(f"the hand does not end: {len(rec['actions'])} actions")
    played = hand_records(rules, finished)[0]
    for key in _OUTCOME:
        if key in rec and rec[key] != played[key]:
            raise ShareError(f"its {key} are {rec[key]}, but the actions give {played[key]}")


def import_records(text: str | bytes) -> dict[str, Any]:
    """A record file checked and made ready to step through: {"hands": [deal, ...]} with
    each deal as `replay.deal_data` gives one side; ShareError naming the first wrong
    hand and action."""
    if len(text) > MAX_IMPORT_BYTES:
        raise ShareError(f"the file is over {MAX_IMPORT_BYTES:,} bytes")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ShareError("the file is not UTF-8 text") from None
    items = _items(text)
    if not items:
        raise ShareError("the file holds no hand record")
    if len(items) > MAX_IMPORT_HANDS:
        raise ShareError(f"the file holds {len(items)} hands, over {MAX_IMPORT_HANDS}")
    hands = []
    for n, item in enumerate(items, 1):
        rec = item.get("record") if isinstance(item, dict) and "record" in item else item
        try:
            check_record(rec)
            stepped = frames(rec)
        except ReplayError as exc:
            raise ShareError(f"hand {n} of the file: {exc}") from None
        except _RECORD_ERRORS as exc:
            raise ShareError(f"hand {n} of the file does not replay ({str(exc)[:120]})") from None
        seats = item.get("seats") if isinstance(item, dict) and "record" in item else None
        p = len(rec["bids"])
        side = {
            "side": 0,
            "seats": seats if seats else [seat_title(s) for s in range(p)],
            "teams": None,
            "hand_score": [a - b for a, b in zip(rec["scores"], rec["scores_before"], strict=True)],
            **{k: rec[k] for k in ("bids", "blind", "tricks", "points", "scores")},
            "scores_before": rec["scores_before"],
            "actions": [list(a) for a in rec["actions"]],
            "frames": stepped,
            "record": rec,
        }
        hands.append(
            {"deal": n, "hand": rec["hand_no"], "pair": [], "pairs": [], "sides": [side],
             "first_difference": None}
        )  # fmt: skip
    return {"hands": hands}


# ----------------------------------------------------------------------------- showdown
@lru_cache(maxsize=200_000)
def _outcomes(pos: Position) -> frozenset[tuple[int, ...]]:
    """Every set of tricks per seat the rest of the hand can end with from `pos` (the
    tricks won so far not included), trying every legal card, equal cards once."""
    if pos.tricks_left == 0:
        return frozenset({(0, 0, 0, 0)})
    out: set[tuple[int, ...]] = set()
    for group in equivalent_groups(pos):
        child = pos.play(group[0])
        gained = [0, 0, 0, 0]
        if not child.trick and child.tricks_won != pos.tricks_won:
            gained[child.leader] = 1
        base = Position(child.hands, child.leader, child.trick, child.broken)
        for rest in _outcomes(base):
            out.add(tuple(g + r for g, r in zip(gained, rest, strict=True)))
        if len(out) > 1:
            break  # not proven: no need to know more
    return frozenset(out)


def claims(record: dict[str, Any]) -> list[dict[str, Any] | None]:
    """For each frame of `frames(record)`: the proven end of the hand where every line
    of play gives the same tricks per seat with at most CLAIM_TRICKS tricks left, else
    None. A claim holds the tricks each seat takes of the rest and in all."""
    rules = Rules.from_dict(record["rules"])
    try:
        check_rules(rules)
    except PositionError:
        return [None] * (len(record["actions"]) + 1)
    state = start_state(record)
    out: list[dict[str, Any] | None] = []

    def claim() -> dict[str, Any] | None:
        if int(state.phase[0]) != PLAY:
            return None
        pos = Position.from_state(state)
        if pos.tricks_left > CLAIM_TRICKS:
            return None
        fresh = Position(pos.hands, pos.leader, pos.trick, pos.broken, (0, 0, 0, 0))
        ends = _outcomes(fresh)
        if len(ends) != 1:
            return None
        (rest,) = ends
        won = state.tricks_won[0].tolist()
        return {
            "tricks_left": pos.tricks_left,
            "rest": list(rest),
            "tricks": [w + r for w, r in zip(won, rest, strict=True)],
        }

    out.append(claim())
    for _, text in record["actions"]:
        action = str_to_action(text)
        info = step(state, [action])
        out.append(None if info.finished is not None else claim())
    return out
