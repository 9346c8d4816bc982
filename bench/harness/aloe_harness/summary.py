"""From run entries to results.csv and summary.md: medians, spreads, ratios, efficiencies.

Per (workload, noise, runtime, schedule, threads) over the valid timed repetitions:
  median_s, min_s, max_s, p25_s, p75_s   of total_s (the sum of the timed steps)
  spread               (p75 - p25) / median: how repeatable the config was (none for 1 rep)
  median_step_s        median of all its timesteps pooled
  ratio_to_best_peer   median_s / the lowest median among the peer runtimes (libgomp, libomp,
                       tbb) in the same workload, noise and threads
  efficiency           serial_s / (threads × median_s): 1 is the ideal (serial time / threads);
                       serial_s is the median of the workload's serial runs (one per rep)
Summary tables quote ratios; absolute times appear only in the CSV.
"""
from __future__ import annotations

import csv
import dataclasses
import statistics
from pathlib import Path

import numpy as np

from .matrix import PEER_RUNTIMES
from .provenance import describe_noise, most_lost
from . import files

COLUMNS = ["workload", "noise", "runtime", "schedule", "threads", "reps", "failed", "median_s",
           "min_s", "max_s", "p25_s", "p75_s", "spread", "median_step_s", "serial_s",
           "ratio_to_best_peer", "efficiency"]
_STATS = ["median_s", "min_s", "max_s", "p25_s", "p75_s", "spread", "median_step_s"]


def label(row: dict) -> str:
    return f"{row['runtime']}:{row['schedule']}"


def group_key(row: dict) -> tuple:
    return (row["workload"], row["noise"], row["threads"])


def summarize(entries: list[dict]) -> list[dict]:
    """One row per timed config, grouped and sorted by median within each group."""
    serial_runs: dict[str, list[float]] = {}
    for e in entries:
        if e["role"] == "serial" and e["valid"]:
            serial_runs.setdefault(e["workload"], []).append(e["record"]["total_s"])
    serial = {w: statistics.median(ts) for w, ts in serial_runs.items()}
    configs: dict[tuple, list[dict]] = {}
    for e in entries:
        if e["role"] == "timed":
            key = (e["workload"], e["noise"], e["runtime"], e["schedule"], e["threads"])
            configs.setdefault(key, []).append(e)
    rows = []
    for (workload, noise, runtime, schedule, threads), es in configs.items():
        good = [e["record"] for e in es if e["valid"]]
        row = dict(workload=workload, noise=noise, runtime=runtime, schedule=schedule,
                   threads=threads, reps=len(good), failed=len(es) - len(good),
                   serial_s=serial.get(workload), ratio_to_best_peer=None, efficiency=None)
        row |= _stats([r["total_s"] for r in good], [s for r in good for s in r["step_s"]])
        rows.append(row)
    for row in rows:
        group = [r for r in rows if group_key(r) == group_key(row)]
        peer = best(group, peer=True)
        if row["median_s"] and peer:
            row["ratio_to_best_peer"] = row["median_s"] / peer["median_s"]
        if row["median_s"] and row["serial_s"]:
            row["efficiency"] = row["serial_s"] / (row["threads"] * row["median_s"])
    order = {}
    for r in rows:
        order.setdefault(group_key(r), len(order))
    return sorted(rows, key=lambda r: (order[group_key(r)], r["median_s"] is None,
                                       r["median_s"] or 0))


def _stats(totals: list[float], steps: list[float]) -> dict:
    if not totals:
        return dict.fromkeys(_STATS)
    p25, p75 = np.percentile(totals, [25, 75])
    median = statistics.median(totals)
    spread = float(p75 - p25) / median if median and len(totals) > 1 else None  # 1 rep: unknown
    return dict(median_s=median, min_s=min(totals), max_s=max(totals), p25_s=float(p25),
                p75_s=float(p75), spread=spread,
                median_step_s=statistics.median(steps) if steps else None)


def best(rows: list[dict], *, peer: bool) -> dict | None:
    """The row with the lowest median among peer (or aloe) runtimes, or None."""
    pool = [r for r in rows if r["median_s"] is not None
            and (r["runtime"] in PEER_RUNTIMES if peer else r["runtime"] == "aloe")]
    return min(pool, key=lambda r: r["median_s"]) if pool else None


def write_rows_csv(path: Path, rows: list[dict], columns: list[str]) -> None:
    """`rows` as CSV with `columns` (floats to 6 significant digits, None as empty): the one
    writer behind results.csv, sweep.csv, adaptive.csv and interposer.csv."""
    files.write_csv(path, columns, [{k: _cell(row.get(k)) for k in columns} for row in rows])


def write_csv(path: Path, rows: list[dict]) -> None:
    write_rows_csv(path, rows, COLUMNS)


def read_csv(path: Path) -> list[dict]:
    """results.csv back into rows (numbers as numbers, empty cells as None)."""
    with open(path, newline="") as f:
        return [{k: _parse(k, v) for k, v in row.items()} for row in csv.DictReader(f)]


def _cell(value) -> str:
    if value is None:
        return ""
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _parse(key: str, value: str):
    if key in ("workload", "noise", "runtime", "schedule"):
        return value
    if value == "":
        return None
    return int(value) if key in ("threads", "reps", "failed") else float(value)


@dataclasses.dataclass
class Table:
    """One workload + regime + threads: runs sorted by median, as text cells."""
    title: str
    header: list[str]
    body: list[list[str]]
    verdict: str          # the best aloe vs best peer line


