"""MPI workloads (issue 15): matrix keys, the mpirun command, records, slack tables, plots and
skip reasons; the bench runs use fake_mpirun.py and fake_app.py's MPI mode."""
import json
from pathlib import Path

import pytest

import conftest
from aloe_harness import matrix as mx
from aloe_harness import mpi, mpi_plots, report, runner
from aloe_harness.__main__ import main
from aloe_harness.provenance import REPO_ROOT

MPI_MATRIX = """
description = "mpi test"
reps = 2
threads = [1, 2]
ranks = [1, 2, 4]
noise = ["none"]
runs = ["libgomp:static", "aloe:static", "aloe:adaptive,slack=off"]
quick_ranks = [2]
quick_threads = [1]
[workloads.jacobi3d-mpi]
args = "--n 32 --steps 6 --warmup 1"
quick = "--steps 3"
[workloads.heavy]
program = "jacobi3d-mpi"
args = "--n 32 --steps 6 --warmup 1 --heavy-rank 1:1.3"
ranks = [2]
threads = [1]
[workloads.spmv]
args = "--steps 4"
threads = [2]
common_runs = false
runs = ["libgomp:static", "aloe:static"]
"""


def _load(text=MPI_MATRIX):
    import tomllib
    return mx.from_dict(tomllib.loads(text))


# --- matrix ------------------------------------------------------------------------------

def test_mpi_workload_becomes_one_workload_per_rank_count():
    m = _load()
    assert [w.name for w in m.workloads] == ["jacobi3d-mpi-np1", "jacobi3d-mpi-np2",
                                             "jacobi3d-mpi-np4", "heavy-np2", "spmv"]
    w = m.workloads[1]
    assert (w.app, w.ranks, w.family, w.is_mpi) == ("jacobi3d-mpi", 2, "jacobi3d-mpi", True)
    heavy = m.workloads[3]
    assert heavy.app == "jacobi3d-mpi" and mx.threads_for(m, heavy) == [1]
    assert mx.threads_for(m, w) == [1, 2]
    spmv = m.workloads[4]
    assert not spmv.is_mpi and spmv.ranks == 0
    assert [r.label for r in mx.runs_for(m, spmv)] == ["libgomp:static", "aloe:static"]
    assert "aloe:adaptive,slack=off" in [r.label for r in mx.runs_for(m, w)]
    assert (m.mpi.bind_to, m.mpi.stats) == ("core", True)


def test_configs_follow_the_workloads_own_threads_and_noise():
    m = _load(MPI_MATRIX.replace('threads = [1]\n[workloads.spmv]',
                                 'threads = [1]\nnoise = ["inject:p=0.5,us=10"]\n'
                                 '[workloads.spmv]'))
    cfgs = runner.configs(m)
    heavy = {(c.regime.name, c.threads) for c in cfgs if c.workload.name == "heavy-np2"}
    assert heavy == {("inject-p0.5-us10", 1)}
    assert {c.threads for c in cfgs if c.workload.name == "spmv"} == {2}
    assert len([c for c in cfgs if c.workload.name == "jacobi3d-mpi-np4"]) == 2 * 3


@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace("ranks = [1, 2, 4]\n", ""), "give ranks"),
    (lambda t: t.replace('[workloads.spmv]\n', '[workloads.spmv]\nranks = [2]\n'),
     "ranks is for MPI programs"),
    (lambda t: t.replace("ranks = [1, 2, 4]", "ranks = [0]"), "ranks = [0]"),
    (lambda t: t.replace('reps = 2', 'reps = 2\nbind_to = "socket"'), "bind_to = 'socket'"),
    (lambda t: t.replace('reps = 2', 'reps = 2\nmpi_stats = "yes"'), "mpi_stats"),
    (lambda t: t.replace('--n 32 --steps 6 --warmup 1"\nquick', '--n 32 --bind none"\nquick'),
     "sets --bind"),
    (lambda t: t.replace('common_runs = false\nruns = ["libgomp:static", "aloe:static"]',
                         'common_runs = false'), "needs its own runs"),
    (lambda t: t.replace("[workloads.spmv]", '[workloads.jacobi3d-mpi-np2]\nprogram = "spmv"'),
     "'jacobi3d-mpi-np2' is listed twice"),
])
def test_bad_mpi_matrix_is_named(edit, words):
    with pytest.raises(mx.MatrixError) as e:
        _load(edit(MPI_MATRIX))
    assert words in str(e.value)


def test_bind_flag_stays_allowed_for_openmp_workloads():
    m = _load(MPI_MATRIX.replace('args = "--steps 4"', 'args = "--steps 4 --bind none"'))
    assert "--bind" in m.workloads[-1].args


def test_quick_keeps_quick_ranks_and_threads():
    m = mx.apply_overrides(_load(), quick=True)
    assert [w.name for w in m.workloads] == ["jacobi3d-mpi-np2", "heavy-np2", "spmv"]
    assert m.threads == [1] and m.reps == 2
    assert mx.threads_for(m, m.workloads[2]) == [2]  # [2] has no 1: keeps its first
    assert m.workloads[0].args[-2:] == ("--steps", "3")
    m = mx.apply_overrides(_load(), quick=True, ranks=[4], threads=[2])  # given: they win
    assert [w.name for w in m.workloads] == ["jacobi3d-mpi-np4", "heavy-np4", "spmv"]
    assert {t for w in m.workloads for t in mx.threads_for(m, w)} == {2}


