"""site_tuning: the schedule a site settled on, its first good invocation, and a run's summary,
from both shapes of statistics (aloe run --stats and ALOE_STATS)."""
import json

import pytest

from aloe_harness import site_tuning as st


def _tuning(schedules, state="converged", converged_at=2, chosen=None, seconds=1e-3):
    steps = [{"invocation": i + 1, "schedule": s, "fs": 1, "chunk": 0, "seconds": seconds}
             for i, s in enumerate(schedules)]
    return {"state": state, "converged_at": converged_at, "chosen": chosen or schedules[-1],
            "steps": steps}


def test_a_converged_race_settles_on_the_winner_not_on_a_last_recheck():
    # race: static, static, three candidates, then the winner with a re-check at the end
    t = _tuning(["static", "static", "guided", "stag", "coarse", "stag", "stag", "stag",
                 "guided"], converged_at=5, chosen="stag")
    assert st.settled_schedule(t) == "stag"
    assert st.first_good(t["steps"], "stag") == (4, pytest.approx(3e-3))


def test_the_window_is_the_last_ten_after_convergence_and_a_tie_goes_to_the_latest():
    winner_then_switch = ["a"] * 3 + ["b"] * 12 + ["c"] * 10
    assert st.settled_schedule(_tuning(winner_then_switch, converged_at=3)) == "c"
    assert st.settled_schedule(_tuning(["x", "a", "b"], converged_at=1)) == "b"


def test_unsettled_sites_and_convergence_beyond_the_trace():
    assert st.settled_schedule(_tuning(["static", "guided"], state="searching",
                                       converged_at=-1)) is None
    beyond = _tuning(["static"] * 4, converged_at=300, chosen="guided,chunk=4")
    assert st.settled_schedule(beyond) == "guided,chunk=4"
    assert st.first_good(beyond["steps"], "guided,chunk=4") == (None, None)
    assert st.first_good([], None) == (None, None)


def test_a_recalled_site_is_good_from_its_first_invocation():
    t = _tuning(["stag"] * 5, converged_at=0)
    assert st.settled_schedule(t) == "stag"
    assert st.first_good(t["steps"], "stag") == (1, 0.0)


def test_sites_from_aloe_run_statistics_and_from_aloe_stats():
    run_doc = {"loops": [
        {"pid": 7, "site": "prog+0x10", "taken": 9, "time_s": 0.5,
         "tuning": _tuning(["static", "static", "stag", "stag"], converged_at=2)},
        {"pid": 7, "site": "prog+0x20", "taken": 3, "time_s": 0.1},  # not adaptive
        {"pid": 7, "site": "prog+0x30", "taken": 2, "time_s": 0.2,
         "tuning": _tuning(["static", "guided"], state="probing", converged_at=-1)}]}
    sites = st.sites(run_doc)
    assert [s.site for s in sites] == ["7:prog+0x10", "7:prog+0x30"]
    assert (sites[0].settled, sites[0].first_good, sites[0].invocations) == ("stag", 3, 9)
    assert sites[1].settled is None and not sites[1].recalled
    native = {"sites": [{"site": "a.cpp:3:5", "invocations": 4, "total_s": 0.3,
                         "tuning": _tuning(["stag"] * 4, converged_at=0)}]}
    (one,) = st.sites(native)
    assert (one.site, one.recalled, one.first_good, one.loop_s) == ("a.cpp:3:5", True, 1, 0.3)


def test_summary_and_counts(tmp_path):
    doc = {"loops": [
        {"pid": 1, "site": "p+0x1", "taken": 10, "time_s": 1.0,
         "tuning": _tuning(["static", "static", "stag"] + ["stag"] * 3, converged_at=3)},
        {"pid": 1, "site": "p+0x2", "taken": 10, "time_s": 2.0,
         "tuning": _tuning(["static"] * 6, converged_at=2)},
        {"pid": 1, "site": "p+0x3", "taken": 10, "time_s": 4.0,
         "tuning": _tuning(["static"] * 6, state="searching", converged_at=-1)},
        {"pid": 1, "site": "p+0x4", "taken": 10, "time_s": 8.0,
         "tuning": _tuning(["guided"] * 6, converged_at=0)}]}
    path = tmp_path / "s.json"
    path.write_text(json.dumps(doc))
    sites = st.read(path)
    s = st.summary(sites)
    assert (s["sites"], s["settled"], s["recalled"], s["beyond_trace"]) == (4, 3, 1, 0)
    # first good: 3, 1 and 1 -> median 1, max 3; before them 2 ms (site 1's two static runs)
    assert (s["first_good_median"], s["first_good_max"]) == (1, 3)
    assert s["before_good_s"] == pytest.approx(2e-3)
    assert (s["unsettled_s"], s["loop_s"], s["invocations"]) == (4.0, 15.0, 40)
    assert st.chosen_counts(sites) == {"stag": 1, "static": 1, "(not settled)": 1, "guided": 1}
    assert st.summary([])["first_good_median"] is None
