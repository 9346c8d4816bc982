"""Plots of an `aloe sim` results folder (written by `aloe sim --out DIR`, which calls this).

  plots/sim-time-vs-nodes.png        simulated time per schedule against the node count (log x)
  plots/sim-efficiency-vs-nodes.png  efficiency against the ideal (work / cores) per schedule
  plots/sim-step-hist-<P>.png        step-time histograms of every listed schedule at the
                                     smallest and the largest node count, overlaid
  plots/sim-best-fs.png              the best hybrid fs of the sweep at each node count
"""
from __future__ import annotations

import argparse
import csv
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

from .plots import HIST_BINS, _save, plt


def read_rows(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def series_by_schedule(rows: list[dict], field: str) -> dict[str, list[tuple[int, float]]]:
    """{schedule: [(nodes, value)]} of the listed schedules (not the fs sweep), by nodes."""
    out: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for r in rows:
        if r.get("sweep") == "1":
            continue
        out[r["schedule"]].append((int(r["nodes"]), float(r[field])))
    return {k: sorted(v) for k, v in out.items()}


def step_times(rows: list[dict]) -> dict[tuple[int, str], list[float]]:
    """{(nodes, schedule): [step seconds]} from steps.csv."""
    out: dict[tuple[int, str], list[float]] = defaultdict(list)
    for r in rows:
        out[(int(r["nodes"]), r["schedule"])].append(float(r["step_s"]))
    return out


def _lines(series: dict, ylabel: str, title: str, path: Path, logy: bool = False) -> Path:
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, pts in series.items():
        ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=name)
    ax.set_xscale("log", base=2)
    if logy:
        ax.set_yscale("log")
    ax.set_xlabel("nodes")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7)
    return _save(fig, path)


def make_all(folder: Path) -> list[Path]:
    summary = read_rows(folder / "summary.csv")
    plots = folder / "plots"
    plots.mkdir(exist_ok=True)
    made = [
        _lines(series_by_schedule(summary, "total_s"), "simulated time (s)", "time vs nodes",
               plots / "sim-time-vs-nodes.png"),
        _lines(series_by_schedule(summary, "efficiency"), "efficiency (ideal / time)",
               "efficiency vs nodes", plots / "sim-efficiency-vs-nodes.png"),
    ]
    steps_path = folder / "steps.csv"
    if steps_path.exists():
        steps = step_times(read_rows(steps_path))
        counts = sorted({n for n, _ in steps})
        for nodes in sorted({counts[0], counts[-1]}) if counts else []:
            fig, ax = plt.subplots(figsize=(7, 4.5))
            chosen = {s: v for (n, s), v in steps.items() if n == nodes}
            lo = min(min(v) for v in chosen.values()) * 1e3
            hi = max(max(v) for v in chosen.values()) * 1e3
            bins = np.linspace(lo, hi if hi > lo else lo + 1e-3, HIST_BINS + 1)
            for name, v in chosen.items():
                ax.hist(np.array(v) * 1e3, bins=bins, histtype="step", label=name)
            ax.set_xlabel("step time (ms)")
            ax.set_ylabel("steps")
            ax.set_title(f"step-time histogram, {nodes} nodes")
            ax.legend(fontsize=7)
            made.append(_save(fig, plots / f"sim-step-hist-{nodes}.png"))
    best_path = folder / "best_fs.csv"
    if best_path.exists():
        best = read_rows(best_path)
        if best:
            made.append(_lines({"best hybrid fs": [(int(r["nodes"]), float(r["best_fs"])) for r in best]},
                               "best static fraction", "best fs vs nodes", plots / "sim-best-fs.png"))
    return made


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="aloe_harness sim-plots", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("dir", help="folder written by aloe sim --out")
    a = p.parse_args(argv)
    folder = Path(a.dir)
    if not (folder / "summary.csv").exists():
        print(f"aloe_harness sim-plots: {folder} has no summary.csv: not an aloe sim folder", file=sys.stderr)
        return 2
    for path in make_all(folder):
        print(path)
    return 0
