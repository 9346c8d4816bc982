"""sim-validation: its pure parts on small hand-made inputs (no runs, no timing)."""
import gzip
import json
from pathlib import Path

import pytest

from aloe_harness import sim_validation as sv

STEPS_CSV = """nodes,schedule,step,step_s,watch_loop_s
1,"static",1,0.002,0.002
1,"static",0,0.001,0.001
1,"dynamic,chunk=1",0,0.003,0.003
1,"dynamic,chunk=1",1,0.004,0.004
"""


def test_parse_steps_csv_maps_canonical_names_in_order_and_sorts_steps():
    steps = sv.parse_steps_csv(STEPS_CSV, ["static", "dynamic"])
    assert steps == {"static": [0.001, 0.002], "dynamic": [0.003, 0.004]}
    with pytest.raises(ValueError, match="2 schedules"):
        sv.parse_steps_csv(STEPS_CSV, ["static", "dynamic", "adaptive"])


def test_record_steps():
    assert sv.record_steps({"step_s": [1, 2.5]}) == [1.0, 2.5]
    with pytest.raises(ValueError):
        sv.record_steps({"total_s": 1})


def test_compare_totals_medians_and_errors():
    measured = [[1.0, 1.0, 2.0], [1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]   # totals 4, 3, 6
    predicted = {"A": [[1.0, 1.0, 1.0], [1.5, 1.5, 1.5]],              # totals 3, 4.5
                 "B": [[2.0, 2.0, 2.0]]}                                # total 6
    row = sv.compare(measured, predicted)
    assert row["reps"] == 3 and row["total_s"] == 4.0
    assert row["total_p25_s"] == pytest.approx(3.5) and row["total_p75_s"] == pytest.approx(5.0)
    assert row["step_p50_s"] == 1.0  # 9 steps pooled: five 1.0s
    assert row["A_total_s"] == pytest.approx(3.75)
    assert row["A_total_error"] == pytest.approx(3.75 / 4 - 1)
    assert row["A_within"] is True           # -6.25%
    assert row["B_total_error"] == pytest.approx(0.5) and row["B_within"] is False
    assert row["B_step_error"] == pytest.approx(1.0)


def test_compare_without_predictions_or_measurements():
    row = sv.compare([], {"A": []})
    assert row["total_s"] is None and row["A_total_s"] is None and row["A_within"] is None
    assert sv.error(None, 1.0) is None and sv.error(1.0, 0) is None


def test_add_injected_noise_matches_the_injector_and_copies():
    profile = {"noise": [{"kind": "poisson"}], "cores": 2}
    out = sv.add_injected_noise(profile, 0.3, 1000, 100)
    assert out["noise"][1] == {"kind": "per-step", "probability": 0.3,
                               "length": {"dist": "fixed", "mean_s": 1e-3}, "delay_s": 1e-4}
    assert len(profile["noise"]) == 1  # the input is left alone


def test_add_network_and_network_from_stats():
    out = sv.add_network({"network": {"collective": "recursive-doubling", "bytes": 8}},
                         7e-7, 3e-10, 131072)
    assert out["network"] == {"collective": "recursive-doubling", "bytes": 8, "alpha_s": 7e-7,
                              "beta_s_per_byte": 3e-10, "halo": {"dims": 1, "bytes": 131072}}
    stats = {"calibration": {"cost": [
        {"class": "reduction", "latency_s": 7.6e-7, "per_byte_s": 1.6e-9},
        {"class": "point_to_point", "latency_s": 6.8e-7, "per_byte_s": 3.2e-10}]}}
    net = sv.network_from_stats(stats)
    assert net["alpha_s"] == 7.6e-7 and net["beta_s_per_byte"] == 3.2e-10
    assert sv.network_from_stats(None) == sv.DEFAULT_NETWORK
    assert sv.network_from_stats({"calibration": {"ran": False}}) == sv.DEFAULT_NETWORK


def test_layouts_iterations_and_commands(tmp_path):
    by = {lay.name: lay for lay in sv.LAYOUTS}
    assert by["shared T=1"].iterations == 126 and by["mpi 2x1"].iterations == 63
    assert by["mpi 1x2"].cpus == 2 and by["mpi 2x1"].slug == "mpi-2x1"
    c = sv.Config(by["shared T=2"], "hybrid,fs=0.5", "inject")
    argv = sv.app_argv(c, tmp_path, tmp_path / "r.json", 200, 5)
    assert argv[0].endswith("aloe-app-jacobi3d")
    text = " ".join(argv)
    assert "--nx 128 --ny 128 --nz 128" in text and "--schedule hybrid,fs=0.5" in text
    assert "--noise-p 0.3 --noise-us 1000 --noise-delay-us 100" in text
    m = sv.Config(by["mpi 2x1"], "static", "quiet")
    argv = sv.app_argv(m, tmp_path, tmp_path / "r.json", 200, 5, "mpirun", 2, True)
    assert argv[:8] == ["mpirun", "-np", "2", "--map-by", "slot:PE=1", "--bind-to", "core",
                        "--allow-run-as-root"]
    assert "--noise-p" not in argv and "--decomp" in argv
    sim = sv.sim_argv("aloe", Path("p.json"), by["mpi 2x1"], sv.SCHEDULES, 200, 3, Path("o"))
    assert sim[sim.index("--nodes") + 1] == "2" and sim[sim.index("--cores") + 1] == "1"
    assert sim[sim.index("--iterations") + 1] == "63"
    assert sim[sim.index("--schedules") + 1] == "static,dynamic,hybrid,fs=0.5,adaptive"
    assert len(sv.configs()) == 4 * 4 * 2


def test_table_marks_the_configs_within_the_target():
    rows = [{"config": "x", "total_s": 1.0, "total_p25_s": 0.9, "total_p75_s": 1.1,
             "step_p50_s": 0.005, "A_total_s": 1.05, "A_total_error": 0.05, "A_within": True,
             "A_step_p50_s": 0.006, "A_step_error": 0.2, "B_total_s": None, "B_within": None}]
    lines = sv.table(rows, ["A", "B"])
    assert lines[0].startswith("| config |") and len(lines) == 3
    assert "1.05 (+5%)" in lines[2] and "6 (+20%)" in lines[2] and lines[2].endswith("| A |")
    assert "– (–)" in lines[2]


def test_load_results_reads_back_runs_and_simulations(tmp_path):
    runs = [{"config": "shared T=1 static quiet", "error": None, "step_s": [0.1, 0.2]},
            {"config": "shared T=1 static quiet", "error": "boom", "step_s": None}]
    with gzip.open(tmp_path / "runs.jsonl.gz", "wt") as f:
        f.write("".join(json.dumps(r) + "\n" for r in runs))
    folder = tmp_path / "sim" / "mpi-2x1-inject-B-after-seed2"
    folder.mkdir(parents=True)
    rows = ["nodes,schedule,step,step_s,watch_loop_s"] + [
        f'2,"{s}",0,{i + 1},{i + 1}' for i, s in enumerate(["static", "dynamic,chunk=1",
                                                            "hybrid,fs=0.5,chunk=1", "adaptive"])]
    (folder / "steps.csv").write_text("\n".join(rows) + "\n")
    zipped = tmp_path / "sim" / "shared-T1-quiet-A-seed1"
    zipped.mkdir()
    with gzip.open(zipped / "steps.csv.gz", "wt") as f:
        f.write("\n".join(rows) + "\n")
    measured, sims = sv.load_results(tmp_path)
    assert measured == {"shared T=1 static quiet": [[0.1, 0.2]]}
    assert sims[("mpi 2x1", "hybrid,fs=0.5", "inject")] == {"B-after": [[3.0]]}
    assert sims[("shared T=1", "adaptive", "quiet")] == {"A": [[4.0]]}


def test_the_subcommand_is_registered():
    from aloe_harness import __main__ as cli
    a = cli._parser().parse_args(["sim-validation", "--analyse", "--out", "x", "--seeds", "3"])
    assert a.command == "sim-validation" and a.analyse and a.seeds == 3 and a.reps == 5
