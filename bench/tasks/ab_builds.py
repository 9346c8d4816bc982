#!/usr/bin/env python3
"""Two aloe builds side by side on the task workloads, interleaved round by round.

For a change to the task scheduler: the Taskflow ports' graph programs (wavefront,
graph_traversal, fibonacci, binary_tree at 2 threads) and aloe-bench-tasks' spawn costs (fib
and empty tasks at 1 and 2 threads), each run in both builds every round, the order of the
builds alternating. Writes summary.md (medians, min-max, the ratio of medians, the paired
per-round ratio, and in how many rounds the new build was faster), results.json, command.txt
and machine.txt into --out.

    python3 bench/tasks/ab_builds.py --old <build folder> --new build/release --rounds 7 \\
        --out bench/results/tasks-wake-ab-<date>
"""
import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path


def clean_env(threads=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ALOE_", "OMP_", "GOMP_", "KMP_", "TBB_"))}
    env.pop("LD_PRELOAD", None)
    if threads is not None:
        env["ALOE_NUM_THREADS"] = str(threads)
    return env


def port_seconds(build, *args):
    """The last (largest) size row of a Taskflow port, in seconds."""
    r = subprocess.run([str(Path(build) / "bench/taskflow_ports/aloe_taskflow_ports"), *args], capture_output=True,
                       text=True, env=clean_env(), timeout=600, check=True)
    rows = [line.split() for line in r.stdout.splitlines() if line.split() and line.split()[0].isdigit()]
    return float(rows[-1][1]) / 1e3


def ns_per_task(build, bench, n, threads):
    """The median over 5 repetitions of aloe-bench-tasks' wall time a task, in ns."""
    r = subprocess.run([str(Path(build) / "bench/tasks/aloe-bench-tasks"), "--runtime", "aloe", "--bench", bench,
                        "--n", n, "--threads", str(threads), "--reps", "5"], capture_output=True, text=True,
                       env=clean_env(threads), timeout=600, check=True)
    runs = [json.loads(line) for line in r.stdout.splitlines() if line.startswith("{")]
    return statistics.median(x["wall_s"] / x["tasks"] * 1e9 for x in runs)


CASES = {
    "wavefront@2 (s)": lambda b: port_seconds(b, "wavefront", "-t", "2"),
    "graph_traversal@2 (s)": lambda b: port_seconds(b, "graph_traversal", "-t", "2"),
    "fibonacci30@2 (s)": lambda b: port_seconds(b, "fibonacci", "-t", "2", "-f", "30"),
    "binary_tree21@2 (s)": lambda b: port_seconds(b, "binary_tree", "-t", "2", "-l", "21"),
    "fib27@2 (ns/task)": lambda b: ns_per_task(b, "fib", "27", 2),
    "empty400000@2 (ns/task)": lambda b: ns_per_task(b, "empty", "400000", 2),
    "fib27@1 (ns/task)": lambda b: ns_per_task(b, "fib", "27", 1),
    "empty400000@1 (ns/task)": lambda b: ns_per_task(b, "empty", "400000", 1),
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--old", required=True, help="build folder of the baseline")
    ap.add_argument("--new", required=True, help="build folder of the change")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine-label", default=platform.node())
    a = ap.parse_args()
    for b in (a.old, a.new):
        for exe in ("bench/taskflow_ports/aloe_taskflow_ports", "bench/tasks/aloe-bench-tasks"):
            if not (Path(b) / exe).is_file():
                sys.exit(f"ab_builds: {b} has no {exe} (build the targets aloe_taskflow_ports and aloe-bench-tasks)")
    builds = {"old": a.old, "new": a.new}
    res = {c: {"old": [], "new": []} for c in CASES}
    for r in range(a.rounds):
        order = ["old", "new"] if r % 2 == 0 else ["new", "old"]
        for case, run in CASES.items():
            for which in order:
                res[case][which].append(run(builds[which]))
        print(f"round {r + 1} of {a.rounds} done", flush=True)
    lines = ["| case | old median (min-max) | new median (min-max) | new/old medians | paired new/old median (min-max) | new faster |",
             "|---|---|---|---|---|---|"]
    for case in CASES:
        o, n = res[case]["old"], res[case]["new"]
        paired = [y / x for x, y in zip(o, n)]
        lines.append(f"| {case} | {statistics.median(o):.4g} ({min(o):.4g}-{max(o):.4g}) | "
                     f"{statistics.median(n):.4g} ({min(n):.4g}-{max(n):.4g}) | "
                     f"{statistics.median(n) / statistics.median(o):.3f} | "
                     f"{statistics.median(paired):.3f} ({min(paired):.3f}-{max(paired):.3f}) | "
                     f"{sum(p < 1 for p in paired)} of {len(paired)} |")
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    (out / "results.json").write_text(json.dumps(res, indent=1) + "\n")
    (out / "command.txt").write_text("python3 bench/tasks/ab_builds.py " + " ".join(sys.argv[1:]) + "\n")
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    (out / "machine.txt").write_text(f"host: {a.machine_label}\nkernel: {platform.release()}\n"
                                     f"python: {platform.python_version()}\n{lscpu}")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
