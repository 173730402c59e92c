"""The compact observation: the RL encoding packed into bit-planes (``obs_format="bits"``).

The default observation (`observation.encode`, int16, 775 values under the standard
rules) spends two bytes on each 0/1 cell. The packed row holds exactly the same
information in about a tenth of the bytes (160 under the standard rules), so the vector
env writes and copies far less; the learner turns it back into the encoding, as int16 or
straight into float tensors, with `unpack_bits` (numpy) or `unpack_bits_torch` (torch).
``unpack_bits(encode_bits(state, seats), rules) == encode(state, seats)`` on every
preset (tests/env/test_obs_bits.py).

Format (version `BITS_VERSION`), one row per game: ``(8 * W,)`` uint8, the bytes of W
little-endian uint64 words (view a row as ``np.uint64`` to read the words); the blocks
are those of `observation.obs_blocks`, seats and teams relative to the observer:

===============  =========  ===========================================================
words            count      content
===============  =========  ===========================================================
card words       1 per row  one word per 54-slot row of a card block, bit c = card slot
                 of C       c: hand, played_by (r = 0..P-1), table (r = 0..P-1),
                            passed, received, open_hands (r = 1..P-1, RULES.md §6
                            open_hands only), looking and seen (two_player only)
trick planes     TB         bit c of plane j = bit j of ``played_trick[c]`` (the 1-based
                            trick of card c, 0 unplayed); TB = bit length of the hand
                            size (4 under the standard rules)
flag words       ceil(F/64) the F cells of the 0/1 blocks, one bit each, in the
                            encoding's order from bit 0: bids, blind, dealer, leader,
                            to_act, lead_suit, broken, phase, voids, trump
int words        ceil(I/4)  the I integer cells as int16, four to a word, in the
                            encoding's order: tricks_won, scores, bags, hand_no, stock
===============  =========  ===========================================================

The words are in that order, except that the trick planes follow the played_by words
(the encoding's block order). `bits_layout(rules)` gives W and where each block starts.
Bits and int16 slots that hold no cell are 0.

Version history: 1 the first packed format (observation encoding version 4).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from spades_env.cards import NUM_CARDS
from spades_env.core.layout import (
    CARD_BLOCKS,
    FLAG_BLOCKS,
    INT_BLOCKS,
    KERNEL_KEYS,
    obs_blocks,
    obs_size,
)
from spades_env.rules import Rules
from spades_env.state import State, seat_rows

BITS_VERSION = 1


@dataclass(frozen=True)
class BitsLayout:
    """Where each cell of the encoding sits in the packed row of some rules."""

    words: int  # W: uint64 words per row
    nbytes: int  # 8 * W
    planes: int  # trick planes
    kernel: npt.NDArray[np.int64]  # (len(KERNEL_KEYS),) the offsets above
    # unpacking: cell dst[k] of the encoding is bit src[k] of the row (bits numbered
    # from bit 0 of word 0), or the int16 slot int_src[k]
    bit_dst: npt.NDArray[np.int64]
    bit_src: npt.NDArray[np.int64]
    trick_dst: npt.NDArray[np.int64]  # (C,) the played_trick cells
    trick_src: npt.NDArray[np.int64]  # (C, planes) their bits, plane j worth 2**j
    int_dst: npt.NDArray[np.int64]
    int_src: npt.NDArray[np.int64]


@functools.cache
def bits_layout(rules: Rules) -> BitsLayout:
    """The packed layout of `rules` (see the module doc)."""
    c = NUM_CARDS
    planes = max(1, int(rules.hand_size).bit_length())
    start, size = {}, {}
    i = 0
    for name, n in obs_blocks(rules):
        start[name], size[name] = i, n
        i += n
    words, k = 0, {}
    bit_dst, bit_src, int_dst, int_src = [], [], [], []
    for name, n in obs_blocks(rules):
        if name in CARD_BLOCKS:
            k["w_" + name] = words
            for row in range(n // c):
                bit_dst += range(start[name] + row * c, start[name] + (row + 1) * c)
                bit_src += range((words + row) * 64, (words + row) * 64 + c)
            words += n // c
        elif name == "played_trick":
            k["w_trick"], k["planes"] = words, planes
            words += planes
    flags = [name for name, _ in obs_blocks(rules) if name in FLAG_BLOCKS]
    k["flag_word"] = words
    bit = words * 64
    for name in FLAG_BLOCKS:
        k["f_" + name] = bit
        if name in flags:
            bit_dst += range(start[name], start[name] + size[name])
            bit_src += range(bit, bit + size[name])
            bit += size[name]
    words = -(-bit // 64)
    assert words - k["flag_word"] <= 3  # the encoder keeps the flags in three registers
    k["int_word"] = words
    slot = words * 4
    for name in INT_BLOCKS:
        k["i_" + name] = slot
        int_dst += range(start[name], start[name] + size[name])
        int_src += range(slot, slot + size[name])
        slot += size[name]
    words = -(-slot // 4)
    k["words"] = words
    trick_dst = np.arange(start["played_trick"], start["played_trick"] + c)
    trick_src = (k["w_trick"] + np.arange(planes))[None, :] * 64 + np.arange(c)[:, None]
    assert sorted(bit_dst + int_dst + list(trick_dst)) == list(range(obs_size(rules)))
    return BitsLayout(
        words=words,
        nbytes=8 * words,
        planes=planes,
        kernel=np.array([k[key] for key in KERNEL_KEYS], dtype=np.int64),
        bit_dst=np.array(bit_dst, dtype=np.int64),
        bit_src=np.array(bit_src, dtype=np.int64),
        trick_dst=trick_dst,
        trick_src=trick_src,
        int_dst=np.array(int_dst, dtype=np.int64),
        int_src=np.array(int_src, dtype=np.int64),
    )


def bits_size(rules: Rules) -> int:
    """Bytes of one packed row of `rules`."""
    return bits_layout(rules).nbytes


def encode_bits(state: State, seats: npt.ArrayLike | None = None) -> npt.NDArray[np.uint8]:
    """(B, bits_size) uint8: the packed encoding for `seats` (default: the seat to act)."""
    from spades_env.core.observe_bits import encode_bits_rows
    from spades_env.core.rules_vector import rules_vector

    b = state.batch_size
    # the compiled encoder indexes by seat unchecked: a seat off the table is refused here
    seat = state.to_act.astype(np.int64) if seats is None else seat_rows(state.rules, seats, b)
    lay = bits_layout(state.rules)
    out = np.empty((b, lay.nbytes), dtype=np.uint8)
    encode_bits_rows(rules_vector(state.rules), lay.kernel, state.buffer, seat, out)
    return out


def _check(shape: tuple[int, ...], lay: BitsLayout) -> None:
    if len(shape) != 2 or shape[1] != lay.nbytes:
        raise ValueError(
            f"packed observations of these rules are (N, {lay.nbytes}) uint8; got shape {shape}"
        )


def unpack_bits(
    bits: npt.ArrayLike, rules: Rules, dtype: npt.DTypeLike = np.int16
) -> npt.NDArray[Any]:
    """(N, obs_size) encoding of `dtype` from (N, bits_size) uint8 packed rows: the same
    values as `observation.encode` (int16 by default; float32 for a network)."""
    lay = bits_layout(rules)
    rows = np.ascontiguousarray(bits, dtype=np.uint8)
    _check(rows.shape, lay)
    flat = np.unpackbits(rows, axis=1, bitorder="little")  # (N, 64 W) 0/1
    out = np.empty((rows.shape[0], obs_size(rules)), dtype=dtype)
    out[:, lay.bit_dst] = flat[:, lay.bit_src]
    weights = (1 << np.arange(lay.trick_src.shape[1])).astype(np.int16)
    out[:, lay.trick_dst] = flat[:, lay.trick_src] @ weights
    out[:, lay.int_dst] = rows.view("<i2")[:, lay.int_src]
    return out


def unpack_bits_torch(bits: Any, rules: Rules, dtype: Any = None) -> Any:
    """`unpack_bits` for torch: (N, bits_size) uint8 tensor (or array) to an (N, obs_size)
    tensor of `dtype` (default float32) on the same device, for a network's input."""
    import torch

    lay = bits_layout(rules)
    rows = torch.as_tensor(bits)
    if rows.dtype != torch.uint8:
        raise ValueError(f"packed observations are uint8; got {rows.dtype}")
    _check(tuple(rows.shape), lay)
    dev, dtype = rows.device, torch.float32 if dtype is None else dtype
    tables = _torch_tables(rules, str(dev))
    shifts = torch.arange(8, dtype=torch.uint8, device=dev)
    flat = ((rows.unsqueeze(-1) >> shifts) & 1).reshape(rows.shape[0], -1)  # (N, 64 W)
    out = torch.empty((rows.shape[0], obs_size(rules)), dtype=dtype, device=dev)
    out[:, tables["bit_dst"]] = flat[:, tables["bit_src"]].to(dtype)
    trick = flat[:, tables["trick_src"]].to(dtype)  # (N, C, planes)
    out[:, tables["trick_dst"]] = trick @ tables["weights"].to(dtype)
    ints = rows.contiguous().view(torch.int16)  # little-endian pairs of bytes
    out[:, tables["int_dst"]] = ints[:, tables["int_src"]].to(dtype)
    return out


@functools.cache
def _torch_tables(rules: Rules, device: str) -> dict[str, Any]:
    import torch

    lay = bits_layout(rules)
    names = ("bit_dst", "bit_src", "trick_dst", "trick_src", "int_dst", "int_src")
    tables = {n: torch.as_tensor(getattr(lay, n), device=device) for n in names}
    tables["weights"] = torch.tensor(
        [float(1 << j) for j in range(lay.trick_src.shape[1])], device=device
    )
    return tables
