"""``odrp bench --master spark://...`` on a real Spark standalone cluster on 127.0.0.1.

The fixture starts a master and one worker with ``sbin/spark-daemon.sh`` (the pip package has no
start-master.sh) on free ports, and stops both by their pid files however the test ends. The grid
uses a plugin from ``tests/`` that the workers cannot import from their own directory, so the run
also proves that the runner ships plugins. Objectives and statuses must equal those of local[2].
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from odrp.bench import dataset
from odrp.bench.runner import bench
from tests.bench_fixtures import forget_plugins, spark  # noqa: F401 (fixtures)
from tests.conftest import ROOT

MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
SECRET = "odrp-test-secret-5f1c"  # a test value; a real cluster gets a random one (docs/benchmarks.md)

GRID = """
plugins: [tests.bench_plugins]
studies:
  - name: tiny
    problem: odrp
    generator: random
    params: {operators: 4, nodes: 3, max_replicas: 2, slots: 4}
    seeds: [1, 2]
    exact: [highs, cbc]
    methods: [plugin_first_fit, plugin_fails]
    repeats: 2
  - name: debs
    problem: odrp
    instances: instances/odrp/debs2015-040.json
    exact: [highs]
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def master_state(webui: int) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{webui}/json/", timeout=5) as response:
        return json.loads(response.read())


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


@pytest.fixture
def standalone_cluster(tmp_path):
    """A master and a 2-core worker on 127.0.0.1; yields (master URL, master web UI port, work dir)."""
    with cluster(tmp_path) as (url, webui, work):
        yield url, webui, work


@pytest.fixture
def authenticated_cluster(tmp_path):
    """The same cluster with Spark authentication on: master and worker read ``spark.authenticate`` and
    the secret from ``spark-defaults.conf`` (mode 600) in their ``SPARK_CONF_DIR``."""
    with cluster(tmp_path, secret=SECRET) as (url, webui, work):
        yield url, webui, work


@contextlib.contextmanager
def cluster(tmp_path: Path, secret: str | None = None):
    """A master and a 2-core worker on 127.0.0.1, both stopped by their pid files however the test ends.

    It waits for the master to answer, not for the worker to register (about 7 s): a Spark
    application waits for executors by itself, and the test's own start-up overlaps with it.
    """
    import pyspark

    home = Path(pyspark.__file__).parent
    daemon = home / "sbin" / "spark-daemon.sh"
    port, webui, worker_ui, rest = free_port(), free_port(), free_port(), free_port()
    work = tmp_path / "work"
    env = {
        **os.environ,
        "SPARK_HOME": str(home),
        "SPARK_LOCAL_IP": "127.0.0.1",
        "SPARK_LOG_DIR": str(tmp_path / "logs"),
        "SPARK_PID_DIR": str(tmp_path / "pids"),
        "SPARK_WORKER_DIR": str(work),
        "SPARK_IDENT_STRING": "odrp-test",
        "PYSPARK_PYTHON": sys.executable,
        "SPARK_MASTER_OPTS": f"-Dspark.master.rest.port={rest}",
    }
    if secret is not None:
        conf = tmp_path / "conf"
        conf.mkdir()
        defaults = conf / "spark-defaults.conf"
        defaults.touch(mode=0o600)
        defaults.write_text(f"spark.authenticate true\nspark.authenticate.secret {secret}\n")
        env["SPARK_CONF_DIR"] = str(conf)
    pid_files = {name: tmp_path / "pids" / f"spark-odrp-test-{name}-1.pid" for name in (MASTER, WORKER)}
    url = f"spark://127.0.0.1:{port}"
    commands = {
        MASTER: ["--host", "127.0.0.1", "--port", str(port), "--webui-port", str(webui)],
        WORKER: ["--host", "127.0.0.1", "--cores", "2", "--memory", "2g", "--webui-port", str(worker_ui), url],
    }
    pids: dict[str, int] = {}
    try:
        for name in (MASTER, WORKER):
            subprocess.run(["bash", str(daemon), "start", name, "1", *commands[name]], env=env, check=True, timeout=60)
            pids[name] = int(pid_files[name].read_text())
        deadline = time.monotonic() + 120
        while True:
            try:
                master_state(webui)
                break
            except (OSError, ValueError):  # not listening yet, or a page that is no JSON yet (under load)
                assert time.monotonic() < deadline, "the master does not answer"
                time.sleep(0.5)
        yield url, webui, work
    finally:
        for name in (WORKER, MASTER):
            if pid_files[name].exists():
                subprocess.run(["bash", str(daemon), "stop", name, "1"], env=env, timeout=60)
        for name, pid in pids.items():
            deadline = time.monotonic() + 30
            while alive(pid) and time.monotonic() < deadline:
                time.sleep(0.2)
            if alive(pid):  # it ignored SIGTERM: end it, by its own pid
                os.kill(pid, signal.SIGKILL)
            assert not pid_files[name].exists()


