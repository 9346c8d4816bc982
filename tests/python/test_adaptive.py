"""The Adaptive section: ratios and targets by hand, adaptive.csv, plots, report, absence."""
import csv

import pytest

from aloe_harness import adaptive, summary
from aloe_harness import matrix as mx
from aloe_harness.provenance import REPO_ROOT

PNG = b"\x89PNG\r\n\x1a\n"


def _site(chosen, at, seconds=1.0, name="loop"):
    return {"site": name, "mode": "local", "state": "converged" if at > 0 else "searching",
            "chosen": chosen, "converged_at": at,
            "steps": [{"invocation": 1, "schedule": "static", "fs": 1.0, "chunk": 0,
                       "seconds": seconds}]}


def _entry(workload, noise, run, total, tuning=None):
    runtime, schedule = run.split(":", 1)
    record = {"total_s": total, "step_s": [total]}
    if tuning is not None:
        record["tuning"] = tuning
    return {"role": "timed", "workload": workload, "noise": noise, "runtime": runtime,
            "schedule": schedule, "threads": 2, "valid": True, "record": record, "rep": 0}


def _runs(workload, noise, run, totals, tunings=None):
    return [_entry(workload, noise, run, t, tunings[i] if tunings else None)
            for i, t in enumerate(totals)]


def _sweep(workload, noise, medians, chunk=16):
    return [e for fs, m in medians.items()
            for e in _runs(workload, noise, f"aloe:staggered,fs={fs:g},chunk={chunk}", [m] * 3)]


@pytest.fixture
def entries():
    """Three groups whose ratios are worked out by hand in the tests below."""
    quiet = ("synthetic", "none")
    out = (_runs(*quiet, "libgomp:static", [2.0, 2.2, 2.4])
           + _runs(*quiet, "libgomp:guided", [1.95, 2.0, 2.05])  # best peer: 2.0
           + _runs(*quiet, "tbb:affinity", [2.1] * 3)
           + _runs(*quiet, "aloe:static", [2.0] * 3)
           + _sweep(*quiet, {0.0: 2.6, 0.5: 2.1, 0.9: 1.8, 1.0: 1.9})  # best fs 0.9: 1.8
           # A lone staggered run of another chunk is faster, but it is not the sweep.
           + _runs(*quiet, "aloe:staggered,fs=0.5,chunk=64", [1.5] * 3)
           + _runs(*quiet, "aloe:adaptive", [1.85, 1.9, 1.95], [
               # The main site is the one with the most loop time, not the first.
               [_site("dynamic,chunk=1", 3, 0.1, "other"),
                _site("staggered,fs=0.9,chunk=16", 12)],
               [_site("staggered,fs=0.9,chunk=16", 14)],
               [_site("static", -1)]]))
    heavy = ("synthetic", "inject-p0.5-f0.5")
    out += (_runs(*heavy, "libgomp:guided", [2.0] * 3)
            + _runs(*heavy, "aloe:static", [3.0] * 3)
            + _sweep(*heavy, {0.2: 1.7, 0.8: 2.0})
            + _runs(*heavy, "aloe:adaptive", [1.75] * 3,
                    [[_site("staggered,fs=0.2,chunk=16", -1)]] * 3))
    slow = ("stencil1d", "bg-cpu1-d1")
    out += (_runs(*slow, "libgomp:guided", [2.0] * 3)
            + _runs(*slow, "aloe:static", [2.0] * 3)
            + _runs(*slow, "aloe:adaptive", [1.9, 2.04, 2.2],
                    [[_site("static", 2)], [_site("static", 3)], [_site("weighted", 30)]]))
    quiet2 = ("stencil1d", "none")
    out += (_runs(*quiet2, "tbb:affinity", [1.0] * 3)
            + _runs(*quiet2, "aloe:static", [2.0] * 3)
            + _runs(*quiet2, "aloe:adaptive", [2.1] * 3, [[_site("static", 21)]] * 3))
    return out


