"""PPO's sampler (`agents.learned.networks.sample_masked`) and the precision switch."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")  # the train extra

from agents.learned.networks import MASKED_LOGIT, resolve_precision, sample_masked

pytestmark = pytest.mark.torch


def test_sampling_never_draws_a_masked_action_and_follows_the_policy():
    gen = torch.Generator().manual_seed(0)
    logits = torch.full((20000, 80), MASKED_LOGIT)
    logits[:, 3] = 0.0
    logits[:, 40] = torch.log(torch.tensor(3.0))  # 3 times as likely as action 3
    logits[:5000, 79] = 0.0  # the last action legal in some rows only
    actions, logp = sample_masked(logits, gen)
    legal = logits > MASKED_LOGIT / 2
    assert legal[torch.arange(len(actions)), actions].all()
    share = (actions[5000:] == 40).float().mean().item()
    assert share == pytest.approx(0.75, abs=0.02)
    assert torch.allclose(logp.exp().sum(dim=1), torch.ones(len(logits)))


def test_a_single_legal_action_is_always_drawn():
    logits = torch.full((1000, 80), MASKED_LOGIT)
    logits[:, 0] = 5.0  # the first action: the cumulative sum starts above u
    actions, _ = sample_masked(logits, torch.Generator().manual_seed(1))
    assert (actions == 0).all()


@pytest.mark.parametrize("given", ["fp32", "bf16"])
def test_an_explicit_precision_is_kept(given):
    assert resolve_precision(given, torch.device("cpu")) == given


def test_auto_precision_is_one_of_the_two_and_a_bad_name_is_refused():
    assert resolve_precision("auto", torch.device("cpu")) in ("fp32", "bf16")
    with pytest.raises(ValueError, match="choose auto, fp32 or bf16"):
        resolve_precision("fp16", torch.device("cpu"))
