"""Issue 4's evidence: `aloe:adaptive` against the best fixed fs, static and the best peer.

Per workload, regime and threads, for every adaptive run (an aloe schedule `adaptive[,…]`):
  ratio_to_best_fs     its median / the lowest median of the staggered fs sweep (the
                       `staggered,fs=F[,chunk=C]` runs with the most fs values; best_fs names F)
  ratio_to_static      its median / aloe:static's
  ratio_to_best_peer   its median / the best libgomp, libomp or oneTBB run's (best_peer); a
                       tie when the ratio is inside both runs' spreads (summary.verdict's rule)
  chosen               the most common final `chosen` of its main loop site over the reps
  converged_at         the median over the reps of that site's `converged_at` (a rep that
                       never converged counts as later than any other; None: the median never)
The main loop site of a run is the one with the most loop time in its `tuning.steps` (every
app has one site today). Then issue 4's targets, pass or miss per row (TARGETS), written to
summary.md's "Adaptive" section and adaptive.csv.
"""
from __future__ import annotations

import collections
import dataclasses
import math
import statistics
from pathlib import Path
from typing import Callable

from . import sweep
from .summary import best, group_key, label, write_rows_csv

QUIET = "none"
BALANCED = ("synthetic", "stencil1d")  # balanced loops: target (ii) applies quietly
EPSILON = 1e-9  # ratios are quotients: 0.54 / 0.6 (0.9000000000000001) meets a limit of 0.90
COLUMNS = ["workload", "noise", "threads", "run", "reps", "median_s", "spread", "best_fs",
           "best_fs_schedule", "best_fs_median_s", "ratio_to_best_fs", "static_median_s",
           "ratio_to_static", "best_peer", "best_peer_median_s", "best_peer_spread",
           "ratio_to_best_peer", "peer_tie", "chosen", "chosen_reps", "chosen_fs",
           "converged_at", "never_converged", "target_i", "target_ii", "target_iii",
           "target_iv", "target_v"]


@dataclasses.dataclass(frozen=True)
class Target:
    key: str                            # "i" … "v": the column target_<key>
    text: str                           # what the count line says
    header: str                         # the targets table's column
    value: str                          # the row field compared with the limit
    limit: float                        # pass: value <= limit
    applies: Callable[[dict], bool] = lambda row: True


TARGETS = [
    Target("i", "within 5% of the best fixed fs", "(i) ≤ 1.05 × best fs", "ratio_to_best_fs",
           1.05),
    Target("ii", "no more than 2% above static on balanced quiet loops (none; "
           + ", ".join(BALANCED) + ")", "(ii) ≤ 1.02 × static, quiet balanced",
           "ratio_to_static", 1.02,
           lambda r: r["noise"] == QUIET and r["workload"] in BALANCED),
    Target("iii", "no slower than the best peer", "(iii) ≤ best peer", "ratio_to_best_peer",
           1.0),
    Target("iv", "at least 10% faster than the best peer under noise (every regime but none)",
           "(iv) ≤ 0.90 × best peer, noisy", "ratio_to_best_peer", 0.90,
           lambda r: r["noise"] != QUIET),
    Target("v", "converged within 20 invocations of the site's first run",
           "(v) converged ≤ 20", "converged_at", 20),
]


def is_adaptive(row: dict) -> bool:
    """An aloe run of the adaptive schedule (with or without search=…); row or entry."""
    return row["runtime"] == "aloe" and row["schedule"].split(",")[0] == "adaptive"


def schedule_fs(schedule: str | None) -> float | None:
    """The static fraction a concrete schedule runs: its fs=, 1 for static, 0 for dynamic."""
    if not schedule:
        return None
    fs = sweep.fs_of(schedule)
    if fs is not None:
        return fs
    return {"static": 1.0, "dynamic": 0.0}.get(schedule.split(",")[0])


def main_site(record: dict | None) -> dict | None:
    """The tuning object of the record's site with the most loop time, or None."""
    sites = (record or {}).get("tuning") or []
    return max(sites, key=lambda s: sum(x.get("seconds", 0) for x in s.get("steps", [])),
               default=None)


