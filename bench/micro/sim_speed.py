#!/usr/bin/env python3
"""How fast `aloe sim` is, and how its cost grows with the node count (issue 16, targets).

Runs `aloe sim` for each profile × node count with one hybrid schedule, 16 cores per node and
--steps steps, measuring the wall time and peak memory of the whole process (/usr/bin/time),
`--reps` times interleaved (profiles and node counts alternate), and reports the median wall
time, node-steps per second, noise events per second, and the least-squares fit of time
against nodes (time = a + b·P: linear; the tree collective's log P is serial and tiny). The
issue's targets: 10,000 nodes × 16 cores × 1,000 steps in ≤ 10 s, 100,000 in ≤ 60 s, memory
≤ 2 GiB, on the 2-core VM. Writes result.md, result.json, command.txt and machine.json under
--out (default bench/results/sim-speed-<date>).

    .venv/bin/python bench/micro/sim_speed.py [--aloe build/release/tools/aloe/aloe]
        [--profiles vm,cab] [--nodes 1000,10000,100000] [--steps 1000] [--reps 3] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from aloe_harness import provenance  # noqa: E402
from gomp_forward_overhead import machine_line, start_results  # noqa: E402

PROFILES = {"vm": None, "cab": "tools/sim/profiles/cab-16core.json",
            "power575": "tools/sim/profiles/power575-16core.json"}
SCHEDULE = "hybrid,fs=0.9"


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--aloe", default=str(REPO / "build/release/tools/aloe/aloe"))
    p.add_argument("--profiles", default="vm,cab", help=f"some of {', '.join(PROFILES)}")
    p.add_argument("--nodes", default="1000,10000,100000")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--threads", type=int, default=0, help="simulation threads (0: aloe sim's default)")
    p.add_argument("--out", default=None)
    return p.parse_args(argv)


def fit_line(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Least squares y = a + b·x."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else 0.0
    return my - b * mx, b


def parse_time_v(text: str) -> tuple[float | None, float | None]:
    """Wall seconds and peak RSS (MiB) from /usr/bin/time -v's report."""
    wall = rss = None
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (?:(\d+):)?(\d+):([\d.]+)", text)
    if m:
        wall = int(m.group(1) or 0) * 3600 + int(m.group(2)) * 60 + float(m.group(3))
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        rss = int(m.group(1)) / 1024
    return wall, rss


def run_once(a: argparse.Namespace, profile: str, nodes: int) -> dict:
    cmd = ["/usr/bin/time", "-v", a.aloe, "sim", "--nodes", str(nodes), "--cores", "16", "--steps", str(a.steps),
           "--schedules", SCHEDULE, "--best-fs", "off", "--json", "--quiet"]
    if PROFILES[profile]:
        cmd += ["--profile", str(REPO / PROFILES[profile])]
    if a.threads:
        cmd += ["--threads", str(a.threads)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-500:]}")
    wall, rss = parse_time_v(p.stderr)
    result = json.loads(p.stdout)
    run = result["runs"][0]
    return {"profile": profile, "nodes": nodes, "wall_s": wall, "rss_mib": rss, "sim_wall_s": run["wall_s"],
            "noise_events": run["noise_events"], "total_s": run["total_s"]}


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    if not Path(a.aloe).is_file():
        print(f"sim_speed.py: no aloe tool at {provenance.display_path(a.aloe)} (make build, or --aloe)", file=sys.stderr)
        return 2
    profiles = a.profiles.split(",")
    for name in profiles:
        if name not in PROFILES:
            print(f"sim_speed.py: --profiles: '{name}' is not one of {', '.join(PROFILES)}", file=sys.stderr)
            return 2
    nodes = [int(x) for x in a.nodes.split(",")]
    out, machine = start_results(a.out, "sim-speed", "bench/micro/sim_speed.py", argv, a.aloe)
    runs = []
    for rep in range(a.reps):
        for n in nodes:
            for name in profiles:
                r = run_once(a, name, n)
                r["rep"] = rep
                runs.append(r)
                print(f"rep {rep} {name} {n} nodes: {r['wall_s']:.2f} s, {r['rss_mib']:.0f} MiB", file=sys.stderr)
    rows = []
    for name in profiles:
        pts = []
        for n in nodes:
            mine = [r for r in runs if r["profile"] == name and r["nodes"] == n]
            walls = sorted(r["wall_s"] for r in mine)
            med = statistics.median(walls)
            node_steps = n * a.steps
            rows.append({"profile": name, "nodes": n, "steps": a.steps, "median_wall_s": med, "min_wall_s": walls[0],
                         "max_wall_s": walls[-1], "peak_rss_mib": max(r["rss_mib"] for r in mine),
                         "node_steps_per_s": node_steps / med, "noise_events": mine[0]["noise_events"],
                         "events_per_s": mine[0]["noise_events"] / med, "simulated_s": mine[0]["total_s"]})
            pts.append((n, med))
        a0, b = fit_line([p[0] for p in pts], [p[1] for p in pts])
        for r in rows:
            if r["profile"] == name:
                r["fit_intercept_s"], r["fit_s_per_node"] = a0, b
    (out / "result.json").write_text(json.dumps({"rows": rows, "runs": runs}, indent=2) + "\n")
    lines = [f"# aloe sim speed ({SCHEDULE}, 16 cores per node, {a.steps} steps)", "",
             machine_line(machine), "",
             "| profile | nodes | wall median (min–max) s | peak RSS MiB | M node-steps/s | noise events/s (M) | fit: s per 1,000 nodes |",
             "|---|---:|---|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['profile']} | {r['nodes']} | {r['median_wall_s']:.2f} ({r['min_wall_s']:.2f}–{r['max_wall_s']:.2f}) | "
                     f"{r['peak_rss_mib']:.0f} | {r['node_steps_per_s'] / 1e6:.2f} | {r['events_per_s'] / 1e6:.2f} | "
                     f"{r['fit_s_per_node'] * 1000:.3f} |")
    lines += ["", "Targets: 10,000 nodes ≤ 10 s, 100,000 nodes ≤ 60 s, memory ≤ 2 GiB."]
    (out / "result.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
