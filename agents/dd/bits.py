"""Bit tricks on 13-bit suit masks for the double-dummy kernel (numba).

A hand in the kernel is `H[seat, suit]`, one 13-bit mask per suit (bit = rank, 0 = '2').

`pop` and `high` are LLVM's population count and leading-zero count (one instruction
each where the CPU has them); `pext13` / `pdep13` are x86 BMI2's `pext` / `pdep` where
the kernels compile for a CPU that has it, and lookups in 7-bit tables elsewhere (the
two tested against each other). `POP` and `HIGH` are the same counts as tables, for
plain Python.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

from agents.kernels.compile import ensure_fresh
from spades_env.cards import SPADES
from spades_env.core.rule_functions import card_strength, compiles_for_bmi2

ensure_fresh()  # agents/kernels/compile.py: no stale kernels from the on-disk cache

POP = np.array([bin(i).count("1") for i in range(1 << 13)], dtype=np.int64)
HIGH = np.array([i.bit_length() - 1 for i in range(1 << 13)], dtype=np.int64)  # -1 for 0


def _bit_tables() -> tuple[np.ndarray, np.ndarray]:
    """PEXT7[x * 128 + m]: the bits of x at m's set positions, packed low (and PDEP7,
    the inverse: the low bits of x spread to m's set positions), for 7-bit x and m."""
    pext = np.zeros(128 * 128, dtype=np.int64)
    pdep = np.zeros(128 * 128, dtype=np.int64)
    for m in range(128):
        pos = [b for b in range(7) if m >> b & 1]
        for x in range(128):
            pext[x * 128 + m] = sum(1 << j for j, b in enumerate(pos) if x >> b & 1)
            pdep[x * 128 + m] = sum(1 << b for j, b in enumerate(pos) if x >> j & 1)
    return pext, pdep


PEXT7, PDEP7 = _bit_tables()


def _llvm_call(name: str, nargs: int, extra: tuple = ()):
    """An intrinsic calling the LLVM function `name` on int64 arguments (and `extra`
    constant i1 flags)."""

    def typer(typingctx, *args):
        def codegen(context, builder, signature, llargs):
            i64 = ir.IntType(64)
            flags = [ir.Constant(ir.IntType(1), f) for f in extra]
            fnty = ir.FunctionType(i64, [i64] * nargs + [ir.IntType(1)] * len(extra))
            fn = cgutils.get_or_insert_function(builder.module, fnty, name)
            return builder.call(fn, [*llargs, *flags])

        return types.int64(*([types.int64] * nargs)), codegen

    return typer


def _intrinsic1(name: str, extra: tuple = ()):
    def f(typingctx, x):
        return _llvm_call(name, 1, extra)(typingctx, x)

    return intrinsic(f)


def _intrinsic2(name: str):
    def f(typingctx, x, m):
        return _llvm_call(name, 2)(typingctx, x, m)

    return intrinsic(f)


_ctpop = _intrinsic1("llvm.ctpop.i64")
_ctlz = _intrinsic1("llvm.ctlz.i64", (0,))  # defined at 0: 64
_pext = _intrinsic2("llvm.x86.bmi.pext.64")
_pdep = _intrinsic2("llvm.x86.bmi.pdep.64")


@njit(cache=True, inline="always")
def pop(x):
    """Set bits of the non-negative x (POP[x] for 13-bit x)."""
    return _ctpop(np.int64(x))


@njit(cache=True, inline="always")
def high(x):
    """Index of the highest set bit of the non-negative x, -1 for 0 (HIGH[x])."""
    return 63 - _ctlz(np.int64(x))


@njit(cache=True)
def pext13_tables(x, m):
    """The bits of the 13-bit x at the set positions of m, packed into the low bits."""
    lo = m & 127
    return PEXT7[(x & 127) * 128 + lo] | (PEXT7[(x >> 7) * 128 + (m >> 7)] << POP[lo])


@njit(cache=True)
def pdep13_tables(x, m):
    """The low bits of x spread to the set positions of the 13-bit m (pext's inverse)."""
    lo = m & 127
    n = POP[lo]
    return PDEP7[(x & ((1 << n) - 1)) * 128 + lo] | (PDEP7[(x >> n) * 128 + (m >> 7)] << 7)