def test_ranks_and_workloads_overrides():
    m = mx.apply_overrides(_load(), ranks=[2, 3])
    assert [w.name for w in m.workloads] == ["jacobi3d-mpi-np2", "jacobi3d-mpi-np3",
                                             "heavy-np2", "heavy-np3", "spmv"]
    m = mx.apply_overrides(_load(), workloads=["jacobi3d-mpi", "heavy-np2"])
    assert [w.name for w in m.workloads] == ["jacobi3d-mpi-np1", "jacobi3d-mpi-np2",
                                             "jacobi3d-mpi-np4", "heavy-np2"]
    m = mx.apply_overrides(_load(), threads=[4])
    assert {t for w in m.workloads for t in mx.threads_for(m, w)} == {4}


def test_shipped_mpi_and_demo_matrices():
    m = mx.load(REPO_ROOT / "bench/matrices/mpi.toml")
    names = [w.name for w in m.workloads]
    assert {"jacobi3d-mpi-np1", "jacobi3d-mpi-np2", "jacobi3d-mpi-np4"} <= set(names)
    assert all(w.app == "jacobi3d-mpi" for w in m.workloads)
    heavy = [w for w in m.workloads if "--heavy-rank" in w.args]
    assert heavy and all(w.ranks >= 2 for w in heavy)
    labels = {r.label for r in m.runs}
    assert {"aloe:static", "aloe:hybrid,fs=0.8", "aloe:hybrid,fs=0.8,slack=on",
            "aloe:staggered,fs=0.8,slack=on", "aloe:adaptive", "aloe:adaptive,slack=off",
            "libgomp:static", "tbb:affinity"} <= labels
    assert any(x.startswith("libgomp:dynamic") for x in labels)
    assert m.threads == [1, 2] and m.mpi.stats
    assert any(r.kind == "inject" for w in m.workloads for r in mx.noise_for(m, w))
    quick = mx.apply_overrides(m, quick=True)
    assert {(w.ranks, t) for w in quick.workloads for t in mx.threads_for(quick, w)} == {(2, 1)}
    demo = mx.load(REPO_ROOT / "bench/matrices/demo.toml")
    mpi_workloads = [w for w in demo.workloads if w.is_mpi]
    assert [(w.ranks, mx.threads_for(demo, w)) for w in mpi_workloads] == [(2, [1])]
    assert all(not w.is_mpi for w in demo.workloads[:-1])


# --- the mpirun command ------------------------------------------------------------------

def test_launch_fits_binds_each_rank_to_its_cores():
    launch = mpi.Launch(ranks=2, threads=1, cpus=2, bind_to="core")
    assert launch.mpirun_options() == ["-np", "2", "--map-by", "slot:PE=1", "--bind-to", "core"]
    assert not launch.oversubscribed and launch.app_bind == "close"
    assert mpi.Launch(1, 2, 2, "core").mpirun_options() == [
        "-np", "1", "--map-by", "slot:PE=2", "--bind-to", "core"]


def test_launch_oversubscribes_when_ranks_times_threads_exceed_the_cpus():
    for ranks, threads in ((4, 1), (2, 2)):
        launch = mpi.Launch(ranks, threads, cpus=2, bind_to="core")
        assert launch.oversubscribed
        assert launch.mpirun_options() == ["-np", str(ranks), "--oversubscribe", "--map-by",
                                           "core", "--bind-to", "core:overload-allowed"]
        assert launch.describe()["oversubscribe"] is True
    assert not mpi.Launch(4, 2, cpus=8, bind_to="core").oversubscribed


def test_launch_without_binding_and_as_root():
    launch = mpi.Launch(4, 1, cpus=2, bind_to="none", root=True)
    assert launch.mpirun_options() == ["-np", "4", "--oversubscribe", "--bind-to", "none",
                                       "--allow-run-as-root"]
    assert launch.app_bind == "none"
    d = launch.describe()
    assert (d["binding"], d["allow_run_as_root"], d["cpus"]) == ("none", True, 2)


def test_command_exports_variables_to_the_ranks_only(tmp_path):
    argv = mpi.command("mpirun", mpi.Launch(2, 1, 2, "core"), ["app", "--x"],
                       mpi.stats_env(Path("/lib/libaloe-mpi.so"), tmp_path))
    assert argv[:7] == ["mpirun", "-np", "2", "--map-by", "slot:PE=1", "--bind-to", "core"]
    assert argv[7:11] == ["-x", "LD_PRELOAD=/lib/libaloe-mpi.so", "-x",
                          f"ALOE_MPI_STATS={tmp_path}/mpi.%r.json"]
    assert argv[-2:] == ["app", "--x"]
    shown = mpi.display_argv(argv, tmp_path)
    assert "ALOE_MPI_STATS=<scratch>/mpi.%r.json" in shown and str(tmp_path) not in str(shown)


def test_skip_reasons(tmp_path):
    app = tmp_path / "aloe-app-jacobi3d-mpi"
    assert "mpirun" in mpi.skip_reason(None, app) and "--mpirun" in mpi.skip_reason(None, app)
    assert "not found" in mpi.skip_reason(str(tmp_path / "no-mpirun"), app)
    mpirun = conftest.fake_mpirun(tmp_path)
    assert "aloe-app-jacobi3d-mpi is not built" in mpi.skip_reason(str(mpirun), app)
    app.write_text("")
    assert mpi.skip_reason(str(mpirun), app) is None


# --- statistics and records --------------------------------------------------------------

ROW = {"call": "MPI_Allreduce", "kind": "collective", "site": "app+0x10", "calls": 10,
       "time_s": 2.0, "max_s": 0.5, "slack_s": 1.5, "comm_s": 0.5,
       "predictors": {"last": {"predictions": 10, "error_of_slack": 0.2,
                               "error_of_interval": 0.02},
                      "median": {"predictions": 0, "error_of_slack": 9.0,
                                 "error_of_interval": 9.0},
                      "naive": {"predictions": 10, "error_of_slack": -1,
                                "error_of_interval": 0.5}}}


