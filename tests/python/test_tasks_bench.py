"""bench/tasks/tasks_bench.py: the spawn + sync target lines, by hand."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "tasks"))
import tasks_bench  # noqa: E402


def runs(ns_per_task, tasks=1000):
    """Rows of one runtime: each repetition's time per task in ns."""
    return [{"wall_s": ns * 1e-9 * tasks, "tasks": tasks} for ns in ns_per_task]


def test_met_and_missed_against_each_peer():
    by = {("empty@2", "aloe"): runs([30, 34, 32]), ("empty@2", "tbb"): runs([150, 160]),
          ("empty@2", "omp"): runs([50, 60, 70]), ("empty@2", "serial"): runs([5, 5])}
    [line, blank] = tasks_bench.overhead_targets(["empty@2"], by)
    assert blank == ""
    # aloe 32 against oneTBB 155 (0.21) and libgomp 60 (0.53, half of it 30): the second missed
    assert "≤ oneTBB: met (0.21×)" in line
    assert "≤ 0.5× libgomp: missed (0.53× libgomp)" in line
    assert "out of any runtime's reach" not in line  # the body alone (5 ns) is below 30


def test_half_of_libgomp_below_the_body_alone_is_said():
    by = {("empty@1", "aloe"): runs([40]), ("empty@1", "tbb"): runs([80]),
          ("empty@1", "omp"): runs([10]), ("empty@1", "serial"): runs([6])}
    [line, _] = tasks_bench.overhead_targets(["empty@1"], by)
    assert "≤ 0.5× libgomp: missed (4.00× libgomp)" in line
    assert "0.5× libgomp (5 ns) is below the body alone (6 ns): out of any runtime's reach" in line


def test_fib_met_and_experiments_without_every_peer_left_out():
    by = {("fib27@2", "aloe"): runs([60]), ("fib27@2", "tbb"): runs([80]), ("fib27@2", "omp"): runs([340]),
          ("fib27@1", "aloe"): runs([60]), ("fib27@1", "tbb"): runs([80])}
    lines = tasks_bench.overhead_targets(["fib27@2", "fib27@1"], by)
    assert lines[0] == "- **fib27@2**: ≤ oneTBB: met (0.75×); ≤ 0.5× libgomp: met (0.18× libgomp)"
    assert len(lines) == 2  # fib27@1 has no libgomp row: no line
    assert tasks_bench.overhead_targets(["fib27@1"], by) == []
