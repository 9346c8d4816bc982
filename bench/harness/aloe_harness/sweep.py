"""`bench --sweep fs`: aloe's hybrid and staggered schedules over fs = 0, 0.1, …, 1 for one
workload and regime, interleaved with the best peers, and the best fs of each marked.

The sweep is an ordinary matrix (so it is run, validated and summarized like any other); a
matrix file's optional [sweep] table changes its defaults:
  fs = [0.0, 0.5, 1.0]                      # values of fs
  schedules = ["hybrid", "staggered"]       # aloe schedules that take fs
  peers = ["libgomp:guided", "tbb:affinity"]  # runs to compare with (--runs replaces them)
"""
from __future__ import annotations

import csv
import dataclasses
import re
from pathlib import Path

from . import matrix as mx
from .matrix import Matrix, MatrixError
from .summary import label, write_rows_csv

DEFAULT_FS = [round(i / 10, 1) for i in range(11)]
DEFAULT_SCHEDULES = ["hybrid", "staggered"]
# The peers that did best on this VM (MACHINE-NOTES.md: guided is the one to beat), and static
# as the baseline every noise result is read against.
DEFAULT_PEERS = ["libgomp:static", "libgomp:guided", "libomp:guided", "tbb:affinity"]
COLUMNS = ["workload", "noise", "threads", "kind", "fs", "runtime", "schedule", "reps",
           "median_s", "spread", "ratio_to_best_peer", "efficiency", "best"]
_FS = re.compile(r"(?:^|,)fs=([0-9.]+)(?:,|$)")


def sweep_matrix(m: Matrix, *, workload: str, noise: list[str] | None,
                 peers: list[str] | None = None) -> Matrix:
    """The sweep's matrix: one workload, one regime, the fs runs and the peers."""
    settings = dict(m.sweep)
    unknown = set(settings) - {"fs", "schedules", "peers"}
    if unknown:
        raise MatrixError(f"[sweep]: unknown key(s) {', '.join(sorted(unknown))} "
                          "(expected fs, schedules, peers)")
    values = settings.get("fs", DEFAULT_FS)
    if not isinstance(values, list) or not values or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
            for v in values):
        raise MatrixError(f"[sweep] fs = {values!r}: expected a list of numbers in [0, 1]")
    kinds = settings.get("schedules", DEFAULT_SCHEDULES)
    if not isinstance(kinds, list) or not kinds or not all(isinstance(k, str) for k in kinds):
        raise MatrixError(f"[sweep] schedules = {kinds!r}: expected a list of aloe schedules")
    if noise is None or len(noise) != 1:
        raise MatrixError("--sweep fs needs exactly one regime: --noise R")
    runs = _spread([f"aloe:{k},fs={v:g}" for v in values for k in kinds],
                   peers if peers is not None else settings.get("peers", DEFAULT_PEERS))
    out = mx.apply_overrides(m, workloads=[workload], runs=runs, noise=noise)
    # The sweep is exactly its own runs: the workload's extra runs of the matrix stay out.
    out.workloads = [dataclasses.replace(w, runs=()) for w in out.workloads]
    return dataclasses.replace(out, timeline_runs=None,
                               description=f"fs sweep: {workload}, noise {out.noise[0].name}")


def _spread(sweep_runs: list[str], peers: list[str]) -> list[str]:
    """Run order: the schedules alternate at each fs, and the peers sit evenly among them,
    so that drift during a repetition does not fall on one end of the curve."""
    out = list(sweep_runs)
    for j, peer in reversed(list(enumerate(peers))):
        out.insert(round((j + 0.5) * len(sweep_runs) / len(peers)), peer)
    return out


def fs_of(schedule: str) -> float | None:
    match = _FS.search(schedule)
    return float(match.group(1)) if match else None


def sweep_rows(rows: list[dict]) -> list[dict]:
    """Summary rows with kind ("hybrid", … or "peer") and fs; best = "best" on the lowest
    median of each aloe kind per workload, noise and threads."""
    out = []
    for r in rows:
        fs = fs_of(r["schedule"]) if r["runtime"] == "aloe" else None
        # The schedule without its fs: "hybrid", or "hybrid,chunk=8" for a chunked sweep.
        kind = _FS.sub(",", r["schedule"]).strip(",") if fs is not None else "peer"
        out.append(r | {"kind": kind, "fs": fs, "best": ""})
    for key in dict.fromkeys((r["workload"], r["noise"], r["threads"], r["kind"]) for r in out):
        if key[3] == "peer":
            continue
        pool = [r for r in out if (r["workload"], r["noise"], r["threads"], r["kind"]) == key
                and r["median_s"] is not None]
        if pool:
            min(pool, key=lambda r: r["median_s"])["best"] = "best"
    return out


def write_csv(path: Path, srows: list[dict]) -> None:
    ordered = sorted(srows, key=lambda r: (r["kind"] == "peer", r["kind"], r["fs"] or 0))
    write_rows_csv(path, ordered, COLUMNS)


def read_csv(path: Path) -> list[dict]:
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for k in ("fs", "median_s", "spread", "ratio_to_best_peer", "efficiency"):
            r[k] = float(r[k]) if r[k] != "" else None
        r["threads"], r["reps"] = int(r["threads"]), int(r["reps"])
    return rows


def markdown(srows: list[dict]) -> list[str]:
    """Summary lines: the best fs of each kind against the best peer."""
    lines = ["## fs sweep", ""]
    for r in sorted(srows, key=lambda r: r["kind"]):
        if r["best"]:
            ratio = "–" if r["ratio_to_best_peer"] is None else f"{r['ratio_to_best_peer']:.3f}×"
            lines.append(f"- best fs for {r['kind']} ({r['workload']}, {r['noise']}, "
                         f"t={r['threads']}): **fs={r['fs']:g}** ({label(r)}), {ratio} the best "
                         "peer")
    return lines + ["", "The full curve is in sweep.csv.", ""]
