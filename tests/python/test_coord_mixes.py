"""bench/coord/mixes.py's pure parts: parsing, verification, shares, order, metrics, --out."""
import math
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "coord"))

import mixes  # noqa: E402
from mixes import Member, UsageError  # noqa: E402

KNOWN = {"cg": ["/bin/true"], "mg": ["/bin/true"]}


def test_mix_together_and_staggered():
    assert mixes.parse_mix("cg,mg", KNOWN) == [Member("cg", 0.0, "cg"), Member("mg", 0.0, "mg")]
    assert mixes.parse_mix("cg@0, mg@0.5", KNOWN) == [Member("cg", 0.0, "cg"),
                                                      Member("mg", 0.5, "mg")]


def test_mix_of_copies_gets_distinct_labels():
    assert [m.label for m in mixes.parse_mix("mg,mg@1,cg", KNOWN)] == ["mg#1", "mg#2", "cg"]


@pytest.mark.parametrize("text, says", [
    ("cg,ft", "unknown program 'ft'"),
    ("cg", "two or more"),
    ("cg,,mg", "two or more"),
    ("cg@x,mg", "not a number"),
    ("cg@-1,mg", "must be >= 0"),
    ("cg@nan,mg", "must be >= 0"),
])
def test_mix_errors(text, says):
    with pytest.raises(UsageError, match=says):
        mixes.parse_mix(text, KNOWN)


def test_program_parsing(tmp_path):
    name, argv = mixes.parse_program("rts=true 0.5 'a b'")
    assert name == "rts" and Path(argv[0]).name == "true" and argv[1:] == ["0.5", "a b"]
    with pytest.raises(UsageError, match="not an executable"):
        mixes.parse_program(f"x={tmp_path}/missing")
    with pytest.raises(UsageError, match="NAME=COMMAND"):
        mixes.parse_program("just-a-path")
    with pytest.raises(UsageError, match="no command"):
        mixes.parse_program("x=")


def test_numbers():
    assert mixes.parse_number("5", "--reps", integer=True, minimum=1) == 5
    for bad in ("0", "2.5", "x"):
        with pytest.raises(UsageError):
            mixes.parse_number(bad, "--reps", integer=True, minimum=1)
    with pytest.raises(UsageError, match="> 0"):
        mixes.parse_number("0", "--timeout", strict=True)


NPB_OK = """ MG Benchmark Completed.
 VERIFICATION SUCCESSFUL
 Verification    =               SUCCESSFUL
"""


@pytest.mark.parametrize("output, expected", [
    (NPB_OK, True),
    (" Verification    =             UNSUCCESSFUL\n", False),
    (" VERIFICATION FAILED\n Verification    =             UNSUCCESSFUL\n", False),
    (" Verification being performed for class W\n VERIFICATION FAILED\n", False),
    (" Verification being performed for class W\n", False),
    ("team sizes: 2:346\n", None),
    ("", None),
])
def test_verification(output, expected):
    assert mixes.verification(output) is expected


def test_judge():
    ok = dict(exit_code=0, reason="", output=NPB_OK)
    assert mixes.judge(ok) == ("ok", "", "SUCCESSFUL")
    assert mixes.judge({**ok, "exit_code": 3})[:2] == ("failed", "exit status 3")
    assert mixes.judge({**ok, "output": " Verification = UNSUCCESSFUL"})[0] == "failed"
    timed_out = dict(exit_code=None, reason="timed out after 1 s, killed", output="")
    assert mixes.judge(timed_out) == ("failed", "timed out after 1 s, killed", "")


def test_team_sizes():
    assert mixes.team_sizes("x\nteam sizes: 1:20 2:346\n") == "1:20 2:346"
    assert mixes.team_sizes(NPB_OK) == ""


def test_equal_shares():
    assert mixes.equal_shares([0, 1], 2) == [[0], [1]]
    assert mixes.equal_shares([0, 1, 2, 3, 4], 2) == [[0, 1], [2, 3, 4]]
    assert mixes.equal_shares([0, 1], 3) == [[0], [1], [0]]