@pytest.fixture
def arows(entries):
    return {(r["workload"], r["noise"]): r
            for r in adaptive.rows(entries, summary.summarize(entries))}


def test_ratios_by_hand(arows):
    assert list(arows) == [("synthetic", "none"), ("synthetic", "inject-p0.5-f0.5"),
                           ("stencil1d", "bg-cpu1-d1"), ("stencil1d", "none")]
    q = arows["synthetic", "none"]
    assert (q["median_s"], q["best_fs"], q["best_fs_schedule"]) == (
        1.9, 0.9, "aloe:staggered,fs=0.9,chunk=16")
    assert q["ratio_to_best_fs"] == pytest.approx(1.9 / 1.8)
    assert q["ratio_to_static"] == pytest.approx(1.9 / 2.0)
    assert (q["best_peer"], q["ratio_to_best_peer"]) == ("libgomp:guided", pytest.approx(0.95))
    # spreads: adaptive (1.925 - 1.875) / 1.9, guided 0.05 / 2.0; |1 - 0.95| is outside both
    assert q["peer_tie"] is False
    assert (q["chosen"], q["chosen_reps"], q["chosen_fs"]) == (
        "staggered,fs=0.9,chunk=16", 2, 0.9)
    # converged at 12, 14 and never: the median is 14, one rep never converged
    assert (q["converged_at"], q["never_converged"]) == (14, 1)
    h = arows["synthetic", "inject-p0.5-f0.5"]
    assert (h["best_fs"], h["ratio_to_best_fs"]) == (0.2, pytest.approx(1.75 / 1.7))
    assert h["ratio_to_static"] == pytest.approx(1.75 / 3.0)
    assert h["ratio_to_best_peer"] == pytest.approx(0.875)
    assert (h["converged_at"], h["never_converged"]) == (None, 3)
    s = arows["stencil1d", "bg-cpu1-d1"]
    assert s["best_fs"] is None and s["ratio_to_best_fs"] is None  # no sweep in that group
    assert s["ratio_to_best_peer"] == pytest.approx(1.02) and s["peer_tie"] is True
    assert (s["chosen"], s["chosen_fs"], s["converged_at"]) == ("static", 1.0, 3)


def test_targets_pass_and_miss_per_row(arows):
    verdicts = {k: tuple(r[f"target_{t.key}"] for t in adaptive.TARGETS)
                for k, r in arows.items()}
    assert verdicts == {
        # 1.9/1.8 > 1.05; 0.95 ≤ 1.02 (quiet, balanced); 0.95 ≤ 1; (iv) quiet; 14 ≤ 20
        ("synthetic", "none"): ("miss", "pass", "pass", None, "pass"),
        # 1.029 ≤ 1.05; (ii) noisy; 0.875 ≤ 1 and ≤ 0.90; never converged
        ("synthetic", "inject-p0.5-f0.5"): ("pass", None, "pass", "pass", "miss"),
        # no sweep; not quiet; 1.02 > 1 (a tie), > 0.90; median converged_at 3
        ("stencil1d", "bg-cpu1-d1"): (None, None, "miss", "miss", "pass"),
        # no sweep; 2.1/2.0 > 1.02; 2.1 > 1; quiet; 21 > 20
        ("stencil1d", "none"): (None, "miss", "miss", None, "miss"),
    }


@pytest.mark.parametrize("key, value, noise, workload, expected", [
    ("i", 1.05, "none", "spmv", "pass"), ("i", 1.051, "none", "spmv", "miss"),
    ("ii", 1.02, "none", "synthetic", "pass"), ("ii", 1.03, "none", "stencil1d", "miss"),
    ("ii", 0.5, "none", "spmv", None), ("ii", 0.5, "bg-cpu1-d1", "synthetic", None),
    ("iii", 1.0, "none", "spmv", "pass"), ("iii", 1.001, "none", "spmv", "miss"),
    ("iv", 0.90, "bg-cpu1-d1", "spmv", "pass"), ("iv", 0.91, "inject-p0.2-f0.2", "spmv", "miss"),
    ("iv", 0.5, "none", "spmv", None),
    ("v", 20, "none", "spmv", "pass"), ("v", 21, "none", "spmv", "miss"),
])
def test_each_target_passes_and_misses(key, value, noise, workload, expected):
    t = next(t for t in adaptive.TARGETS if t.key == key)
    row = {"workload": workload, "noise": noise, t.value: value, "never_converged": 0}
    assert adaptive.judge(t, row) == expected


