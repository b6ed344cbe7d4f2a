"""The installed layout: one ``odrp`` package tree that a user's own folders cannot shadow."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BROKEN = "raise RuntimeError(\"a user's own package, not the toolkit's\")\n"


def test_a_users_own_heuristics_and_benchmarks_folders_do_not_break_the_toolkit(tmp_path):
    for name in ("heuristics", "benchmarks"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text(BROKEN)
        (tmp_path / name / "storm.py").write_text(BROKEN)
    instance = tmp_path / "debs.json"
    shutil.copy(ROOT / "instances" / "odrp" / "debs2015-020.json", instance)

    def odrp(*args: str) -> subprocess.CompletedProcess:
        # python -m puts the working directory first on sys.path: the user's folders come before ours
        return subprocess.run(
            [sys.executable, "-m", "odrp.cli", *args], cwd=tmp_path, capture_output=True, text=True, timeout=300
        )

    methods = odrp("methods", "--json")
    assert methods.returncode == 0, methods.stderr
    assert {"exact", "storm_default", "odrp_greedy", "hetero_greedy"} <= set(json.loads(methods.stdout))
    solved = odrp("solve", str(instance), "--method", "storm_default", "--json")
    assert solved.returncode == 0, solved.stderr
    assert json.loads(solved.stdout)["verified"] is True
    code = "import odrp.registry, odrp.bench.runner, odrp.heuristics.storm as m; print(m.__file__)"
    imported = subprocess.run(
        [sys.executable, "-c", code],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert imported.returncode == 0, imported.stderr
    assert str(tmp_path) not in imported.stdout


def test_the_wheel_installs_only_the_odrp_package_tree_and_the_odrp_command(tmp_path):
    source = tmp_path / "source"  # a copy: building writes build/ and *.egg-info next to the sources
    skip = shutil.ignore_patterns(".*", "build", "dist", "out", "*.egg-info", "__pycache__", "spark-warehouse")
    shutil.copytree(ROOT, source, symlinks=True, ignore=skip)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--wheel-dir", str(tmp_path), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = tmp_path.glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        info = next(n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD"))
        entry_points = archive.read(f"{info}/entry_points.txt").decode()
    assert {name.split("/")[0] for name in names} == {"odrp", info}
    assert any(name.startswith("odrp/heuristics/") and name.endswith("storm.py") for name in names)
    assert any(name.startswith("odrp/kinds/throughput/exact/") for name in names)
    assert not any(name.startswith(("odrp/benchmarks", "benchmarks/", "heuristics/", "tests/")) for name in names)
    assert "[console_scripts]\nodrp = odrp.cli:main" in entry_points
