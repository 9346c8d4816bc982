"""compare: two results folders agree when their medians differ by less than their spreads."""
from aloe_harness import compare, summary


def row(schedule, median, spread, noise="none"):
    return dict(workload="jacobi3d", noise=noise, runtime="aloe", schedule=schedule, threads=2,
                reps=7, failed=0, median_s=median, min_s=median, max_s=median, p25_s=median,
                p75_s=median, spread=spread, median_step_s=None, serial_s=None,
                ratio_to_best_peer=None, efficiency=None)


def test_ratio_and_tolerance_by_hand():
    a = [row("static", 1.00, 0.02), row("guided", 2.00, 0.01), row("only-in-a", 1.0, 0.1)]
    b = [row("static", 1.03, 0.04), row("guided", 2.05, 0.01), row("only-in-b", 1.0, 0.1)]
    rows = {r["schedule"]: r for r in compare.compare_rows(a, b)}
    assert set(rows) == {"static", "guided"}          # configurations in both only
    assert abs(rows["static"]["ratio"] - 1.03) < 1e-12
    assert rows["static"]["tolerance"] == 0.04       # the larger spread
    assert rows["static"]["agree"] is True            # 3% within 4%
    assert abs(rows["guided"]["ratio"] - 1.025) < 1e-12
    assert rows["guided"]["agree"] is False           # 2.5% outside 1%


def test_run_writes_report_and_exit_status(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, rows in ((a, [row("static", 1.0, 0.05)]), (b, [row("static", 1.02, 0.01)])):
        folder.mkdir()
        summary.write_csv(folder / "results.csv", rows)
    out = tmp_path / "repeat.md"
    assert compare.run(a, b, out) == 0
    text = out.read_text()
    assert "1 of 1 configurations agree" in text and "| 1.020 | 5.0% | yes |" in text
    summary.write_csv(b / "results.csv", [row("static", 1.2, 0.01)])
    assert compare.run(a, b, None) == 1


def test_not_a_results_folder(tmp_path):
    try:
        compare.run(tmp_path, tmp_path, None)
    except FileNotFoundError as e:
        assert "no results.csv" in str(e)
    else:
        raise AssertionError("accepted a folder without results.csv")
