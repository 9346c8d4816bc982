"""Per-rank step-time histograms of MPI workloads (like Kale & Gropp's per-iteration ones).

  rankhist-<workload>-<noise>-t<T>.png   one panel per rank (the first MAX_PANELS), each the
                                         histogram of that rank's timed step times pooled over
                                         the repetitions, for static, the best aloe run and
                                         the best peer (overlaid, the same bins in every panel);
                                         a dotted line at each run's median compute time per
                                         step on that rank, when the record has compute_s
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .plots import HIST_BINS, _save, plt, slug
from .summary import best, group_key, label

MAX_PANELS = 8  # more ranks than this: the first MAX_PANELS - 1 and the last


def rank_series(entries: list[dict], key: tuple, run: str, rank: int, field: str = "step_s"
                ) -> list[float]:
    """One rank's per-step values of one config, pooled over its valid timed repetitions."""
    out = []
    for e in entries:
        if not (e["role"] == "timed" and e["valid"] and e.get("mpi")
                and (e["workload"], e["noise"], e["threads"]) == key
                and f"{e['runtime']}:{e['schedule']}" == run):
            continue
        per_rank = (e.get("record") or {}).get("ranks") or []
        mine = next((x for x in per_rank if isinstance(x, dict) and x.get("rank") == rank), None)
        out += [v for v in (mine or {}).get(field) or [] if isinstance(v, (int, float))]
    return out


def panels(ranks: int) -> list[int]:
    return list(range(ranks)) if ranks <= MAX_PANELS else \
        list(range(MAX_PANELS - 1)) + [ranks - 1]


def make(plots: Path, entries: list[dict], rows: list[dict]) -> list[Path]:
    files = []
    mpi_groups = {(e["workload"], e["noise"], e["threads"]): e["mpi"].get("ranks") or 0
                  for e in entries if e.get("mpi") and e["role"] == "timed" and e["valid"]}
    for key in dict.fromkeys(group_key(r) for r in rows):
        ranks = mpi_groups.get(key)
        if not ranks:
            continue
        group = [r for r in rows if group_key(r) == key and r["median_s"] is not None]
        static = next((r for name in ("libgomp:static", "aloe:static") for r in group
                       if label(r) == name), None)
        chosen = [static, best(group, peer=False), best(group, peer=True)]
        runs = list(dict.fromkeys(label(r) for r in chosen if r))
        shown = panels(ranks)
        data = {(run, k): rank_series(entries, key, run, k) for run in runs for k in shown}
        pooled = np.concatenate([v for v in data.values() if v] or [np.zeros(0)]) * 1e3
        if pooled.size == 0:
            continue
        top = np.percentile(pooled, 99.5)
        edges = np.histogram_bin_edges(pooled, bins=HIST_BINS,
                                       range=(pooled.min(), max(top, pooled.min() + 1e-9)))
        fig, axes = plt.subplots(len(shown), 1, sharex=True, squeeze=False,
                                 figsize=(7, 1.2 + 1.5 * len(shown)))
        for ax, k in zip(axes[:, 0], shown):
            for i, run in enumerate(runs):
                steps = data[run, k]
                if not steps:
                    continue
                ax.hist(np.clip(np.array(steps) * 1e3, None, edges[-1]), bins=edges, alpha=0.5,
                        color=f"C{i}", label=f"{run} ({len(steps)} steps)")
                compute = rank_series(entries, key, run, k, "compute_s")
                if compute:
                    ax.axvline(np.median(compute) * 1e3, color=f"C{i}", linestyle=":")
            ax.set_ylabel(f"rank {k}")
        axes[0, 0].legend(fontsize=7)
        axes[0, 0].set_title(f"{key[0]}, noise {key[1]}, {key[2]} thread(s) per rank: step "
                             "times per rank" + (f" (ranks 0–{shown[-2]} and {shown[-1]} of {ranks})"
                                                 if len(shown) < ranks else ""), fontsize=9)
        axes[-1, 0].set_xlabel("timestep time (ms; the last bin holds the slowest 0.5%; "
                               "dotted: median compute)")
        files.append(_save(fig, plots / f"rankhist-{slug(*key[:2], f't{key[2]}')}.png"))
    return files
