"""first-cost, npb and persistence: their tables from hand-made runs (no timing), NPB's output,
and the command lines they build."""
import argparse

import pytest

from aloe_harness import first_cost, npb, persistence
from aloe_harness import timed_runs as tr


def _entry(group, variant, rep, error=None, **values):
    return {"group": group, "variant": variant, "rep": rep, "error": error, **values}


def _args(**kw):
    base = dict(aloe="aloe", threads=2, bind="close", sites=40, repeats=5, iterations=256,
                seed=1, form="region", program="fi", variants=["libgomp", "program", "adaptive"],
                settings=[(1000.0, 0.3), (20.0, 0.3), (20.0, 0.0)])
    return argparse.Namespace(**(base | kw))


def test_first_cost_rows_ratios_and_the_target():
    entries = []
    for rep, (lib, prog, adap) in enumerate([(1.00, 1.00, 1.01), (1.02, 1.01, 1.04),
                                             (0.98, 0.99, 1.00)]):
        for v, t in (("libgomp", lib), ("program", prog), ("adaptive", adap)):
            entries.append(_entry("1000 µs, imbalance 0.3", v, rep, loops_s=t,
                                  process_s=t + 0.01, first_pass_s=t / 2, later_pass_s=t / 8))
    entries.append(_entry("1000 µs, imbalance 0.3", "adaptive", 3, error="exit status 1",
                          loops_s=None))
    rows = first_cost.table_rows(entries, [(1000.0, 0.3), (20.0, 0.3)])  # no 20 µs runs
    by = {r["variant"]: r for r in rows}
    assert by["program"]["per_program"] == 1.0 and by["adaptive"]["reps"] == 3
    assert by["adaptive"]["cost"] == pytest.approx(1.01 / 1.00 - 1)
    # paired adaptive / program: 1.01, 1.0297, 1.0101 -> median 1.0101
    assert by["adaptive"]["per_program_paired"] == pytest.approx(1.00 / 0.99)
    assert by["adaptive"]["per_libgomp"] == pytest.approx(1.01 / 1.00)
    assert by["adaptive"]["first_pass_s"] == pytest.approx(0.505)
    assert first_cost.verdict(by["adaptive"]) == "met: +1.0% (target under 2%)"
    assert first_cost.verdict(by["adaptive"] | {"cost": 0.05, "per_program_paired_p25": 1.01}) \
        == "missed: +5.0% (target under 2%); the paired p25 is inside it"
    assert first_cost.verdict(by["adaptive"] | {"loop_us": 20.0, "cost": 0.3}) == \
        "+30.0% (no target below 1000 µs)"
    assert by["adaptive"]["group"] == "1000 µs, imbalance 0.3" and len(rows) == 3


def test_first_cost_commands_set_the_schedule_each_variant_needs():
    cases = first_cost.cases(_args(), 0.75)
    by = {(c.group, c.variant): c for c in cases}
    lib, prog, adap = (by[("20 µs, imbalance 0", v)] for v in ("libgomp", "program", "adaptive"))
    assert len(cases) == 9 and lib.argv[0] == "fi" and "0.750000" in lib.argv
    assert lib.argv[lib.argv.index("--imbalance") + 1] == "0"
    assert ("OMP_SCHEDULE", "static") in lib.env and ("OMP_SCHEDULE", "static") in prog.env
    assert "OMP_SCHEDULE" not in dict(adap.env)  # a static run-sched-var would keep static
    assert adap.argv[:9] == ("aloe", "run", "--schedule", "adaptive", "--threads", "2",
                             "--summary", "none", "--")
    assert ("OMP_PROC_BIND", "close") in adap.env


NPB_OUTPUT = """
 MG Benchmark Completed.
 Class           =                        A
 Time in seconds =                     1.29
 Verification    =               SUCCESSFUL
"""


def test_npb_output():
    assert npb.parse_output(NPB_OUTPUT) == (1.29, None)
    assert npb.parse_output(NPB_OUTPUT.replace(" SUCCESSFUL", " UNSUCCESSFUL")) == \
        (None, "NPB's verification: UNSUCCESSFUL")
    assert npb.parse_output("Segmentation fault")[1] == "no 'Time in seconds' in the output"