def test_rank_totals_sum_waiting_calls_and_weight_errors():
    other = ROW | {"call": "MPI_Wait", "kind": "completion", "calls": 30, "time_s": 1.0,
                   "slack_s": 0.25, "comm_s": 0.75,
                   "predictors": {"last": {"predictions": 30, "error_of_slack": 0.6,
                                           "error_of_interval": 0.06}}}
    init = {"call": "MPI_Init", "kind": "lifetime", "calls": 1, "time_s": 100.0}
    t = mpi.rank_totals({"calls": [ROW, other, init]})
    assert (t["mpi_s"], t["slack_s"], t["comm_s"], t["calls"]) == (3.0, 1.75, 1.25, 40)
    assert t["last_error_slack"] == pytest.approx((10 * 0.2 + 30 * 0.6) / 40)
    assert t["median_error_slack"] is None        # no predictions
    assert t["naive_error_slack"] is None         # -1: undefined
    assert t["naive_error_interval"] == pytest.approx(0.5)
    assert t["type_error_slack"] is None          # not in the file


def test_rank_totals_of_todays_files_leave_slack_empty():
    old = {k: ROW[k] for k in ("call", "kind", "site", "calls", "time_s", "max_s")}
    t = mpi.rank_totals({"calls": [old]})
    assert t["mpi_s"] == 2.0 and t["slack_s"] is None and t["comm_s"] is None
    assert all(t[f"{p}_error_slack"] is None for p in mpi.PREDICTORS)
    assert mpi.rank_totals(None)["mpi_s"] is None


def test_trim_keeps_the_largest_rows_and_sums_the_rest():
    rows = [ROW | {"site": f"s{i}", "time_s": float(i)} for i in range(mpi.MAX_STATS_ROWS + 10)]
    data = mpi.trim_stats({"calls": rows})
    assert len(data["calls"]) == mpi.MAX_STATS_ROWS and data["calls_trimmed"] == 11
    assert data["calls"][0]["time_s"] == mpi.MAX_STATS_ROWS + 9
    assert data["calls"][-1]["time_s"] == sum(range(11))


def test_read_stats_names_missing_and_broken_files(tmp_path):
    (tmp_path / "mpi.0.json").write_text(json.dumps({"calls": [ROW]}))
    (tmp_path / "mpi.2.json").write_text("{not json")
    stats, problems = mpi.read_stats(tmp_path, 3)
    assert stats[0]["calls"][0]["call"] == "MPI_Allreduce" and stats[1] is None
    assert stats[2] is None
    assert "rank 1 wrote no MPI statistics" in problems[0] and "rank 2" in problems[1]


def test_record_errors():
    good = {"mpi": {"ranks": 2}, "ranks": [{"rank": 0}, {"rank": 1}]}
    assert mpi.record_errors(good, 2) == []
    assert "mpi.ranks is 2, expected 4" in mpi.record_errors(good, 4)[0]
    assert "has 2 entries, expected 4" in mpi.record_errors(good, 4)[1]
    assert "no 'mpi' object" in mpi.record_errors({"workload": "jacobi3d"}, 2)[0]


def _entry(run="aloe:static", rank_compute=((1.0, 1.0), (1.5, 1.5)), stats=True, rep=0):
    runtime, _, schedule = run.partition(":")
    ranks = [{"rank": r, "compute_s": list(c), "wait_s": [0.6 - 0.5 * r] * len(c),
              "step_s": [2.0] * len(c)} for r, c in enumerate(rank_compute)]
    files = [{"calls": [ROW | {"time_s": 1.0 + r}]} for r in range(len(ranks))]
    return {"role": "timed", "valid": True, "workload": "w-np2", "noise": "none",
            "threads": 1, "runtime": runtime, "schedule": schedule, "rep": rep,
            "record": {"step_s": [2.0, 2.0], "total_s": 4.0, "ranks": ranks},
            "mpi": {"ranks": len(ranks), "threads_per_rank": 1, "cpus": 2, "binding": "core",
                    "oversubscribe": False, "stats_requested": stats,
                    "stats": files if stats else None}}


def test_rank_rows_and_tables_from_recorded_entries():
    entries = [_entry(rep=0), _entry(rep=1), _entry("libgomp:static", stats=False)]
    entries.append(_entry() | {"valid": False})  # a failed run is left out
    rows = mpi.rank_rows(entries)
    assert [(r["run"], r["rank"]) for r in rows] == [("aloe:static", 0), ("aloe:static", 1),
                                                     ("libgomp:static", 0),
                                                     ("libgomp:static", 1)]
    a0, a1, g0 = rows[0], rows[1], rows[2]
    assert (a0["reps"], a0["compute_s"], a1["compute_s"]) == (2, 2.0, 3.0)
    assert a0["wait_s"] == pytest.approx(1.2) and a1["mpi_s"] == 2.0
    assert a0["slack_s"] == 1.5 and a0["last_error_slack"] == pytest.approx(0.2)
    assert g0["mpi_s"] is None and g0["compute_s"] == 2.0
    (title, header, body), = mpi.tables(rows)
    assert title == "w-np2, noise none, 2 ranks × 1 thread"
    assert header[:8] == ["run", "rank", "compute (s)", "wait (s)", "in MPI (s)", "slack (s)",
                          "comm (s)", "imbalance"]
    assert body[0][:8] == ["aloe:static", "0", "2", "1.2", "1", "1.5", "0.5", "1.200"]
    assert body[0][8:12] == ["20.0% / 2.0%", "–", "–", "– / 50.0%"]
    assert body[0][12:] == ["–"] * 4  # no loop statistics in these entries
    assert body[2][4:7] == ["–", "–", "–"]
    md = "\n".join(mpi.markdown(rows, entries, ["x (ranks 2): skipped: no mpirun"]))
    assert "## MPI" in md and "### w-np2, noise none, 2 ranks × 1 thread" in md
    assert "- x (ranks 2): skipped: no mpirun" in md
    assert "2 rank(s) × 1 thread(s) on 2 CPU(s): --bind-to core" in md


