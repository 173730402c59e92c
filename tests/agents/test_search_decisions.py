"""The search agents' speed-ups keep their decisions: ISMCTS and PIMC choose exactly the
actions (and ISMCTS the root visit counts, PIMC the action values) that the implementation
before the speed-ups chose on the same positions with the same seeds
(`search_decisions`: the fixture and how it was made)."""

from __future__ import annotations

import pytest
from search_decisions import SPECS, chains, key, load, run_chain

FIXTURE = load()
ALL = [(spec, name, seed) for spec in SPECS for name, seed in chains()]
# The default run: every spec and rules set on the chains of seed 0 (30 positions each),
# but ISMCTS at 1000 iterations on the blind-nil exchange chain (20 s: SingleGame steps
# the exchange through the batched engine); the rest under -m slow.
FAST = [x for x in ALL if x[2] == 0 and x[:2] != ("ismcts:iterations=1000", "blind_exchange")]
SLOW = [x for x in ALL if x not in FAST]


def check(spec: str, rules_name: str, seed: int) -> None:
    want = FIXTURE[key(spec, rules_name, seed)]
    got = run_chain(spec, rules_name, seed)
    assert [r["action"] for r in got] == [r["action"] for r in want]
    for g, w in zip(got, want, strict=True):
        if "visits" in w:
            assert g["visits"] == w["visits"]
        else:
            assert g["values"].keys() == w["values"].keys()
            assert g["values"] == pytest.approx(w["values"], rel=1e-12, abs=1e-9)


@pytest.mark.parametrize(("spec", "rules_name", "seed"), FAST, ids=lambda x: str(x))
def test_decisions_are_unchanged(spec, rules_name, seed):
    check(spec, rules_name, seed)


@pytest.mark.slow
@pytest.mark.parametrize(("spec", "rules_name", "seed"), SLOW, ids=lambda x: str(x))
def test_decisions_are_unchanged_everywhere(spec, rules_name, seed):
    check(spec, rules_name, seed)
