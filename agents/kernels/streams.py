"""Random numbers for the compiled kernels, from the caller: a counter-based stream.

A kernel that draws random numbers (the search's expansions, random rollouts, the random
blind-nil and exchange choices of a rollout) takes a `stream`: a (2,) uint64 array
`[key, counter]` that the caller makes from its own `numpy.random.Generator`
(`new_stream(rng)` draws the 64-bit key from it). No kernel keeps random state of its own
or reads a global generator.

Draw `i` of a stream (from 1) is SplitMix64's output function of `key + i * gamma` (Steele, Lea &
Flood 2014, "Fast splittable pseudorandom number generators": the generator of Java's
`SplittableRandom`), so it depends only on the key and the number of draws before it,
made in a kernel or in plain Python (`below` is callable from both). `below(stream, n)`
maps the top 32 bits of a draw to [0, n) by a multiply and a shift (Lemire 2019, without
the rejection step: the bias is below n / 2**32, about 1e-8 for a hand of cards).
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from agents.kernels.compile import ensure_fresh, jit
from spades_env.core.deal import GOLDEN, splitmix64

ensure_fresh()  # agents/kernels/compile.py: no stale kernels from the on-disk cache

_GAMMA = GOLDEN
_S32 = np.uint64(32)


def new_stream(rng: np.random.Generator) -> npt.NDArray[np.uint64]:
    """A fresh stream keyed by one 64-bit draw of `rng`, at counter 0."""
    return np.array([rng.integers(0, 2**64, dtype=np.uint64), 0], dtype=np.uint64)


@jit
def next_u64(stream: npt.NDArray[np.uint64]) -> np.uint64:
    """The stream's next 64-bit draw (its counter advances in place): the rules core's
    `splitmix64` (the output function of `x + gamma`) of `key + counter * gamma`."""
    z = splitmix64(stream[0] + stream[1] * _GAMMA)
    stream[1] += np.uint64(1)
    return z


@jit
def below(stream: npt.NDArray[np.uint64], n: int) -> int:
    """A random integer in [0, n) for 1 <= n < 2**32 (module doc)."""
    return np.int64(((next_u64(stream) >> _S32) * np.uint64(n)) >> _S32)
