"""Issue 5's evidence: workloads under `aloe run` (the libgomp interposer) against libgomp.

Per workload, regime and threads, for every aloe-run run A (`aloe-run:S[@KIND]`, matrix.py):
  / best libgomp        A's median / the lowest median of the group's libgomp runs (named)
  / libgomp:X           A's median / each libgomp run's median
  / same OMP_SCHEDULE   A's median / `libgomp:runtime,KIND` (A ran with OMP_SCHEDULE=KIND) or
                        `libgomp:runtime` (A ran without it): the same program, loops and
                        run-sched-var on plain libgomp
  / native aloe         A's median / `aloe:S` (the same aloe schedule in aloe::parallel_for)
Each comparison is a tie when the ratio is within both runs' spreads, (p75 − p25)/median
(summary.verdict's rule). `aloe-run:forward…` hands every loop to libgomp unchanged, so its
ratio to the same OMP_SCHEDULE is the interposer's own cost on the loops it only forwards;
the target is under 1% (FORWARD_LIMIT). summary.md's "Interposer" section and interposer.csv
(one row per comparison) hold these.
"""
from __future__ import annotations

import statistics
from pathlib import Path

from .matrix import ALOE_RUN, parse_run
from .summary import group_key, label, write_rows_csv

FORWARD = "forward"
FORWARD_LIMIT = 1.01  # forwarded loops: at most 1% slower than plain libgomp
EPSILON = 1e-9
COLUMNS = ["workload", "noise", "threads", "run", "relation", "reference", "run_median_s",
           "run_spread", "reference_median_s", "reference_spread", "ratio", "tie"]
# relation: what the reference is to the run (one CSV row per comparison)
BEST, EACH, SAME, NATIVE = "best libgomp", "libgomp", "same OMP_SCHEDULE", "native aloe"


def is_aloe_run(row: dict) -> bool:
    return row["runtime"] == ALOE_RUN


def is_forward(row: dict) -> bool:
    return is_aloe_run(row) and row["schedule"].partition("@")[0] == FORWARD


def baseline_label(row: dict) -> str:
    """The plain-libgomp run with the aloe-run row's OMP_SCHEDULE."""
    kind = parse_run(label(row)).omp_schedule
    return f"libgomp:runtime,{kind}" if kind else "libgomp:runtime"


def compare(a: dict, b: dict | None, relation: str) -> dict | None:
    """One comparison of row a with reference row b (None when either has no median)."""
    if not b or not a["median_s"] or not b["median_s"]:
        return None
    ratio = a["median_s"] / b["median_s"]
    return dict(workload=a["workload"], noise=a["noise"], threads=a["threads"], run=label(a),
                relation=relation, reference=label(b), run_median_s=a["median_s"],
                run_spread=a["spread"], reference_median_s=b["median_s"],
                reference_spread=b["spread"], ratio=ratio,
                tie=abs(1 - ratio) <= max(a["spread"] or 0, b["spread"] or 0) + EPSILON)


def rows(summary_rows: list[dict]) -> list[dict]:
    """Every comparison of every aloe-run run (empty: no aloe-run runs)."""
    out = []
    for key in dict.fromkeys(group_key(r) for r in summary_rows):
        group = [r for r in summary_rows if group_key(r) == key]
        by_label = {label(r): r for r in group}
        gomp = [r for r in group if r["runtime"] == "libgomp" and r["median_s"] is not None]
        best = min(gomp, key=lambda r: r["median_s"], default=None)
        for a in (r for r in group if is_aloe_run(r)):
            found = [compare(a, best, BEST), compare(a, by_label.get(baseline_label(a)), SAME)]
            native = f"aloe:{a['schedule'].partition('@')[0]}"
            found.append(compare(a, by_label.get(native), NATIVE))
            found += [compare(a, g, EACH) for g in gomp]
            out += [c for c in found if c]
    return out


def pick(irows: list[dict], relation: str, run: str | None = None) -> list[dict]:
    return [r for r in irows if r["relation"] == relation and (run is None or r["run"] == run)]


def forward_verdict(r: dict) -> str:
    """A forward row's target: "pass" (≤ FORWARD_LIMIT), or "miss" / "miss (tie)"."""
    if r["ratio"] <= FORWARD_LIMIT + EPSILON:
        return "pass"
    return "miss (tie)" if r["tie"] else "miss"


def write_csv(path: Path, irows: list[dict]) -> None:
    write_rows_csv(path, irows, COLUMNS)


INTRO = ("`aloe run` (the libgomp interposer) against plain libgomp, per workload and regime: "
         "each aloe-run run's median time divided by the best libgomp run's (named), by the "
         "libgomp run with the same OMP_SCHEDULE (`aloe-run:S@KIND` ran with "
         "OMP_SCHEDULE=KIND; `libgomp:runtime,KIND` is the same program on plain libgomp), by "
         "native aloe with the same schedule, and by each libgomp run (below 1: faster under "
         "aloe run; a tie when inside both runs' spreads, (p75−p25)/median). Absolute times "
         "are in interposer.csv.")


