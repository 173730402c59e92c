"""The vector env's step, compiled: one call per env step for every sub-env.

`env_step` does, for each game of a packed `State`, what `SpadesVectorEnv.step` does with
default (random) opponents: restart an ended episode, check and play the learner's action,
play the other seats with the keyed random opponent until a learner seat is to act (or
the episode ends), book the finished hand, and write the observation and the action mask
of the seat observed. The rules are core/kernel.py's `step_game`; the opponent's choice
is `keyed_uniform` below and `kernel.random_legal`'s pick, bit for bit the same as
`env_common.random_opponent_actions`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.cards import NUM_ACTIONS
from spades_env.core import deal as _deal
from spades_env.core.borrow import borrow
from spades_env.core.compile import ensure_fresh
from spades_env.core.kernel import (
    DONE,
    PHASE_BASE,
    as_tuple,
    is_legal,
    new_game,
    new_work,
    pick_legal,
    row_views,
    step_game,
)
from spades_env.core.observe import encode_one, offsets_tuple
from spades_env.core.observe_bits import encode_bits_one, layout_tuple
from spades_env.core.rules_vector import (
    L_BAGS,
    L_BIDS,
    L_BLIND,
    L_HAND_NO,
    L_HISTORY_LEN,
    L_LEGAL,
    L_PHASE,
    L_SCORES,
    L_SEED,
    L_STOCK,
    L_TO_ACT,
    L_TRICKS_WON,
    R_P,
    R_ROW,
    R_T,
)

ensure_fresh()

UNIFORM_SALT = np.uint64(0x2545F4914F6CDD1D)
HAND_MULT = np.uint64(0xBF58476D1CE4E5B9)
DECISION_MULT = np.uint64(0x94D049BB133111EB)
_SCALE = 2.0**-53

#: episode e of a sub-env with counter key k is dealt with key splitmix64(k ^ e * this)
EPISODE_MULT = np.uint64(0xD6E8FEB86659FD93)

# Rows of `flags` (F_COUNT, N) bool: each a contiguous (N,) array the env hands out.
F_TERMINATED, F_TRUNCATED, F_ILLEGAL, F_HAND, F_GAME_OVER, F_COUNT = range(6)
# Columns of `nums8` (N, 3P + 1) int8: P bids, P blind flags, P tricks, the winner; of
# `nums32` (N, 1 + 3T) int32: hand_no, T hand scores, T scores, T bags.


@njit(cache=True)
def keyed_uniform(seed, hand_no, decision):
    """A uniform in [0, 1) keyed by (game seed, hand, decision of the hand)."""
    x = (
        (np.uint64(seed) ^ UNIFORM_SALT)
        + np.uint64(hand_no) * HAND_MULT
        + np.uint64(decision) * DECISION_MULT
    )
    return float(_deal.splitmix64(x) >> np.uint64(11)) * _SCALE


assert NUM_ACTIONS % 8 == 0  # mask_words: a mask row is whole uint64 words
_BYTE_ONES = np.uint64(0x0101010101010101)
_BIT_OF_BYTE = np.uint64(0x8040201008040201)  # byte i keeps bit i
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)


@njit(cache=True, inline="always")
def mask_words(legal, base, out):
    """The 0/1 action mask of legal bits `legal` (bit i = action base + i) as int8 bytes,
    eight actions to a uint64 word of `out`: each byte of actions is spread to eight
    bytes by one multiplication, with no loop over the legal actions."""
    for k in range(out.size):
        shift = 8 * k - base  # bit of `legal` that is action 8k
        if shift >= 64 or shift <= -8:
            byte = np.uint64(0)
        elif shift >= 0:
            byte = (legal >> np.uint64(shift)) & np.uint64(0xFF)
        else:
            byte = (legal << np.uint64(-shift)) & np.uint64(0xFF)
        spread = (byte * _BYTE_ONES) & _BIT_OF_BYTE  # byte i: bit i of `byte` or 0
        out[k] = ((spread + _LOW7) >> np.uint64(7)) & _BYTE_ONES


@njit(cache=True, inline="always")
def _book(r, u64, i32, i8, fin8, fin32, res, points, g, team, zero_sum, episode_hand,
          hand_limit, reward, flags, nums8, nums32):  # fmt: skip
    """A hand of game `g` ended: its reward, the end-of-hand infos, the episode's end."""
    p, t = r[R_P], r[R_T]
    total = 0
    for j in range(t):
        total += points[g, j]
    own = points[g, team]
    if zero_sum:
        reward[g] += float(own) - (total - own) / (t - 1)
    else:
        reward[g] += float(own)
    hand_no = fin32[g, r[L_HAND_NO]]
    winner = res[g, 3 * t]
    flags[F_HAND, g] = True
    flags[F_GAME_OVER, g] = winner >= 0
    for s in range(p):
        nums8[g, s] = fin8[g, r[L_BIDS] + s]
        nums8[g, p + s] = fin8[g, r[L_BLIND] + s]
        nums8[g, 2 * p + s] = fin8[g, r[L_TRICKS_WON] + s]
    nums8[g, 3 * p] = winner
    nums32[g, 0] = hand_no
    for j in range(t):
        nums32[g, 1 + j] = points[g, j]
        nums32[g, 1 + t + j] = i32[g, r[L_SCORES] + j]
        nums32[g, 1 + 2 * t + j] = i32[g, r[L_BAGS] + j]
    if episode_hand:
        flags[F_TERMINATED, g] = True
    else:
        if winner >= 0:
            flags[F_TERMINATED, g] = True
        elif hand_limit >= 0 and hand_no + 1 >= hand_limit:
            flags[F_TRUNCATED, g] = True