def test_npb_rows_and_the_steadiness_target():
    entries = []
    for rep, (lib, sta, adap) in enumerate([(1.0, 1.01, 1.03), (1.0, 1.0, 1.04),
                                            (1.0, 1.02, 1.10), (1.0, 1.0, 1.02)]):
        for v, t in (("libgomp", lib), ("static", sta), ("adaptive", adap)):
            entries.append(_entry("mg.A.x", v, rep, process_s=t, npb_s=round(t, 2)))
    by = {r["variant"]: r for r in npb.table_rows(entries, ["mg.A.x"])}
    assert by["adaptive"]["per_libgomp"] == pytest.approx(1.035)
    assert by["adaptive"]["per_static"] == pytest.approx(1.035 / 1.005)
    # paired adaptive / libgomp: 1.03 1.04 1.10 1.02 -> p75 1.055: inside on the median only
    assert npb.verdict(by["adaptive"]) == "not steady: median 1.035, but p75 1.055 > 1.05"
    assert npb.verdict(by["adaptive"] | {"per_libgomp_paired_p75": 1.04}).startswith("met")
    assert npb.verdict(by["adaptive"] | {"per_libgomp_paired": 1.2}).startswith("missed")


def test_persistence_rows_take_medians_of_each_runs_site_numbers():
    entries = []
    for rep in range(3):
        entries.append(_entry("bt.W.x", "off", rep, program_s=1.2 + rep / 100, process_s=1.3,
                              sites=30, settled=20, recalled=0, first_good_median=3,
                              first_good_max=19 + rep, before_good_s=0.1, unsettled_s=0.2,
                              loop_s=1.0))
        entries.append(_entry("bt.W.x", "on", rep, program_s=1.1, process_s=1.2, sites=30,
                              settled=28, recalled=25, first_good_median=1, first_good_max=2,
                              before_good_s=0.0, unsettled_s=0.01, loop_s=0.9))
        entries.append(_entry("bt.W.x", "static", rep, program_s=1.0, process_s=1.05))
    by = {r["mode"]: r for r in persistence.table_rows(entries, ["bt.W.x"])}
    assert by["on"]["per_off"] == pytest.approx(1.1 / 1.21)
    assert by["on"]["process_per_off"] == pytest.approx(1.2 / 1.3)
    assert (by["off"]["first_good_max"], by["on"]["recalled"]) == (20, 25)
    assert by["static"]["sites"] is None
    text = persistence.markdown(argparse.Namespace(threads=2, bind="close", reps=3, tune_runs=3),
                                list(by.values()), {"bt.W.x": 4.2}, entries, [], None, None)
    assert "| bt.W.x | on | 1.1 [1.1–1.1] |" in text and "| 28 / 30 | 25 | 1 (2) |" in text


def test_persistence_puts_its_files_before_the_program():
    case = tr.Case("p", "on", ("aloe", "run", "--schedule", "adaptive", "--", "prog", "-x"))
    with_files = persistence.with_files(case, "s.json", "t.txt")
    assert with_files.argv == ("aloe", "run", "--schedule", "adaptive", "--stats", "s.json",
                               "--tuning", "t.txt", "--", "prog", "-x")
    app = persistence.Program("barnes-hut", ("bh",), ("bh",), "app")
    ok = tr.Outcome(0, 1.0, '{"total_s": 0.5, "ok": true}', "")
    assert persistence.program_seconds(app, ok) == (0.5, None)
    failed = tr.Outcome(0, 1.0, '{"total_s": 0.5, "ok": false}', "")
    assert persistence.program_seconds(app, failed) == (None, "the workload's own check failed")
    nas = persistence.Program("mg.A.x", ("mg",), ("mg",), "npb")
    assert persistence.program_seconds(nas, tr.Outcome(0, 1.0, NPB_OUTPUT, "")) == (1.29, None)