def test_rank_histogram_from_recorded_entries(tmp_path):
    entries = [_entry(rep=0), _entry(rep=1), _entry("libgomp:static")]
    rows = [{"workload": "w-np2", "noise": "none", "threads": 1, "runtime": e["runtime"],
             "schedule": e["schedule"], "median_s": 4.0} for e in entries[1:]]
    assert mpi_plots.rank_series(entries, ("w-np2", "none", 1), "aloe:static", 1,
                                 "compute_s") == [1.5, 1.5, 1.5, 1.5]
    files = mpi_plots.make(tmp_path, entries, rows)
    assert [f.name for f in files] == ["rankhist-w-np2-none-t1.png"]
    assert files[0].stat().st_size > 1000
    assert mpi_plots.make(tmp_path, [e | {"mpi": None} for e in entries], rows) == []
    assert mpi_plots.panels(20) == [0, 1, 2, 3, 4, 5, 6, 19]


# --- loop statistics (ALOE_STATS) ---------------------------------------------------------

# Recorded from aloe-app-jacobi3d-mpi (2 ranks × 2 threads, hybrid,fs=0.8,slack=on, rank 1
# heavy): rank 0's file, `last` and the counters left out.
LOOP_SITE = {
    "site": "jacobi3d-mpi/planes", "schedule": "hybrid,fs=0.8,chunk=1,slack=on",
    "invocations": 7, "serial_invocations": 0, "empty_invocations": 0, "iterations": 140,
    "total_s": 0.0007004756693282777, "last_s": 8.543061446335876e-05, "imbalance_last": 1,
    "imbalance_mean": 1.051374363591957,
    "total": [{"thread": 0, "static_s": 0.00026379491125680344, "dynamic_s": 1.627095963315933e-05,
               "wait_s": 0.00042007897317647804, "iterations": 72, "chunks": 4, "steals": 0},
              {"thread": 1, "static_s": 0.00027502579505295536, "dynamic_s": 1.611188543432802e-07,
               "wait_s": 3.329230783921185e-05, "iterations": 68, "chunks": 3, "steals": 1}],
    "policies": [{"name": "slack", "state": "acting", "choice": "hybrid,fs=1,chunk=1",
                  "threads": 2, "slack": {
                      "call": "MPI_Allreduce at aloe-app-jacobi3d-mpi+0x161b0", "planned": 7,
                      "lowered": 6, "predicted_s": 2.615891368904896e-05,
                      "actual_s": 2.600883597447032e-05, "predicted_mean_s": 1.9125240309141317e-05,
                      "actual_mean_s": 2.421346486251921e-05, "fd_before": 0.19999999999999996,
                      "fd_after": 0, "fd_before_mean": 0.19999999999999996,
                      "fd_after_mean": 0.028571428571428564,
                      "guard": "Eq. 4.11: the slack covers the dynamic part"}}],
    "counters": "site#0"}
# The same program with one thread per rank: every loop ran serially, no policy, no chunks.
SERIAL_SITE = {"site": "jacobi3d-mpi/planes", "schedule": "hybrid,fs=0.8,chunk=1,slack=on",
               "invocations": 0, "serial_invocations": 7, "empty_invocations": 0,
               "iterations": 161, "total_s": 0, "last_s": 0, "imbalance_last": 0,
               "imbalance_mean": 0, "total": []}


def _cold(i, total_s, chunks=2):
    return {"site": f"cold/{i}", "schedule": "dynamic,chunk=1", "invocations": 1,
            "serial_invocations": 0, "total_s": total_s,
            "total": [{"thread": 0, "chunks": chunks, "steals": 0}]}


def test_loop_summary_keeps_the_busiest_sites_and_the_slack_policy():
    sites = [_cold(i, 1e-6 * i) for i in range(12)] + [LOOP_SITE]
    data = mpi.loop_summary({"aloe_version": "x", "sites": sites, "counters": {"a": 1}})
    assert len(data["sites"]) == mpi.MAX_LOOP_SITES and data["sites_left_out"] == 5
    planes = data["sites"][0]  # the most total_s first
    assert planes == {"site": "jacobi3d-mpi/planes", "schedule": "hybrid,fs=0.8,chunk=1,slack=on",
                      "invocations": 7, "serial_invocations": 0,
                      "total_s": LOOP_SITE["total_s"], "chunks": 7, "steals": 1,
                      "slack": {k: LOOP_SITE["policies"][0]["slack"][k]
                                for k in mpi.SLACK_FIELDS}}
    assert [s["site"] for s in data["sites"][1:]] == [f"cold/{i}" for i in range(11, 4, -1)]
    assert "slack" not in data["sites"][1] and "total" not in data["sites"][1]
    # a site whose chain has only adaptive's link has no slack entry
    adaptive = LOOP_SITE | {"policies": [{"name": "adaptive", "state": "converged"}]}
    assert "slack" not in mpi.loop_summary({"sites": [adaptive]})["sites"][0]
    assert "sites_left_out" not in mpi.loop_summary({"sites": [LOOP_SITE]})


