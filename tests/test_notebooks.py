"""Every notebook in ``notebooks/`` runs from top to bottom (its cells assert what they show).

The kernel is this interpreter (the project's venv), through a kernelspec written for the test, so a
``python3`` kernel installed elsewhere on the machine is never picked up.
"""

from __future__ import annotations

import json
import sys

import nbformat
import pytest
from nbclient import NotebookClient

from tests.conftest import ROOT

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
KERNEL = "odrp-test-venv"


@pytest.fixture
def venv_kernel(tmp_path, monkeypatch):
    spec = tmp_path / "kernels" / KERNEL
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": KERNEL, "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path))
    return KERNEL


def test_there_are_notebooks():
    assert NOTEBOOKS


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(path, venv_kernel):
    notebook = nbformat.read(path, as_version=4)
    client = NotebookClient(
        notebook, kernel_name=venv_kernel, timeout=600, resources={"metadata": {"path": str(path.parent)}}
    )
    client.execute()  # raises CellExecutionError, with the cell and its traceback, when a cell fails
    errors = [o for cell in notebook.cells for o in cell.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_is_stored_executed(path):
    """A reader sees what each cell printed without running it: every code cell ran, in order, and kept
    its output (the notebooks are saved after a full run)."""
    notebook = nbformat.read(path, as_version=4)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert [cell.execution_count for cell in code] == list(range(1, len(code) + 1))
    assert sum(bool(cell.outputs) for cell in code) >= len(code) - 2  # at most a cell or two print nothing