def test_a_quotient_at_the_limit_passes_and_never_converging_misses():
    t = {t.key: t for t in adaptive.TARGETS}
    row = {"workload": "spmv", "noise": "bg-cpu1-d1", "ratio_to_best_peer": 0.54 / 0.6}
    assert 0.54 / 0.6 > 0.9 and adaptive.judge(t["iv"], row) == "pass"
    assert adaptive.judge(t["v"], {"workload": "spmv", "noise": "none", "converged_at": None,
                                   "never_converged": 3}) == "miss"
    assert adaptive.judge(t["v"], {"workload": "spmv", "noise": "none", "converged_at": None,
                                   "never_converged": None}) is None  # no tuning record


def test_markdown_section_and_counts(entries, arows):
    text = "\n".join(adaptive.markdown(list(arows.values())))
    assert text.startswith("## Adaptive\n")
    assert ("| synthetic | none | 1.056 (fs=0.9) | 0.950 | 0.950 (libgomp:guided) | "
            "staggered,fs=0.9,chunk=16 (2/3) | 14 (1 rep never) |") in text
    assert "| synthetic | inject-p0.5-f0.5 | 1.029 (fs=0.2) | 0.583 | 0.875 (libgomp:guided) " \
           "| staggered,fs=0.2,chunk=16 (3/3) | never |" in text
    assert "| stencil1d | bg-cpu1-d1 | – | 1.020 | 1.020 (libgomp:guided, tie) |" in text
    assert "| stencil1d | bg-cpu1-d1 | – | – | miss (tie) | miss | pass |" in text
    assert "- (i) within 5% of the best fixed fs: 1/2 pass" in text
    assert "- (ii) no more than 2% above static on balanced quiet loops (none; synthetic, " \
           "stencil1d): 1/2 pass" in text
    assert "- (iii) no slower than the best peer: 2/4 pass; 1 of the 2 misses are ties within " \
           "both runs' spreads" in text
    assert "- (iv) at least 10% faster than the best peer under noise (every regime but " \
           "none): 1/2 pass" in text
    assert "- (v) converged within 20 invocations of the site's first run: 2/4 pass" in text


def test_csv_has_the_same_rows(arows, tmp_path):
    path = tmp_path / "adaptive.csv"
    adaptive.write_csv(path, list(arows.values()))
    with open(path, newline="") as f:
        back = list(csv.DictReader(f))
    assert [(r["workload"], r["noise"]) for r in back] == list(arows)
    q = back[0]
    assert (q["run"], q["best_fs"], q["best_peer"], q["chosen"], q["converged_at"]) == (
        "aloe:adaptive", "0.9", "libgomp:guided", "staggered,fs=0.9,chunk=16", "14")
    assert float(q["ratio_to_best_fs"]) == pytest.approx(1.9 / 1.8, rel=1e-5)
    assert [q[f"target_{k}"] for k in ("i", "ii", "iii", "iv", "v")] == [
        "miss", "pass", "pass", "", "pass"]


def test_no_adaptive_runs_no_section(entries):
    plain = [e for e in entries if not adaptive.is_adaptive(e)]
    assert adaptive.rows(plain, summary.summarize(plain)) == []
    assert adaptive.markdown([]) == []


def test_no_adaptive_runs_no_section_end_to_end(timeline_results):
    out = timeline_results
    assert "## Adaptive" not in (out / "summary.md").read_text()
    assert not (out / "adaptive.csv").exists()
    assert not list((out / "plots").glob("adaptive-*")) + list(
        (out / "plots").glob("convergence-*"))
    assert "<h2>Adaptive</h2>" not in (out / "report.html").read_text()


