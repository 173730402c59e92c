"""numba evaluation of PIMC's card-play decisions: every world x action x rollout played
to the end of the hand in one compiled loop, with no engine `State` per game.

`play_rollouts` returns the same (K * R, A) values as `PIMCAgent._roll` does with the
engine in card play (RULES.md §3): game `(world * A + action) * R + rollout` plays the
action with the world's hands, then the rest of the hand by the greedy or random policy
of `agents.kernels.play.play_out_inline` (differential-tested against the engine), in that
game order, so that the random policy draws the same numbers from a stream keyed once
per call as `pimc.rollout_values` keys it (`agents.kernels.streams`); or by the
heuristic's card play (`agents.heuristic.play.heuristic_game`, tested against
`HeuristicAgent`), which draws none. The hand is scored as `pimc.hand_points` scores it
(RULES.md §4, bag penalty included). The loops are compiled without numba's reference
counting (`search_kernel.jit_unref`); the bidding decisions' rollouts play whole engine
games out by `heuristic_play.play_out_state`.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.heuristic.play import decision_table, heuristic_game
from agents.kernels.compile import jit_unref
from agents.kernels.play import (
    RANK_OF_CARD,
    SUIT_CARDS,
    SUIT_OF_CARD,
    play_card,
    play_out_inline,
)
from agents.kernels.streams import new_stream
from agents.montecarlo.common import margins
from spades_env.cards import NUM_CARDS
from spades_env.core.borrow import borrow, stack_array
from spades_env.observation import SeatView
from spades_env.rules import MAX_PLAYERS
from spades_env.scoring import apply_bags, score_hand
from spades_env.state import deck_mask

HEURISTIC = 2  # policy code next to search_kernel's RANDOM and GREEDY


@jit_unref
def _roll_play(
    worlds, actions, reps, trick0, won0, leader0, trick_size0, lead0, broken0,
    tricks_played0, hand_size, two_clubs, policy, partnerships, out, stream, trump,
):  # fmt: skip
    """The greedy or random policy: game i = (world * A + action) * reps + rollout.
    Every array is the caller's or on the stack (`search_kernel.jit_unref`)."""
    worlds, actions, trick0, won0 = borrow(worlds), borrow(actions), borrow(trick0), borrow(won0)
    out, stream = borrow(out), borrow(stream)
    k, p = worlds.shape
    hands = stack_array(MAX_PLAYERS, np.int64)[:p]
    trick = stack_array(MAX_PLAYERS, np.int64)[:p]
    seq = stack_array(NUM_CARDS, np.int64)
    seat = (leader0 + trick_size0) % p
    i = 0
    for w in range(k):
        for a in range(actions.size):
            for _ in range(reps):
                for s in range(p):
                    hands[s] = worlds[w, s]
                    trick[s] = trick0[s]
                    out[i, s] = won0[s]
                won = out[i]
                leader, trick_size, lead, broken, tricks_played = play_card(
                    hands, trick, won, seat, actions[a], leader0, trick_size0, lead0,
                    broken0, tricks_played0, trump,
                )  # fmt: skip
                play_out_inline(
                    hands, trick, leader, trick_size, lead, broken, won, tricks_played,
                    hand_size, two_clubs, policy, partnerships, trump, seq, stream,
                )  # fmt: skip
                i += 1


