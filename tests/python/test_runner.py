"""Run order, commands, validation, and the runner against the fake app."""
import json

import pytest

from aloe_harness import matrix as mx
from aloe_harness import runner
from aloe_harness.runner import Run


def _matrix(runs, noise=("none",), workloads=("spmv",), reps=3):
    return mx.from_dict({"reps": reps, "threads": [2], "noise": list(noise), "runs": list(runs),
                         "workloads": {w: {"args": "--steps 5"} for w in workloads}})


def test_interleaving_rotates_by_rep():
    m = _matrix(["libgomp:static", "libgomp:guided", "aloe:static"])
    order = [(rep, c.run.label) for rep, c in runner.interleave(runner.configs(m), m.reps)]
    a, b, c = "libgomp:static", "libgomp:guided", "aloe:static"
    assert order == [(0, a), (0, b), (0, c), (1, b), (1, c), (1, a), (2, c), (2, a), (2, b)]


def test_interleaving_rotates_groups_too_and_runs_everything_once_per_rep():
    m = _matrix(["libgomp:static", "aloe:static"], noise=["none", "inject:p=0.5,us=10"],
                reps=2)
    order = runner.interleave(runner.configs(m), m.reps)
    groups = [c.regime.name for rep, c in order]
    assert groups == ["none", "none", "inject-p0.5-us10", "inject-p0.5-us10",
                      "inject-p0.5-us10", "inject-p0.5-us10", "none", "none"]
    for rep in range(2):
        assert len({(c.regime.name, c.run.label) for r, c in order if r == rep}) == 4


def test_app_command(tmp_path):
    w = mx.Workload("jacobi3d", ("--nx", "64"))
    argv = runner.app_command(tmp_path, w, mx.parse_run("libomp:nonmonotonic:dynamic,1"), 2,
                              ["--noise-p", "0.2", "--noise-us", "100"])
    assert argv == [str(tmp_path / "aloe-app-jacobi3d"), "--nx", "64", "--runtime", "libomp",
                    "--schedule", "nonmonotonic:dynamic,1", "--threads", "2", "--json", "-",
                    "--noise-p", "0.2", "--noise-us", "100"]
    assert runner.app_command(tmp_path, w, Run("aloe", "static"), 2, [], timeline=True)[-1] \
        == "--timeline"


GOOD = {"runtime": "libgomp", "schedule": "guided", "threads": 2, "ok": True,
        "checksum_bits": "00ff", "openmp_library": "libgomp.so.1", "total_s": 1.0,
        "step_s": [0.5, 0.5]}


def _check(record=None, status=0, run="libgomp:guided", ref="00ff"):
    return runner.validate(GOOD | (record or {}), exit_status=status,
                           run=mx.parse_run(run), threads=2, reference_bits=ref)


def test_validation():
    assert _check() == []
    assert "exit status 3 (result check failed)" in _check(status=3)[0]
    assert any("ok=false: residual" in e for e in _check(
        {"ok": False, "checks": [{"what": "residual", "ok": False}]}))
    assert any("differ from the serial run's 00ff" in e for e in _check({"checksum_bits": "1"}))
    assert any("openmp_library is 'libomp.so.5', expected libgomp.so*" in e
               for e in _check({"openmp_library": "libomp.so.5"}))
    assert _check({"runtime": "libomp", "schedule": "guided", "openmp_library":
                   "/usr/lib/llvm-14/lib/libomp.so.5"}, run="libomp:guided") == []
    assert any("expected 'libomp.so*'" in e or "expected libomp.so*" in e for e in _check(
        {"runtime": "libomp", "openmp_library": "libgomp.so.1"}, run="libomp:guided"))
    assert any("schedule is 'static'" in e for e in _check({"schedule": "static"}))
    assert runner.validate(None, exit_status=1, run=Run("aloe", "static"), threads=2,
                           reference_bits="0") == ["exit status 1 (runtime failure)",
                                                   "no JSON record on stdout"]


