"""Matrix files and command-line overrides."""
import pytest

from aloe_harness import matrix as mx


def test_run_splits_on_first_colon_only():
    r = mx.parse_run("libomp:nonmonotonic:dynamic,1")
    assert (r.runtime, r.schedule) == ("libomp", "nonmonotonic:dynamic,1")
    r = mx.parse_run("aloe:hybrid,fs=0.8")
    assert (r.runtime, r.schedule, r.label) == ("aloe", "hybrid,fs=0.8", "aloe:hybrid,fs=0.8")
    assert r.is_peer is False and mx.parse_run("tbb:affinity").is_peer


@pytest.mark.parametrize("bad, words", [
    ("gomp:static", "unknown runtime 'gomp'"),
    ("libgomp", "expected runtime:schedule"),
    ("libgomp:", "expected runtime:schedule"),
    ("libgomp:fastest", "'fastest' is not a libgomp schedule"),
    ("tbb:guided", "'guided' is not a tbb schedule"),
    ("serial:serial", "added automatically"),
])
def test_bad_run_is_named(bad, words):
    with pytest.raises(mx.MatrixError) as e:
        mx.parse_run(bad)
    assert f"'{bad}'" in str(e.value) and words in str(e.value)


def test_command_line_lists_split_where_a_new_entry_starts():
    assert mx.split_runs(["aloe:hybrid,fs=0.8,libgomp:guided", "libomp:nonmonotonic:dynamic,1"]) \
        == ["aloe:hybrid,fs=0.8", "libgomp:guided", "libomp:nonmonotonic:dynamic,1"]
    assert mx.split_runs(["tbb:simple,4;aloe:tasklets,n=64,fs=0.5"]) \
        == ["tbb:simple,4", "aloe:tasklets,n=64,fs=0.5"]
    assert mx.split_regimes(["none,inject:p=0.2,frac=0.2,background:cpu=1,duty=0.5"]) \
        == ["none", "inject:p=0.2,frac=0.2", "background:cpu=1,duty=0.5"]


def test_load_reads_every_field(matrix_file):
    m = mx.load(matrix_file)
    assert [w.name for w in m.workloads] == ["jacobi3d", "spmv"]
    assert m.workloads[0].args == ("--steps", "10", "--warmup", "1")
    assert m.workloads[1].args == ("--steps", "10", "--base-ms", "20")
    assert [r.label for r in m.runs][2] == "aloe:hybrid,fs=0.8"
    assert [r.name for r in m.noise] == ["none", "inject-p0.2-f0.2"]
    assert (m.threads, m.reps, m.description) == ([2], 3, "test matrix")


def test_task_workloads_listed():
    from aloe_harness.provenance import REPO_ROOT
    tasks = mx.load(REPO_ROOT / "bench/matrices/tasks.toml")
    assert {w.app for w in tasks.workloads} == set(mx.TASK_WORKLOADS)
    assert not set(mx.TASK_WORKLOADS) & set(mx.WORKLOADS)
    # `aloe bench --workloads fib` over any matrix: the program's own defaults.
    demo = mx.load(REPO_ROOT / "bench/matrices/demo.toml")
    picked = mx.apply_overrides(demo, workloads=["fib", "stencil1d-tasks"])
    assert [(w.name, w.app, w.args) for w in picked.workloads] == [("fib", "fib", ()),
                                                                   ("stencil1d-tasks", "stencil1d-tasks", ())]


def test_shipped_matrices_load():
    from aloe_harness.provenance import REPO_ROOT
    full = mx.load(REPO_ROOT / "bench/matrices/full.toml")
    assert {w.app for w in full.workloads} == set(mx.WORKLOADS)
    # Every workload meets every peer family, each dynamic one with the workload's chunk.
    for w in full.workloads:
        labels = {r.label for r in mx.runs_for(full, w)}
        assert {"libgomp:static", "libgomp:guided", "tbb:affinity", "aloe:static"} <= labels
        for family in ("libgomp:dynamic,", "libomp:nonmonotonic:dynamic,", "tbb:simple,",
                       "aloe:hybrid,", "aloe:staggered,"):
            assert any(x.startswith(family) for x in labels), (w.name, family)
    assert len(mx.load(REPO_ROOT / "bench/matrices/demo.toml").runs) >= 4


BASE = """reps = 2
threads = [2]
noise = ["none"]
runs = ["libgomp:static"]
[workloads.spmv]
args = "--rows 100"
"""


