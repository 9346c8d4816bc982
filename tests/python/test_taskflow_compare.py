"""bench/taskflow_ports/compare.py: aloe against each peer per repetition, by hand."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "taskflow_ports"))
import compare  # noqa: E402


def rows(times, benchmark="black_scholes"):
    """times: {model: [(size, ms) per rep]}; the last size of a run is its largest."""
    out = []
    for model, reps in times.items():
        for rep, sizes in enumerate(reps):
            for i, (size, ms) in enumerate(sizes):
                out.append({"rep": str(rep), "benchmark": benchmark, "model": model, "size": str(size),
                            "runtime_ms": str(ms), "largest": "1" if i == len(sizes) - 1 else "0",
                            "status": "ok"})
    return out


def test_paired_ratios_per_repetition_and_over_the_sweep():
    r = rows({"aloe": [[(1, 10), (2, 90)], [(1, 10), (2, 110)], [(1, 30), (2, 100)]],
              "tbb": [[(1, 10), (2, 100)], [(1, 10), (2, 100)], [(1, 10), (2, 100)]]})
    lines = compare.against_each_peer(r)
    row = next(line for line in lines if "| oneTBB |" in line)
    cells = [c.strip() for c in row.strip("|").split("|")]
    # largest size: 0.9, 1.1, 1.0 -> median 1.000, faster once; sweep: 100/110, 120/110, 130/110
    assert cells[3] == "1.000 [0.900, 1.100]"
    assert cells[4] == "1 of 3"
    assert cells[5] == "1.091 [0.909, 1.182]"
    assert cells[6] == "1 of 3"


def test_a_failed_run_leaves_its_repetition_out():
    r = rows({"aloe": [[(2, 90)], [(2, 80)]], "omp": [[(2, 100)], [(2, 100)]]})
    r[1]["status"] = "timeout"  # aloe's second repetition
    row = next(line for line in compare.against_each_peer(r) if "OpenMP" in line)
    assert "0.900 [0.900, 0.900]" in row and "1 of 1" in row


def test_a_peer_that_did_not_run_gets_no_row():
    r = rows({"aloe": [[(2, 90)]], "tf": [[(2, 100)]]})
    lines = compare.against_each_peer(r)
    assert any("| Taskflow |" in line for line in lines)
    assert not any("oneTBB" in line for line in lines)