def test_loop_totals_weight_the_slack_sites_and_spread_dequeues_over_the_steps():
    other = LOOP_SITE | {"site": "jacobi3d-mpi/boundary", "total": [{"chunks": 14, "steals": 7}],
                         "policies": [{"name": "slack", "slack": LOOP_SITE["policies"][0]["slack"]
                                       | {"planned": 21, "lowered": 0, "fd_before_mean": 0.6,
                                          "fd_after_mean": 0.6, "predicted_mean_s": 0.0,
                                          "actual_mean_s": 1e-6}}]}
    t = mpi.loop_totals(mpi.loop_summary({"sites": [LOOP_SITE, other, _cold(0, 0, 7)]}))
    assert t["dequeues_per_step"] == pytest.approx((7 + 14 + 7) / 7)  # the most invocations: 7
    assert t["steals_per_step"] == pytest.approx(8 / 7)
    assert (t["slack_lowered"], t["slack_planned"]) == (6, 28)
    assert t["fd_before"] == pytest.approx((7 * 0.2 + 21 * 0.6) / 28)
    assert t["fd_after"] == pytest.approx((7 * 0.028571428571428564 + 21 * 0.6) / 28)
    assert t["slack_predicted_s"] == pytest.approx(7 * 1.9125240309141317e-05 / 28)
    # one recorded site alone: its own means
    one = mpi.loop_totals(mpi.loop_summary({"sites": [LOOP_SITE]}))
    assert one["fd_before"] == pytest.approx(0.2) and one["fd_after"] < 0.03
    assert one["dequeues_per_step"] == 1.0
    # serial loops (one thread per rank): no dequeues, no policy
    serial = mpi.loop_totals(mpi.loop_summary({"sites": [SERIAL_SITE]}))
    assert serial["dequeues_per_step"] == 0 and serial["fd_before"] is None
    assert serial["slack_planned"] is None
    assert mpi.loop_totals(None) == dict.fromkeys(mpi.LOOP_COLUMNS)
    # a policy that planned nothing yet gives no means
    unplanned = LOOP_SITE | {"policies": [{"name": "slack", "slack": {"planned": 0, "lowered": 0,
                                                                       "fd_before_mean": 0.2}}]}
    u = mpi.loop_totals(mpi.loop_summary({"sites": [unplanned]}))
    assert u["fd_before"] is None and u["slack_planned"] == 0


def test_read_loop_stats_names_missing_and_broken_files(tmp_path):
    (tmp_path / "loops.0.json").write_text(json.dumps({"sites": [LOOP_SITE]}))
    (tmp_path / "loops.2.json").write_text("{not json")
    (tmp_path / "loops.3.json").write_text(json.dumps({"calls": []}))
    loops, problems = mpi.read_loop_stats(tmp_path, 4)
    assert loops[0]["sites"][0]["chunks"] == 7 and loops[1:] == [None, None, None]
    assert len(problems) == 3 and "rank 1 wrote no loop statistics (loops.1.json)" in problems[0]
    assert "rank 2's loop statistics cannot be read" in problems[1]
    assert "rank 3's loop statistics have no 'sites' list" in problems[2]


def test_loop_columns_in_rows_tables_and_csv(tmp_path):
    slack = LOOP_SITE["policies"][0]["slack"]
    waiting = mpi.loop_summary({"sites": [LOOP_SITE]})
    critical = mpi.loop_summary({"sites": [LOOP_SITE | {
        "total": [{"chunks": 35, "steals": 0}],
        "policies": [{"name": "slack", "slack": slack | {"lowered": 0, "fd_after_mean": 0.2,
                                                         "predicted_mean_s": 0.0,
                                                         "actual_mean_s": 1.5e-6}}]}]})
    entries = []
    for rep, after in ((0, 0.028571428571428564), (1, 0.05)):
        e = _entry("aloe:hybrid,fs=0.8,slack=on", rep=rep)
        first = json.loads(json.dumps(waiting))
        first["sites"][0]["slack"]["fd_after_mean"] = after
        e["mpi"]["loops"] = [first, critical]
        entries.append(e)
    plain = _entry("aloe:hybrid,fs=0.8")
    plain["mpi"]["loops"] = [{"sites": [{"site": "p", "invocations": 7, "chunks": 35}]}, None]
    rows = mpi.rank_rows(entries + [plain, _entry("libgomp:static")])
    r0, r1, p0, p1, g0 = rows[0], rows[1], rows[2], rows[3], rows[4]
    assert r0["fd_after"] == pytest.approx((0.028571428571428564 + 0.05) / 2)  # median of 2
    assert r0["fd_before"] == pytest.approx(0.2) and r1["fd_after"] == pytest.approx(0.2)
    assert (r0["slack_lowered"], r0["slack_planned"], r1["slack_lowered"]) == (6, 7, 0)
    assert r0["dequeues_per_step"] == 1.0 and r1["dequeues_per_step"] == 5.0
    assert p0["dequeues_per_step"] == 5.0 and p0["fd_before"] is None
    assert p1["dequeues_per_step"] is None and g0["dequeues_per_step"] is None
    (title, header, body), = mpi.tables(rows)
    assert header[-4:] == ["fd before → after", "lowered/planned", "dequeues/step",
                           "slack pred / actual (µs)"]
    assert body[0][-4:] == ["0.200 → 0.039", "6/7", "1", "19.13 / 24.21"]
    assert body[1][-4:] == ["0.200 → 0.200", "0/7", "5", "0 / 1.5"]
    assert body[2][-4:] == ["–", "–", "5", "–"]
    assert body[3][-4:] == ["–"] * 4 and body[4][-4:] == ["–"] * 4
    assert header[:12] == ["run", "rank", "compute (s)", "wait (s)", "in MPI (s)", "slack (s)",
                           "comm (s)", "imbalance", "last err", "median err", "type err",
                           "naive err"]  # the old columns stay where they were
    md = "\n".join(mpi.markdown(rows, entries))
    assert "| aloe:hybrid,fs=0.8,slack=on | 0 |" in md and "| 0.200 → 0.039 | 6/7 | 1 |" in md
    mpi.write_csv(tmp_path / "mpi.csv", rows)
    lines = (tmp_path / "mpi.csv").read_text().splitlines()
    assert lines[0].endswith(",fd_before,fd_after,slack_lowered,slack_planned,dequeues_per_step,"
                             "steals_per_step,slack_predicted_s,slack_actual_s")
    assert lines[1].split(",")[-8:-4] == ["0.2", "0.0392857", "6", "7"]
    page = "\n".join(report._mpi(rows, entries, []))
    assert "<th>fd before → after</th>" in page and "<td>0.200 → 0.039</td>" in page


