"""Files that are not files: a FIFO, a device or a socket given where the toolkit reads a file.

Reading a FIFO waits for a writer and /dev/zero never ends, so before these checks ``odrp solve fifo.json
--time-limit 5`` hung past 30 s (the file is read before the limit's clock starts). Each is now one line
naming the file and "a regular file", exit 2, at once: the command line looks at its file arguments before
it imports anything, and every read goes through :func:`odrp.core.errors.open_regular`.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from odrp.core.errors import InputError, read_text
from odrp.io import read_json, read_solution
from tests.conftest import ROOT

SECONDS = 2.0
"""The most a refused file may take, Python's start and the command line's own imports included."""


@pytest.fixture
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo.json"
    os.mkfifo(path)
    return path


@pytest.fixture
def instance(tmp_path) -> Path:
    path = tmp_path / "kp.json"
    path.write_text(json.dumps({"problem": "kp", "profits": [1, 2], "weights": [1, 1], "capacity": 1}))
    return path


def refused_at_once(args: list[str], named: str) -> None:
    """``odrp ARGS`` ends within :data:`SECONDS` with exit 2 and one line naming ``named`` and "a regular file"."""
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "odrp", *args], capture_output=True, text=True, cwd=ROOT, timeout=30)
    took = time.perf_counter() - started
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, (args, proc.stderr)
    assert len(lines) == 1 and named in lines[0] and "a regular file" in lines[0], (args, proc.stderr)
    assert took < SECONDS, (args, took, os.getloadavg())


@pytest.mark.parametrize("special", ["fifo", "/dev/zero"])
def test_an_instance_solution_grid_or_model_solution_that_is_no_file(special, fifo, instance, tmp_path):
    path = str(fifo) if special == "fifo" else special
    refused_at_once(["solve", path, "--time-limit", "5"], path)
    refused_at_once(["evaluate", path, str(instance)], path)
    refused_at_once(["evaluate", str(instance), path], path)
    refused_at_once(["evaluate", str(instance), "--model-solution", path], path)
    refused_at_once(["bench", path, "--out", str(tmp_path / "out")], path)
    refused_at_once(["model", path, "--out", str(tmp_path / "m.mps")], path)
    refused_at_once(["solve", str(instance), "--warm-start", path], path)


def test_every_reader_refuses_before_reading(fifo, tmp_path):
    """In Python too: the JSON reader, the solution reader, the text reader; a socket and a directory as well."""
    sock_path = tmp_path / "s.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    try:
        for path, what in ((fifo, "a FIFO"), ("/dev/zero", "a character device"), (sock_path, "a socket")):
            for reader in (read_json, read_solution, read_text):
                with pytest.raises(InputError, match=f"a regular file .*got {what}"):
                    reader(path)
        with pytest.raises(InputError, match="got a directory"):
            read_json(tmp_path)
    finally:
        server.close()


def test_a_manifest_that_is_no_file_is_a_corrupt_manifest(tmp_path):
    from odrp.bench.dataset import MANIFEST, CorruptManifest, read_manifest

    os.mkfifo(tmp_path / MANIFEST)
    with pytest.raises(CorruptManifest, match="a regular file"):
        read_manifest(tmp_path)
