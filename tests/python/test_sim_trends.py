"""sim_trends.py's pure parts: parsing aloe sim's --out files and the trend arithmetic, on
fake inputs (no aloe, no simulation)."""
import json
import math
from pathlib import Path

import pytest

from aloe_harness import sim_trends as st

SUMMARY_HEAD = ("nodes,cores,schedule,steps,iterations,iteration_s,total_s,mean_step_s,p50_step_s,"
                "p95_step_s,max_step_s,ideal_s,efficiency,amplification,network_s,busy_share,"
                "schedule_share,idle_share,wait_s_per_node,claims_per_node_step,steals_per_node_step,"
                "mean_fs,slack_spent_fraction,noise_events,sweep,wall_s\n")


def summary_line(nodes, schedule, total, mean_fs=1.0, sweep=0, slack=0.0):
    return (f'{nodes},16,"{schedule}",100,512,1.5e-05,{total},0,0,0,0,0.05,0.9,1,0,0.9,0,0.1,0,0,0,'
            f"{mean_fs},{slack},12,{sweep},0.01\n")


def write_trend(folder: Path, lines, steps=None, best=None):
    folder.mkdir(parents=True)
    (folder / "summary.csv").write_text(SUMMARY_HEAD + "".join(lines))
    (folder / "steps.csv").write_text("nodes,schedule,step,step_s,watch_loop_s\n" + "".join(
        f'{n},"{s}",{k},{v},{v}\n' for (n, s), vs in (steps or {}).items() for k, v in enumerate(vs)))
    (folder / "best_fs.csv").write_text("nodes,best_fs,best_total_s\n" + "".join(
        f"{n},{fs},{t}\n" for n, (fs, t) in (best or {}).items()))


def test_read_summary_types_and_quoted_schedules(tmp_path):
    write_trend(tmp_path / "t", [summary_line(1, "static", 0.1), summary_line(4, "hybrid,fs=0.9,chunk=1", 0.12, 0.9),
                                 summary_line(4, "hybrid,fs=0.5,chunk=1", 0.11, 0.49999999999, sweep=1)])
    rows = st.read_summary(tmp_path / "t" / "summary.csv")
    assert [r["schedule"] for r in rows] == ["static", "hybrid,fs=0.9,chunk=1", "hybrid,fs=0.5,chunk=1"]
    assert rows[0]["nodes"] == 1 and isinstance(rows[0]["nodes"], int)
    assert rows[1]["total_s"] == pytest.approx(0.12) and rows[1]["sweep"] is False and rows[2]["sweep"] is True
    assert st.total(rows, 4, "hybrid,fs=0.9,chunk=1") == pytest.approx(0.12)
    with pytest.raises(KeyError, match="on 2 nodes"):
        st.total(rows, 2, "static")


def test_read_steps_orders_by_step_and_read_best_fs_rounds(tmp_path):
    folder = tmp_path / "t"
    write_trend(folder, [], steps={(1, "static"): [0.006, 0.00775]}, best={64: (0.59999999999999876, 0.118)})
    # write the steps out of order: read_steps sorts by the step column
    text = (folder / "steps.csv").read_text().splitlines()
    (folder / "steps.csv").write_text("\n".join([text[0], text[2], text[1]]) + "\n")
    assert st.read_steps(folder / "steps.csv") == {(1, "static"): [0.006, 0.00775]}
    assert st.read_best_fs(folder / "best_fs.csv") == {64: (0.6, 0.118)}


def test_gain_and_loss_arithmetic():
    assert st.gain(1.3, 1.0) == pytest.approx(0.3)        # the base takes 1.3x: +30%
    assert st.gain(1.0, 1.25) == pytest.approx(-0.2)
    rows = [{"nodes": n, "schedule": "static", "sweep": False, "total_s": t} for n, t in ((1, 7.0), (64, 8.4))]
    rows += [{"nodes": n, "schedule": "hybrid", "sweep": False, "total_s": t} for n, t in ((1, 6.8), (64, 7.0))]
    assert st.loss_vs_nodes(rows, "static") == pytest.approx({1: 0.0, 64: 0.2})
    assert st.gain_vs_nodes(rows, "static", "hybrid") == pytest.approx({1: 7.0 / 6.8 - 1, 64: 0.2})


