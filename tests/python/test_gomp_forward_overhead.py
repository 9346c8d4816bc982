"""bench/micro/gomp_forward_overhead.py: its statistics by hand, callgrind parsing, and a run
against a fake program and the fake aloe."""
import importlib.util
import json
import stat
import sys
from pathlib import Path

import numpy as np
import pytest

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parents[1] / "bench" / "micro" / "gomp_forward_overhead.py"
_spec = importlib.util.spec_from_file_location("gomp_forward_overhead", SCRIPT)
gfo = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gfo)


def test_quantiles_match_numpy():
    xs = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    assert gfo.quantiles(xs) == pytest.approx(
        (np.percentile(xs, 25), np.median(xs), np.percentile(xs, 75)))


def test_compare_by_hand():
    times = {"plain": [1.0, 2.0, 1.0, 1.0], "forward": [1.01, 2.04, 0.99, 1.02]}
    c = gfo.compare(times)
    p, f = c["plain"], c["forward"]
    assert (p["median_s"], p["ratio_of_medians"], p["paired_ratio_median"]) == (1.0, 1.0, 1.0)
    # plain: p25 1.0, p75 1.25 -> spread 0.25
    assert p["spread"] == pytest.approx(0.25)
    # forward's median (1.01 + 1.02) / 2 = 1.015
    assert f["ratio_of_medians"] == pytest.approx(1.015)
    # paired: 1.01, 1.02, 0.99, 1.02 -> median 1.015, p25 1.005, p75 1.02
    assert (f["paired_ratio_median"], f["paired_ratio_p25"], f["paired_ratio_p75"]) == \
        pytest.approx((1.015, 1.005, 1.02))
    assert gfo.verdict(f) == ("missed: +1.50% (target under 1%); the paired p25 is inside "
                              "the target, so it is within the noise")
    assert gfo.verdict(f | {"paired_ratio_median": 1.004}) == "met: +0.40% (target under 1%)"
    assert gfo.verdict(f | {"paired_ratio_p25": 1.012}).endswith("(target under 1%)")
    assert gfo.variant_stats([2.0])["spread"] is None


def test_callgrind_file_parsing(tmp_path):
    f = tmp_path / "callgrind.1.out"
    f.write_text("# callgrind format\nversion: 1\ncmd: /b/prog --loops 20\nevents: Ir\n"
                 "fn=main\n1 5\nsummary: 123456\ntotals: 123456\n")
    assert gfo.callgrind_total(f) == 123456 and gfo.callgrind_cmd(f) == "/b/prog --loops 20"


FAKE_PROGRAM = '''
import json, os, sys
args = sys.argv[1:]
if "--calibrate" in args:
    print(json.dumps({"units_per_ns": 0.5}))
    sys.exit(0)
loops = int(args[args.index("--loops") + 1])
cost = {"forward": 1.005, "program": 0.98}.get(os.environ.get("ALOE_OMP_SCHEDULE"), 1.0)
print(json.dumps({"wall_s": loops * 1e-3 * cost, "checksum": "00ab",
                  "run_sched_var": os.environ.get("OMP_SCHEDULE")}))
'''


def _script(path: Path, target: Path) -> Path:
    path.write_text(f"#!/bin/sh\nexec '{sys.executable}' '{target}' \"$@\"\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_a_run_against_fakes(tmp_path, capsys):
    (tmp_path / "prog.py").write_text(FAKE_PROGRAM)
    prog = _script(tmp_path / "prog", tmp_path / "prog.py")
    aloe = _script(tmp_path / "aloe", HERE / "fake_aloe.py")
    out = tmp_path / "out"
    status = gfo.main(["--binary", str(prog), "--aloe", str(aloe), "--reps", "3", "--loops", "100",
                       "--no-callgrind", "--out", str(out)])
    assert status == 0
    result = json.loads((out / "result.json").read_text())
    assert result["settings"]["work_iters"] == 100 and result["settings"]["omp_schedule"] \
        == "dynamic,16"
    assert result["variants"]["forward"]["ratio_of_medians"] == pytest.approx(1.005)
    assert result["variants"]["program"]["paired_ratio_median"] == pytest.approx(0.98)
    assert result["target"]["forward"] == "met: +0.50% (target under 1%)"
    runs = [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]
    # interleaved and rotated: plain forward program, forward program plain, …
    assert [r["variant"] for r in runs][:6] == ["plain", "forward", "program",
                                                "forward", "program", "plain"]
    assert " run --schedule forward --threads 2 --summary none -- " in runs[1]["command"]
    text = (out / "result.md").read_text()
    assert "| forward | 0.1005 |" in text and "Not counted: --no-callgrind." in text
    assert (out / "machine.json").exists() and (out / "command.txt").exists()


def test_a_wrong_checksum_fails(tmp_path):
    (tmp_path / "prog.py").write_text(FAKE_PROGRAM.replace(
        '"00ab"', '"00ab" if os.environ.get("ALOE_OMP_SCHEDULE") != "program" else "ffff"'))
    prog = _script(tmp_path / "prog", tmp_path / "prog.py")
    aloe = _script(tmp_path / "aloe", HERE / "fake_aloe.py")
    status = gfo.main(["--binary", str(prog), "--aloe", str(aloe), "--reps", "2",
                       "--no-callgrind", "--out", str(tmp_path / "out")])
    assert status == 1
    assert "checksum ffff differs from 00ab" in (tmp_path / "out/problems.txt").read_text()