def outcome(out: Path) -> dict[tuple, tuple]:
    """(instance, method, solver, repeat) -> (status, objective or None)."""
    frame = dataset.read(out)
    return {
        (r.instance_id, r.method, r.solver, r.repeat): (r.status, None if math.isnan(r.objective) else r.objective)
        for r in frame.itertuples()
    }


@pytest.mark.usefixtures("spark")
def test_standalone_cluster_gives_the_local_results(standalone_cluster, tmp_path):
    url, webui, work = standalone_cluster
    grid = tmp_path / "grid.yaml"
    grid.write_text(GRID)
    (tmp_path / "instances" / "odrp").mkdir(parents=True)  # instance globs stay under the grid's folder
    shutil.copyfile(ROOT / "instances/odrp/debs2015-040.json", tmp_path / "instances/odrp/debs2015-040.json")
    on_cluster = tmp_path / "cluster"
    with open(tmp_path / "cluster.log", "w+") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "odrp.cli", "bench", str(grid), "--out", str(on_cluster), "--master", url],
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            local = tmp_path / "local"
            bench(grid, local, master="local[2]", progress=False)  # meanwhile, in this process
            assert proc.wait(timeout=400) == 0
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            log.seek(0)
            output = log.read()
    assert f"on {url}" in output, output[-3000:]

    cluster_rows, local_rows = outcome(on_cluster), outcome(local)
    # 2 tiny instances x (2 exact + 2 first-fit repeats + 1 failing run) + DEBS x 1 exact
    assert len(cluster_rows) == 11 and cluster_rows.keys() == local_rows.keys()
    for key, (status, objective) in local_rows.items():
        assert cluster_rows[key][0] == status, key
        if objective is None:
            assert cluster_rows[key][1] is None, key
        else:
            assert cluster_rows[key][1] == pytest.approx(objective, rel=1e-9, abs=1e-12), key
    statuses = {key[1]: value[0] for key, value in local_rows.items()}
    assert statuses["exact"] == "optimal" and statuses["plugin_fails"] == "error"

    # the tasks ran in an executor of this worker, for an application the master saw finish
    assert any(work.glob("app-*/0")), "no executor directory on the worker"
    apps = master_state(webui)["completedapps"]
    assert [app["name"] for app in apps] == ["odrp bench"]
    manifest = json.loads((on_cluster / "manifest.json").read_text())
    assert manifest["runs"][-1]["master"] == url and manifest["status"] == "complete"
    assert manifest["runs"][-1]["python_workers"] >= 1


AUTH_GRID = """
plugins: [tests.bench_plugins]
studies:
  - name: tiny
    problem: odrp
    generator: random
    params: {operators: 4, nodes: 3, max_replicas: 2, slots: 4}
    seeds: [3]
    exact: [highs]
    methods: [plugin_first_fit]
"""


def test_authenticated_cluster_runs_with_its_secret_and_refuses_a_driver_without(authenticated_cluster, tmp_path):
    from odrp.kinds.replication.generators import random_instance
    from odrp.registry import KINDS
    from tests.bruteforce import odrp_optimum

    url, webui, _ = authenticated_cluster
    logs = tmp_path / "logs"
    grid = tmp_path / "grid.yaml"
    grid.write_text(AUTH_GRID)
    command = [sys.executable, "-m", "odrp.cli", "bench", str(grid), "--master", url, "--no-progress"]
    secret = ["--conf", "spark.authenticate=true", "--conf", f"spark.authenticate.secret={SECRET}"]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "with"), *secret], cwd=ROOT, capture_output=True, text=True, timeout=400
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    assert f"on {url}" in done.stdout
    rows = dataset.read(tmp_path / "with").set_index("method")
    odrp = KINDS["odrp"]
    best, _ = odrp_optimum(odrp.load(random_instance(seed=3, operators=4, nodes=3, max_replicas=2, slots=4), "t"))
    assert rows.loc["exact", "status"] == "optimal" and rows.loc["exact", "objective"] == pytest.approx(best, rel=1e-6)
    assert rows.loc["plugin_first_fit", "verified"]  # the shipped plugin ran in the authenticated executor
    assert [app["name"] for app in master_state(webui)["completedapps"]] == ["odrp bench"]
    for daemon in (MASTER, WORKER):  # both daemons run with authentication on
        log = next(logs.glob(f"*{daemon}*.out")).read_text()
        assert "SecurityManager: authentication enabled" in log, daemon

    # a driver without the secret never registers: the master rejects its unauthenticated messages
    master_log = next(logs.glob(f"*{MASTER}*.out"))
    proc = subprocess.Popen(
        [*command, "--out", str(tmp_path / "without")],
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,  # its own process group: its JVM ends with it
    )
    try:
        deadline = time.monotonic() + 240
        while "Expected SaslMessage" not in master_log.read_text() and proc.poll() is None:
            assert time.monotonic() < deadline, "the master did not reject the driver without a secret"
            time.sleep(0.5)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert "Expected SaslMessage" in master_log.read_text()
    assert dataset.files(tmp_path / "without") == []
    assert [app["name"] for app in master_state(webui)["completedapps"]] == ["odrp bench"]  # no second app
