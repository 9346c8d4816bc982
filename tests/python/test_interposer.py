"""`aloe run` runs (aloe-run:S[@KIND]) and libgomp:runtime,KIND: parsing, commands, validation,
the Interposer section's arithmetic (hand-made rows) and a bench against the fakes."""
import csv
import json

import pytest

from aloe_harness import interposer
from aloe_harness import matrix as mx
from aloe_harness import runner
from aloe_harness.runner import Run


# --- parsing ------------------------------------------------------------------------------

def test_runtime_and_aloe_run_forms():
    r = mx.parse_run("libgomp:runtime,dynamic,16")
    assert (r.runtime, r.schedule, r.app_runtime, r.app_schedule) == (
        "libgomp", "runtime,dynamic,16", "libgomp", "runtime")
    assert (r.omp_schedule, r.env, r.is_peer, r.is_aloe_run) == (
        "dynamic,16", {"OMP_SCHEDULE": "dynamic,16"}, True, False)
    plain = mx.parse_run("libgomp:runtime")
    assert (plain.app_schedule, plain.omp_schedule, plain.env) == ("runtime", None, {})
    assert mx.parse_run("libomp:runtime,nonmonotonic:dynamic,4").omp_schedule \
        == "nonmonotonic:dynamic,4"
    a = mx.parse_run("aloe-run:staggered,fs=0.5,chunk=8")
    assert (a.runtime, a.aloe_schedule, a.app_runtime, a.app_schedule, a.omp_schedule) == (
        "aloe-run", "staggered,fs=0.5,chunk=8", "libgomp", "runtime", None)
    assert a.is_aloe_run and not a.is_peer and a.label == "aloe-run:staggered,fs=0.5,chunk=8"
    f = mx.parse_run("aloe-run:forward@dynamic,16")
    assert (f.aloe_schedule, f.omp_schedule, f.env) == ("forward", "dynamic,16",
                                                         {"OMP_SCHEDULE": "dynamic,16"})
    assert mx.parse_run("aloe-run:program@static").omp_schedule == "static"
    # the other runs are as before
    d = mx.parse_run("libgomp:dynamic,4")
    assert (d.app_schedule, d.omp_schedule, d.env, d.aloe_schedule) == ("dynamic,4", None, {},
                                                                        None)


@pytest.mark.parametrize("bad, words", [
    ("libgomp:runtime,fastest", "'fastest' is not an OMP_SCHEDULE value"),
    ("libgomp:runtime,dynamic,0", "'dynamic,0' is not an OMP_SCHEDULE value"),
    ("libgomp:runtime,", "'' is not an OMP_SCHEDULE value"),
    ("aloe-run:", "expected runtime:schedule"),
    ("aloe-run:Adaptive", "'Adaptive' is not an aloe run schedule"),
    ("aloe-run:forward,chunk=4", "'forward' takes no options"),
    ("aloe-run:program@guided,x", "'@guided,x' is not an OMP_SCHEDULE value"),
    ("tbb:runtime", "'runtime' is not a tbb schedule"),
    ("aloe:runtime,dynamic", "'runtime,dynamic' is not a aloe schedule"),
])
def test_bad_forms_are_named(bad, words):
    with pytest.raises(mx.MatrixError) as e:
        mx.parse_run(bad)
    assert f"'{bad}'" in str(e.value) and words in str(e.value)


def test_command_line_lists_split_before_aloe_run():
    assert mx.split_runs(["aloe-run:adaptive,aloe:adaptive,aloe-run:forward@dynamic,16",
                          "libgomp:runtime,guided,4,aloe-run:staggered,fs=0.5,chunk=8"]) == [
        "aloe-run:adaptive", "aloe:adaptive", "aloe-run:forward@dynamic,16",
        "libgomp:runtime,guided,4", "aloe-run:staggered,fs=0.5,chunk=8"]


def test_interposer_matrix_is_what_issue_5_asks():
    from aloe_harness.provenance import REPO_ROOT
    m = mx.load(REPO_ROOT / "bench/matrices/interposer.toml")
    assert [w.name for w in m.workloads] == ["synthetic-ramp", "mandelbrot", "jacobi3d",
                                             "barnes-hut"]
    assert [r.name for r in m.noise] == ["none", "inject-p0.2-f0.2"]
    assert (m.threads, m.reps) == ([2], 5)
    for w in m.workloads:
        labels = [r.label for r in mx.runs_for(m, w)]
        chunk = next(x for x in labels if x.startswith("libgomp:runtime,dynamic,")).split(",")[-1]
        assert {"libgomp:runtime,static", f"libgomp:runtime,dynamic,{chunk}",
                f"libgomp:runtime,guided,{chunk}", "aloe-run:adaptive",
                f"aloe-run:program@dynamic,{chunk}", f"aloe-run:forward@dynamic,{chunk}",
                "aloe:adaptive"} <= set(labels), w.name


