"""Shared fixtures: paths and a runner for the ``odrp`` command in a subprocess."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def run_cli():
    """Run ``odrp ARGS...`` as a user would; returns the CompletedProcess (text mode)."""

    def run(*args: str, check: bool = False) -> subprocess.CompletedProcess:
        proc = subprocess.run(
            [sys.executable, "-m", "odrp.cli", *args], capture_output=True, text=True, cwd=ROOT, timeout=600
        )
        if check and proc.returncode != 0:
            raise AssertionError(f"odrp {' '.join(args)} failed ({proc.returncode}):\n{proc.stderr}")
        return proc

    return run