def test_schedule_rotates_and_keeps_the_cycle():
    configs = list(mixes.CONFIGS)
    first = mixes.schedule(["a,b"], configs, ["a", "b"], 0)
    assert first[:3] == [("a,b", c) for c in configs]
    assert len(first) == 3 + 4 and (None, "serial", "b") in first
    second = mixes.schedule(["a,b"], configs, ["a", "b"], 1)
    assert second == first[1:] + first[:1]
    assert sorted(map(str, second)) == sorted(map(str, first))


# ---- metrics from hand-made rows -----------------------------------------------------

def row(config, program, wall, rep=0, mix="", label=None, start=0.0, status="ok"):
    return dict(rep=rep, mix=mix, config=config, label=label or program, program=program,
                start_s=start, wall_s=wall, status=status)


REFS = [row("serial", "cg", 8.0), row("serial", "mg", 4.0), row("serial", "cg", 10.0, rep=1),
        row("serial", "mg", 4.0, rep=1), row("alone", "cg", 2.0), row("alone", "mg", 1.0),
        row("alone", "cg", 2.0, rep=1), row("alone", "mg", 1.0, rep=1),
        row("alone", "mg", 99.0, rep=2, status="failed")]


def test_references_are_medians_of_passed_runs():
    refs = mixes.references(REFS)
    assert refs == {("cg", "serial"): 9.0, ("mg", "serial"): 4.0,
                    ("cg", "alone"): 2.0, ("mg", "alone"): 1.0}


def test_rep_metrics():
    refs = mixes.references(REFS)
    run = [row("aloed", "cg", 3.0, mix="cg,mg@1"),
           row("aloed", "mg", 2.0, mix="cg,mg@1", start=1.0)]
    m = mixes.rep_metrics(run, refs)
    assert m["speedup:cg"] == pytest.approx(3.0) and m["speedup:mg"] == pytest.approx(2.0)
    assert m["sum_speedup"] == pytest.approx(5.0)
    assert m["antt"] == pytest.approx((3.0 / 2.0 + 2.0 / 1.0) / 2)
    assert m["makespan"] == pytest.approx(3.0)            # mg: 1 s late, 2 s long


def test_rep_metrics_without_a_reference_is_nan():
    m = mixes.rep_metrics([row("aloed", "ft", 1.0, mix="x")], {})
    assert math.isnan(m["sum_speedup"]) and math.isnan(m["antt"])


def test_percentiles():
    assert mixes.spread([4.0, 1.0, 3.0, 2.0, 5.0]) == (3.0, 2.0, 4.0)
    assert mixes.spread([2.0]) == (2.0, 2.0, 2.0)
    assert all(math.isnan(x) for x in mixes.spread([]))


def test_summary_medians_ratios_and_failed_runs():
    members = mixes.parse_mix("cg,mg", KNOWN)
    rows = list(REFS)
    walls = {"aloed": [(3.0, 2.0), (3.0, 2.0), (50.0, 2.0)],        # rep 2: cg failed
             "equipartition": [(4.5, 2.0), (4.5, 2.0), (4.5, 2.0)],
             "oversubscribed": [(9.0, 4.0), (9.0, 4.0), (9.0, 4.0)]}
    for config, reps in walls.items():
        for rep, (tc, tm) in enumerate(reps):
            bad = config == "aloed" and rep == 2
            rows += [row(config, "cg", tc, rep, "cg,mg", status="failed" if bad else "ok"),
                     row(config, "mg", tm, rep, "cg,mg")]
    got = {(s["mix"], s["config"], s["quantity"]): s
           for s in mixes.summarise(rows, {"cg,mg": members}, list(walls))}
    cg = got[("cg,mg", "aloed", "wall:cg")]
    assert (cg["median"], cg["n"], cg["failed"]) == (3.0, 2, 1)     # 50 s left out
    mg = got[("cg,mg", "aloed", "wall:mg")]
    assert (mg["n"], mg["failed"]) == (3, 0)
    total = got[("cg,mg", "aloed", "sum_speedup")]
    assert (total["median"], total["n"], total["failed"]) == (pytest.approx(5.0), 2, 1)
    assert got[("cg,mg", "equipartition", "sum_speedup")]["median"] == pytest.approx(4.0)
    assert got[("cg,mg", "oversubscribed", "sum_speedup")]["median"] == pytest.approx(2.0)
    assert got[("cg,mg", "aloed/equipartition", "sum_speedup")]["median"] == pytest.approx(1.25)
    assert got[("cg,mg", "aloed/oversubscribed", "sum_speedup")]["median"] == pytest.approx(2.5)
    # ANTT: aloed (1.5 + 2) / 2 = 1.75; equipartition (2.25 + 2) / 2 = 2.125
    assert got[("cg,mg", "aloed/equipartition", "antt")]["median"] == pytest.approx(1.75 / 2.125)
    assert got[("", "alone", "wall:mg")]["failed"] == 1
    assert mixes.verdict(1.25) == "win" and mixes.verdict(1.0) == "break-even"
    assert mixes.verdict(1.75 / 2.125, higher_is_better=False) == "win"