# --- commands and validation ---------------------------------------------------------------

def test_aloe_run_command_wraps_the_app(tmp_path):
    w = mx.Workload("synthetic-ramp", ("--dist", "ramp"), program="synthetic")
    run = mx.parse_run("aloe-run:forward@dynamic,16")
    argv = runner.app_command(tmp_path, w, run, 2, ["--noise-p", "0.2"], aloe="/x/aloe")
    assert argv == ["/x/aloe", "run", "--schedule", "forward", "--threads", "2", "--summary",
                    "none", "--", str(tmp_path / "aloe-app-synthetic"), "--dist", "ramp",
                    "--runtime", "libgomp", "--schedule", "runtime", "--threads", "2", "--json",
                    "-", "--noise-p", "0.2"]
    plain = runner.app_command(tmp_path, w, mx.parse_run("libgomp:runtime,guided,4"), 2, [])
    assert plain[plain.index("--schedule") + 1] == "runtime" and plain[0].endswith("synthetic")
    with pytest.raises(ValueError, match="needs the aloe tool"):
        runner.app_command(tmp_path, w, run, 2, [])
    assert runner.display_run_command(["/bin/true"], run) == "OMP_SCHEDULE=dynamic,16 /bin/true"


def test_each_run_gets_its_own_omp_schedule_or_none():
    base = {"PATH": "/bin", "OMP_SCHEDULE": "guided,9"}
    assert runner.run_environment(mx.parse_run("libgomp:runtime,static"), base) == {
        "PATH": "/bin", "OMP_SCHEDULE": "static"}
    assert runner.run_environment(mx.parse_run("aloe-run:adaptive"), base) == {"PATH": "/bin"}
    assert runner.run_environment(mx.parse_run("libgomp:guided"), base) == {"PATH": "/bin"}


GOOD = {"runtime": "libgomp", "schedule": "runtime", "threads": 2, "ok": True,
        "checksum_bits": "00ff", "openmp_library": "libgomp.so.1", "total_s": 1.0,
        "step_s": [0.5, 0.5],
        "runtime_schedule": {"value": "dynamic,16", "kind": "dynamic", "chunk": 16},
        "interposer": {"library": "libaloe-gomp.so", "ALOE_OMP_SCHEDULE": "forward"}}


def _check(run, change=None):
    record = {k: v for k, v in (GOOD | (change or {})).items() if v != "drop"}
    return runner.validate(record, exit_status=0, run=mx.parse_run(run), threads=2,
                           reference_bits="00ff")


def test_validation_of_aloe_run_records():
    assert _check("aloe-run:forward@dynamic,16") == []
    assert _check("libgomp:runtime,dynamic,16", {"interposer": None}) == []
    assert _check("libgomp:runtime,dynamic", {"runtime_schedule": {"kind": "dynamic",
                                                                   "chunk": 1}}) == []
    # libgomp reports OMP_SCHEDULE=static as monotonic:static, chunk 0
    assert _check("libgomp:runtime,static", {"runtime_schedule": {"kind": "monotonic:static",
                                                                  "chunk": 0}}) == []
    assert _check("libomp:runtime,nonmonotonic:dynamic,16", {
        "runtime": "libomp", "openmp_library": "libomp.so.5", "interposer": None}) == []
    assert any("no aloe interposer loaded" in e
               for e in _check("aloe-run:forward@dynamic,16", {"interposer": None}))
    assert any("no aloe interposer loaded" in e
               for e in _check("aloe-run:forward@dynamic,16", {"interposer": "drop"}))
    assert any("told ALOE_OMP_SCHEDULE='forward', expected 'adaptive'" in e
               for e in _check("aloe-run:adaptive@dynamic,16"))
    assert any("run-sched-var was 'dynamic,16', expected OMP_SCHEDULE='guided,16'" in e
               for e in _check("libgomp:runtime,guided,16"))
    assert any("expected OMP_SCHEDULE='dynamic,8'" in e
               for e in _check("aloe-run:forward@dynamic,8"))
    assert any("record schedule is 'dynamic,16', expected 'runtime'" in e
               for e in _check("aloe-run:forward@dynamic,16", {"schedule": "dynamic,16"}))
    assert any("expected libgomp.so*" in e
               for e in _check("aloe-run:forward@dynamic,16", {"openmp_library": "libomp.so.5"}))


# --- the Interposer section's arithmetic ---------------------------------------------------

def _row(run, median, spread, noise="none"):
    runtime, schedule = run.split(":", 1)
    return dict(workload="mandelbrot", noise=noise, threads=2, runtime=runtime,
                schedule=schedule, median_s=median, spread=spread)