def tables(irows: list[dict]) -> list[tuple[str, list[str], list[list[str]]]]:
    """(title, header, body) of the comparisons table and the forwarded-loops table."""
    runs = list(dict.fromkeys((r["workload"], r["noise"], r["threads"], r["run"])
                              for r in irows))
    body = []
    for w, n, t, run in runs:
        mine = [r for r in irows if (r["workload"], r["noise"], r["threads"], r["run"])
                == (w, n, t, run)]
        first = mine[0]
        cell = {rel: next((_cell(r) for r in mine if r["relation"] == rel), "–")
                for rel in (BEST, SAME, NATIVE)}
        each = " · ".join(f"{r['reference'].removeprefix('libgomp:')} {r['ratio']:.3f}"
                          for r in mine if r["relation"] == EACH)
        body.append([w, n, str(t), run.removeprefix(f"{ALOE_RUN}:"),
                     _pct(first["run_spread"]), cell[BEST], cell[SAME], cell[NATIVE],
                     each or "–"])
    out = [("", ["workload", "noise", "threads", "aloe run", "spread", "/ best libgomp",
                 "/ same OMP_SCHEDULE", "/ native aloe", "/ each libgomp run"], body)]
    forward = [r for r in pick(irows, SAME) if r["run"].partition("@")[0]
               == f"{ALOE_RUN}:{FORWARD}"]
    if forward:
        out.append(("Forwarded loops: the interposer's own cost", [
            "workload", "noise", "threads", "aloe run", "plain libgomp", "ratio",
            "spreads (run, libgomp)", f"≤ {FORWARD_LIMIT:g}"], [
            [r["workload"], r["noise"], str(r["threads"]), r["run"].removeprefix(f"{ALOE_RUN}:"),
             r["reference"], f"{r['ratio']:.3f}",
             f"{_pct(r['run_spread'])}, {_pct(r['reference_spread'])}", forward_verdict(r)]
            for r in forward]))
    return out


def counts(irows: list[dict]) -> list[str]:
    """Per aloe-run schedule, the median and range of its ratio to the best libgomp run; the
    forwarded-loop target's count."""
    out = []
    for run in dict.fromkeys(r["run"] for r in irows):
        best = pick(irows, BEST, run)
        if best:
            ratios = [r["ratio"] for r in best]
            faster = sum(1 for r in best if r["ratio"] < 1 and not r["tie"])
            slower = sum(1 for r in best if r["ratio"] > 1 and not r["tie"])
            out.append(f"{run} / best libgomp: median {statistics.median(ratios):.3f} over "
                       f"{len(ratios)} row{'s' * (len(ratios) != 1)} (range {min(ratios):.3f}–"
                       f"{max(ratios):.3f}); faster outside the spreads in {faster}, slower in "
                       f"{slower}, ties in {len(ratios) - faster - slower}")
    forward = [r for r in pick(irows, SAME) if r["run"].partition("@")[0]
               == f"{ALOE_RUN}:{FORWARD}"]
    if forward:
        passed = sum(1 for r in forward if forward_verdict(r) == "pass")
        ties = sum(1 for r in forward if forward_verdict(r) == "miss (tie)")
        ratios = [r["ratio"] for r in forward]
        out.append(f"forwarded loops within {FORWARD_LIMIT - 1:.0%} of plain libgomp: "
                   f"{passed}/{len(forward)} rows pass"
                   + (f"; {ties} of the {len(forward) - passed} misses are ties within both "
                      "runs' spreads" if passed < len(forward) else "")
                   + f" (ratios: median {statistics.median(ratios):.3f}, range "
                     f"{min(ratios):.3f}–{max(ratios):.3f})")
    return out


def markdown(irows: list[dict]) -> list[str]:
    """summary.md's "Interposer" section (empty without aloe-run runs)."""
    if not irows:
        return []
    lines = ["## Interposer", "", INTRO, ""]
    for title, header, body in tables(irows):
        lines += [f"### {title}", ""] if title else []
        lines += ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                  for row in body] + [""]
    return lines + [f"- {line}" for line in counts(irows)] + [""]


def _cell(r: dict) -> str:
    name = r["reference"].removeprefix("libgomp:") if r["relation"] == BEST else ""
    detail = ", ".join(x for x in (name, f"spread {_pct(r['reference_spread'])}",
                                   "tie" if r["tie"] else "") if x)
    return f"{r['ratio']:.3f} ({detail})"


def _pct(value) -> str:
    return "–" if value is None else f"{value:.1%}"
