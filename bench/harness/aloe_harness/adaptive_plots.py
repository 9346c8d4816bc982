"""PNG plots of the adaptive schedule (adaptive.py's rows and the runs' `tuning` records).

  adaptive-<workload>-t<T>.png      the staggered fs sweep per regime (median time / the
                                    regime's aloe:static median against fs), the best fixed
                                    fs starred, adaptive's median at the fs it chose as a cross
  convergence-<workload>-t<T>.png   one representative rep per regime (the median total
                                    time): top, the fs of each invocation of its main loop
                                    site; bottom, the loop's seconds / the median of the rep's
                                    last 10 invocations; a dotted line where it converged
A run other than plain aloe:adaptive (say adaptive,search=sweep) gets its own convergence file
and its own crosses.
"""
from __future__ import annotations

import statistics
from pathlib import Path

from . import adaptive
from .plots import _save, plt, slug
from .summary import group_key, label

TAIL = 10  # the last invocations whose median is "settled" in the convergence plot


def make(plots: Path, entries: list[dict], rows: list[dict]) -> list[Path]:
    """Both kinds of plot for every workload and thread count with adaptive runs."""
    arows = adaptive.rows(entries, rows)
    return sweep_curves(plots, arows, rows) + convergence(plots, entries, rows)


def sweep_curves(plots: Path, arows: list[dict], rows: list[dict]) -> list[Path]:
    files = []
    for workload, threads in dict.fromkeys((r["workload"], r["threads"]) for r in arows):
        mine = [r for r in arows if (r["workload"], r["threads"]) == (workload, threads)]
        runs = list(dict.fromkeys(r["run"] for r in mine))
        fig, ax = plt.subplots(figsize=(7.5, 4.8))
        drawn = False
        for i, noise in enumerate(dict.fromkeys(r["noise"] for r in mine)):
            group = [r for r in rows if group_key(r) == (workload, noise, threads)]
            curve = sorted(adaptive.staggered_sweep(group), key=lambda r: r["fs"])
            static = next((r["median_s"] for r in group
                           if label(r) == "aloe:static" and r["median_s"]), None)
            if not curve or not static:
                continue
            colour, drawn = f"C{i}", True
            ax.plot([r["fs"] for r in curve], [r["median_s"] / static for r in curve],
                    marker="o", markersize=4, color=colour, label=f"{noise} ({curve[0]['kind']})")
            top = next(r for r in curve if r["best"])
            ax.plot(top["fs"], top["median_s"] / static, marker="*", markersize=15,
                    color=colour, markeredgecolor="black", linestyle="none")
            for a in (r for r in mine if r["noise"] == noise):
                if a["chosen_fs"] is None or a["median_s"] is None:
                    continue
                ax.plot(a["chosen_fs"], a["median_s"] / static, marker="XPD"[runs.index(
                    a["run"]) % 3], markersize=10, color=colour, markeredgecolor="black",
                    linestyle="none")
        if not drawn:
            plt.close(fig)
            continue
        # Legend entries for the marker kinds, drawn once in neutral grey.
        ax.plot([], [], marker="*", markersize=12, color="grey", markeredgecolor="black",
                linestyle="none", label="best fixed fs")
        for k, run in enumerate(runs):
            ax.plot([], [], marker="XPD"[k % 3], markersize=9, color="grey",
                    markeredgecolor="black", linestyle="none",
                    label=f"{run}: median, at the fs it chose (static: 1)")
        ax.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        ax.set(xlabel="fs (static fraction of staggered)",
               ylabel="median total time / aloe:static's (same regime)",
               title=f"staggered fs sweep and adaptive: {workload}, {threads} threads")
        ax.legend(fontsize=7, title="noise (sweep)", title_fontsize=8)
        files.append(_save(fig, plots / f"adaptive-{slug(workload, f't{threads}')}.png"))
    return files


def convergence(plots: Path, entries: list[dict], rows: list[dict]) -> list[Path]:
    files = []
    runs = [r for r in rows if adaptive.is_adaptive(r)]
    for workload, threads, run in dict.fromkeys((r["workload"], r["threads"], label(r))
                                                for r in runs):
        fig, (top, bottom) = plt.subplots(2, 1, figsize=(8, 6), sharex=True)
        drawn = False
        for i, r in enumerate(r for r in runs
                              if (r["workload"], r["threads"], label(r)) == (workload, threads,
                                                                             run)):
            rep = adaptive.representative(adaptive.adaptive_entries(entries, r))
            site = adaptive.main_site(rep and rep["record"])
            steps = (site or {}).get("steps") or []
            if not steps:
                continue
            colour, drawn = f"C{i}", True
            x = [s.get("invocation", k + 1) for k, s in enumerate(steps)]
            settled = statistics.median(s["seconds"] for s in steps[-TAIL:])
            top.plot(x, [s["fs"] for s in steps], drawstyle="steps-mid", marker=".",
                     color=colour, label=f"{r['noise']} (rep {rep['rep'] + 1})")
            bottom.plot(x, [s["seconds"] / settled if settled else float("nan") for s in steps],
                        marker=".", color=colour, label=r["noise"])
            at = site.get("converged_at", -1)
            for ax in (top, bottom):
                if at >= 1:
                    ax.axvline(at, color=colour, linestyle=":", linewidth=1.2)
        if not drawn:
            plt.close(fig)
            continue
        top.plot([], [], color="grey", linestyle=":", label="converged at")
        top.set(ylabel="fs of the invocation", ylim=(-0.05, 1.05),
                title=f"{run} convergence: {workload}, {threads} threads (main loop site; "
                      "the rep with the median total time)")
        top.title.set_fontsize(9)
        bottom.set(xlabel="invocation of the loop site (warmup included)",
                   ylabel=f"seconds / median of\nthe last {TAIL} invocations")
        bottom.axhline(1.0, color="black", linewidth=0.8, linestyle=":")
        top.legend(fontsize=7, title="noise", title_fontsize=8)
        name = slug(workload, f"t{threads}") + ("" if run == "aloe:adaptive" else
                                                "-" + slug(run.split(":", 1)[1]))
        files.append(_save(fig, plots / f"convergence-{name}.png"))
    return files