def test_sweep_curve_and_the_flat_bottom():
    rows = [{"nodes": 16, "schedule": f"hybrid,fs={fs}", "sweep": True, "mean_fs": fs + 1e-12, "total_s": t}
            for fs, t in ((0.7, 1.03), (0.8, 1.004), (0.9, 1.0), (1.0, 1.2))]
    rows.append({"nodes": 16, "schedule": "static", "sweep": False, "mean_fs": 1.0, "total_s": 1.2})
    curve = st.sweep_curve(rows, 16)
    assert curve == [(0.7, 1.03), (0.8, 1.004), (0.9, 1.0), (1.0, 1.2)]
    assert st.near_best_range(curve) == (0.8, 0.9)
    assert st.near_best_range(curve, tolerance=0.05) == (0.7, 0.9)


def test_histogram_bins_by_lower_edge():
    h = st.histogram([0.00601, 0.00624, 0.00626, 0.00775], bin_s=0.25e-3)
    assert list(h.values()) == [2, 1, 1]
    assert list(h) == pytest.approx([0.006, 0.00625, 0.00775])


def test_modes_bimodal_static_unimodal_hybrid():
    # Kale & Gropp's one-node shape: half at 6 ms, half at 7.75 ms (and a few at 9.5)
    static = [0.0061] * 50 + [0.00786] * 45 + [0.0096] * 5
    assert [round(m * 1e3, 2) for m in st.modes(st.histogram(static))] == [6.0, 7.75]
    hybrid = [0.0066] * 80 + [0.0069] * 10 + [0.0073] * 5 + [0.0080] * 5
    assert [round(m * 1e3, 2) for m in st.modes(st.histogram(hybrid))] == [6.5]
    assert st.mode_centre(st.histogram(hybrid)) == pytest.approx(6.625e-3)
    assert st.modes({}) == []


def test_imbalanced_profile_adds_one_slow_node_source():
    cab = {"format": "aloe-sim-profile/1", "name": "cab", "made_by": "hand.", "cores": 16,
           "noise": [{"kind": "poisson", "rate_hz": 36.1, "length": {"dist": "fixed", "mean_s": 5e-5}}]}
    p = st.imbalanced_profile(cab)
    assert p["noise"][-1] == {"kind": "slow-node", "fraction": st.IMBALANCE_FRACTION, "factor": st.IMBALANCE_FACTOR}
    assert len(cab["noise"]) == 1                         # the input is left alone
    assert "Tab 1.1" in p["made_by"] and p["name"].startswith("cab")
    f, F = st.IMBALANCE_FRACTION, st.IMBALANCE_FACTOR      # max/avg = F / (1 + f (F - 1)) = 1.26
    assert F / (1 + f * (F - 1)) == pytest.approx(1.26, abs=0.005)
    json.dumps(p)


def test_trend_argv_quick_caps_nodes_and_steps(tmp_path):
    t = st.Trend("x", "p.json", [1, 64, 1024], "static,hybrid,fs=0.5", 1000, "0:1:0.1", ["--iteration-us", "60"])
    argv = t.argv("aloe", tmp_path / "p.json", tmp_path / "out", 2, quick=True)
    assert argv[argv.index("--nodes") + 1] == "1,64" and argv[argv.index("--steps") + 1] == "100"
    assert argv[argv.index("--best-fs") + 1] == "0:1:0.1" and "--quiet" in argv and "60" in argv
    full = t.argv("aloe", tmp_path / "p.json", tmp_path / "out", 2)
    assert full[full.index("--nodes") + 1] == "1,64,1024" and full[full.index("--steps") + 1] == "1000"