@pytest.fixture
def rows():
    return [_row("libgomp:runtime,static", 2.0, 0.01),
            _row("libgomp:runtime,dynamic,4", 1.25, 0.02),
            _row("libgomp:runtime,guided,4", 1.0, 0.05),
            _row("libgomp:runtime", 1.6, 0.0),
            _row("aloe:adaptive", 0.9, 0.01),
            _row("aloe-run:adaptive", 0.95, 0.04),
            _row("aloe-run:forward@dynamic,4", 1.26, 0.01),
            _row("aloe-run:program@dynamic,4", 1.1, 0.03),
            _row("tbb:auto", 0.5, 0.0),                      # not libgomp: never a reference
            _row("libgomp:static", None, None),              # failed everywhere: left out
            _row("libgomp:runtime,static", 3.0, 0.0, noise="inject")]  # another group


def test_ratios_by_hand(rows):
    irows = interposer.rows(rows)
    got = {(r["run"], r["relation"], r["reference"]): r for r in irows}
    # adaptive: best libgomp is guided,4 (1.0); no @KIND, so its baseline is libgomp:runtime
    best = got["aloe-run:adaptive", "best libgomp", "libgomp:runtime,guided,4"]
    assert best["ratio"] == pytest.approx(0.95) and best["tie"]  # |1-0.95| <= 0.05
    assert got["aloe-run:adaptive", "same OMP_SCHEDULE", "libgomp:runtime"]["ratio"] \
        == pytest.approx(0.95 / 1.6)
    native = got["aloe-run:adaptive", "native aloe", "aloe:adaptive"]
    assert native["ratio"] == pytest.approx(0.95 / 0.9) and not native["tie"]
    assert native["reference_median_s"] == 0.9 and native["run_spread"] == 0.04
    each = [r for r in irows if r["run"] == "aloe-run:adaptive" and r["relation"] == "libgomp"]
    assert [(r["reference"], round(r["ratio"], 6)) for r in each] == [
        ("libgomp:runtime,static", 0.475), ("libgomp:runtime,dynamic,4", 0.76),
        ("libgomp:runtime,guided,4", 0.95), ("libgomp:runtime", 0.59375)]
    # forward: against the same OMP_SCHEDULE, 1.26 / 1.25 = 1.008: within 1%
    fwd = got["aloe-run:forward@dynamic,4", "same OMP_SCHEDULE", "libgomp:runtime,dynamic,4"]
    assert fwd["ratio"] == pytest.approx(1.008) and interposer.forward_verdict(fwd) == "pass"
    assert ("aloe-run:forward@dynamic,4", "native aloe", "aloe:forward") not in got
    prog = got["aloe-run:program@dynamic,4", "same OMP_SCHEDULE", "libgomp:runtime,dynamic,4"]
    assert prog["ratio"] == pytest.approx(0.88) and not prog["tie"]
    # the other group has no aloe-run run; nothing refers to tbb or the failed run
    assert {r["noise"] for r in irows} == {"none"}
    assert not any(r["reference"] in ("tbb:auto", "libgomp:static") for r in irows)


def test_forward_verdicts():
    def verdict(ratio, spreads):
        r = interposer.compare(_row("aloe-run:forward", ratio, spreads[0]),
                               _row("libgomp:runtime", 1.0, spreads[1]), interposer.SAME)
        return interposer.forward_verdict(r)
    assert verdict(0.97, (0.0, 0.0)) == "pass"
    assert verdict(1.01, (0.0, 0.0)) == "pass"
    assert verdict(1.02, (0.0, 0.0)) == "miss"
    assert verdict(1.02, (0.005, 0.03)) == "miss (tie)"


def test_no_aloe_run_rows_no_section(rows):
    plain = [r for r in rows if r["runtime"] != "aloe-run"]
    assert interposer.rows(plain) == [] and interposer.markdown([]) == []