def test_out_must_be_new_or_empty(tmp_path):
    mixes.check_out(tmp_path / "new")
    mixes.check_out(tmp_path)                                # empty
    (tmp_path / "x").write_text("")
    with pytest.raises(UsageError, match="not an empty folder"):
        mixes.check_out(tmp_path)
    with pytest.raises(UsageError, match="not an empty folder"):
        mixes.check_out(tmp_path / "x")


def test_main_refuses_a_full_out_before_running(tmp_path, capsys):
    (tmp_path / "old.csv").write_text("")
    status = mixes.main(["--out", str(tmp_path), "--program", "a=true", "--mix", "a,a",
                         "--configs", "oversubscribed"])
    assert status == 2 and "not an empty folder" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.csv"]


def test_main_names_unknown_program_in_mix(tmp_path, capsys):
    status = mixes.main(["--out", str(tmp_path / "o"), "--program", "a=true",
                         "--mix", "a,b"])
    assert status == 2 and "unknown program 'b'" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


def test_main_end_to_end_with_fake_programs(tmp_path, capsys):
    """Shell stand-ins (no timing asserted): a verified run, an unverified one, one killed
    at the timeout; every run is in runs.csv, the failures are counted and listed."""
    def script(name, body):
        path = tmp_path / name
        path.write_text(f"#!/bin/sh\n{body}\n")
        path.chmod(0o755)
        return f"{name}={path}"

    configs = "oversubscribed,equipartition" if mixes.shutil.which("taskset") else "oversubscribed"
    out = tmp_path / "out"
    status = mixes.main(["--out", str(out), "--reps", "1", "--timeout", "0.5",
                         "--program", script("ok", "echo ' Verification    =   SUCCESSFUL'"),
                         "--program", script("bad", "echo ' Verification = UNSUCCESSFUL'"),
                         "--program", script("slow", "exec sleep 30"),
                         "--mix", "ok,bad@0.1", "--mix", "ok,slow", "--configs", configs])
    assert status == 1
    assert {p.name for p in out.iterdir()} >= {"runs.csv", "summary.csv", "result.md",
                                                "command.txt", "failed"}
    runs = list(mixes.csv.DictReader((out / "runs.csv").read_text().splitlines()))
    n_configs = len(configs.split(","))
    assert len(runs) == 2 * 2 * n_configs + 3 * 2        # mix runs + references
    failed = [r for r in runs if r["status"] == "failed"]
    assert {r["program"] for r in failed} == {"bad", "slow"}
    assert all("timed out" in r["reason"] for r in failed if r["program"] == "slow")
    staggered = [r for r in runs if r["label"] == "bad" and r["mix"]]
    assert all(r["delay_s"] == "0.1" for r in staggered)
    if "equipartition" in configs:
        assert {r["cpus"] for r in runs if r["config"] == "equipartition"} != {""}
    md = (out / "result.md").read_text()
    assert "## Mix ok,bad@0.1" in md and "Verification is not SUCCESSFUL" in md
    assert "Load average" in md
