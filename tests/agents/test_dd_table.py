"""The double-dummy transposition table (agents/dd/transposition.py): many entries under one key
(suit lengths and context) are all kept and found, and the slot signature that a probe
scans first never hides a matching entry."""

from __future__ import annotations

import numpy as np

from agents.dd import transposition as table
from agents.dd.bits import HIGH


def _tables(bits: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    n = 1 << bits
    TT = np.zeros((n, table.ENTRY), dtype=np.int64)
    P = np.zeros(table.NUM_PARAMS, dtype=np.int64)
    P[table.P_MASK] = n - 1
    P[table.P_GEN] = 1
    return P, TT, TT.view(np.float64), np.zeros(n, dtype=np.int64)


def _words(rng: np.random.Generator) -> tuple[int, int, int, int]:
    """A full deal in relative ranks: every card of the 52 to one of the four seats."""
    owner = rng.integers(0, 4, size=52)
    return tuple(sum(1 << c for c in range(52) if owner[c] == s) for s in range(4))


def _mask(rng: np.random.Generator) -> int:
    """A relevance mask as `bits.wr_to_rel` makes them: per suit nothing, or every card
    from the top down to some rank."""
    m = 0
    for s in range(4):
        depth = int(rng.integers(0, 14))
        if depth:
            m |= ((0x1FFF >> (13 - depth)) << (13 - depth)) << (13 * s)
    return m


def _top_holders(w: tuple[int, int, int, int]) -> list[int]:
    return [next(seat for seat in range(4) if w[seat] >> (13 * s + 12) & 1) for s in range(4)]


def test_top_holders_and_suits_of_a_mask() -> None:
    rng = np.random.default_rng(0)
    for _ in range(200):
        w = _words(rng)
        want = sum(seat << (2 * s) for s, seat in enumerate(_top_holders(w)))
        assert table._tops(*w) == want
        m = _mask(rng)
        suits = table._suits(m)
        for s in range(4):
            assert bool(suits >> s & 1) == bool(m >> (13 * s) & 0x1FFF)
            if m >> (13 * s) & 0x1FFF:
                assert HIGH[m >> (13 * s) & 0x1FFF] == 12  # a relevant suit holds its top


def test_many_entries_under_one_key_are_all_found() -> None:
    # 200 patterns under one (lengths, context) key: more than the old 16-slot window
    # held. Each is found again from a position that agrees on its relevant cards only,
    # with the bounds stored for it.
    rng = np.random.default_rng(1)
    P, TT, TF, SG = _tables(14)
    lens, ctx = 0x1234_5678_9ABC, 5
    stored = []
    for i in range(200):
        w, m = _words(rng), _mask(rng)
        table.tt_store(P, TT, TF, SG, lens, ctx, *w, m, float(i), np.inf, -1)
        stored.append((w, m, float(i)))
    for w, m, lo in stored:
        other = _words(rng)
        probe = tuple((w[s] & m) | (other[s] & ~m & ((1 << 52) - 1)) for s in range(4))
        # `probe` may not be a partition of the deck off the mask; the table only
        # compares masked words, which is what is checked here
        slot, _ = table.tt_probe(P, TT, TF, SG, lens, ctx, *probe, lo, -np.inf)
        assert slot >= 0
        assert TF[slot, table.T_LO] >= lo
        m_slot = TT[slot, table.T_MASK]
        assert all((probe[s] & m_slot) == TT[slot, table.T_W0 + s] for s in range(4))


def test_other_keys_generations_and_top_holders_do_not_match() -> None:
    rng = np.random.default_rng(2)
    P, TT, TF, SG = _tables(12)
    w = _words(rng)
    m = 0x1FFF << 13  # hearts' every card relevant (suit 1)
    table.tt_store(P, TT, TF, SG, 77, 3, *w, m, 4.0, np.inf, -1)
    assert table.tt_probe(P, TT, TF, SG, 77, 3, *w, 4.0, -np.inf)[0] >= 0
    assert table.tt_probe(P, TT, TF, SG, 78, 3, *w, 4.0, -np.inf)[0] == -1  # lengths
    assert table.tt_probe(P, TT, TF, SG, 77, 2, *w, 4.0, -np.inf)[0] == -1  # context
    assert table.tt_probe(P, TT, TF, SG, 77, 3, *w, 5.0, -np.inf)[0] == -1  # bound too low
    # another holder of the top heart
    top = 1 << (13 + 12)
    holder = _top_holders(w)[1]
    moved = list(w)
    moved[holder] ^= top
    moved[(holder + 1) % 4] |= top
    assert table.tt_probe(P, TT, TF, SG, 77, 3, *moved, 4.0, -np.inf)[0] == -1
    P[table.P_GEN] = 2  # a new generation empties the table
    assert table.tt_probe(P, TT, TF, SG, 77, 3, *w, 4.0, -np.inf)[0] == -1


def test_compiled_bit_counts_and_pext_pdep_agree_with_the_tables() -> None:
    """`pop`, `high` (LLVM intrinsics) and `pext13` / `pdep13` (BMI2 where compiled for it)
    against the lookup tables, on every 13-bit value and random masks."""
    from numba import njit

    from agents.dd import bits

    @njit(cache=False)
    def counts(xs):
        out = np.empty((len(xs), 2), dtype=np.int64)
        for i in range(len(xs)):
            out[i, 0] = bits.pop(xs[i])
            out[i, 1] = bits.high(xs[i])
        return out

    @njit(cache=False)
    def moves(xs, ms, ys):
        out = np.empty((len(xs), 4), dtype=np.int64)
        for i in range(len(xs)):
            out[i, 0] = bits.pext13(xs[i], ms[i])
            out[i, 1] = bits.pext13_tables(xs[i], ms[i])
            out[i, 2] = bits.pdep13(ys[i], ms[i])
            out[i, 3] = bits.pdep13_tables(ys[i], ms[i])
        return out

    xs = np.arange(1 << 13, dtype=np.int64)
    got = counts(xs)
    assert (got[:, 0] == bits.POP).all() and (got[:, 1] == HIGH).all()
    rng = np.random.default_rng(0)
    ms = rng.integers(0, 1 << 13, size=20000)
    ys = np.array([rng.integers(0, 1 << bits.POP[m]) for m in ms], dtype=np.int64)
    got = moves(rng.integers(0, 1 << 13, size=20000), ms, ys)
    assert (got[:, 0] == got[:, 1]).all() and (got[:, 2] == got[:, 3]).all()
