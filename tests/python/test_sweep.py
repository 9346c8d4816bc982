"""The fs sweep: its matrix, the best point, its CSV."""
import pytest

from aloe_harness import matrix as mx
from aloe_harness import sweep


def test_sweep_matrix(matrix_file):
    m = sweep.sweep_matrix(mx.load(matrix_file), workload="jacobi3d", noise=["none"])
    labels = [r.label for r in m.runs]
    aloe = [x for x in labels if x.startswith("aloe:")]
    assert aloe[:4] == ["aloe:hybrid,fs=0", "aloe:staggered,fs=0", "aloe:hybrid,fs=0.1",
                        "aloe:staggered,fs=0.1"]
    assert labels[-1] == "aloe:staggered,fs=1"
    assert len(labels) == 22 + len(sweep.DEFAULT_PEERS)
    # the peers sit evenly among the sweep's runs, in their own order
    positions = [labels.index(p) for p in sweep.DEFAULT_PEERS]
    assert positions == sorted(positions) and positions[0] > 0 and positions[-1] < len(labels) - 1
    assert [w.name for w in m.workloads] == ["jacobi3d"] and m.workloads[0].args
    with pytest.raises(mx.MatrixError, match="exactly one regime"):
        sweep.sweep_matrix(mx.load(matrix_file), workload="spmv", noise=["none", "inject:p=1,us=1"])


def test_sweep_rows_mark_the_minimum_of_each_kind():
    def row(runtime, schedule, median):
        return dict(workload="w", noise="none", threads=2, runtime=runtime, schedule=schedule,
                    median_s=median, reps=3, spread=0.0, ratio_to_best_peer=None, efficiency=None)
    rows = [row("aloe", f"hybrid,fs={v:g}", m) for v, m in ((0, 3.0), (0.5, 1.2), (1, 2.0))]
    rows += [row("aloe", f"staggered,fs={v:g}", m) for v, m in ((0, 1.5), (1, 1.1))]
    rows += [row("libgomp", "guided", 1.0)]
    best = {(r["kind"], r["fs"]) for r in sweep.sweep_rows(rows) if r["best"]}
    assert best == {("hybrid", 0.5), ("staggered", 1.0)}


def test_sweep_keeps_a_chunk_and_leaves_the_workloads_own_runs_out():
    m = mx.from_dict({
        "reps": 1, "threads": [2], "noise": ["none"], "runs": ["libgomp:static"],
        "workloads": {"barnes-hut": {"runs": ["libgomp:dynamic,8", "aloe:dynamic,chunk=8"]}},
        "sweep": {"fs": [0.0, 1.0], "schedules": ["hybrid,chunk=8"], "peers": ["libgomp:guided"]}})
    s = sweep.sweep_matrix(m, workload="barnes-hut", noise=["none"])
    assert [r.label for r in mx.runs_for(s, s.workloads[0])] == [
        "aloe:hybrid,chunk=8,fs=0", "libgomp:guided", "aloe:hybrid,chunk=8,fs=1"]

    def row(schedule, median):
        return dict(workload="w", noise="none", threads=2, runtime="aloe", schedule=schedule,
                    median_s=median, reps=3, spread=0.0, ratio_to_best_peer=None, efficiency=None)
    rows = sweep.sweep_rows([row("hybrid,chunk=8,fs=0", 2.0), row("hybrid,fs=0.5,chunk=8", 1.0)])
    assert {(r["kind"], r["fs"], r["best"]) for r in rows} == {
        ("hybrid,chunk=8", 0.0, ""), ("hybrid,chunk=8", 0.5, "best")}


def test_sweep_end_to_end_marks_the_best_fs(bench):
    status, out = bench("--sweep", "fs", "--workload", "jacobi3d", "--noise", "none",
                        "--reps", "1")
    assert status == 0
    rows = sweep.read_csv(out / "sweep.csv")
    best = {r["kind"]: r["fs"] for r in rows if r["best"] == "best"}
    assert best == {"hybrid": 0.8, "staggered": 0.9}  # the fake app's minima
    assert "**fs=0.8**" in (out / "summary.md").read_text()
    assert (out / "plots" / "sweep-jacobi3d-none-t2.png").stat().st_size > 0
