#!/usr/bin/env python3
"""Taken loops under `aloe run` against libgomp, chunk 1 to 128 (EPCC schedbench's sweep).

EPCC's schedbench times `schedule(dynamic|guided, c)` loops with a fixed delay per iteration
for chunk sizes 1, 2, 4, … 128 and reports each loop's overhead against a reference. This
driver applies that sweep to the interposer's taken path: for every chunk size it runs
bench/micro/gomp_forward_overhead.py (its `schedule(dynamic, c)` loops, one parallel region,
plain libgomp and `aloe run --schedule program` interleaved, medians and paired ratios; with
valgrind, callgrind instruction counts per loop), then fits, over all chunk sizes,

    instructions added per loop = L + k · (chunks per loop)

where L is what a taken loop adds at its start and end and k what it adds per chunk, both
against libgomp (negative: cheaper than libgomp). Writes result.md, result.json and each chunk
size's own folder under --out (default bench/results/taken-loops-<date>).

    .venv/bin/python bench/micro/taken_loops.py [--build build/release] [--chunks 1,2,4,8,16,32,64,128]
        [--reps 5] [--loops 500] [--iterations 4096] [--work-ns 200] [--threads 2] [--out DIR]

Exit status: 0 done, 1 a run failed, 2 a bad command line.
"""
from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DRIVER = REPO / "bench" / "micro" / "gomp_forward_overhead.py"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("--build", default="build/release", help="build folder (default build/release)")
    p.add_argument("--chunks", default="1,2,4,8,16,32,64,128", help="chunk sizes, comma-separated")
    p.add_argument("--reps", type=int, default=5, help="interleaved repetitions per chunk size")
    p.add_argument("--loops", type=int, default=500, help="loops per run")
    p.add_argument("--iterations", type=int, default=4096, help="iterations per loop")
    p.add_argument("--work-ns", type=float, default=200, help="work per iteration, ns")
    p.add_argument("--threads", type=int, default=2, help="team size")
    p.add_argument("--no-callgrind", action="store_true", help="wall time only")
    p.add_argument("--out", help="results folder")
    a = p.parse_args(argv)
    try:
        a.chunk_list = [int(c) for c in a.chunks.split(",") if c.strip()]
    except ValueError:
        p.error(f"--chunks {a.chunks!r}: expected integers separated by commas")
    if not a.chunk_list or min(a.chunk_list) < 1:
        p.error("--chunks: every chunk size must be at least 1")
    if a.reps < 1 or a.loops < 1 or a.iterations < 1 or a.threads < 1:
        p.error("--reps, --loops, --iterations and --threads must be at least 1")
    return a


def fit(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least squares y = L + k·x; None with fewer than two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    n = len(points)
    sx = sum(x for x, _ in points)
    sy = sum(y for _, y in points)
    sxx = sum(x * x for x, _ in points)
    sxy = sum(x * y for x, y in points)
    k = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - k * sx) / n, k


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    out = Path(a.out or REPO / "bench" / "results" / f"taken-loops-{datetime.date.today():%Y%m%d}")
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for c in a.chunk_list:
        sub = out / f"chunk-{c}"
        cmd = [sys.executable, str(DRIVER), "--build", a.build, "--reps", str(a.reps), "--loops", str(a.loops),
               "--iterations", str(a.iterations), "--work-ns", str(a.work_ns), "--threads", str(a.threads),
               "--chunk", str(c), "--kinds", "dynamic", "--variants", "plain,program", "--out", str(sub)]
        if a.no_callgrind:
            cmd.append("--no-callgrind")
        print("taken_loops.py:", " ".join(cmd[1:]), flush=True)
        if subprocess.run(cmd, cwd=REPO).returncode != 0:
            print(f"taken_loops.py: chunk {c}: the run failed (see {sub})", file=sys.stderr)
            return 1
        r = json.loads((sub / "result.json").read_text())
        prog = r["variants"]["program"]
        cg = (r.get("callgrind") or {}).get("variants", {}).get("program", {})
        rows.append({"chunk": c, "chunks_per_loop": -(-a.iterations // c),
                     "median_ratio": prog.get("ratio_of_medians"), "paired_ratio": prog.get("paired_ratio_median"),
                     "paired_p25": prog.get("paired_ratio_p25"), "paired_p75": prog.get("paired_ratio_p75"),
                     "added_per_loop": cg.get("added_per_loop")})
    points = [(row["chunks_per_loop"], row["added_per_loop"]) for row in rows if row["added_per_loop"] is not None]
    model = fit(points)
    result = {"command": "python bench/micro/taken_loops.py " + " ".join(argv), "rows": rows,
              "fit": None if model is None else {"per_loop": model[0], "per_chunk": model[1]}}
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    lines = ["# Taken loops under `aloe run --schedule program` against plain libgomp", "",
             f"Command: `{result['command']}`", "",
             f"`schedule(dynamic, c)` loops of {a.iterations} iterations, {a.work_ns:g} ns of work each, "
             f"{a.threads} threads, {a.loops} loops per run, {a.reps} interleaved repetitions per chunk size; "
             "each chunk size's folder has its machine description and raw runs.", "",
             "| chunk | chunks/loop | wall, paired / plain (median [p25, p75]) | instructions added per loop |",
             "|---:|---:|---:|---:|"]
    for row in rows:
        paired = "-" if row["paired_ratio"] is None else \
            f"{row['paired_ratio']:.4f} [{row['paired_p25']:.4f}, {row['paired_p75']:.4f}]"
        added = "-" if row["added_per_loop"] is None else f"{row['added_per_loop']:+,.0f}"
        lines.append(f"| {row['chunk']} | {row['chunks_per_loop']} | {paired} | {added} |")
    if model is not None:
        lines += ["", f"Fit over the chunk sizes: added per loop = {model[0]:+,.0f} + {model[1]:+.1f} × chunks "
                  "(start and end of a taken loop, and each chunk, against libgomp's; negative is cheaper)."]
    (out / "result.md").write_text("\n".join(lines) + "\n")
    print(f"taken_loops.py: wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