# --- bench against the fakes -------------------------------------------------------------

def _bench(root: Path, *extra, matrix=MPI_MATRIX, mpirun=True, env=None, mpi_lib=True):
    if not (root / "apps").exists():
        conftest.make_apps(root / "apps", mpi=True)
        conftest._script(root / "aloe", conftest.HERE / "fake_aloe.py")
        conftest.fake_mpirun(root)
    if not mpi_lib:
        (root / "lib" / "libaloe-mpi.so").unlink(missing_ok=True)
    (root / "m.toml").write_text(matrix)
    out = root / "out"
    argv = ["bench", "--matrix", str(root / "m.toml"), "--apps-dir", str(root / "apps"),
            "--aloe", str(root / "aloe"), "--out", str(out),
            "--mpirun", str(root / "mpirun") if mpirun else str(root / "no-mpirun"), *extra]
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("FAKE_MPIRUN_LOG", str(root / "mpirun.log"))
        mp.setattr(mpi, "available_cpus", lambda: 2)  # as on the 2-core VM, on any machine
        for k, v in (env or {}).items():
            mp.setenv(k, v)
        return main(argv), out


def _entries(out: Path) -> list[dict]:
    return [json.loads(x) for x in (out / "runs.jsonl").read_text().splitlines()]


@pytest.fixture(scope="module")
def mpi_results(tmp_path_factory):
    root = tmp_path_factory.mktemp("mpi")
    status, out = _bench(root, "--quick", "--ranks", "2,4", "--threads", "1")
    return status, out, root


def test_bench_runs_mpi_rows_interleaved_with_everything(mpi_results):
    status, out, root = mpi_results
    assert status == 0, (out / "summary.md").read_text()
    entries = _entries(out)
    mpi_runs = [e for e in entries if e.get("mpi")]
    assert {e["workload"] for e in mpi_runs} == {"jacobi3d-mpi-np2", "jacobi3d-mpi-np4",
                                                 "heavy-np2", "heavy-np4"}
    # a serial reference per rank count, under mpirun too
    serial = [e for e in mpi_runs if e["role"] == "serial" and e["rep"] == 0]
    assert sorted(e["ranks"] for e in serial) == [2, 2, 4, 4]
    timed = [e for e in entries if e["role"] == "timed"]
    assert {e["workload"] for e in timed} >= {"spmv", "heavy-np2"}
    # interleaved: rep 0 of every config before any rep 1
    reps = [e["rep"] for e in timed]
    assert reps == sorted(reps)
    assert not (out / "mpi-scratch").exists()  # every run's scratch folder went away


def test_bench_records_the_launch(mpi_results):
    status, out, root = mpi_results
    four = next(e for e in _entries(out) if e.get("ranks") == 4 and e["role"] == "timed")
    info = four["mpi"]
    assert info["oversubscribe"] is True and info["binding"] == "core:overload-allowed"
    assert info["ranks"] == 4 and info["threads_per_rank"] == 1
    assert info["allow_run_as_root"] == mpi.is_root()
    assert info["argv"][1:3] == ["-np", "4"] and "--oversubscribe" in info["argv"]
    assert four["command"].startswith(str(root / "mpirun") + " -np 4 --oversubscribe")
    assert "<scratch>/record.json" in four["command"] and "mpi-scratch" not in four["command"]
    assert four["command"].endswith("--bind close")
    assert len(info["stats"]) == 4 and info["stats"][3]["rank"] == 3
    two = next(e for e in _entries(out) if e.get("ranks") == 2 and e["role"] == "timed")
    assert two["mpi"]["oversubscribe"] is False and two["mpi"]["binding"] == "core"
    logged = [json.loads(x) for x in (root / "mpirun.log").read_text().splitlines()]
    assert all("--oversubscribe" in a for a in logged if a[1] == "4")
    serial = [e for e in _entries(out) if e["role"] == "serial" and e.get("mpi")]
    assert all(e["mpi"]["stats_requested"] is False and "-x" not in e["mpi"]["argv"]
               for e in serial)


def test_bench_writes_slack_tables_csv_and_rank_histograms(mpi_results):
    status, out, root = mpi_results
    text = (out / "summary.md").read_text()
    section = text.split("## MPI", 1)[1]
    assert "### heavy-np2, noise none, 2 ranks × 1 thread" in section
    assert "| aloe:adaptive,slack=off | 1 |" in section
    rows = [r for r in mpi.rank_rows(_entries(out)) if r["workload"] == "heavy-np2"
            and r["run"] == "libgomp:static"]
    assert rows[0]["wait_s"] > rows[1]["wait_s"]  # rank 0 waits for heavy rank 1
    assert rows[0]["slack_s"] > rows[1]["slack_s"] and rows[0]["comm_s"] is not None
    header = (out / "mpi.csv").read_text().splitlines()[0]
    assert header.startswith("workload,noise,threads,ranks,run,rank,")
    plots = {p.name for p in (out / "plots").glob("rankhist-*.png")}
    assert plots == {"rankhist-jacobi3d-mpi-np2-none-t1.png",
                     "rankhist-jacobi3d-mpi-np4-none-t1.png",
                     "rankhist-heavy-np2-none-t1.png", "rankhist-heavy-np4-none-t1.png"}
    page = (out / "report.html").read_text()
    assert "<h2>MPI</h2>" in page and "step times per rank" in page and "mpi.csv" in page


