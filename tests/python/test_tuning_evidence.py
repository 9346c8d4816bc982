"""tuning_evidence: the first good invocation from a site's trace, and the tables' ratios."""
from aloe_harness import tuning_evidence as te


def _steps(*schedules):
    return [{"invocation": i + 1, "schedule": s} for i, s in enumerate(schedules)]


def test_first_good_is_where_the_final_schedule_first_ran():
    steps = _steps("static", "staggered,fs=0", "guided", "staggered,fs=0", "guided", "guided")
    assert te.first_good(steps, 5) == 3
    assert te.first_good(_steps("static", "static"), 2) == 1


def test_a_recalled_site_is_good_from_invocation_zero_and_no_trace_is_unknown():
    assert te.first_good(_steps("guided"), 0) == 0
    assert te.first_good([], -1) is None


def test_summary_and_table_ratios():
    s = te.summarize([3.0, 1.0, 2.0, 4.0])
    assert s["median"] == 2.5 and s["n"] == 4 and s["p25"] <= s["median"] <= s["p75"]
    rows = [{"program": "p", "mode": "on", "seconds": 2.0, "first_good": "0;0"},
            {"program": "p", "mode": "off", "seconds": 3.0, "first_good": "7;9"},
            {"program": "p", "mode": "peer", "seconds": 2.2, "first_good": ""}]
    text = te.table(rows, ["off", "on", "peer"], "on", True)
    assert "| 1.500 | 1.100 |" in text  # off / on, peer / on
    assert "| 8 (max 9) | 0 (max 0) |" in text
