"""The stubs left at an old import path (spades_env/tooling/renamed.py) warn when imported
and give the moved module's public names, the very objects."""

from __future__ import annotations

import importlib
import sys

import pytest

#: each stub and the module it stands for
STUBS = {
    "agents.search": "agents.montecarlo",
    "agents.search.common": "agents.montecarlo.common",
    "agents.search.ismcts": "agents.montecarlo.ismcts",
    "agents.search.ismcts_bid_kernel": "agents.montecarlo.ismcts_bid_kernel",
    "agents.search.ismcts_kernel": "agents.montecarlo.ismcts_kernel",
    "agents.search.pimc": "agents.montecarlo.pimc",
    "agents.search.pimc_kernel": "agents.montecarlo.pimc_kernel",
    "agents.search.reference": "agents.montecarlo.reference",
    "agents.search.sampling": "agents.montecarlo.sampling",
    "agents.search.world_weights": "agents.montecarlo.world_weights",
    "agents.dd.tables": "agents.dd.cache",
    "experiments.tournament.protocol": "experiments.tournament.ladder_protocol",
    "spades_env.draw": "spades_env.stock_draw",
    "spades_env.env_core": "spades_env.env_common",
    "spades_env.files": "spades_env.tooling.files",
    "spades_env.flags": "spades_env.tooling.flags",
    "spades_env.ray_address": "spades_env.tooling.ray_address",
    "spades_env.stats": "spades_env.tooling.stats",
    "training.arguments": "spades_env.tooling.flags",
    "training.ray_address": "spades_env.tooling.ray_address",
    "training.stats": "spades_env.tooling.stats",
}


@pytest.mark.parametrize("old", sorted(STUBS))
def test_a_stub_warns_and_re_exports(old):
    new = importlib.import_module(STUBS[old])
    sys.modules.pop(old, None)  # import it afresh, so that it warns again
    with pytest.warns(DeprecationWarning, match=rf"^{old} is renamed {STUBS[old]}: "):
        stub = importlib.import_module(old)
    names = stub.__all__
    assert names == list(getattr(new, "__all__", names))
    assert all(getattr(stub, name) is getattr(new, name) for name in names)


def test_the_old_names_are_still_there():
    """What the old paths were imported for, by name (each warns, imported afresh)."""
    for old in ("agents.dd.tables", "agents.search.pimc", "spades_env.draw"):
        sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning) as caught:
        from agents.dd.tables import DDCache, dd_key
        from agents.search.pimc import PIMCAgent, check_params
        from spades_env.draw import stock_left
        from spades_env.env_core import seed_base
        from training.arguments import FlagParser, parse_args
        from training.stats import mean_ci
    assert PIMCAgent.__module__ == "agents.montecarlo.pimc"
    assert {DDCache.__module__, dd_key.__module__} == {"agents.dd.cache"}
    assert stock_left.__module__ == "spades_env.stock_draw"
    assert seed_base.__module__ == "spades_env.env_common"
    assert {FlagParser.__module__, parse_args.__module__} == {"spades_env.tooling.flags"}
    assert mean_ci.__module__ == "spades_env.tooling.stats"
    assert callable(check_params)
    assert {str(w.message).split()[0] for w in caught} >= {
        "agents.dd.tables",
        "agents.search.pimc",
        "spades_env.draw",
    }