def adaptive_entries(entries: list[dict], row: dict) -> list[dict]:
    """The valid timed entries of one summary row's config."""
    return [e for e in entries if e["role"] == "timed" and e["valid"]
            and (e["workload"], e["noise"], e["threads"], e["runtime"], e["schedule"])
            == (row["workload"], row["noise"], row["threads"], row["runtime"], row["schedule"])]


def representative(entries: list[dict]) -> dict | None:
    """The rep with the median total time (the lower of the middle two for an even count)."""
    ranked = sorted(entries, key=lambda e: e["record"]["total_s"])
    return ranked[(len(ranked) - 1) // 2] if ranked else None


def staggered_sweep(group: list[dict]) -> list[dict]:
    """The group's staggered fs sweep: sweep rows (with fs and best) of the staggered kind
    with the most fs values (a matrix may hold a few other staggered runs besides)."""
    srows = [r for r in sweep.sweep_rows([r for r in group if r["runtime"] == "aloe"])
             if r["kind"].split(",")[0] == "staggered" and r["median_s"] is not None]
    kinds = collections.Counter(r["kind"] for r in srows)
    if not kinds:
        return []
    kind = kinds.most_common(1)[0][0]
    return [r for r in srows if r["kind"] == kind]


def rows(entries: list[dict], summary_rows: list[dict]) -> list[dict]:
    """One row per adaptive run per workload, regime and threads (empty: no adaptive runs)."""
    out = []
    for key in dict.fromkeys(group_key(r) for r in summary_rows):
        group = [r for r in summary_rows if group_key(r) == key]
        for a in (r for r in group if is_adaptive(r)):
            out.append(_row(a, group, adaptive_entries(entries, a)))
    return out


def _row(a: dict, group: list[dict], mine: list[dict]) -> dict:
    row = dict(workload=a["workload"], noise=a["noise"], threads=a["threads"], run=label(a),
               reps=a["reps"], median_s=a["median_s"], spread=a["spread"])
    curve = staggered_sweep(group)
    top = next((r for r in curve if r["best"]), None)
    static = next((r for r in group if label(r) == "aloe:static" and r["median_s"]), None)
    peer = best(group, peer=True)
    row |= dict(best_fs=top and top["fs"], best_fs_schedule=top and label(top),
                best_fs_median_s=top and top["median_s"],
                ratio_to_best_fs=_ratio(a, top), static_median_s=static and static["median_s"],
                ratio_to_static=_ratio(a, static), best_peer=peer and label(peer),
                best_peer_median_s=peer and peer["median_s"],
                best_peer_spread=peer and peer["spread"], ratio_to_best_peer=_ratio(a, peer))
    ratio = row["ratio_to_best_peer"]
    row["peer_tie"] = None if ratio is None else abs(1 - ratio) <= max(
        a["spread"] or 0, peer["spread"] or 0)
    sites = [s for s in (main_site(e["record"]) for e in mine) if s]
    chosen = collections.Counter(s.get("chosen") for s in sites if s.get("chosen"))
    row["chosen"], row["chosen_reps"] = chosen.most_common(1)[0] if chosen else (None, 0)
    row["chosen_fs"] = schedule_fs(row["chosen"])
    # A rep that never converged sorts after every convergence; an infinite median: never.
    at = [s["converged_at"] if s.get("converged_at", -1) >= 1 else math.inf for s in sites
          if "converged_at" in s]
    median = statistics.median(at) if at else None
    row["converged_at"] = median if median is None or math.isfinite(median) else None
    row["never_converged"] = sum(1 for x in at if x == math.inf) if at else None
    for t in TARGETS:
        row[f"target_{t.key}"] = judge(t, row)
    return row


def _ratio(a: dict, b: dict | None) -> float | None:
    return a["median_s"] / b["median_s"] if a["median_s"] and b and b["median_s"] else None


def judge(t: Target, row: dict) -> str | None:
    """"pass", "miss", or None where the target does not apply or the data is missing."""
    if not t.applies(row):
        return None
    value = row[t.value]
    if t.key == "v" and value is None and row["never_converged"]:
        return "miss"  # the median rep never converged
    if value is None:
        return None
    return "pass" if value <= t.limit + EPSILON else "miss"


def write_csv(path: Path, arows: list[dict]) -> None:
    write_rows_csv(path, arows, COLUMNS)


@dataclasses.dataclass
class Table:
    title: str            # "" for the section's first table
    header: list[str]
    body: list[list[str]]


def intro(arows: list[dict]) -> str:
    which = _varied(arows)
    return (f"`{arows[0]['run']}`" + ("" if which else f" ({arows[0]['threads']} threads)")
            + " per workload and regime: its median time divided by the best fixed fs of the "
            "staggered sweep, by `aloe:static` and by the best peer (below 1: adaptive is "
            "faster; a tie when inside both runs' spreads), the schedule its loop site chose "
            "most often (reps that chose it) and the median invocation at which it converged. "
            "Absolute times are in adaptive.csv.")


def tables(arows: list[dict]) -> list[Table]:
    """The ratios table and the targets table, as text cells."""
    which = _varied(arows)
    first = ["workload", "noise"] + (["run"] if which else [])
    ratios = Table("", first + ["/ best fixed fs", "/ aloe:static", "/ best peer", "chosen",
                                "converged at"], [])
    targets = Table("Issue 4's targets", first + [t.header for t in TARGETS], [])
    for r in arows:
        peer = _fmt(r["ratio_to_best_peer"])
        if r["best_peer"]:
            peer += f" ({r['best_peer']}{', tie' if r['peer_tie'] else ''})"
        ratios.body.append(_first(r, which) + [
            _fmt(r["ratio_to_best_fs"]) + (f" (fs={r['best_fs']:g})" if r["best_fs"] is not None
                                           else ""),
            _fmt(r["ratio_to_static"]), peer,
            f"{r['chosen']} ({r['chosen_reps']}/{r['reps']})" if r["chosen"] else "–",
            _converged(r)])
        targets.body.append(_first(r, which) + [_verdict(t, r) for t in TARGETS])
    return [ratios, targets]


def markdown(arows: list[dict]) -> list[str]:
    """summary.md's "Adaptive" section (empty without adaptive runs)."""
    if not arows:
        return []
    lines = ["## Adaptive", "", intro(arows), ""]
    for t in tables(arows):
        lines += [f"### {t.title}", ""] if t.title else []
        lines += ["| " + " | ".join(t.header) + " |", "|" + "---|" * len(t.header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |"
                  for row in t.body] + [""]
    return lines + [f"- {line}" for line in counts(arows)] + [""]


def counts(arows: list[dict]) -> list[str]:
    """One line per target: rows that pass of rows it applies to (and (iii)'s ties)."""
    out = []
    for t in TARGETS:
        judged = [r for r in arows if r[f"target_{t.key}"] is not None]
        passed = sum(1 for r in judged if r[f"target_{t.key}"] == "pass")
        line = f"({t.key}) {t.text}: {passed}/{len(judged)} pass"
        if t.key == "iii" and passed < len(judged):
            ties = sum(1 for r in judged if r["target_iii"] == "miss" and r["peer_tie"])
            line += f"; {ties} of the {len(judged) - passed} misses are ties within both " \
                    "runs' spreads"
        out.append(line + ("" if judged else " (no row it applies to)"))
    return out


def _varied(arows: list[dict]) -> bool:
    """Whether the run or thread count varies (one plain aloe:adaptive is the rule); only
    then do the tables name them."""
    return len({(r["run"], r["threads"]) for r in arows}) > 1


def _first(r: dict, which: bool) -> list[str]:
    return [r["workload"], r["noise"]] + ([f"{r['run']} t={r['threads']}"] if which else [])


def _verdict(t: Target, r: dict) -> str:
    v = r[f"target_{t.key}"]
    if v is None:
        return "–"
    return v + (" (tie)" if t.key == "iii" and r["peer_tie"] else "")


def _converged(r: dict) -> str:
    never = r["never_converged"]
    if r["converged_at"] is None:
        return "never" if never else "–"
    return f"{r['converged_at']:g}" + (f" ({never} rep{'s' * (never != 1)} never)"
                                       if never else "")


def _fmt(value) -> str:
    return "–" if value is None else f"{value:.3f}"