def test_figures_from_fake_folders(tmp_path):
    static, hybrid = "static", "hybrid,fs=0.5,chunk=1"
    write_trend(tmp_path / "kg-jacobi",
                [summary_line(n, s, t) for n, s, t in ((1, static, 7.0), (64, static, 8.4), (1, hybrid, 6.8), (64, hybrid, 7.0),
                                                       (1, "dynamic,chunk=1", 7.1), (64, "dynamic,chunk=1", 7.5))],
                steps={(1, static): [0.0061, 0.0061, 0.00786, 0.00786], (1, hybrid): [0.0066] * 4})
    write_trend(tmp_path / "cab-best-fs",
                [summary_line(n, static, t) for n, t in ((1, 1.0), (1024, 1.5))] +
                [summary_line(n, f"hybrid,fs={fs},chunk=1", t, fs, sweep=1)
                 for n, fs, t in ((1, 0.9, 1.01), (1, 1.0, 1.0), (1024, 0.8, 1.25), (1024, 0.9, 1.3), (1024, 1.0, 1.5))],
                best={1: (1.0, 1.0), 1024: (0.8, 1.25)})
    write_trend(tmp_path / "cab-slack",
                [summary_line(n, s, t, slack=0.5) for n, s, t in (
                    (1, static, 1.0), (1024, static, 1.5),
                    (1, "hybrid,fs=0.8,chunk=1", 1.02), (1024, "hybrid,fs=0.8,chunk=1", 1.3),
                    (1, "hybrid,fs=0.8,chunk=1,slack=on", 1.02), (1024, "hybrid,fs=0.8,chunk=1,slack=on", 1.2),
                    (1, "hybrid,fs=0.5,chunk=1", 1.05), (1024, "hybrid,fs=0.5,chunk=1", 1.3),
                    (1, "hybrid,fs=0.5,chunk=1,slack=on", 1.05), (1024, "hybrid,fs=0.5,chunk=1,slack=on", 1.3),
                    (1, "adaptive,search=race,chunk=auto,delay=optimistic", 1.0),
                    (1024, "adaptive,search=race,chunk=auto,delay=optimistic", 1.4))])
    rows = st.figures(tmp_path)
    get = {(r["trend"], r["figure"], r["nodes"]): r["value"] for r in rows}
    assert get[("kg-jacobi", "loss vs 1 node: static", 64)] == pytest.approx(0.2)
    assert get[("kg-jacobi", "gain of hybrid fs=0.5 over static", 64)] == pytest.approx(0.2)
    assert get[("kg-jacobi", "modes (ms): static", 1)] == "6.125 7.875"
    assert get[("kg-jacobi", "modes (ms): " + hybrid, 1)] == "6.625"
    assert get[("cab-best-fs", "oracle best fs", 1024)] == 0.8
    assert get[("cab-best-fs", "gain of the oracle fs over static", 1024)] == pytest.approx(0.2)
    assert get[("cab-best-fs", "fs within 1% of the best", 1024)] == "0.80-0.80"
    assert get[("cab-slack", "gain of slack=on over plain fs=0.8", 1024)] == pytest.approx(1.3 / 1.2 - 1)
    assert get[("cab-slack", "gain of fs=0.8 slack=on over the oracle fs", 1024)] == pytest.approx(1.25 / 1.2 - 1)
    assert get[("cab-slack", "gain over static: adaptive", 1024)] == pytest.approx(1.5 / 1.4 - 1)
    st.write_figures(tmp_path, rows)
    st.write_summary(tmp_path, rows, ["aloe sim ..."], 1.0)
    text = (tmp_path / "summary.md").read_text()
    assert "| oracle best fs | 1 | 0.8 |" in text and "+20.0%" in text
    assert math.isclose(float(next(l for l in (tmp_path / "trends.csv").read_text().splitlines()
                                   if "loss vs 1 node: static" in l and l.endswith(("0.2", "0.2\r"))).split(",")[-1]), 0.2)