@njit(cache=True, _nrt=False, nogil=True)  # no reference counting (core/borrow.py)
def env_step(spec, buf, actions, learner_acts, ended, base, episode, first_seat, learner,
             team, zero_sum, episode_hand, hand_limit, illegal_reward, fin, res, points,
             reward, flags, nums8, nums32, seat, seat_out, mask, offsets, lay, packed, memo,
             obs, lo, hi):  # fmt: skip
    """One vector-env step of games `lo` to `hi` - 1 (see the module doc); returns the
    number of hands that ended and of illegal learner actions. The games share nothing:
    threads may step disjoint ranges at once (the GIL is released).

    `learner_acts` False: no learner action this call (reset). `ended[g]` (in and out):
    the episode ended in the last step; with `learner_acts`, its next episode starts
    (NEXT_STEP autoreset): `episode[g]` counts it, its deal key comes from its counter key
    `base[g]` (`EPISODE_MULT`) and it is seen from `first_seat`; its action is ignored.
    Every output row of the range is written: `reward`, `flags` (F_* rows), `nums8` and
    `nums32` (the end-of-hand infos where F_HAND, else 0 and winner -1; F_GAME_OVER,
    `nums8` and `nums32` are left as they were if no hand of the range ended: the caller
    hands them out only when some hand did, and then clears the other ranges with
    `clear_infos`), `seat` (the seat
    observed, kept from step to step; updated where a learner seat is to act) and its
    copy `seat_out`, `mask` (its legal actions as 0/1; all 0 where the episode ended)
    and `obs` (its observation, as bytes): the int16 encoding (block offsets `offsets`),
    or with `packed` the packed row (obs_bits.py, layout `lay`; `memo` holds each game's
    trick planes from step to step, core/observe_bits.py `trick_planes`).
    """
    r, ob, k = as_tuple(spec), offsets_tuple(offsets), layout_tuple(lay)
    memo, obs = borrow(memo), borrow(obs)
    obs16 = obs.view(np.int16)
    buf, u64, i32, i16, i8 = row_views(buf)
    fin = borrow(fin)
    fin8, fin32 = fin.view(np.int8), fin.view(np.int32)
    actions, learner, ended = borrow(actions), borrow(learner), borrow(ended)
    base, episode = borrow(base), borrow(episode)
    res, points, reward = borrow(res), borrow(points), borrow(reward)
    flags, nums8, nums32 = borrow(flags), borrow(nums8), borrow(nums32)
    seat, seat_out, mask = borrow(seat), borrow(seat_out), borrow(mask)
    row = r[R_ROW]
    work = new_work()
    hands = illegal = 0
    for g in range(lo, hi):
        # F_GAME_OVER, nums8 and nums32 are written where a hand ends (`_book`), and the
        # other rows after the loop, only if one did: most steps end no hand
        reward[g] = 0.0
        flags[F_TERMINATED, g] = False
        flags[F_TRUNCATED, g] = False
        flags[F_ILLEGAL, g] = False
        flags[F_HAND, g] = False
        a = -1  # the learner's action to play first, if any
        if learner_acts and ended[g]:  # the next episode
            episode[g] += 1
            key = _deal.splitmix64(base[g] ^ (np.uint64(episode[g]) * EPISODE_MULT))
            seat[g] = first_seat
            for j in range(row):
                buf[g, j] = 0
            for c in range(54):
                i8[g, r[L_STOCK] + c] = -1
            new_game(r, u64, i32, i16, i8, g, key, work)
        elif learner_acts:
            a = actions[g]
            if a >= mask.shape[1] or not is_legal(r, u64, i8, g, a):
                flags[F_ILLEGAL, g] = True
                flags[F_TERMINATED, g] = True
                reward[g] = illegal_reward
                illegal += 1
                a = -1
        over = flags[F_TERMINATED, g]
        while True:  # one call site of step_game: it is inlined, and compiled, once
            if a < 0:  # the keyed random opponent, until a learner seat is to act
                if over or i8[g, r[L_PHASE]] == DONE:
                    break
                to_act = i8[g, r[L_TO_ACT]]
                if learner[to_act]:
                    seat[g] = to_act
                    break
                u = keyed_uniform(u64[g, r[L_SEED]], i32[g, r[L_HAND_NO]], i16[g, r[L_HISTORY_LEN]])
                a = pick_legal(u64[g, r[L_LEGAL]], i8[g, r[L_PHASE]], u)
            if step_game(r, buf, u64, i32, i16, i8, g, a, fin, res, points):
                _book(r, u64, i32, i8, fin8, fin32, res, points, g, team, zero_sum,
                      episode_hand, hand_limit, reward, flags, nums8, nums32)  # fmt: skip
                hands += 1
                over = flags[F_TERMINATED, g] or flags[F_TRUNCATED, g]
            a = -1
        row_mask = mask[g].view(np.uint64)
        if over:  # as a SpadesEnv whose episode ended: no legal action (the next is ignored)
            for j in range(row_mask.size):
                row_mask[j] = 0
        else:
            phase = i8[g, r[L_PHASE]]
            if phase == DONE:
                legal, first = np.uint64(0), 0
            else:
                legal, first = u64[g, r[L_LEGAL]], PHASE_BASE[phase]
            mask_words(legal, first, row_mask)
        if packed:
            encode_bits_one(r, k, u64, i32, i8, g, seat[g], obs[g].view(np.uint64), memo[g])
        else:
            encode_one(r, ob, u64, i32, i8, g, seat[g], obs16, g)
        ended[g] = over
        seat_out[g] = seat[g]
    if hands:
        clear_infos(flags, nums8, nums32, lo, hi)
    return hands, illegal


@njit(cache=True, _nrt=False, nogil=True)
def clear_infos(flags, nums8, nums32, lo, hi):
    """The end-of-hand infos of games `lo` to `hi` - 1 where no hand ended (F_HAND
    False): F_GAME_OVER False, nums8 and nums32 0, the winner -1."""
    flags, nums8, nums32 = borrow(flags), borrow(nums8), borrow(nums32)
    for g in range(lo, hi):
        if not flags[F_HAND, g]:
            flags[F_GAME_OVER, g] = False
            for j in range(nums8.shape[1]):
                nums8[g, j] = 0
            nums8[g, nums8.shape[1] - 1] = -1
            for j in range(nums32.shape[1]):
                nums32[g, j] = 0