@pytest.mark.parametrize("text, words", [
    (BASE + "color = 1\n", "unknown key(s) color"),
    (BASE.replace('args = "--rows 100"', 'argz = "x"'), "workload 'spmv': unknown key(s) argz"),
    (BASE + "[workloads.lu]\nargs = ''\n", "workload 'lu': unknown"),
    (BASE.replace('["libgomp:static"]', '["libgomp:static", "omp:guided"]'), "run 'omp:guided'"),
    (BASE.replace('["none"]', '["inject:p=2,us=5"]'), "regime 'inject:p=2,us=5'"),
    (BASE.replace("reps = 2", "reps = 0"), "reps = 0"),
    (BASE.replace("[2]", "[2, -1]"), "threads entry -1"),
    (BASE.replace("--rows 100", "--rows 100 --threads 4"), "sets --threads"),
    (BASE.replace('["libgomp:static"]', '["libgomp:static", "libgomp:static"]'), "listed twice"),
    (BASE.replace("reps = 2\n", ""), "missing key 'reps'"),
    ("reps = [", "not valid TOML"),
])
def test_bad_matrix_names_the_entry(tmp_path, text, words):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(mx.MatrixError) as e:
        mx.load(path)
    assert words in str(e.value) and "bad.toml" in str(e.value)


def test_overrides(matrix_file):
    m = mx.load(matrix_file)
    o = mx.apply_overrides(m, workloads=["spmv", "mandelbrot"], runs=["libomp:guided"],
                           noise=["background:cpu=1,duty=0.5"], threads=[1, 2], reps=5)
    assert [w.name for w in o.workloads] == ["spmv", "mandelbrot"]
    assert o.workloads[1].args == ()  # not in the file: the app's defaults
    assert [r.label for r in o.runs] == ["libomp:guided"]
    assert [r.name for r in o.noise] == ["bg-cpu1-d0.5"]
    assert (o.threads, o.reps) == ([1, 2], 5)
    assert [r.label for r in m.runs][0] == "libgomp:static"  # the original is unchanged
    q = mx.apply_overrides(m, quick=True)
    assert q.workloads[0].args[-2:] == ("--steps", "4") and q.reps == mx.QUICK_REPS
    with pytest.raises(mx.MatrixError, match="workload 'nbody'"):
        mx.apply_overrides(m, workloads=["nbody"])


def test_matrix_names_resolve_to_the_matrices_folder(tmp_path):
    from aloe_harness.__main__ import _matrix_path
    from aloe_harness.provenance import MATRICES_DIR
    assert _matrix_path("full") == MATRICES_DIR / "full.toml"
    assert _matrix_path(str(tmp_path / "mine.toml")) == tmp_path / "mine.toml"


def test_command_lines_show_repository_paths_relative():
    from aloe_harness.provenance import REPO_ROOT, display_command
    line = display_command(["python", f"--out={REPO_ROOT}/bench/results/x",
                            str(REPO_ROOT / "build/release/apps"), "aloe:hybrid,fs=0.8"])
    assert line == "python --out=bench/results/x build/release/apps aloe:hybrid,fs=0.8"


def test_workload_can_name_its_program_and_add_runs():
    m = mx.from_dict({
        "reps": 1, "threads": [2], "noise": ["none"], "runs": ["libgomp:static"],
        "workloads": {
            "spmv": {"runs": ["libgomp:dynamic,256", "libgomp:static"]},
            "synthetic-ramp": {"program": "synthetic", "args": "--dist ramp"},
        }})
    spmv, ramp = m.workloads
    assert (spmv.app, ramp.app, ramp.name) == ("spmv", "synthetic", "synthetic-ramp")
    # The matrix's runs first, then the workload's own, each once.
    assert [r.label for r in mx.runs_for(m, spmv)] == ["libgomp:static", "libgomp:dynamic,256"]
    assert [r.label for r in mx.runs_for(m, ramp)] == ["libgomp:static"]


@pytest.mark.parametrize("spec, words", [
    ({"program": "nbody"}, "program 'nbody' is unknown"),
    ({"program": "spmv", "runs": ["libgomp:fastest"]}, "'fastest' is not a libgomp schedule"),
    ({"program": "spmv", "runs": []}, "must be a non-empty list"),
])
def test_bad_workload_program_or_runs_is_named(spec, words):
    with pytest.raises(mx.MatrixError) as e:
        mx.from_dict({"reps": 1, "threads": [2], "noise": ["none"], "runs": ["libgomp:static"],
                      "workloads": {"custom-name": spec}})
    assert words in str(e.value)


def test_unknown_workload_without_program_is_named():
    with pytest.raises(mx.MatrixError) as e:
        mx.from_dict({"reps": 1, "threads": [2], "noise": ["none"], "runs": ["libgomp:static"],
                      "workloads": {"nbody": {}}})
    assert "workload 'nbody': unknown" in str(e.value)


