"""PNG plots of a results folder (matplotlib, Agg backend: no display needed).

  hist-<workload>-<noise>-t<T>.png      per-timestep times: static against the best aloe
                                        hybrid/staggered run (and the best peer), pooled
                                        over the repetitions
  bars-<workload>-t<T>.png              median time of every run in every regime, with
                                        min–max error bars
  sweep-<workload>-<noise>-t<T>.png     fs sweep: median against fs per schedule, the best
                                        point marked, peers as horizontal lines
  timeline-<workload>-<noise>-t<T>-<run>.png
                                        per-thread busy/idle time of each loop (--timelines)
  adaptive-…, convergence-…             with aloe:adaptive runs: adaptive_plots.py
  rankhist-<workload>-<noise>-t<T>.png  MPI workloads: step times per rank (mpi_plots.py)
"""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
import numpy as np  # noqa: E402

from .summary import best, group_key, label  # noqa: E402

MAX_TIMELINE_STEPS = 12  # more timesteps make each loop too thin to read
HIST_BINS = 40  # a guess: enough to show two modes from a few hundred steps


def slug(*parts) -> str:
    """A file-name-safe join: "aloe:hybrid,fs=0.8" -> "aloe_hybrid_fs0.8"."""
    text = "-".join(str(p) for p in parts)
    return re.sub(r"_+", "_", re.sub(r"[^A-Za-z0-9.\-]", "_", text.replace("=", ""))).strip("_")


def make_all(out_dir: Path, entries: list[dict], rows: list[dict],
             srows: list[dict] | None = None) -> list[Path]:
    """Every plot the data allows, into out_dir/plots/; returns the files written."""
    plots = Path(out_dir) / "plots"
    plots.mkdir(parents=True, exist_ok=True)
    files = step_histograms(plots, entries, rows) + bars(plots, rows)
    if srows:
        files += sweep_curves(plots, srows)
    from . import adaptive_plots, mpi_plots  # here, not at the top: they build on this module
    files += adaptive_plots.make(plots, entries, rows)
    files += mpi_plots.make(plots, entries, rows)
    return files + timelines(plots, entries)


def _save(fig, path: Path) -> Path:
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def step_histograms(plots: Path, entries: list[dict], rows: list[dict]) -> list[Path]:
    files = []
    for key in dict.fromkeys(group_key(r) for r in rows):
        group = [r for r in rows if group_key(r) == key and r["median_s"] is not None]
        static = next((r for name in ("libgomp:static", "aloe:static", "libomp:static")
                       for r in group if label(r) == name), None)
        adaptive = [r for r in group if r["runtime"] == "aloe"
                    and r["schedule"].startswith(("hybrid", "staggered"))]
        chosen = [static, min(adaptive, key=lambda r: r["median_s"], default=None),
                  best(group, peer=True)]
        chosen = list({label(r): r for r in chosen if r}.values())
        series = {label(r): _steps(entries, key, r) for r in chosen}
        series = {k: v for k, v in series.items() if v}
        if not series:
            continue
        pooled = np.concatenate(list(series.values())) * 1e3
        edges = np.histogram_bin_edges(pooled, bins=HIST_BINS,
                                       range=(pooled.min(), np.percentile(pooled, 99.5)))
        fig, ax = plt.subplots(figsize=(7, 4))
        for name, steps in series.items():
            ax.hist(np.clip(np.array(steps) * 1e3, None, edges[-1]), bins=edges, alpha=0.5,
                    label=f"{name} ({len(steps)} steps)")
        ax.set(xlabel="timestep time (ms; the last bin holds the slowest 0.5%)",
               ylabel="timesteps", title=f"{key[0]}, noise {key[1]}, {key[2]} threads")
        ax.legend(fontsize=8)
        files.append(_save(fig, plots / f"hist-{slug(*key[:2], f't{key[2]}')}.png"))
    return files


def _steps(entries: list[dict], key: tuple, row: dict) -> list[float]:
    return [s for e in entries if e["role"] == "timed" and e["valid"]
            and (e["workload"], e["noise"], e["threads"]) == key
            and (e["runtime"], e["schedule"]) == (row["runtime"], row["schedule"])
            for s in e["record"]["step_s"]]