@jit_unref
def _roll_heuristic(
    worlds, actions, reps, trick0, won0, leader0, trick_size0, lead0, broken0,
    tricks_played0, hand_size, two_clubs, out, played0, voids0, bids, deck, seen, t,
    rank, suit, suit_mask,
):  # fmt: skip
    """The heuristic's card play (`heuristic_play`), the games in the same order; `t` its
    `_decision_table`. Every array is the caller's or on the stack
    (`search_kernel.jit_unref`)."""
    worlds, actions, trick0, won0 = borrow(worlds), borrow(actions), borrow(trick0), borrow(won0)
    out, voids0, bids, seen, t = borrow(out), borrow(voids0), borrow(bids), borrow(seen), borrow(t)
    rank, suit, suit_mask = borrow(rank), borrow(suit), borrow(suit_mask)
    k, p = worlds.shape
    hands = stack_array(MAX_PLAYERS, np.int64)[:p]
    trick = stack_array(MAX_PLAYERS, np.int64)[:p]
    voids = stack_array(MAX_PLAYERS, np.int64)[:p]
    i = 0
    for w in range(k):
        for a in range(actions.size):
            for _ in range(reps):
                for s in range(p):
                    hands[s] = worlds[w, s]
                    trick[s] = trick0[s]
                    voids[s] = voids0[s]
                    out[i, s] = won0[s]
                heuristic_game(
                    hands, played0, trick, voids, bids, out[i], leader0, trick_size0, lead0,
                    broken0, tricks_played0, actions[a], deck, seen, t, two_clubs, rank, suit,
                    suit_mask,
                )  # fmt: skip
                i += 1


def _seen(view: SeatView, g: int) -> npt.NDArray[np.int64]:
    """(P,) RULES.md §6 two_player: the cards each seat looked at and discarded, as far as
    the seat deciding knows (its own; `state_from_world` does the same)."""
    seen = np.zeros(view.rules.num_players, dtype=np.int64)
    seen[int(view.seat[g])] = int(view.seen[g])
    return seen


def play_rollouts(
    view: SeatView,
    g: int,
    worlds: npt.NDArray[np.uint64],
    actions: list[int],
    reps: int,
    policy: int,
    rng: np.random.Generator,
    objective: str,
) -> npt.NDArray[np.float64]:
    """(K * reps, A) values to the seat's team of each card in each world (module doc)."""
    rules = view.rules
    p = rules.num_players
    k, a = len(worlds), len(actions)
    won = np.empty((k * a * reps, p), dtype=np.int64)
    last_card = (
        int(view.tricks_played[g]) == rules.hand_size - 1 and int(view.trick_size[g]) == p - 1
    )
    stream = np.zeros(2, dtype=np.uint64)
    if not last_card and policy != HEURISTIC:  # a live game after the action: random draws
        stream = new_stream(rng)
    position = (
        np.asarray(worlds, dtype=np.uint64).astype(np.int64), np.asarray(actions, dtype=np.int64),
        reps, view.trick[g].astype(np.int64), view.tricks_won[g].astype(np.int64),
        int(view.leader[g]), int(view.trick_size[g]), int(view.lead_suit[g]),
        bool(view.broken[g]), int(view.tricks_played[g]), rules.hand_size,
        rules.first_lead == "two_of_clubs",
    )  # fmt: skip
    if policy == HEURISTIC:
        table = decision_table(rules, int(view.trump[g]))
        _roll_heuristic(
            *position, won, int(view.played[g]), view.voids[g].astype(np.int64),
            view.bids[g].astype(np.int64), int(deck_mask(rules)), _seen(view, g), table,
            RANK_OF_CARD, SUIT_OF_CARD, SUIT_CARDS,
        )  # fmt: skip
    else:
        _roll_play(*position, policy, rules.partnerships, won, stream, int(view.trump[g]))
    n = won.shape[0]
    # the view's rows have the State's dtypes (`state_from_world` copies them over)
    rows = (view.bids, view.blind, view.scores, view.bags)
    bids, blind, scores, bags = (np.repeat(x[g : g + 1], n, axis=0) for x in rows)
    hs = score_hand(rules, bids, blind, won)
    _, _, penalty = apply_bags(rules, scores + hs.points, bags + hs.bags)
    pts = hs.points - penalty
    team = rules.team_of(int(view.seat[g]))
    value = margins(pts, team) if objective == "margin" else pts[:, team].astype(np.float64)
    return value.reshape(k, a, reps).transpose(0, 2, 1).reshape(k * reps, a)
