"""`compare A B`: do two results folders of the same matrix agree within the noise they report?

For every configuration (workload, noise, runtime, schedule, threads) present in both
results.csv files: the ratio of B's median to A's, and whether |ratio - 1| is within the
larger of the two spreads ((p75 - p25) / median of the repetitions, as summary.py reports
it). A configuration whose medians differ by more than either run's own scatter is a
disagreement: the machine changed between the runs, or the configuration is not repeatable.
Writes a Markdown report (stdout, or --out FILE) and exits 0 when every configuration agrees,
1 otherwise.
"""
from __future__ import annotations

import statistics
from pathlib import Path

from . import summary
from . import files

KEY = ("workload", "noise", "runtime", "schedule", "threads")


def compare_rows(a: list[dict], b: list[dict]) -> list[dict]:
    """One row per configuration in both: medians, ratio b/a, tolerance and the verdict."""
    index = {tuple(r[k] for k in KEY): r for r in a}
    out = []
    for rb in b:
        ra = index.get(tuple(rb[k] for k in KEY))
        if ra is None or not ra["median_s"] or not rb["median_s"]:
            continue
        ratio = rb["median_s"] / ra["median_s"]
        tolerance = max(ra["spread"] or 0.0, rb["spread"] or 0.0)
        out.append({**{k: rb[k] for k in KEY}, "median_a": ra["median_s"],
                    "median_b": rb["median_s"], "ratio": ratio, "tolerance": tolerance,
                    "agree": abs(ratio - 1) <= tolerance})
    return out


def markdown(rows: list[dict], a: Path, b: Path) -> str:
    agree = sum(r["agree"] for r in rows)
    lines = [f"# Repeatability: {a} against {b}", "",
             f"{agree} of {len(rows)} configurations agree: |median B / median A - 1| within "
             "the larger of the two runs' spreads ((p75 - p25) / median)."]
    if rows:
        deviations = [abs(r["ratio"] - 1) for r in rows]
        lines.append(f"Median deviation {statistics.median(deviations):.1%}, largest "
                     f"{max(deviations):.1%}; median tolerance "
                     f"{statistics.median(r['tolerance'] for r in rows):.1%}.")
    lines += ["", "| workload | noise | run | threads | B / A | tolerance | agree |",
              "|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: abs(r["ratio"] - 1), reverse=True):
        lines.append(f"| {r['workload']} | {r['noise']} | {r['runtime']}:{r['schedule']} | "
                     f"{r['threads']} | {r['ratio']:.3f} | {r['tolerance']:.1%} | "
                     f"{'yes' if r['agree'] else '**no**'} |")
    return "\n".join(lines) + "\n"


def run(a: Path, b: Path, out: Path | None) -> int:
    for folder in (a, b):
        if not (folder / "results.csv").is_file():
            raise FileNotFoundError(f"{folder} has no results.csv: not a results folder")
    rows = compare_rows(summary.read_csv(a / "results.csv"), summary.read_csv(b / "results.csv"))
    text = markdown(rows, a, b)
    if out:
        files.write_text(out, text)
    print(text, end="")
    return 0 if rows and all(r["agree"] for r in rows) else 1