ADAPTIVE_MATRIX = """
reps = 2
threads = [2]
noise = ["none", "inject:p=0.5,frac=0.5", "background:cpu=1,duty=1"]
runs = ["libgomp:static", "libgomp:guided", "tbb:affinity", "aloe:static", "aloe:adaptive"]
fs_values = [0.0, 0.8, 0.9, 1.0]
[workloads.jacobi3d]
args = "--steps 12 --warmup 2"
fs_sweep = "staggered,chunk=4"
[workloads.spmv]
args = "--steps 20 --warmup 2"
fs_sweep = "staggered,chunk=64"
"""


@pytest.fixture(scope="module")
def adaptive_results(tmp_path_factory):
    from conftest import run_bench
    root = tmp_path_factory.mktemp("adaptive")
    (root / "adaptive.toml").write_text(ADAPTIVE_MATRIX)
    status, out = run_bench(root, matrix=root / "adaptive.toml")
    assert status == 0
    return out


def test_end_to_end_section_csv_plots_and_report(adaptive_results):
    out = adaptive_results
    text = (out / "summary.md").read_text()
    # right after the headline, before the per-group tables
    assert text.index("## Headline") < text.index("## Adaptive") < text.index("## jacobi3d")
    with open(out / "adaptive.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == 2 * 3
    for r in rows:
        # the fake's staggered bowl has its minimum at 0.9, where its adaptive walk settles
        assert (r["best_fs"], r["chosen"], r["converged_at"]) == (
            "0.9", "staggered,fs=0.9,chunk=4", "8")
        assert r["target_v"] == "pass" and r["target_i"] == "pass"
    names = {p.name for p in (out / "plots").glob("*.png")}
    expected = {f"{kind}-{w}-t2.png" for kind in ("adaptive", "convergence")
                for w in ("jacobi3d", "spmv")}
    assert expected <= names
    html = (out / "report.html").read_text()
    for name in expected:
        data = (out / "plots" / name).read_bytes()
        assert data[:8] == PNG and len(data) > 1000
        assert f"src='plots/{name}'" in html
    assert "<h2>Adaptive</h2>" in html and "Issue 4&#x27;s targets" in html
    assert "href='adaptive.csv'" in html


def test_shipped_matrix_quick_path_runs(bench):
    """--quick on the shipped matrix (one workload): every regime and run, 2 reps; too few
    invocations for the fake's walk to converge, which the section says."""
    status, out = bench("--matrix", "adaptive", "--quick", "--workloads", "synthetic",
                        "--no-plots")
    assert status == 0
    with open(out / "adaptive.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    regimes = ["none", "inject-p0.2-f0.2", "inject-p0.5-f0.5", "bg-cpu1-d1", "bg-cpu1-d0.5"]
    # one row per regime for each of the two searches the matrix compares
    assert sorted((r["noise"], r["run"]) for r in rows) == sorted(
        (n, run) for n in regimes for run in ("aloe:adaptive", "aloe:adaptive,search=local"))
    assert all(r["reps"] == "2" and r["best_fs"] and r["best_peer"] for r in rows)
    assert all(r["converged_at"] == "" and r["target_v"] == "miss" for r in rows)
    assert "| synthetic | none |" in (out / "summary.md").read_text()


def test_shipped_matrix_header_counts_its_runs():
    m = mx.load(REPO_ROOT / "bench/matrices/adaptive.toml")
    configs = sum(len(mx.runs_for(m, w)) for w in m.workloads) * len(m.noise) * len(m.threads)
    timed = configs * m.reps
    serial = len(m.workloads) * m.reps
    calibration = len(m.workloads) * len(m.threads)
    header = (REPO_ROOT / "bench/matrices/adaptive.toml").read_text()
    assert (configs, timed) == (8 * 5 * 24, 4800)
    assert f"{timed:,} timed runs, plus {serial} serial and {calibration} calibration runs: " \
           f"{timed + serial + calibration:,}" in header.replace("\n# ", " ")