SLACK_MATRIX = """
description = "slack runs"
reps = 2
threads = [2]
ranks = [2]
noise = ["none"]
runs = ["aloe:static", "aloe:hybrid,fs=0.8", "aloe:hybrid,fs=0.8,slack=on",
        "aloe:staggered,fs=0.8,slack=on", "aloe:adaptive", "aloe:adaptive,slack=off",
        "libgomp:static"]
[workloads.heavy]
program = "jacobi3d-mpi"
args = "--n 32 --steps 6 --warmup 1 --heavy-rank 1:1.3"
"""


@pytest.fixture(scope="module")
def slack_results(tmp_path_factory):
    root = tmp_path_factory.mktemp("slack")
    status, out = _bench(root, matrix=SLACK_MATRIX)
    return status, out, root


def test_bench_keeps_each_aloe_ranks_loop_statistics(slack_results):
    status, out, root = slack_results
    assert status == 0, (out / "problems.txt").read_text()
    timed = [e for e in _entries(out) if e["role"] == "timed"]
    for e in timed:
        exported = "ALOE_STATS=<scratch>/loops.%r.json" in e["mpi"]["argv"]
        assert exported == (e["runtime"] == "aloe"), e["command"]
        assert ("loops" in e["mpi"]) == (e["runtime"] == "aloe")
    slack = next(e for e in timed if e["schedule"] == "hybrid,fs=0.8,slack=on")
    assert slack["mpi"]["loops_pattern"] == "loops.%r.json"
    rank0 = slack["mpi"]["loops"][0]["sites"]
    assert [s["site"] for s in rank0] == ["jacobi3d-mpi/planes", "jacobi3d-mpi/init"]
    assert rank0[0]["slack"]["lowered"] == 6 and rank0[0]["chunks"] == 20 + 6 * 5
    assert set(rank0[0]) == {"site", "schedule", "invocations", "serial_invocations", "total_s",
                             "chunks", "steals", "slack"}  # compact: no per-thread rows
    serial = [e for e in _entries(out) if e["role"] != "timed" and e.get("mpi")]
    assert serial and all("loops" not in e["mpi"] for e in serial)


def test_ranks_with_slack_lower_fd_and_dequeue_less(slack_results):
    status, out, root = slack_results
    rows = {(r["run"], r["rank"]): r for r in mpi.rank_rows(_entries(out))}
    for run in ("aloe:hybrid,fs=0.8,slack=on", "aloe:staggered,fs=0.8,slack=on"):
        waits, heavy = rows[run, 0], rows[run, 1]  # rank 0 waits for heavy rank 1
        assert waits["fd_after"] < waits["fd_before"] == pytest.approx(0.2)
        assert heavy["fd_after"] == heavy["fd_before"] == pytest.approx(0.2)
        assert (waits["slack_lowered"], waits["slack_planned"], heavy["slack_lowered"]) == (6, 7, 0)
        assert waits["dequeues_per_step"] < rows["aloe:hybrid,fs=0.8", 0]["dequeues_per_step"]
        assert heavy["dequeues_per_step"] == rows["aloe:hybrid,fs=0.8", 1]["dequeues_per_step"]
        assert waits["slack_actual_s"] > 0 and waits["slack_predicted_s"] > 0
    assert rows["aloe:adaptive", 0]["fd_after"] < rows["aloe:adaptive", 0]["fd_before"]
    for run in ("aloe:hybrid,fs=0.8", "aloe:adaptive,slack=off", "aloe:static"):
        assert rows[run, 0]["fd_before"] is None and rows[run, 0]["slack_planned"] is None
    assert rows["aloe:static", 0]["dequeues_per_step"] == pytest.approx(5 / 7)  # init's only
    assert rows["libgomp:static", 0]["dequeues_per_step"] is None
    section = (out / "summary.md").read_text().split("## MPI", 1)[1]
    line = next(x for x in section.splitlines()
                if x.startswith("| aloe:hybrid,fs=0.8,slack=on | 0 |"))
    r0 = rows["aloe:hybrid,fs=0.8,slack=on", 0]
    assert line.endswith(f"| 0.200 → 0.071 | 6/7 | 7.857 | {r0['slack_predicted_s'] * 1e6:.4g}"
                         f" / {r0['slack_actual_s'] * 1e6:.4g} |")
    assert next(x for x in section.splitlines()
                if x.startswith("| libgomp:static | 0 |")).endswith("| – | – | – | – |")
    assert "fd_before" in (out / "mpi.csv").read_text().splitlines()[0]
    assert "<th>dequeues/step</th>" in (out / "report.html").read_text()


def test_single_thread_ranks_run_their_loops_serially(mpi_results):
    status, out, root = mpi_results
    rows = [r for r in mpi.rank_rows(_entries(out)) if r["run"].startswith("aloe:")]
    assert rows and all(r["dequeues_per_step"] == 0 and r["fd_before"] is None for r in rows)


def test_missing_loop_statistics_are_a_problem_but_the_times_count(tmp_path):
    status, out = _bench(tmp_path, "--quick", "--workloads", "heavy",
                         env={"FAKE_NO_LOOP_STATS_RANK": "0"})
    assert status == 1
    problems = (out / "problems.txt").read_text().splitlines()
    assert len(problems) == 1 and "rank 0 wrote no loop statistics (loops.0.json)" in problems[0]
    assert "per-rank statistics incomplete" in problems[0]
    timed = [e for e in _entries(out) if e["role"] == "timed"]
    assert all(e["valid"] for e in timed)
    aloe = [e for e in timed if e["runtime"] == "aloe"]
    assert all(e["mpi"]["loops"][0] is None and e["mpi"]["loops"][1] for e in aloe)


