"""The notebooks: committed without outputs, and they run headless to their plots.

Each notebook is executed with nbclient in a fresh kernel (the `python3` kernel of the
interpreter running the tests), its parameter cell overridden the way papermill does it:
assignments appended to the cell tagged `parameters`. They run with their defaults on a
cold double-dummy cache (a new file in tmp_path): the shipped sample
(`experiments/bid_analysis/data/dd_sample.sqlite`) must answer every deal, so nothing is
solved.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest

nbclient = pytest.importorskip("nbclient")  # the dev extra
nbformat = pytest.importorskip("nbformat")

from agents.dd.cache import DDCache
from experiments.bid_analysis.double_dummy import SAMPLE

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"


def load(name: str):
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def set_parameters(nb, **params) -> None:
    (cell,) = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    cell.source += "\n" + "\n".join(f"{k} = {v!r}" for k, v in params.items())


def execute(nb, cwd: Path):
    """Run every cell in a fresh kernel, in `cwd` (raises on the first error)."""
    client = nbclient.NotebookClient(
        nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(cwd)}}
    )
    client.execute()
    return nb


def outputs(nb) -> list[dict]:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])]


def images(nb) -> int:
    return sum(1 for o in outputs(nb) if "image/png" in o.get("data", {}))


@pytest.mark.parametrize("path", sorted(NOTEBOOKS.glob("*.ipynb")), ids=lambda p: p.name)
def test_committed_notebooks_have_no_outputs(path):
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    dirty = [
        i
        for i, c in enumerate(nb.cells)
        if c.cell_type == "code" and (c.get("outputs") or c.get("execution_count") is not None)
    ]
    assert not dirty, f"{path.name}: cells {dirty} hold outputs; clear them before committing"
    assert any("parameters" in c.metadata.get("tags", []) for c in nb.cells)


@pytest.fixture(autouse=True)
def kernel_tmpdir(tmp_path, monkeypatch):
    """The kernel inherits TMPDIR: the seeded tournaments' run folders land in tmp_path."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))


def sample_size() -> int:
    with closing(sqlite3.connect(f"file:{SAMPLE}?mode=ro", uri=True)) as db:
        return int(db.execute("SELECT COUNT(*) FROM tricks").fetchone()[0])


def test_notebooks_document_their_parameters():
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
        nb = nbformat.read(path, as_version=4)
        (k,) = [i for i, c in enumerate(nb.cells) if "parameters" in c.metadata.get("tags", [])]
        doc = nb.cells[k - 1]
        assert doc.cell_type == "markdown" and doc.source.startswith("## Parameters"), path.name
        names = [line.split("=")[0].strip() for line in nb.cells[k].source.splitlines()]
        for name in names:
            assert f"`{name}`" in doc.source, (path.name, name)


def test_bid_accuracy_runs_a_seeded_tournament_and_draws_every_plot(tmp_path):
    nb = load("bid_accuracy.ipynb")
    cache = str(tmp_path / "cold" / "dd.sqlite")  # the defaults, on a cold cache
    set_parameters(nb, DD_CACHE=cache)
    execute(nb, tmp_path)
    assert not [o for o in outputs(nb) if o["output_type"] == "error"]
    # calibration, confusion, bid totals, set rates, nil outcomes, against double dummy
    assert images(nb) == 6
    assert any("bid_vs_dd" in str(o.get("data", {})) for o in outputs(nb))
    assert len(DDCache(cache)) == sample_size()  # every answer came from the sample
    last = nb.cells[-1].outputs[0]["data"]["text/markdown"]
    assert "**heuristic**" in last and "**random**" in last
    assert list(tmp_path.glob("spades-*/log.jsonl"))


def tensorboard_run(folder: Path) -> Path | None:
    """A tiny training run with TensorBoard scalars, if torch's writer is installed."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        return None
    writer = SummaryWriter(str(folder))
    for step in range(0, 400, 100):
        writer.add_scalar("eval/points_per_deal_vs_heuristic", step / 10 - 20, step)
    writer.close()
    return folder


def test_agent_comparison_runs_a_round_robin_and_draws_its_plots(tmp_path):
    nb = load("agent_comparison.ipynb")
    run = tensorboard_run(tmp_path / "run")
    cache = str(tmp_path / "cold" / "dd.sqlite")  # the defaults, on a cold cache
    set_parameters(nb, RUN=None if run is None else str(run), DD_CACHE=cache)
    execute(nb, tmp_path)
    assert not [o for o in outputs(nb) if o["output_type"] == "error"]
    # ratings, margins, bids against double dummy (, learning curve)
    assert images(nb) == (3 if run is None else 4)
    assert any("bid_vs_dd" in str(o.get("data", {})) for o in outputs(nb))
    assert len(DDCache(cache)) == sample_size()  # every answer came from the sample