def test_fs_sweep_expands_to_one_run_per_fs_after_the_workloads_runs():
    m = mx.from_dict({
        "reps": 1, "threads": [2], "noise": ["none"], "runs": ["aloe:static"],
        "fs_values": [0.0, 0.5, 1.0],
        "workloads": {"spmv": {"runs": ["libgomp:dynamic,64"], "fs_sweep": "staggered,chunk=64"},
                      "jacobi3d": {"fs_sweep": "hybrid"},
                      "mandelbrot": {}}})
    spmv, jacobi, mandel = m.workloads
    assert [r.label for r in mx.runs_for(m, spmv)] == [
        "aloe:static", "libgomp:dynamic,64", "aloe:staggered,fs=0,chunk=64",
        "aloe:staggered,fs=0.5,chunk=64", "aloe:staggered,fs=1,chunk=64"]
    assert [r.label for r in jacobi.runs] == ["aloe:hybrid,fs=0", "aloe:hybrid,fs=0.5",
                                              "aloe:hybrid,fs=1"]
    assert mandel.runs == ()
    # without fs_values: 0, 0.1, …, 1
    d = mx.from_dict({"reps": 1, "threads": [2], "noise": ["none"], "runs": ["aloe:static"],
                      "workloads": {"spmv": {"fs_sweep": "staggered,chunk=8"}}})
    assert [r.schedule for r in d.workloads[0].runs][1::5] == [
        "staggered,fs=0.1,chunk=8", "staggered,fs=0.6,chunk=8"]
    assert len(d.workloads[0].runs) == 11


@pytest.mark.parametrize("top, spec, words", [
    ({}, {"fs_sweep": "staggered,fs=0.5"}, "sets fs itself"),
    ({}, {"fs_sweep": "staggered,chunk=4,fs=0.5"}, "sets fs itself"),
    ({}, {"fs_sweep": ["staggered"]}, "expected an aloe schedule without fs"),
    ({}, {"fs_sweep": "Staggered chunk"}, "expected an aloe schedule without fs"),
    ({"fs_values": [0.5, 1.5]}, {"fs_sweep": "staggered"}, "fs_values = [0.5, 1.5]"),
    ({"fs_values": []}, {"fs_sweep": "staggered"}, "fs_values = []"),
    ({"fs_values": [0.5, 0.5]}, {"fs_sweep": "staggered"}, "fs value '0.5' is listed twice"),
    ({}, {"runs": ["aloe:staggered,fs=0.5,chunk=4"], "fs_sweep": "staggered,chunk=4"},
     "'aloe:staggered,fs=0.5,chunk=4' is listed twice"),
])
def test_bad_fs_sweep_is_named(top, spec, words):
    with pytest.raises(mx.MatrixError) as e:
        mx.from_dict({"reps": 1, "threads": [2], "noise": ["none"], "runs": ["aloe:static"],
                      "workloads": {"spmv": spec}} | top)
    assert words in str(e.value)


def test_adaptive_matrix_is_full_with_five_regimes_and_the_fs_sweep():
    from aloe_harness.provenance import REPO_ROOT
    full = mx.load(REPO_ROOT / "bench/matrices/full.toml")
    m = mx.load(REPO_ROOT / "bench/matrices/adaptive.toml")
    assert [r.name for r in m.noise] == ["none", "inject-p0.2-f0.2", "inject-p0.5-f0.5",
                                         "bg-cpu1-d1", "bg-cpu1-d0.5"]
    assert (m.threads, m.reps) == ([2], 5)
    assert [(w.name, w.app, w.args, w.quick) for w in m.workloads] == [
        (w.name, w.app, w.args, w.quick) for w in full.workloads]
    for w, f in zip(m.workloads, full.workloads):
        labels = [r.label for r in mx.runs_for(m, w)]
        peers = [r.label for r in mx.runs_for(full, f) if r.is_peer]
        assert [x for x in labels if not x.startswith("aloe:")] == peers
        chunk = next(x for x in peers if x.startswith("libgomp:dynamic,")).split(",")[1]
        assert [x for x in labels if x.startswith("aloe:")] == (
            ["aloe:static", "aloe:adaptive", "aloe:adaptive,search=local"]
            + [f"aloe:staggered,fs={i / 10:g},chunk={chunk}" for i in range(11)])
    q = mx.apply_overrides(m, quick=True)
    assert q.reps == 2 and all(w.args[-len(w.quick):] == w.quick and w.quick
                               for w in q.workloads)
