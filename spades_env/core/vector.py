"""The vector env's step, compiled: one call per env step for every sub-env.

`env_step` does, for each game of a packed `State`, what `SpadesVectorEnv.step` does with
default (random) opponents: restart an ended episode, check and play the learner's action,
play the other seats with the keyed random opponent until a learner seat is to act (or
the episode ends), book the finished hand, and write the observation and the action mask
of the seat observed. The rules are core/kernel.py's `step_game`; the opponent's choice
is `keyed_uniform` below and `kernel.random_legal`'s pick, bit for bit the same as
`env_core.random_opponent_actions`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from spades_env.cards import NUM_ACTIONS
from spades_env.core import deal as _deal
from spades_env.core.borrow import borrow
from spades_env.core.kernel import (
    DONE,
    PHASE_BASE,
    _views,
    as_tuple,
    is_legal,
    new_game,
    new_work,
    pick_legal,
    step_game,
)
from spades_env.core.observe import encode_one, offsets_tuple
from spades_env.core.observe_bits import encode_bits_one, layout_tuple
from spades_env.core.spec import (
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
from spades_env.numba_cache import ensure_fresh

ensure_fresh()

UNIFORM_SALT = np.uint64(0x2545F4914F6CDD1D)
HAND_MULT = np.uint64(0xBF58476D1CE4E5B9)
DECISION_MULT = np.uint64(0x94D049BB133111EB)
_SCALE = 2.0**-53

# Columns of `flags` (N, F_COUNT) bool.
F_TERMINATED, F_TRUNCATED, F_ILLEGAL, F_HAND, F_GAME_OVER, F_COUNT = range(6)
# Columns of `nums` (N, 3 + 2P + 3T) int32: hand_no, winner, then P bids, P blind flags,
# P tricks, then T hand scores, T scores, T bags.


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
          hand_limit, reward, flags, nums):  # fmt: skip
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
    flags[g, F_HAND] = True
    flags[g, F_GAME_OVER] = winner >= 0
    nums[g, 0] = hand_no
    nums[g, 1] = winner
    for s in range(p):
        nums[g, 2 + s] = fin8[g, r[L_BIDS] + s]
        nums[g, 2 + p + s] = fin8[g, r[L_BLIND] + s]
        nums[g, 2 + 2 * p + s] = fin8[g, r[L_TRICKS_WON] + s]
    base = 2 + 3 * p
    for j in range(t):
        nums[g, base + j] = points[g, j]
        nums[g, base + t + j] = i32[g, r[L_SCORES] + j]
        nums[g, base + 2 * t + j] = i32[g, r[L_BAGS] + j]
    if episode_hand:
        flags[g, F_TERMINATED] = True
    else:
        if winner >= 0:
            flags[g, F_TERMINATED] = True
        elif hand_limit >= 0 and hand_no + 1 >= hand_limit:
            flags[g, F_TRUNCATED] = True


@njit(cache=True, _nrt=False, nogil=True)  # no reference counting (core/borrow.py)
def env_step(spec, buf, actions, learner_acts, restart, seeds, learner, team, zero_sum,
             episode_hand, hand_limit, illegal_reward, fin, res, points, reward, flags, nums,
             seat, mask, offsets, lay, packed, memo, obs, lo, hi):  # fmt: skip
    """One vector-env step of games `lo` to `hi` - 1 (see the module doc). The games
    share nothing: threads may step disjoint ranges at once (the GIL is released).

    `learner_acts` False: no learner action this call (reset). `restart[g]`: start a fresh
    game with deal key `seeds[g]` (its action is ignored) and observe seat `seat[g]`
    (the caller sets it). Outputs per game: `reward`, `flags` (F_* columns), `nums` (the
    end-of-hand infos where F_HAND), `seat` (the seat observed, updated where a learner
    seat is to act), `mask` (its legal actions as 0/1; all 1 where the episode ended)
    and `obs` (its observation, as bytes): the int16 encoding (block offsets `offsets`),
    or with `packed` the packed row (obs_bits.py, layout `lay`; `memo` holds each game's
    trick planes from step to step, core/observe_bits.py `trick_planes`).
    """
    r, ob, k = as_tuple(spec), offsets_tuple(offsets), layout_tuple(lay)
    memo, obs = borrow(memo), borrow(obs)
    obs16 = obs.view(np.int16)
    buf, u64, i32, i16, i8 = _views(buf)
    fin = borrow(fin)
    fin8, fin32 = fin.view(np.int8), fin.view(np.int32)
    actions, learner, seeds = borrow(actions), borrow(learner), borrow(seeds)
    restart = borrow(restart)
    res, points, reward = borrow(res), borrow(points), borrow(reward)
    flags, nums, seat = borrow(flags), borrow(nums), borrow(seat)
    mask = borrow(mask)
    row = r[R_ROW]
    work = new_work()
    for g in range(lo, hi):
        nums[g, 1] = -1  # no winner (where no hand ended)
        a = -1  # the learner's action to play first, if any
        if restart[g]:
            for j in range(row):
                buf[g, j] = 0
            for c in range(54):
                i8[g, r[L_STOCK] + c] = -1
            new_game(r, u64, i32, i16, i8, g, seeds[g], work)
        elif learner_acts:
            a = actions[g]
            if a >= mask.shape[1] or not is_legal(r, u64, i8, g, a):
                flags[g, F_ILLEGAL] = True
                flags[g, F_TERMINATED] = True
                reward[g] = illegal_reward
                a = -1
        over = flags[g, F_TERMINATED]
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
                      episode_hand, hand_limit, reward, flags, nums)  # fmt: skip
                over = flags[g, F_TERMINATED] or flags[g, F_TRUNCATED]
            a = -1
        row_mask = mask[g].view(np.uint64)
        if over:
            for j in range(row_mask.size):
                row_mask[j] = _BYTE_ONES
        else:
            phase = i8[g, r[L_PHASE]]
            if phase == DONE:
                legal, base = np.uint64(0), 0
            else:
                legal, base = u64[g, r[L_LEGAL]], PHASE_BASE[phase]
            mask_words(legal, base, row_mask)
        if packed:
            encode_bits_one(r, k, u64, i32, i8, g, seat[g], obs[g].view(np.uint64), memo[g])
        else:
            encode_one(r, ob, u64, i32, i8, g, seat[g], obs16, g)
