"""What the adaptive schedule did at each loop site, read from a statistics file.

Reads the JSON of `aloe run --stats` (site rows under "loops", each with its process's "pid")
or of ALOE_STATS / aloe::stats_json (rows under "sites"). A row with a "tuning" object is an
adaptive site (src/adapt/README.md, "Everything it decided"): its state, `chosen` (the schedule
its next invocation would run), `converged_at` (the invocation after which it first settled;
0: recalled settled from a tuning file; -1: never) and `steps`, its first 256 invocations
(schedule, seconds).

Per site this finds the schedule it *settled on*: for a site that ended converged, the one
most of its last 10 traced invocations after converged_at ran (a converged race still
re-checks a runner-up about one invocation in 10, so the last step alone may be a re-check);
a site still probing or searching at exit settled on nothing. Its *first good invocation* is
the first (1-based) that ran the settled schedule, whether as a candidate of the search or
after it, and the loop seconds before it are what finding it cost in time at that site.
"""
from __future__ import annotations

import collections
import dataclasses
import json
import statistics
from pathlib import Path

SETTLED_WINDOW = 10  # the re-check rate of a converged race is one in 10 (src/adapt/README.md)


@dataclasses.dataclass(frozen=True)
class SiteTuning:
    site: str                    # "pid:module+0xOFFSET" for aloe run's rows, else the site
    invocations: int
    state: str                   # probing, searching, converged
    converged_at: int
    settled: str | None          # the schedule it settled on; None: it never did
    first_good: int | None       # 1-based; None: never settled, or beyond the trace
    before_good_s: float | None  # loop seconds of the invocations before first_good
    loop_s: float                # all its invocations' loop seconds

    @property
    def recalled(self) -> bool:
        return self.converged_at == 0


def settled_schedule(tuning: dict) -> str | None:
    """The schedule a site ended on (see the module's comment), or None."""
    if tuning.get("state") != "converged" or tuning.get("converged_at", -1) < 0:
        return None
    after = [s["schedule"] for s in tuning.get("steps", [])[tuning["converged_at"]:]]
    if not after:  # converged beyond the traced invocations: what it runs now
        return tuning.get("chosen")
    counts = collections.Counter(after[-SETTLED_WINDOW:])
    best = max(counts.values())
    # a tie: the one that ran last
    return next(s for s in reversed(after[-SETTLED_WINDOW:]) if counts[s] == best)


def first_good(steps: list[dict], settled: str | None) -> tuple[int | None, float | None]:
    """(the 1-based invocation that first ran `settled`, the seconds of those before it)."""
    if settled is None:
        return None, None
    spent = 0.0
    for i, step in enumerate(steps):
        if step["schedule"] == settled:
            return i + 1, spent
        spent += step.get("seconds") or 0.0
    return None, None


def sites(stats: dict) -> list[SiteTuning]:
    """Every adaptive site of a statistics document, in its order."""
    rows = stats.get("loops", stats.get("sites", []))
    out = []
    for row in rows:
        tuning = row.get("tuning")
        if not tuning:
            continue
        name = f"{row['pid']}:{row['site']}" if "pid" in row else row["site"]
        settled = settled_schedule(tuning)
        good, before = first_good(tuning.get("steps", []), settled)
        out.append(SiteTuning(
            site=name, invocations=int(row.get("taken", row.get("invocations", 0)) or 0),
            state=tuning.get("state", "?"), converged_at=int(tuning.get("converged_at", -1)),
            settled=settled, first_good=good, before_good_s=before,
            loop_s=float(row.get("time_s", row.get("total_s", 0.0)) or 0.0)))
    return out


def read(path: str | Path) -> list[SiteTuning]:
    return sites(json.loads(Path(path).read_text()))


def summary(tuned: list[SiteTuning]) -> dict:
    """One run's numbers over its adaptive sites: how many, settled, recalled; the median and
    largest first good invocation over the settled ones whose trace shows it; the loop seconds
    spent before those first good invocations (summed over sites), in the sites that never
    settled, and in all adaptive sites."""
    settled = [s for s in tuned if s.settled is not None]
    found = [s for s in settled if s.first_good is not None]
    return {
        "sites": len(tuned),
        "settled": len(settled),
        "recalled": sum(s.recalled for s in tuned),
        "first_good_median": statistics.median(s.first_good for s in found) if found else None,
        "first_good_max": max((s.first_good for s in found), default=None),
        "beyond_trace": len(settled) - len(found),
        "before_good_s": sum(s.before_good_s for s in found),
        "unsettled_s": sum(s.loop_s for s in tuned if s.settled is None),
        "loop_s": sum(s.loop_s for s in tuned),
        "invocations": sum(s.invocations for s in tuned),
    }


def chosen_counts(tuned: list[SiteTuning]) -> dict[str, int]:
    """How many sites settled on each schedule ('(not settled)' for the rest), most first."""
    counts = collections.Counter(s.settled or "(not settled)" for s in tuned)
    return dict(counts.most_common())
