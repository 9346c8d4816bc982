"""bench end to end against the fakes: the results folder, plots and report.html."""
import json
import signal

from aloe_harness import report
from aloe_harness.__main__ import main

PNG = b"\x89PNG\r\n\x1a\n"


def test_results_folder(timeline_results):
    out = timeline_results
    for name in ("command.txt", "machine.json", "noise-before.json", "noise-after.json",
                 "runs.jsonl", "results.csv", "summary.md", "report.html"):
        assert (out / name).stat().st_size > 0, name
    assert not (out / "problems.txt").exists()
    command = (out / "command.txt").read_text()
    assert "python -m aloe_harness bench --matrix" in command and "--timelines" in command
    machine = json.loads((out / "machine.json").read_text())
    assert machine["aloe_info"]["version"] == "0.0.0-fake" and machine["uname"]
    assert json.loads((out / "noise-before.json").read_text())["cpus"][0]["p50_us"] == 9.6
    entries = report.read_entries(out)
    assert {e["role"] for e in entries} == {"serial", "calibration", "timed", "timeline"}
    assert all("config" not in e and e["noise"] and e["record"] for e in entries)


def test_plots_are_png_files(timeline_results):
    out = timeline_results
    names = {p.name for p in (out / "plots").glob("*.png")}
    for expected in ("hist-jacobi3d-none-t2.png", "hist-spmv-inject-p0.2-f0.2-t2.png",
                     "bars-jacobi3d-t2.png", "bars-spmv-t2.png",
                     "timeline-spmv-none-t2-aloe-hybrid_fs0.8.png",
                     "timeline-jacobi3d-inject-p0.2-f0.2-t2-libgomp-static.png"):
        assert expected in names
    for p in (out / "plots").glob("*.png"):
        assert p.stat().st_size > 1000 and p.read_bytes()[:8] == PNG


def test_report_references_every_plot_and_table(timeline_results):
    out = timeline_results
    html = (out / "report.html").read_text()
    for p in (out / "plots").glob("*.png"):
        assert f"src='plots/{p.name}'" in html
    from aloe_harness import summary
    for t in summary.tables(summary.summarize(report.read_entries(out))):
        assert t.title in html and t.verdict in html
    assert "fake: 1 package, 2 cores" in html
    assert "fwq cpu 1: lost 3.1%, p99 14 µs, max 900 µs" in html
    assert "python -m aloe_harness bench" in html
    (out / "report.html").unlink()
    assert main(["report", str(out)]) == 0 and (out / "report.html").read_text() == html


def test_failures_make_the_exit_status_nonzero_and_are_reported(bench):
    status, out = bench("--no-plots", env={"FAKE_APP_BAD_CHECKSUM": "aloe:hybrid,fs=0.8"})
    assert status == 1
    problems = (out / "problems.txt").read_text()
    assert problems.count("FAILED") == 12 and "differ from the serial run's" in problems
    assert "## FAILURES (12)" in (out / "summary.md").read_text()
    assert "class='fail'" in (out / "report.html").read_text()
    # the failed configs keep their rows, with 0 reps and 3 failed
    assert (out / "results.csv").read_text().count('aloe,"hybrid,fs=0.8",2,0,3') == 4


def test_missing_noise_subcommand_is_recorded_not_fatal(bench):
    status, out = bench("--reps", "1", "--no-plots", env={"FAKE_ALOE_NO_NOISE": "1"})
    assert status == 0
    noise = json.loads((out / "noise-before.json").read_text())
    assert "unknown subcommand 'noise'" in noise["error"]
    assert "not measured (aloe: unknown subcommand" in (out / "summary.md").read_text()


def test_overrides_and_bad_command_lines(bench, capsys):
    status, out = bench("--workloads", "spmv", "--runs", "libgomp:static,aloe:static",
                        "--noise", "background:cpu=1,duty=0.5", "--threads", "1,2", "--quick",
                        "--no-plots")
    assert status == 0
    entries = report.read_entries(out)
    timed = [e for e in entries if e["role"] == "timed"]
    assert {(e["runtime"], e["threads"], e["noise"]) for e in timed} == {
        (r, t, "bg-cpu1-d0.5") for r in ("libgomp", "aloe") for t in (1, 2)}
    assert len(timed) == 2 * 2 * 2  # quick: 2 reps
    assert bench("--runs", "libgomp:fast", out="o2")[0] == 2
    assert "run 'libgomp:fast'" in capsys.readouterr().err
    assert bench(out="out")[0] == 2  # the folder already holds results
    assert "already holds results" in capsys.readouterr().err


def test_ctrl_c_writes_what_was_gathered(bench):
    # Python leaves SIGINT ignored when it starts with it ignored (a job started with `&` by
    # a non-interactive shell, nohup): Ctrl-C is then meant to do nothing. This test is about
    # what Ctrl-C does, so it gives SIGINT Python's own handler for its duration.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        status, out = bench("--no-plots", env={"FAKE_APP_INTERRUPT": "tbb:affinity"})
    finally:
        signal.signal(signal.SIGINT, previous)
    assert status == 130
    entries = report.read_entries(out)
    assert [e["role"] for e in entries[:4]] == ["serial", "serial", "calibration", "calibration"]
    assert len(entries) == 4 + 3  # the first group's runs before tbb:affinity
    assert "libgomp" in (out / "results.csv").read_text()
    assert (out / "summary.md").exists() and (out / "report.html").exists()
    assert "INTERRUPTED (Ctrl-C) after 7 runs" in (out / "problems.txt").read_text()
    assert "interrupted" in json.loads((out / "noise-after.json").read_text())["error"]


def test_report_reads_a_gzipped_runs_file(timeline_results, tmp_path):
    import gzip
    import shutil
    folder = tmp_path / "committed"
    shutil.copytree(timeline_results, folder)
    raw = (folder / "runs.jsonl").read_bytes()
    (folder / "runs.jsonl.gz").write_bytes(gzip.compress(raw))
    (folder / "runs.jsonl").unlink()
    assert report.read_entries(folder) == report.read_entries(timeline_results)
    assert main(["report", str(folder)]) == 0
    assert "runs.jsonl.gz" in (folder / "report.html").read_text()
