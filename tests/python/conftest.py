"""Fixtures: the harness on sys.path, a folder of fake workload programs and a fake aloe."""
import stat
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1] / "bench" / "harness"))

WORKLOADS = ("synthetic", "jacobi3d", "stencil1d", "mandelbrot", "spmv", "barnes-hut")


def _script(path: Path, target: Path, *first: str) -> Path:
    words = " ".join(f"'{w}'" for w in (sys.executable, str(target), *first))
    path.write_text(f'#!/bin/sh\nexec {words} "$@"\n')
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def make_apps(folder: Path, mpi: bool = False) -> Path:
    """A folder of aloe-app-<workload> wrappers around fake_app.py; with mpi, also
    aloe-app-jacobi3d-mpi and a build's lib/libaloe-mpi.so (an empty file) beside it."""
    folder.mkdir()
    for w in WORKLOADS + (("jacobi3d-mpi",) if mpi else ()):
        _script(folder / f"aloe-app-{w}", HERE / "fake_app.py", "--fake-workload", w)
    if mpi:
        (folder.parent / "lib").mkdir(exist_ok=True)
        (folder.parent / "lib" / "libaloe-mpi.so").write_text("")
    return folder


def fake_mpirun(folder: Path) -> Path:
    """An executable `mpirun` around fake_mpirun.py in folder."""
    return _script(folder / "mpirun", HERE / "fake_mpirun.py")


MATRIX = """
description = "test matrix"
reps = 3
threads = [2]
noise = ["none", "inject:p=0.2,frac=0.2"]
runs = ["libgomp:static", "libgomp:guided", "aloe:hybrid,fs=0.8", "tbb:affinity"]
[workloads.jacobi3d]
args = "--steps 10 --warmup 1"
quick = "--steps 4"
[workloads.spmv]
args = ["--steps", "10", "--base-ms", "20"]
"""


def run_bench(root: Path, *extra, out="out", matrix=None, env=None):
    """Runs `bench` in-process against fakes under root; returns (exit status, folder)."""
    from aloe_harness.__main__ import main

    if not (root / "apps").exists():
        make_apps(root / "apps")
        _script(root / "aloe", HERE / "fake_aloe.py")
        (root / "m.toml").write_text(MATRIX)
    folder = root / out
    argv = ["bench", "--matrix", str(matrix or root / "m.toml"), "--apps-dir",
            str(root / "apps"), "--aloe", str(root / "aloe"), "--out", str(folder), *extra]
    with pytest.MonkeyPatch.context() as mp:
        for k, v in (env or {}).items():
            mp.setenv(k, v)
        return main(argv), folder


@pytest.fixture
def apps_dir(tmp_path):
    return make_apps(tmp_path / "apps")


@pytest.fixture
def matrix_file(tmp_path):
    """A small matrix: two workloads, quiet and injected noise, four runs, 3 reps."""
    path = tmp_path / "m.toml"
    path.write_text(MATRIX)
    return path


@pytest.fixture
def bench(tmp_path):
    """bench(*flags, out=…, env=…) against the fakes in a fresh folder."""
    root = tmp_path / "bench"
    root.mkdir()
    return lambda *extra, **kw: run_bench(root, *extra, **kw)


@pytest.fixture(scope="module")
def timeline_results(tmp_path_factory):
    """One bench run with --timelines and 2 reps, shared by a module's tests."""
    status, out = run_bench(tmp_path_factory.mktemp("bench"), "--timelines", "--reps", "2")
    assert status == 0
    return out
