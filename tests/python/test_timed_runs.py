"""timed_runs: statistics and paired ratios by hand, interleaving, the environment a case
runs in, and paths kept out of results."""
import sys

import numpy as np
import pytest

from aloe_harness import provenance
from aloe_harness import timed_runs as tr


def test_describe_matches_numpy_and_the_spread_needs_two_values():
    xs = [3.0, 1.0, 4.0, 1.5, 9.0, 2.6]
    d = tr.describe(xs)
    assert (d["p25"], d["median"], d["p75"]) == pytest.approx(
        (np.percentile(xs, 25), np.median(xs), np.percentile(xs, 75)))
    assert d["spread"] == pytest.approx((d["p75"] - d["p25"]) / d["median"])
    assert (d["min"], d["max"], d["reps"]) == (1.0, 9.0, 6)
    assert tr.describe([2.0])["spread"] is None
    assert tr.describe([])["median"] is None


def test_compare_pairs_by_repetition_and_skips_reps_the_base_lacks():
    by_rep = {"base": {0: 1.0, 1: 2.0, 2: 1.0, 3: 1.0},
              "x": {0: 1.1, 1: 2.0, 2: 1.2, 3: 0.9, 4: 5.0}}  # rep 4: the base failed
    c = tr.compare(by_rep, "base")
    assert c["base"]["ratio"] == 1.0 and c["base"]["paired"]["median"] == 1.0
    assert c["x"]["ratio"] == pytest.approx(1.2)  # medians: 1.2 (of five) over 1.0
    # paired: 1.1, 1.0, 1.2, 0.9 -> median 1.05
    assert c["x"]["paired"]["median"] == pytest.approx(1.05) and c["x"]["paired"]["reps"] == 4
    assert tr.compare({"x": {0: 1.0}}, "missing")["x"]["ratio"] is None


def test_values_by_rep_keeps_the_group_and_the_successful_runs():
    entries = [{"group": "g", "variant": "a", "rep": 0, "error": None, "t": 1.0},
               {"group": "g", "variant": "a", "rep": 1, "error": "exit status 1", "t": 9.0},
               {"group": "h", "variant": "a", "rep": 0, "error": None, "t": 3.0},
               {"group": "g", "variant": "b", "rep": 0, "error": None, "t": None}]
    assert tr.values_by_rep(entries, "g", "t") == {"a": {0: 1.0}}


def test_order_rotates_groups_and_variants_by_repetition():
    cases = [tr.Case(g, v, ("p",)) for g in ("1", "2") for v in ("a", "b", "c")]
    order = [(rep, c.group, c.variant) for rep, c in tr.order(cases, 2)]
    assert order[:3] == [(0, "1", "a"), (0, "1", "b"), (0, "1", "c")]
    assert order[6:9] == [(1, "2", "b"), (1, "2", "c"), (1, "2", "a")]


def test_a_case_clears_what_would_change_the_run_and_sets_its_own(monkeypatch):
    base = {"PATH": "/bin", "OMP_SCHEDULE": "dynamic", "ALOE_TUNING": "old.txt",
            "LD_PRELOAD": "x.so"}
    case = tr.Case("g", "libgomp", ("prog",), (("OMP_SCHEDULE", "static"),))
    assert case.environment(base) == {"PATH": "/bin", "OMP_SCHEDULE": "static"}
    assert tr.Case("g", "adaptive", ("prog",)).environment(base) == {"PATH": "/bin"}
    assert case.command_line() == "OMP_SCHEDULE=static prog"


def test_run_times_a_process_and_names_a_failure():
    ok = tr.run(tr.Case("g", "v", (sys.executable, "-c", "print('hi')")), timeout=30)
    assert ok.error is None and ok.stdout == "hi\n" and ok.wall_s > 0
    bad = tr.run(tr.Case("g", "v", (sys.executable, "-c",
                                    "import sys; print('why', file=sys.stderr); sys.exit(3)")), 30)
    assert bad.exit_status == 3 and bad.error == "exit status 3: why"
    assert "could not start" in tr.run(tr.Case("g", "v", ("/nonexistent/prog",)), 30).error


def test_hidden_folders_and_the_repository_stay_out_of_results(tmp_path, monkeypatch):
    monkeypatch.setattr(tr, "_HIDDEN", {})
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "mg.A.x").write_text("")
    tr.hide(tmp_path / "bin", "<npb-bin>")
    assert tr.shown(f"{tmp_path}/bin/mg.A.x failed") == "<npb-bin>/mg.A.x failed"
    assert tr.shown_argv(["npb", "--npb-bin", str(tmp_path / "bin"), "--reps", "3"]) == \
        ["npb", "--npb-bin", "<npb-bin>", "--reps", "3"]
    if provenance.REPO_ROOT:
        assert tr.shown(f"{provenance.REPO_ROOT}/build/x") == "build/x"
    stats = tmp_path / "s.json"
    stats.write_text(f'{{"command": "{tmp_path}/bin/mg.A.x"}}')
    tr.scrub(stats)
    assert stats.read_text() == '{"command": "<npb-bin>/mg.A.x"}'


def test_markdown_helpers():
    assert tr.table(["a", "b"], [["1", "x|y"]]) == ["| a | b |", "|---|---|", "| 1 | x\\|y |"]
    assert tr.span({"median_s": 2.0, "p25_s": 1.5, "p75_s": 2.50001}) == "2 [1.5–2.5]"
    assert tr.span({"median_s": None}) == "–"
    assert tr.percent(None) == "–" and tr.percent(0.0123) == "1.2%"


def test_a_relative_out_is_made_absolute(tmp_path, monkeypatch):
    """The programs run in scratch folders, so a relative --out handed to them as a --stats or
    tuning path would name a folder that does not exist there (a real failure of npb and
    persistence run with --out bench/results/...)."""
    monkeypatch.chdir(tmp_path)
    out = tr.results_folder("bench/results/npb-x", "npb")
    assert out.is_absolute() and out == tmp_path / "bench/results/npb-x"