def test_markdown_counts_and_csv(rows, tmp_path):
    irows = interposer.rows(rows)
    text = "\n".join(interposer.markdown(irows))
    assert text.startswith("## Interposer")
    assert ("| mandelbrot | none | 2 | adaptive | 4.0% | 0.950 (runtime,guided,4, spread 5.0%, "
            "tie) | 0.594 (spread 0.0%) | 1.056 (spread 1.0%) | runtime,static 0.475 · "
            "runtime,dynamic,4 0.760 · runtime,guided,4 0.950 · runtime 0.594 |") in text
    assert "### Forwarded loops: the interposer's own cost" in text
    assert ("| mandelbrot | none | 2 | forward@dynamic,4 | libgomp:runtime,dynamic,4 | 1.008 | "
            "1.0%, 2.0% | pass |") in text
    lines = interposer.counts(irows)
    assert lines[0] == ("aloe-run:adaptive / best libgomp: median 0.950 over 1 row (range "
                        "0.950–0.950); faster outside the spreads in 0, slower in 0, ties in 1")
    assert lines[-1] == ("forwarded loops within 1% of plain libgomp: 1/1 rows pass "
                         "(ratios: median 1.008, range 1.008–1.008)")
    path = tmp_path / "interposer.csv"
    interposer.write_csv(path, irows)
    with open(path, newline="") as f:
        back = list(csv.DictReader(f))
    assert len(back) == len(irows) and list(back[0]) == interposer.COLUMNS
    assert back[0]["run"] == "aloe-run:adaptive" and back[0]["relation"] == "best libgomp"
    assert float(back[0]["ratio"]) == pytest.approx(0.95) and back[0]["tie"] == "True"


# --- end to end against the fakes ----------------------------------------------------------

MATRIX = """
reps = 2
threads = [2]
noise = ["none", "inject:p=0.2,frac=0.2"]
runs = ["libgomp:static", "libgomp:runtime,dynamic,4", "libgomp:runtime,guided,4",
        "aloe-run:adaptive", "aloe-run:forward@dynamic,4", "aloe-run:program@dynamic,4",
        "aloe:static"]
[workloads.mandelbrot]
args = "--steps 6 --warmup 1"
"""


def test_bench_with_aloe_run_runs(bench, tmp_path):
    path = tmp_path / "interposer.toml"
    path.write_text(MATRIX)
    log = tmp_path / "calls.jsonl"
    status, out = bench(matrix=path, env={"FAKE_APP_LOG": str(log),
                                          "OMP_SCHEDULE": "guided,99"})
    assert status == 0
    entries = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    fwd = [e for e in entries if e["schedule"] == "forward@dynamic,4"]
    assert len(fwd) == 4 and all(e["valid"] for e in fwd)
    assert fwd[0]["command"].startswith("OMP_SCHEDULE=dynamic,4 ")
    assert " run --schedule forward --threads 2 --summary none -- " in fwd[0]["command"]
    assert fwd[0]["env"] == {"OMP_SCHEDULE": "dynamic,4"}
    assert fwd[0]["record"]["interposer"]["ALOE_OMP_SCHEDULE"] == "forward"
    # the harness's own OMP_SCHEDULE never leaks into a run
    adaptive = next(e for e in entries if e["schedule"] == "adaptive")
    assert adaptive["record"]["runtime_schedule"]["OMP_SCHEDULE"] is None
    summary = (out / "summary.md").read_text()
    assert "## Interposer" in summary and "### Forwarded loops" in summary
    assert "forwarded loops within 1% of plain libgomp: 2/2 rows pass" in summary
    assert (out / "interposer.csv").exists() and "Interposer" in (out / "report.html").read_text()
    calls = [json.loads(x) for x in log.read_text().splitlines()]
    assert sum(1 for c in calls if "runtime" in c) == 2 * 2 * 5  # 5 runtime runs, 2 regimes, 2 reps
    # aloe-run runs are neither aloe nor peers in the headline
    headline = summary.split("## Headline")[1].split("##")[0]
    assert "aloe-run" not in headline


def test_bench_refuses_an_aloe_without_run(bench, tmp_path, capsys):
    path = tmp_path / "interposer.toml"
    path.write_text(MATRIX)
    status, out = bench(matrix=path, env={"FAKE_ALOE_NO_RUN": "1"})
    assert status == 2 and not (out / "runs.jsonl").exists()
    assert "aloe-run runs need `aloe run`" in capsys.readouterr().err


def test_a_run_without_the_interposer_fails_loudly(bench, tmp_path, capsys):
    path = tmp_path / "interposer.toml"
    path.write_text(MATRIX)
    status, out = bench(matrix=path, env={"FAKE_ALOE_NO_PRELOAD": "1"})
    assert status == 1
    problems = (out / "problems.txt").read_text()
    assert "FAILED mandelbrot none aloe-run:adaptive t=2" in problems
    assert "no aloe interposer loaded" in problems


def test_the_aloe_tool_defaults_to_the_apps_build(tmp_path):
    from aloe_harness.__main__ import aloe_tool
    (tmp_path / "b/apps").mkdir(parents=True)
    assert aloe_tool("/given/aloe", str(tmp_path / "b/apps")) == "/given/aloe"
    (tmp_path / "b/tools/aloe").mkdir(parents=True)
    (tmp_path / "b/tools/aloe/aloe").write_text("")
    assert aloe_tool(None, str(tmp_path / "b/apps")) == str(tmp_path / "b/tools/aloe/aloe")
