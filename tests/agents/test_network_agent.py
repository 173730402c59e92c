"""`NetworkAgent`: a network playing batched (padding of its bf16 forward passes)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")  # the train extra: the network agent

from agents.learned.agent import (
    NetworkAgent,
    load_network,
)
from agents.learned.checkpoint import read_checkpoint
from agents.learned.networks import PAD_ROWS, padded_rows
from spades_env.engine import legal_action_mask, step
from spades_env.observation import encode
from spades_env.rules import Rules
from spades_env.state import init

pytestmark = pytest.mark.torch


@pytest.mark.parametrize("rows", [1, 37, 64, 130])
def test_padded_and_unpadded_bf16_decisions_are_equal(rows):
    """bf16 on the CPU pads its rows to a multiple of PAD_ROWS (one compiled product per
    shape): every decision, and the preferences behind it, are the unpadded ones."""
    import torch

    rules = Rules()
    st = init(rules, rows, np.random.default_rng(rows))
    for _ in range(4 + rows % 30):  # bids, then card play
        step(st, np.argmax(legal_action_mask(st), axis=1))
    obs, mask = encode(st), legal_action_mask(st)
    ckpt = read_checkpoint("agents/learned/checkpoints/learned.pt")
    padded = NetworkAgent(load_network(ckpt), rules, precision="bf16")
    plain = NetworkAgent(load_network(ckpt), rules, precision="bf16")
    plain.pad = False
    assert padded_rows(rows, torch.device("cpu"), "bf16") % PAD_ROWS == 0
    seen = []

    def spy(x, m):
        seen.append(len(x))
        return type(padded.net).preferences(padded.net, x, m)

    padded.net.preferences = spy
    np.testing.assert_array_equal(padded.act(None, obs, mask), plain.act(None, obs, mask))
    assert seen == [padded_rows(rows, torch.device("cpu"), "bf16")]


def test_fp32_runs_unpadded():
    import torch

    assert padded_rows(37, torch.device("cpu"), "fp32") == 37
