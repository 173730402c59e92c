"""Issue 28's training values: each refused in one line before anything is written (no
run folder left behind), through `spades train` run as a subprocess."""

from __future__ import annotations

import pytest
from cli_helpers import one_line_error, spades

pytestmark = pytest.mark.torch


@pytest.mark.parametrize(
    ("algo", "flag", "value", "words"),
    [
        ("ppo", "--max-grad-norm", "nan", "finite"),
        pytest.param("ppo", "--ent-coef", "nan", "finite", marks=pytest.mark.slow),
        pytest.param("ppo", "--learning-rate", "nan", "finite", marks=pytest.mark.slow),
        pytest.param("ppo", "--num-minibatches", "100000", "--num-games", marks=pytest.mark.slow),
        pytest.param("ppo", "--gamma", "2", "between 0 and 1", marks=pytest.mark.slow),
        pytest.param("ppo", "--clip-coef", "-1", "positive", marks=pytest.mark.slow),
        pytest.param("ppo", "--hidden", "0", "--hidden", marks=pytest.mark.slow),
        ("ppo", "--exp-name", "../../x", "--exp-name"),
        ("dmc", "--reward-scale", "nan", "finite"),
    ],
)
def test_a_bad_training_value_is_one_line_and_leaves_no_folder(tmp_path, algo, flag, value, words):
    runs = tmp_path / "runs"
    line = one_line_error(spades("train", algo, flag, value, "--runs-dir", str(runs)))
    assert flag in line and words in line
    assert not runs.exists()
    assert list(tmp_path.iterdir()) == []


def test_bc_takes_eval_deals_0_as_none_as_its_help_says():
    from training import bc
    from training.session import check_args

    assert "(0 = none)" in (bc.__doc__ or "") + bc.Args.__doc__ + _field_doc()
    check_args(bc.Args(eval_deals=0))  # accepted
    with pytest.raises(ValueError, match="--eval-deals must be at least 1"):
        from training import ppo_selfplay

        check_args(ppo_selfplay.Args(eval_deals=0))


def _field_doc() -> str:
    import inspect

    from training import bc

    return inspect.getsource(bc.Args)


@pytest.mark.parametrize(
    ("algo", "field", "value"),
    [
        ("ppo", "max_grad_norm", float("nan")),
        ("ppo", "ent_coef", float("nan")),
        ("ppo", "learning_rate", float("nan")),
        ("ppo", "num_minibatches", 100000),
        ("ppo", "gamma", 2.0),
        ("ppo", "clip_coef", -1.0),
        ("ppo", "hidden", "0"),
        ("ppo", "exp_name", "../../x"),
        ("dmc", "reward_scale", float("nan")),
    ],
)
def test_every_bad_training_value_is_refused_by_the_argument_check(algo, field, value):
    """The same values as above at the Python API's check (`check_args`), which every run
    passes before anything is written."""
    from training import dmc, ppo_selfplay
    from training.session import check_args

    args = (ppo_selfplay if algo == "ppo" else dmc).Args(**{field: value})
    with pytest.raises(ValueError, match="--" + field.replace("_", "-")):
        check_args(args)