def test_runner_runs_serial_calibration_and_interleaved_reps(apps_dir, tmp_path, monkeypatch):
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_APP_LOG", str(log))
    m = _matrix(["libgomp:static", "aloe:hybrid,fs=0.8"], noise=["none", "inject:p=0.2,frac=0.2"],
                reps=2)
    out = runner.Runner(apps_dir, tmp_path / "runs.jsonl").execute(m)
    assert out.ok and not out.problems
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    roles = [e["role"] for e in out.entries]
    # rep 0: the reference serial run, the calibration, 4 timed runs; rep 1: a serial run
    # (the ideal gets repetitions too), then 4 timed runs.
    assert roles == ["serial", "calibration"] + ["timed"] * 4 + ["serial"] + ["timed"] * 4
    assert [e["rep"] for e in out.entries if e["role"] == "serial"] == [0, 1]
    assert "serial" in calls[0] and "--timeline" not in sum(calls, [])
    # calibration: libgomp static, quiet median 10 ms / 2 threads = 5 ms; δ = 0.2 × 5 ms
    cal = out.entries[1]
    assert (cal["runtime"], cal["schedule"], cal["noise_flags"]) == ("libgomp", "static", [])
    assert cal["noise_us"] == {"inject-p0.2-f0.2": 1000}
    injected = [e for e in out.entries if e["noise"] == "inject-p0.2-f0.2"]
    assert all(e["noise_flags"] == ["--noise-p", "0.2", "--noise-us", "1000"] for e in injected)
    lines = (tmp_path / "runs.jsonl").read_text().splitlines()
    assert len(lines) == 11 and json.loads(lines[1])["quiet_step_s"] == pytest.approx(0.005)


@pytest.mark.parametrize("variable, words", [
    ("FAKE_APP_FAIL", "exit status 1"),
    ("FAKE_APP_BAD_CHECKSUM", "differ from the serial run's"),
    ("FAKE_APP_WRONG_LIB", "the wrong OpenMP runtime was loaded"),
])
def test_failures_are_recorded_and_the_rest_goes_on(apps_dir, tmp_path, monkeypatch, capsys,
                                                    variable, words):
    monkeypatch.setenv(variable, "libgomp:guided")
    m = _matrix(["libgomp:static", "libgomp:guided", "aloe:static"])
    out = runner.Runner(apps_dir, tmp_path / "runs.jsonl").execute(m)
    bad = [e for e in out.entries if not e["valid"]]
    assert not out.ok and len(bad) == 3 and len(out.problems) == 3
    assert all(e["schedule"] == "guided" and any(words in x for x in e["errors"]) for e in bad)
    # 3 serial runs (one per rep) + the other two runs × 3 reps
    assert sum(e["valid"] for e in out.entries) == 3 + 6
    assert "*** FAILED spmv none libgomp:guided" in capsys.readouterr().err


def test_a_failed_serial_run_skips_its_workload(apps_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("FAKE_APP_FAIL", "serial:serial")
    m = _matrix(["libgomp:static"], workloads=["spmv", "jacobi3d"], reps=1)
    out = runner.Runner(apps_dir, tmp_path / "runs.jsonl").execute(m)
    assert [e["role"] for e in out.entries] == ["serial", "serial"]
    assert any("serial reference run failed" in p for p in out.problems)


def test_progress_line(apps_dir, tmp_path, capsys):
    runner.Runner(apps_dir, tmp_path / "runs.jsonl").execute(_matrix(["libgomp:guided"], reps=2))
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith("[1/4] spmv none serial:serial t=1 reference  elapsed 0m00s eta ?")
    assert err[2].startswith("[3/4] spmv none serial:serial t=1 rep 2/2  elapsed ")
    assert err[3].startswith("[4/4] spmv none libgomp:guided t=2 rep 2/2  elapsed ")


def test_timelines_run_after_the_timed_runs(apps_dir, tmp_path, monkeypatch):
    log = tmp_path / "calls.jsonl"
    monkeypatch.setenv("FAKE_APP_LOG", str(log))
    m = _matrix(["libgomp:static", "libgomp:guided", "aloe:hybrid,fs=0.8", "aloe:static"], reps=1)
    out = runner.Runner(apps_dir, tmp_path / "runs.jsonl").execute(m, timelines=True)
    timeline = [e for e in out.entries if e["role"] == "timeline"]
    # best peer (guided), best aloe (hybrid), and libgomp:static
    assert {(e["runtime"], e["schedule"]) for e in timeline} == {
        ("libgomp", "guided"), ("aloe", "hybrid,fs=0.8"), ("libgomp", "static")}
    assert all(e["record"]["timeline"] for e in timeline)
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert [("--timeline" in c) for c in calls] == [False] * 5 + [True] * 3