@njit(cache=True, inline="always")
def _pext13_bmi2(x, m):
    return _pext(np.int64(x), np.int64(m))


@njit(cache=True, inline="always")
def _pdep13_bmi2(x, m):
    return _pdep(np.int64(x), np.int64(m))


#: `pext13(x, m)`: the bits of x at the set positions of the 13-bit m, packed low;
#: `pdep13(x, m)`: the low bits of x spread to the set positions of m (its inverse).
BMI2 = compiles_for_bmi2()
pext13 = _pext13_bmi2 if BMI2 else pext13_tables
pdep13 = _pdep13_bmi2 if BMI2 else pdep13_tables


@njit(cache=True, inline="always")
def hand_size(H, seat):
    return pop(H[seat, 0]) + pop(H[seat, 1]) + pop(H[seat, 2]) + pop(H[seat, 3])


@njit(cache=True, inline="always")
def last_trick_winner(H, leader):
    """Winner of the last trick, each seat holding one card (RULES.md §3)."""
    best = -1
    winner = leader
    lead = 0
    for j in range(4):
        seat = (leader + j) & 3
        for s in range(4):
            if H[seat, s]:
                rk = high(H[seat, s])
                if j == 0:
                    lead = s
                st = card_strength(13 * s + rk, lead, SPADES)
                if st > best:
                    best = st
                    winner = seat
    return winner


@njit(cache=True, inline="always")
def last_trick_wr(H, winner):
    """Winning rank of the last trick: the winner's card if it beat a card of its suit."""
    for s in range(4):
        if H[winner, s]:
            n = 0
            for seat in range(4):
                if H[seat, s]:
                    n += 1
            return H[winner, s] << (13 * s) if n >= 2 else 0
    return 0


@njit(cache=True, inline="always")
def rel_key(H, leader, broken, mode, acc):
    """The table key of a trick start, in relative ranks (RULES.md §3 compares ranks only
    within a suit, so only the order of the cards still held matters).

    Returns four words (each seat's cards renumbered from the top of each suit, 13 bits
    a suit), the suit lengths of every hand (4 bits each) and the context word
    (leader, broken, mode, acc).
    """
    w0 = 0
    w1 = 0
    w2 = 0
    w3 = 0
    lens = 0
    for s in range(4):
        p = H[0, s] | H[1, s] | H[2, s] | H[3, s]
        shift = 13 - pop(p)
        w0 |= (pext13(H[0, s], p) << shift) << (13 * s)
        w1 |= (pext13(H[1, s], p) << shift) << (13 * s)
        w2 |= (pext13(H[2, s], p) << shift) << (13 * s)
        w3 |= (pext13(H[3, s], p) << shift) << (13 * s)
        lens |= (
            pop(H[0, s]) | (pop(H[1, s]) << 4) | (pop(H[2, s]) << 8) | (pop(H[3, s]) << 12)
        ) << (16 * s)
    ctx = leader | ((1 if broken else 0) << 2) | (mode << 3) | (acc << 4)
    return w0, w1, w2, w3, lens, ctx


@njit(cache=True, inline="always")
def wr_to_rel(H, wr):
    """The relevance mask (relative ranks) of winning ranks `wr` (absolute, 52 bits).

    In each suit every card at or above the lowest winning rank is relevant: a table
    entry then holds for every position whose relevant cards have the same holders and
    whose hands have the same suit lengths (the DDS partition search).
    """
    m = 0
    for s in range(4):
        w = (wr >> (13 * s)) & 0x1FFF
        if w:
            p = H[0, s] | H[1, s] | H[2, s] | H[3, s]
            low = w & -w
            m |= (pext13(p & ~(low - 1), p) << (13 - pop(p))) << (13 * s)
    return m


@njit(cache=True, inline="always")
def rel_to_wr(H, m):
    """Absolute cards of a relevance mask (the inverse of `wr_to_rel`)."""
    wr = 0
    for s in range(4):
        ms = (m >> (13 * s)) & 0x1FFF
        if ms:
            p = H[0, s] | H[1, s] | H[2, s] | H[3, s]
            wr |= pdep13(ms >> (13 - pop(p)), p) << (13 * s)
    return wr
