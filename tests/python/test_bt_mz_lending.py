"""bt_mz_lending.py's --niter: the norms read from NAS's verification tables, their comparison,
and the command lines it refuses."""
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench" / "micro"))
import bt_mz_lending as bl  # noqa: E402

# BT-MZ class S run for 2000 steps (recorded): NAS's reference is for 60, so every line fails.
FAILED_RUN = """\
 Verification being performed for class S
 accuracy setting for epsilon =  0.1000000000000E-07
 Comparison of RMS-norms of residual
 FAILURE:  1 0.1149224738208E-11 0.1047687395830E+04 0.1000000000000E+01
 FAILURE:  2 0.5089868822354E-12 0.9419911314792E+02 0.1000000000000E+01
 FAILURE:  3 0.6883194474460E-12 0.2124737403068E+03 0.1000000000000E+01
 FAILURE:  4 0.6468216900058E-12 0.1422173591794E+03 0.1000000000000E+01
 FAILURE:  5 0.1285653020489E-11 0.1135441572375E+04 0.1000000000000E+01
 Comparison of RMS-norms of solution error
 FAILURE:  1 0.1714032007176E+02 0.1775416062982E+03 0.9034574462339E+00
 FAILURE:  2 0.8001907350507E+01 0.1875540250835E+02 0.5733545389418E+00
 FAILURE:  3 0.9345835637728E+01 0.3863334844506E+02 0.7580889046928E+00
 FAILURE:  4 0.7542399287167E+01 0.2634713890362E+02 0.7137298545106E+00
 FAILURE:  5 0.1276112543030E+02 0.1965566269675E+03 0.9350765953447E+00
 Verification failed
 Time step 2000
"""


def test_the_ten_computed_norms_are_read_and_not_the_reference_or_the_difference():
    norms = [float(x) for x in bl.NORM_RE.findall(FAILED_RUN)]
    assert len(norms) == 10
    assert norms[0] == pytest.approx(0.1149224738208e-11)
    assert norms[5] == pytest.approx(0.1714032007176e+02)
    assert 0.1047687395830e+04 not in norms  # the reference column


def test_a_successful_table_reads_the_same_way():
    ok = FAILED_RUN.replace(" FAILURE: ", "          ")
    assert [float(x) for x in bl.NORM_RE.findall(ok)] == [float(x) for x in bl.NORM_RE.findall(FAILED_RUN)]


def test_norms_equal_within_the_sums_order_and_not_beyond():
    ref = [float(x) for x in bl.NORM_RE.findall(FAILED_RUN)]
    assert bl.same_norms(ref, ref)
    assert bl.same_norms([x * (1 + 1e-12) for x in ref], ref)
    assert not bl.same_norms([ref[0] * (1 + 1e-6)] + ref[1:], ref)
    assert not bl.same_norms(ref[:9], ref)


@pytest.mark.parametrize("args, why", [
    (["--benchmark", "lu-mz", "--niter", "100"], "inputlu-mz.data"),
    (["--niter", "-1"], "--niter"),
])
def test_bad_niter_is_refused_with_the_reason(args, why, capsys):
    with pytest.raises(SystemExit) as e:
        bl.parse_args(["--npb-mz", "x", *args])
    assert e.value.code == 2
    assert why in capsys.readouterr().err


def test_niter_is_kept_for_bt_and_sp(tmp_path):
    a = bl.parse_args(["--npb-mz", "x", "--benchmark", "sp-mz", "--niter", "500", "--out", str(tmp_path)])
    assert a.niter == 500
    assert bl.parse_args(["--npb-mz", "x", "--out", str(tmp_path)]).niter == 0