def tables(rows: list[dict]) -> list[Table]:
    out = []
    for key in dict.fromkeys(group_key(r) for r in rows):
        group = [r for r in rows if group_key(r) == key]
        body = [[str(i + 1) if r["median_s"] is not None else "–", label(r),
                 _fmt(r["ratio_to_best_peer"], "{:.3f}"), _fmt(r["efficiency"], "{:.2f}"),
                 _fmt(r["spread"], "{:.1%}"), f"{r['reps']}" + (f" ({r['failed']} failed)"
                                                                 if r["failed"] else "")]
                for i, r in enumerate(group)]
        out.append(Table(f"{key[0]}, noise {key[1]}, {key[2]} thread{'s' * (key[2] != 1)}",
                         ["#", "run", "ratio to best peer", "efficiency", "spread", "reps"],
                         body, verdict(group)))
    return out


def verdict(group: list[dict]) -> str:
    """The best aloe vs best peer line of one group."""
    a, p = best(group, peer=False), best(group, peer=True)
    if not a or not p:
        return "Best aloe vs best peer: " + ("no successful aloe run" if not a else
                                             "no successful peer run")
    ratio = a["median_s"] / p["median_s"]
    how = f"{1 - ratio:.1%} faster" if ratio < 1 else f"{ratio - 1:.1%} slower"
    noise_floor = max(a["spread"] or 0, p["spread"] or 0)
    tie = "; within the spread, so a tie" if abs(1 - ratio) <= noise_floor else ""
    return (f"Best aloe vs best peer: {label(a)} is {ratio:.3f}× {label(p)} "
            f"({how}; spreads {_fmt(a['spread'], '{:.1%}')} and "
            f"{_fmt(p['spread'], '{:.1%}')}{tie})")


def headline(rows: list[dict]) -> list[str]:
    """One line per group: best peer, best aloe, their ratio and whether it is a tie, and how
    far the static schedule of each side is from its best (what noise and imbalance cost)."""
    out = ["| workload | noise | best peer | best aloe | aloe / peer | static / best peer |",
           "|---|---|---|---|---|---|"]
    for key in dict.fromkeys(group_key(r) for r in rows):
        group = [r for r in rows if group_key(r) == key]
        a, p = best(group, peer=False), best(group, peer=True)
        if not a or not p:
            continue
        ratio = a["median_s"] / p["median_s"]
        tie = abs(1 - ratio) <= max(a["spread"] or 0, p["spread"] or 0)
        static = next((r for r in group if label(r) == "libgomp:static" and r["median_s"]), None)
        out.append(f"| {key[0]} | {key[1]} | {label(p)} | {label(a)} | {ratio:.3f}"
                   f"{' (tie)' if tie else ''} | "
                   f"{_fmt(static and static['median_s'] / p['median_s'], '{:.3f}')} |")
    return out


def repeatability(rows: list[dict], noise_before=None, noise_after=None) -> list[str]:
    """Lines comparing the configs' spreads with the machine's measured noise."""
    spreads = sorted(((r["spread"], r) for r in rows if r["spread"] is not None),
                     key=lambda x: x[0])
    lines = [f"Machine noise before the runs: {describe_noise(noise_before)}.",
             f"Machine noise after the runs: {describe_noise(noise_after)}."]
    if spreads:
        values = [s for s, _ in spreads]
        worst, row = spreads[-1]
        lines.append(f"Spread (p75−p25)/median over {len(values)} configs: median "
                     f"{statistics.median(values):.1%}, 90th percentile "
                     f"{float(np.percentile(values, 90)):.1%}, largest {worst:.1%} "
                     f"({row['workload']} {row['noise']} {label(row)} t={row['threads']}).")
        lost = [x for x in (most_lost(noise_before), most_lost(noise_after)) if x is not None]
        if lost:
            lines.append(f"The machine lost up to {max(lost):.1%} of a CPU to its own noise; "
                         "configs whose spread is well above that were disturbed by more than "
                         "the machine's background (other load, or their own variability).")
        lines.append("A ratio closer to 1 than the spreads of the two configs is not a "
                     "difference; more repetitions narrow it.")
    return lines


def write_markdown(path: Path, rows: list[dict], *, description: str = "",
                   problems: list[str] = (), noise_before=None, noise_after=None,
                   lead: list[str] = (), extra: list[str] = ()) -> None:
    """lead: sections right after the headline (adaptive.py's); extra: after the tables."""
    lines = ["# Benchmark summary", ""]
    if description:
        lines += [description, ""]
    lines += ["Ratios are median total time over the repetitions divided by the best peer's "
              "(libgomp, libomp, oneTBB) median in the same workload, noise regime and thread "
              "count; efficiency is serial time / (threads × median). Absolute times are in "
              "results.csv.", ""]
    if problems:
        lines += [f"## FAILURES ({len(problems)})", ""] + [f"- {p}" for p in problems] + [""]
    lines += ["## Headline", "", "Per workload and regime: the best peer run, the best aloe run, "
              "their ratio (below 1: aloe faster; a tie when inside both runs' spreads), and "
              "libgomp `static` against the best peer.", ""] + headline(rows) + [""]
    lines += list(lead)
    for t in tables(rows):
        lines += [f"## {t.title}", "", "| " + " | ".join(t.header) + " |",
                  "|" + "---|" * len(t.header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in t.body]
        lines += ["", f"**{t.verdict}**", ""]
    lines += list(extra)
    lines += ["## Repeatability", ""] + [f"- {x}" for x in repeatability(rows, noise_before,
                                                                          noise_after)]
    files.write_text(path, "\n".join(lines) + "\n")


def _fmt(value, form: str) -> str:
    return "–" if value is None else form.format(value)