def bars(plots: Path, rows: list[dict]) -> list[Path]:
    files = []
    for workload, threads in dict.fromkeys((r["workload"], r["threads"]) for r in rows):
        mine = [r for r in rows if (r["workload"], r["threads"]) == (workload, threads)]
        regimes = list(dict.fromkeys(r["noise"] for r in mine))
        labels = list(dict.fromkeys(label(r) for r in mine))
        width = 0.8 / len(regimes)
        fig, ax = plt.subplots(figsize=(max(7, 0.45 * len(labels) * max(1, len(regimes) / 2)), 4.5))
        x = np.arange(len(labels))
        for i, regime in enumerate(regimes):
            by = {label(r): r for r in mine if r["noise"] == regime}
            med = np.array([_ms(by.get(l), "median_s") for l in labels])
            low = med - np.array([_ms(by.get(l), "min_s") for l in labels])
            high = np.array([_ms(by.get(l), "max_s") for l in labels]) - med
            ax.bar(x + (i - (len(regimes) - 1) / 2) * width, np.nan_to_num(med), width,
                   yerr=np.nan_to_num([low, high]), capsize=2, label=regime)
        ax.set_xticks(x, labels, rotation=60, ha="right", fontsize=8)
        ax.set(ylabel="median total time (ms), min–max bars",
               title=f"{workload}, {threads} threads")
        ax.legend(fontsize=8, title="noise")
        files.append(_save(fig, plots / f"bars-{slug(workload, f't{threads}')}.png"))
    return files


def _ms(row: dict | None, key: str) -> float:
    return row[key] * 1e3 if row and row[key] is not None else np.nan


def sweep_curves(plots: Path, srows: list[dict]) -> list[Path]:
    files = []
    for key in dict.fromkeys((r["workload"], r["noise"], r["threads"]) for r in srows):
        mine = [r for r in srows if (r["workload"], r["noise"], r["threads"]) == key
                and r["median_s"] is not None]
        if not mine:
            continue
        fig, ax = plt.subplots(figsize=(7, 4.5))
        for kind in sorted({r["kind"] for r in mine if r["kind"] != "peer"}):
            pts = sorted((r["fs"], r["median_s"] * 1e3) for r in mine if r["kind"] == kind)
            line, = ax.plot(*zip(*pts), marker="o", label=kind)
            top = next(r for r in mine if r["kind"] == kind and r["best"]) if any(
                r["kind"] == kind and r["best"] for r in mine) else None
            if top:
                ax.plot(top["fs"], top["median_s"] * 1e3, marker="*", markersize=16,
                        color=line.get_color(), markeredgecolor="black",
                        label=f"best {kind}: fs={top['fs']:g}")
        for i, r in enumerate(r for r in mine if r["kind"] == "peer"):
            ax.axhline(r["median_s"] * 1e3, linestyle="--", linewidth=1, color=f"C{i + 3}",
                       label=label(r))
        ax.set(xlabel="fs (static fraction)", ylabel="median total time (ms)",
               title=f"fs sweep: {key[0]}, noise {key[1]}, {key[2]} threads")
        ax.legend(fontsize=8)
        files.append(_save(fig, plots / f"sweep-{slug(*key[:2], f't{key[2]}')}.png"))
    return files


def timelines(plots: Path, entries: list[dict]) -> list[Path]:
    files = []
    for e in entries:
        loops = (e.get("record") or {}).get("timeline") if e["valid"] else None
        if not loops:
            continue
        steps = sorted({l["step"] for l in loops})[:MAX_TIMELINE_STEPS]
        loops = [l for l in loops if l["step"] in steps]
        threads = max(len(l["busy_s"]) for l in loops)
        fig, ax = plt.subplots(figsize=(12, 1.2 + 0.6 * threads))
        t0 = loops[0]["start_s"]
        for t in range(threads):
            busy = [((l["start_s"] - t0) * 1e3, l["busy_s"][t] * 1e3) for l in loops
                    if t < len(l["busy_s"])]
            idle = [((l["start_s"] - t0 + l["busy_s"][t]) * 1e3,
                     max(0.0, l["end_s"] - l["start_s"] - l["busy_s"][t]) * 1e3)
                    for l in loops if t < len(l["busy_s"])]
            ax.broken_barh(busy, (t - 0.4, 0.8), color="tab:green",
                           label="busy" if t == 0 else None)
            ax.broken_barh(idle, (t - 0.4, 0.8), color="lightgrey",
                           label="idle (waiting at the loop's end)" if t == 0 else None)
        ax.set_yticks(range(threads), [f"thread {t}" for t in range(threads)])
        ax.set(xlabel=f"time (ms) over the first {len(steps)} timed steps",
               title=f"{e['workload']}, noise {e['noise']}: {e['runtime']}:{e['schedule']}")
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
        name = slug(e["workload"], e["noise"], f"t{e['threads']}", e["runtime"], e["schedule"])
        files.append(_save(fig, plots / f"timeline-{name}.png"))
    return files
