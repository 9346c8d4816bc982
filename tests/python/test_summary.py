"""Statistics, ratios and efficiencies against hand-computed values; CSV and markdown."""
import csv

import pytest

from aloe_harness import summary


def _entry(run, total, role="timed", valid=True, noise="none", steps=None):
    runtime, schedule = run.split(":", 1)
    return {"role": role, "workload": "spmv", "noise": noise, "runtime": runtime,
            "schedule": schedule, "threads": 1 if role == "serial" else 2, "valid": valid,
            "record": {"total_s": total, "step_s": steps or [total / 2, total / 2]}
            if valid else None}


@pytest.fixture
def entries():
    return ([_entry("serial:serial", 8.0, role="serial")]
            + [_entry("libgomp:static", t, steps=[t / 4, 3 * t / 4]) for t in (2.0, 4.0, 3.0)]
            + [_entry("libgomp:guided", t) for t in (2.0, 2.0, 2.0)]
            + [_entry("aloe:hybrid,fs=0.8", t) for t in (1.6, 1.8, 1.7)]
            + [_entry("tbb:affinity", 2.5), _entry("tbb:affinity", 0, valid=False),
               _entry("tbb:affinity", 2.5)])


def test_rows_by_hand(entries):
    rows = {summary.label(r): r for r in summary.summarize(entries)}
    s = rows["libgomp:static"]
    assert (s["reps"], s["failed"], s["median_s"], s["min_s"], s["max_s"]) == (3, 0, 3.0, 2.0, 4.0)
    assert (s["p25_s"], s["p75_s"]) == pytest.approx((2.5, 3.5))
    assert s["spread"] == pytest.approx(1 / 3)
    # steps pooled: 0.5, 1.5, 1.0, 3.0, 0.75, 2.25 -> median (1.0 + 1.5) / 2
    assert s["median_step_s"] == pytest.approx(1.25)
    assert s["ratio_to_best_peer"] == pytest.approx(3.0 / 2.0)   # best peer: guided, 2.0
    assert s["efficiency"] == pytest.approx(8.0 / (2 * 3.0))
    h = rows["aloe:hybrid,fs=0.8"]
    assert h["ratio_to_best_peer"] == pytest.approx(1.7 / 2.0)
    assert h["efficiency"] == pytest.approx(8.0 / (2 * 1.7))
    t = rows["tbb:affinity"]
    assert (t["reps"], t["failed"], t["median_s"], t["spread"]) == (2, 1, 2.5, 0.0)
    assert rows["libgomp:guided"]["ratio_to_best_peer"] == 1.0


def test_rows_sorted_by_median_within_groups(entries):
    entries += [_entry("libgomp:static", 9.0, noise="bg"), _entry("aloe:static", 5.0, noise="bg")]
    order = [(r["noise"], summary.label(r)) for r in summary.summarize(entries)]
    assert order == [("none", "aloe:hybrid,fs=0.8"), ("none", "libgomp:guided"),
                     ("none", "tbb:affinity"), ("none", "libgomp:static"),
                     ("bg", "aloe:static"), ("bg", "libgomp:static")]


def test_csv_columns_and_values(entries, tmp_path):
    path = tmp_path / "results.csv"
    summary.write_csv(path, summary.summarize(entries))
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        rows = {f"{r['runtime']}:{r['schedule']}": r for r in reader}
    assert set("workload,noise,runtime,schedule,threads,reps,median_s,min_s,max_s,spread,"
               "median_step_s,ratio_to_best_peer,efficiency".split(",")) <= set(reader.fieldnames)
    r = rows["aloe:hybrid,fs=0.8"]
    assert (r["workload"], r["noise"], r["threads"], r["reps"]) == ("spmv", "none", "2", "3")
    assert float(r["ratio_to_best_peer"]) == pytest.approx(0.85)
    assert float(r["efficiency"]) == pytest.approx(8 / 3.4, rel=1e-5)
    back = {summary.label(x): x for x in summary.read_csv(path)}
    assert back["libgomp:static"]["median_s"] == 3.0 and back["tbb:affinity"]["failed"] == 1


def test_markdown_has_tables_the_best_peer_line_and_repeatability(entries, tmp_path):
    path = tmp_path / "summary.md"
    summary.write_markdown(path, summary.summarize(entries), description="demo",
                           problems=["FAILED spmv none tbb:affinity"],
                           noise_before={"cpus": [{"method": "ftq", "cpu": 0,
                                                   "lost_fraction": 0.026, "max_us": 1500}]},
                           noise_after={"error": "no"})
    text = path.read_text()
    assert "## spmv, noise none, 2 threads" in text
    assert ("Best aloe vs best peer: aloe:hybrid,fs=0.8 is 0.850× libgomp:guided "
            "(15.0% faster") in text
    assert "| 1 | aloe:hybrid,fs=0.8 | 0.850 | 2.35 |" in text
    assert "## FAILURES (1)" in text and "## Repeatability" in text
    assert "ftq cpu 0: lost 2.6%, max 1.5 ms" in text and "not measured (no)" in text
    assert "lost up to 2.6% of a CPU" in text
    assert "Spread (p75−p25)/median over 4 configs" in text
    assert "3.0" not in text.split("## Repeatability")[0].split("| 1 |")[0]  # no absolute times


def test_a_tie_is_called_a_tie():
    rows = [dict(workload="w", noise="n", threads=2, runtime="aloe", schedule="static",
                 median_s=0.98, spread=0.05),
            dict(workload="w", noise="n", threads=2, runtime="libgomp", schedule="static",
                 median_s=1.0, spread=0.01)]
    assert "tie" in summary.verdict(rows)
    assert "no successful aloe run" in summary.verdict(rows[1:])


def test_serial_time_is_the_median_of_its_repetitions(entries):
    # Two more serial runs (one per rep): the ideal uses their median, 6.0, not the first.
    more = entries + [_entry("serial:serial", 6.0, role="serial"),
                      _entry("serial:serial", 5.0, role="serial"),
                      _entry("serial:serial", 0, role="serial", valid=False)]
    rows = {summary.label(r): r for r in summary.summarize(more)}
    assert rows["libgomp:static"]["serial_s"] == 6.0
    assert rows["libgomp:static"]["efficiency"] == pytest.approx(6.0 / (2 * 3.0))


def test_headline_names_best_runs_and_ratio(entries):
    lines = summary.headline(summary.summarize(entries))
    assert lines[0].startswith("| workload | noise | best peer | best aloe |")
    # best peer guided 2.0, best aloe hybrid 1.7 (spreads 5.9% and 0: not a tie),
    # libgomp static 3.0 / 2.0
    assert lines[2] == "| spmv | none | libgomp:guided | aloe:hybrid,fs=0.8 | 0.850 | 1.500 |"
