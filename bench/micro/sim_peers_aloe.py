#!/usr/bin/env python3
"""aloe sim on the peers' pattern and noise trace (issue 16, part 5), side by side with them.

Reads a folder written by sim_peers.py (pattern.json, trace.json, peers.csv), writes the same
pattern as an aloe profile (one core per node, one iteration of the compute time W, the trace
replayed with each node on its own CPU from time 0, recursive doubling with α = L + 2o per
round and β = G), runs `aloe sim` for every (ranks, steps) the peers ran, `--reps` times, and
writes aloe.csv and comparison.md into the folder: aloe's total against each peer's (relative
difference), and the wall time and memory each took. What aloe models differently: every rank
leaves the collective when the last has arrived plus the rounds (the analytic sum), while in
recursive doubling the ranks leave at different times; the peers show that effect, up to 1%.

    .venv/bin/python bench/micro/sim_peers_aloe.py bench/results/sim-peers-20261126
        [--aloe build/release/tools/aloe/aloe] [--reps 3]
"""
from __future__ import annotations

import argparse
import csv
import gzip
import json
import shutil
import statistics
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from sim_speed import parse_time_v  # noqa: E402  (/usr/bin/time -v's wall time and peak memory)


def profile_for(pattern: dict) -> dict:
    """The aloe profile of the peers' pattern."""
    return {
        "format": "aloe-sim-profile/1",
        "name": "sim_peers.py's pattern: one core per rank, W of compute, an 8-byte allreduce (recursive doubling)",
        "made_by": "bench/micro/sim_peers_aloe.py from pattern.json",
        "cores": 1,
        "loop": {"iterations": 1, "iteration_s": pattern["compute_s"], "costs": {"kind": "uniform"}},
        "overheads": {"dequeue_s": 0, "fork_join_s": 0},
        "noise": [{"kind": "trace", "file": pattern["noise"]["trace"], "offsets": "zero"}],
        "network": {"collective": "recursive-doubling", "alpha_s": pattern["L_s"] + 2 * pattern["o_s"],
                    "beta_s_per_byte": pattern["G_s_per_byte"], "bytes": pattern["bytes"]},
    }


def relative(a: float, b: float) -> float:
    return a / b - 1


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder")
    p.add_argument("--aloe", default=str(REPO / "build/release/tools/aloe/aloe"))
    p.add_argument("--reps", type=int, default=3)
    a = p.parse_args(argv)
    folder = Path(a.folder)
    pattern = json.loads((folder / "pattern.json").read_text())
    peers = list(csv.DictReader(open(folder / "peers.csv", newline="")))
    # The trace is kept compressed (trace.json.gz); aloe sim reads it plain, beside the profile.
    trace = folder / pattern["noise"]["trace"]
    if not trace.exists() and trace.with_name(trace.name + ".gz").exists():
        with gzip.open(trace.with_name(trace.name + ".gz"), "rb") as src, open(trace, "wb") as dst:
            shutil.copyfileobj(src, dst)
    profile = folder / "aloe-profile.json"
    profile.write_text(json.dumps(profile_for(pattern), indent=2) + "\n")
    cases = sorted({(int(r["ranks"]), int(r["steps"])) for r in peers})
    rows = []
    for ranks, steps in cases:
        walls, rss, result = [], [], None
        for _ in range(a.reps):
            cmd = ["/usr/bin/time", "-v", a.aloe, "sim", "--profile", str(profile), "--nodes", str(ranks), "--steps", str(steps),
                   "--schedules", "static", "--best-fs", "off", "--json", "--quiet"]
            run = subprocess.run(cmd, capture_output=True, text=True, check=False)
            if run.returncode != 0:
                print(f"sim_peers_aloe.py: {' '.join(cmd)}: {run.stderr[-400:]}", file=sys.stderr)
                return 1
            w, m = parse_time_v(run.stderr)
            walls.append(w)
            rss.append(m)
            result = json.loads(run.stdout)["runs"][0]
        rows.append({"simulator": "aloe", "ranks": ranks, "steps": steps, "total_s": result["total_s"],
                     "mean_step_s": result["total_s"] / steps, "wall_s": statistics.median(walls), "max_rss_mb": max(rss),
                     "noise_events": result["noise_events"]})
        print(f"aloe {ranks} ranks x {steps} steps: {result['total_s']:.6f} s in {statistics.median(walls):.2f} s", file=sys.stderr)
    with open(folder / "aloe.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    by = defaultdict(dict)
    for r in peers:
        by[(int(r["ranks"]), int(r["steps"]))][r["simulator"]] = r
    lines = ["# aloe sim against SimGrid SMPI, LogGOPSim and the analytic sum", "",
             f"Pattern: pattern.json (W = {pattern['compute_s'] * 1e3:g} ms, 8-byte allreduce, recursive doubling, "
             f"α = L + 2o = {(pattern['L_s'] + 2 * pattern['o_s']) * 1e6:g} us per round); noise: trace.json, each rank its own CPU.",
             "aloe's columns: its total's difference from each peer's; wall time (median of "
             f"{a.reps}) and peak memory of the whole `aloe sim` process; the peers' wall time as sim_peers.py measured it.", "",
             "| ranks | steps | aloe mean step (us) | vs analytic | vs smpi | vs loggopsim | aloe wall (s) | smpi wall (s) | loggopsim wall (s) | aloe MiB | loggopsim MiB |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        k = (r["ranks"], r["steps"])
        cell = []
        for peer in ("analytic", "smpi", "loggopsim"):
            x = by[k].get(peer)
            known = x is not None and x.get("total_s") not in (None, "")  # a stopped run has no total
            cell.append(f"{relative(r['total_s'], float(x['total_s'])) * 100:+.2f}%" if known else "-")
        sw = by[k].get("smpi", {}).get("wall_s") or "-"
        lw = by[k].get("loggopsim", {}).get("wall_s") or "-"
        lm = by[k].get("loggopsim", {}).get("max_rss_mb") or "-"
        lines.append(f"| {r['ranks']} | {r['steps']} | {r['mean_step_s'] * 1e6:.3f} | {cell[0]} | {cell[1]} | {cell[2]} | "
                     f"{r['wall_s']:.2f} | {sw} | {lw} | {r['max_rss_mb']:.0f} | {lm} |")
    (folder / "comparison.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