def test_rejected_schedule_fails_visibly(tmp_path):
    status, out = _bench(tmp_path, "--quick", "--workloads", "heavy",
                         env={"FAKE_APP_FAIL": "aloe:adaptive,slack=off"})
    assert status == 1
    problems = (out / "problems.txt").read_text()
    assert "FAILED heavy-np2 none aloe:adaptive,slack=off t=1" in problems
    summary = (out / "summary.md").read_text()
    assert "## FAILURES" in summary and "| aloe:static |" in summary
    failed = [e for e in _entries(out) if not e["valid"]]
    assert failed and all(e["schedule"] == "adaptive,slack=off" for e in failed)
    assert any("exit status 1" in x for x in failed[0]["errors"])
    assert (out / "mpi-scratch").is_dir()  # kept for a failed run


def test_missing_mpirun_skips_mpi_rows_loudly(tmp_path, capsys):
    status, out = _bench(tmp_path, "--quick", mpirun=False)
    assert status == 0
    err = capsys.readouterr().err
    assert "SKIPPED MPI workload jacobi3d-mpi (ranks 2)" in err and "mpirun" in err
    assert {e["workload"] for e in _entries(out)} == {"spmv"}
    summary = (out / "summary.md").read_text()
    assert "## MPI" in summary and "heavy (ranks 2): all its rows skipped: mpirun" in summary
    assert "Skipped" in (out / "report.html").read_text()


def test_missing_mpi_program_skips_and_only_mpi_means_nothing_to_run(tmp_path, capsys):
    only_mpi = MPI_MATRIX.split("[workloads.spmv]")[0]
    conftest.make_apps(tmp_path / "apps", mpi=True)
    (tmp_path / "apps" / "aloe-app-jacobi3d-mpi").unlink()
    conftest._script(tmp_path / "aloe", conftest.HERE / "fake_aloe.py")
    conftest.fake_mpirun(tmp_path)
    status, out = _bench(tmp_path, "--quick", matrix=only_mpi)
    assert status == 2 and not out.exists()
    err = capsys.readouterr().err
    assert "aloe-app-jacobi3d-mpi is not built" in err and "nothing left to run" in err


def test_without_libaloe_mpi_runs_go_on_without_slack(tmp_path, capsys):
    status, out = _bench(tmp_path, "--quick", "--workloads", "heavy", mpi_lib=False)
    assert status == 0
    assert "libaloe-mpi.so is not built" in capsys.readouterr().err
    timed = [e for e in _entries(out) if e["role"] == "timed"]
    assert all(e["mpi"]["stats_requested"] and "stats" not in e["mpi"] for e in timed)
    assert all(not any(w.startswith(("LD_PRELOAD=", "ALOE_MPI_STATS=")) for w in e["mpi"]["argv"])
               for e in timed)
    # aloe's loop statistics need no libaloe-mpi: still kept, with no slack policy
    aloe = [e for e in timed if e["runtime"] == "aloe"]
    assert aloe and all("ALOE_STATS=<scratch>/loops.%r.json" in e["mpi"]["argv"] for e in aloe)
    assert all(len(e["mpi"]["loops"]) == 2 for e in aloe)
    rows = mpi.rank_rows(_entries(out))
    assert rows and all(r["mpi_s"] is None and r["compute_s"] for r in rows)
    assert all(r["fd_before"] is None and r["slack_planned"] is None for r in rows)
    assert "libaloe-mpi.so is not built" in (out / "summary.md").read_text()


def test_missing_rank_statistics_are_a_problem_but_the_times_count(tmp_path):
    status, out = _bench(tmp_path, "--quick", "--workloads", "heavy",
                         env={"FAKE_MPI_NO_STATS_RANK": "1"})
    assert status == 1
    problems = (out / "problems.txt").read_text().splitlines()
    assert len(problems) == 1 and "rank 1 wrote no MPI statistics" in problems[0]
    timed = [e for e in _entries(out) if e["role"] == "timed"]
    assert all(e["valid"] for e in timed)
    assert "FAILURES" in (out / "summary.md").read_text()


def test_old_statistics_files_give_empty_slack_columns(tmp_path):
    status, out = _bench(tmp_path, "--quick", "--workloads", "heavy",
                         env={"FAKE_MPI_OLD_STATS": "1"})
    assert status == 0
    rows = mpi.rank_rows(_entries(out))
    assert all(r["mpi_s"] is not None and r["slack_s"] is None for r in rows)
    assert "| – | – |" in (out / "summary.md").read_text()


def test_record_with_other_ranks_fails_the_run(tmp_path):
    status, out = _bench(tmp_path, "--quick", "--workloads", "heavy",
                         env={"FAKE_MPI_WRONG_RANKS": "1"})
    assert status == 1
    problems = (out / "problems.txt").read_text()
    assert "mpi.ranks is 3, expected 2" in problems
    assert "heavy-np2: the serial reference run failed" in problems


def test_report_rebuilds_the_mpi_section(mpi_results):
    status, out, root = mpi_results
    (out / "report.html").unlink()
    report.write(out)
    assert "heavy-np4, noise none, 4 ranks × 1 thread" in (out / "report.html").read_text()


def test_relative_paths_work_although_mpirun_runs_in_a_scratch_folder(tmp_path, monkeypatch):
    conftest.make_apps(tmp_path / "apps", mpi=True)
    conftest._script(tmp_path / "aloe", conftest.HERE / "fake_aloe.py")
    conftest.fake_mpirun(tmp_path)
    (tmp_path / "m.toml").write_text(MPI_MATRIX.split("[workloads.jacobi3d-mpi]")[0]
                                     + "[workloads.jacobi3d-mpi]\nargs = \"--steps 3\"\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(mpi, "available_cpus", lambda: 2)
    status = main(["bench", "--matrix", "m.toml", "--apps-dir", "apps", "--aloe", "./aloe",
                   "--mpirun", "./mpirun", "--out", "out", "--quick"])
    assert status == 0
    timed = [e for e in _entries(tmp_path / "out") if e["role"] == "timed"]
    assert timed and all(e["valid"] and len(e["mpi"]["stats"]) == 2 for e in timed)
