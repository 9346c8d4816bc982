#!/usr/bin/env python3
"""In-run grain tuning on stencil1d-tasks against the exhaustive sweep (issue 17's target:
within 3% of the sweep's best time in at most 10 epochs, from a start 100x too fine and
100x too coarse; APEX needed 29-89 whole-run trials).

1. Sweep: every candidate partition size (divisors of nx, log-spaced) run as epochs of one
   process (--grain list:...), interleaved, `--sweep-reps` passes; the median epoch time per
   size; the best is the oracle.
2. Tuned: for each objective (overall, idle-rate, overhead, overhead+wait, time) and each
   start (best/100 and best*100, the nearest admissible sizes), one run of `--epochs` epochs
   with --grain auto:objective=...; each epoch's size and wall time.
   Judged by the sweep's time at the size the knob settled on (robust to one noisy epoch) and
   by the measured time of the epochs after the 10th.
3. Verified: the size each run settled on against the sweep's best, in one process, epochs
   alternating between the two (`--verify-pairs` pairs): the median of the pairs' ratios.
   Epoch times drift between processes on a shared VM (up to 1.5x minutes apart), so only
   this same-process, interleaved comparison says whether a size is within 3% of another.
4. results.csv, verify.csv, summary.md, command.txt, machine.txt, convergence-<objective>.png.

Usage: grain_tuning.py --app build/release/apps/aloe-app-stencil1d-tasks [--threads 2]
                       [--nx 2000000] [--epoch-steps 20] [--out DIR]
"""
from __future__ import annotations

import argparse
import csv
import datetime as dt
import json
import math
import os
import platform
import statistics
import subprocess
import sys
from pathlib import Path

OBJECTIVES = ["overall", "idle-rate", "overhead", "overhead+wait", "time"]


def divisors(n: int, lo: int, hi: int) -> list[int]:
    out = set()
    i = 1
    while i * i <= n:
        if n % i == 0:
            for d in (i, n // i):
                if lo <= d <= hi:
                    out.add(d)
        i += 1
    return sorted(out)


def log_spaced(values: list[int], count: int) -> list[int]:
    if len(values) <= count:
        return values
    lo, hi = math.log(values[0]), math.log(values[-1])
    picked = []
    for k in range(count):
        target = lo + (hi - lo) * k / (count - 1)
        best = min(values, key=lambda v: abs(math.log(v) - target))
        if best not in picked:
            picked.append(best)
    return sorted(picked)


def run_app(app: str, args: list[str], env: dict) -> dict:
    r = subprocess.run([app] + args + ["--json", "-"], capture_output=True, text=True, env=env, timeout=1800)
    if r.returncode != 0:
        raise SystemExit(f"grain_tuning: {app} {' '.join(args)} failed: {r.stderr.strip()[-2000:]}")
    return json.loads(r.stdout.splitlines()[0])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", required=True, help="aloe-app-stencil1d-tasks")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--nx", type=int, default=2_000_000)
    ap.add_argument("--epoch-steps", type=int, default=20)
    ap.add_argument("--grain-min", type=int, default=100)
    ap.add_argument("--sizes", type=int, default=16, help="sizes in the sweep (log-spaced divisors)")
    ap.add_argument("--sweep-reps", type=int, default=3)
    ap.add_argument("--epochs", type=int, default=16, help="epochs per tuned run (the target counts 10)")
    ap.add_argument("--search", default="golden")
    ap.add_argument("--objectives", default=",".join(OBJECTIVES), help="comma-separated, from " + ", ".join(OBJECTIVES))
    ap.add_argument("--verify-pairs", type=int, default=8,
                    help="epochs at the settled size and at the sweep's best, alternating, per run (0: no check)")
    ap.add_argument("--out")
    ap.add_argument("--machine-label", default="")
    args = ap.parse_args()
    objectives = [o for o in args.objectives.split(",") if o]
    unknown = [o for o in objectives if o not in OBJECTIVES]
    if unknown or not objectives:
        print(f"grain_tuning: --objectives: unknown {', '.join(unknown) or '(none given)'}; "
              f"choose from {', '.join(OBJECTIVES)}", file=sys.stderr)
        return 2
    if args.verify_pairs < 0:
        print(f"grain_tuning: --verify-pairs must be >= 0, not {args.verify_pairs}", file=sys.stderr)
        return 2
    if not Path(args.app).exists():
        print(f"grain_tuning: {args.app} not found", file=sys.stderr)
        return 2
    env = dict(os.environ, ALOE_NUM_THREADS=str(args.threads))
    today = dt.date.today().strftime("%Y%m%d")
    out = Path(args.out or Path(__file__).resolve().parents[1] / "results" / f"grain-tuning-{today}-{args.threads}t")
    out.mkdir(parents=True, exist_ok=True)
    common = ["--nx", str(args.nx), "--epoch-steps", str(args.epoch_steps), "--threads", str(args.threads)]

    # 1. The sweep, in one process: epoch e runs size[e mod n]; passes interleave the sizes.
    admissible = divisors(args.nx, args.grain_min, args.nx // args.threads)
    sizes = log_spaced(admissible, args.sizes)
    record = run_app(args.app, common + ["--grain", "list:" + ",".join(map(str, sizes)), "--warmup", "1",
                                         "--steps", str(len(sizes) * args.sweep_reps)], env)
    times: dict[int, list[float]] = {}
    for e in record["epochs"]:
        if e.get("timed", True):
            times.setdefault(e["partition"], []).append(e["wall_s"])
    sweep = {p: statistics.median(v) for p, v in times.items()}
    best_p = min(sweep, key=sweep.get)
    best_t = sweep[best_p]

    def sweep_time(p: int) -> float:
        """The sweep's time at p, or at the nearest swept size in log (p may be unswept)."""
        if p in sweep:
            return sweep[p]
        near = min(sweep, key=lambda q: abs(math.log(q) - math.log(p)))
        return sweep[near]

    def nearest_admissible(v: float) -> int:
        return min(admissible, key=lambda q: abs(math.log(q) - math.log(v)))

    starts = {"100x too fine": nearest_admissible(best_p / 100), "100x too coarse": nearest_admissible(best_p * 100)}

    # 2. Tuned runs.
    rows = []
    tuned = []
    for objective in objectives:
        for label, start in starts.items():
            rec = run_app(args.app, common + ["--grain", f"auto:objective={objective},search={args.search}",
                                              "--grain-min", str(args.grain_min), "--partition", str(start),
                                              "--warmup", "0", "--steps", str(args.epochs)], env)
            epochs = [e for e in rec["epochs"]]
            for e in epochs:
                rows.append({"objective": objective, "start": label, "epoch": e["epoch"], "partition": e["partition"],
                             "wall_s": e["wall_s"], "sweep_s_at_partition": sweep_time(e["partition"])})
            final_p = epochs[-1]["partition"]
            within = [i for i, e in enumerate(epochs) if all(sweep_time(x["partition"]) <= 1.03 * best_t for x in epochs[i:])]
            settled = next(i for i in range(len(epochs)) if all(x["partition"] == final_p for x in epochs[i:]))
            after10 = [e["wall_s"] for e in epochs[10:]] or [epochs[-1]["wall_s"]]
            tuned.append({"objective": objective, "start": label, "start_p": start, "final_p": final_p,
                          "final_vs_best": sweep_time(final_p) / best_t,
                          "epochs_to_3pct": (within[0] + 1) if within else None,
                          "settled_epoch": settled + 1,
                          "measured_after10_vs_best": statistics.median(after10) / best_t})
            print(f"grain_tuning: {objective} from {label}: {start} -> {final_p}", file=sys.stderr)

    # 3. Each settled size against the best, alternating in one process (same size: no run).
    verify_rows = []
    verified: dict[int, tuple[float, float, float]] = {}
    for t in tuned:
        p = t["final_p"]
        if args.verify_pairs == 0 or p == best_p or p in verified:
            continue
        rec = run_app(args.app, common + ["--grain", f"list:{p},{best_p}", "--warmup", "2",
                                          "--steps", str(2 * args.verify_pairs)], env)
        walls = [e["wall_s"] for e in rec["epochs"] if e.get("timed", True)]
        parts = [e["partition"] for e in rec["epochs"] if e.get("timed", True)]
        ratios = []
        for i in range(0, len(walls) - 1, 2):
            if parts[i] == p and parts[i + 1] == best_p:
                ratios.append(walls[i] / walls[i + 1])
                verify_rows.append({"partition": p, "best": best_p, "pair": i // 2, "wall_s": walls[i],
                                    "best_wall_s": walls[i + 1], "ratio": walls[i] / walls[i + 1]})
        if not ratios:
            raise SystemExit(f"grain_tuning: the check of {p} against {best_p} ran no alternating pairs")
        q = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else [ratios[0]] * 3
        verified[p] = (statistics.median(ratios), q[0], q[2])
    for t in tuned:
        t["verified"] = (1.0, 1.0, 1.0) if t["final_p"] == best_p else verified.get(t["final_p"])

    with open(out / "sweep.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["partition", "median_epoch_s", "samples"])
        for p in sorted(sweep):
            w.writerow([p, f"{sweep[p]:.6g}", len(times[p])])
    with open(out / "results.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    if verify_rows:
        with open(out / "verify.csv", "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(verify_rows[0].keys()))
            w.writeheader()
            w.writerows(verify_rows)

    lines = [f"# Grain tuning on stencil1d-tasks ({args.machine_label or platform.node()}, {args.threads} threads)", "",
             f"nx = {args.nx}, {args.epoch_steps} timesteps per epoch, sizes = divisors of nx in "
             f"[{args.grain_min}, nx/threads]; search = {args.search}.", "",
             f"Sweep ({len(sizes)} sizes x {args.sweep_reps} interleaved passes, median epoch): best partition "
             f"**{best_p}** at {best_t * 1e3:.2f} ms per epoch.", "",
             "| partition | " + " | ".join(str(p) for p in sorted(sweep)) + " |",
             "|---|" + "---|" * len(sweep),
             "| ms/epoch | " + " | ".join(f"{sweep[p] * 1e3:.1f}" for p in sorted(sweep)) + " |", "",
             "Tuned runs: the size the knob settled on after "
             f"{args.epochs} epochs and the epoch from which it ran nothing else, the sweep's time there over the "
             "best, the first epoch from which every "
             "epoch's size is within 3% of the best (sweep times), the measured epochs after the 10th over "
             "the best, and the settled size against the best in one process, alternating "
             f"({args.verify_pairs} pairs: median ratio [quartiles]; 1 when it settled on the best itself).", "",
             "| objective | start | start size | final size | settled from epoch | final / best | epochs to ≤ 3% "
             "| measured (epochs > 10) / best | verified: settled / best, same process |",
             "|---|---|---|---|---|---|---|---|---|"]
    for t in tuned:
        v = t.get("verified")
        vtext = "not run" if v is None else f"{v[0]:.3f} [{v[1]:.3f}, {v[2]:.3f}]"
        lines.append(f"| {t['objective']} | {t['start']} | {t['start_p']} | {t['final_p']} | {t['settled_epoch']} "
                     f"| {t['final_vs_best']:.3f} | "
                     f"{t['epochs_to_3pct'] if t['epochs_to_3pct'] else 'never'} | {t['measured_after10_vs_best']:.3f} "
                     f"| {vtext} |")
    checked = [t["verified"][0] for t in tuned if t.get("verified")]
    if checked:
        lines += ["", f"Runs whose settled size is within 3% of the best in the same-process check: "
                      f"{sum(r <= 1.03 for r in checked)} of {len(checked)}."]
    lines.append("")
    (out / "summary.md").write_text("\n".join(lines) + "\n")
    (out / "command.txt").write_text(" ".join([Path(sys.argv[0]).name] + sys.argv[1:]) + "\n")
    (out / "machine.txt").write_text(f"host: {platform.node()}\nkernel: {platform.release()}\n"
                                     f"cpus allowed: {len(os.sched_getaffinity(0))}\n")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        for objective in objectives:
            fig, (a1, a2) = plt.subplots(1, 2, figsize=(10, 3.8))
            for label in starts:
                xs = [r for r in rows if r["objective"] == objective and r["start"] == label]
                a1.plot([r["epoch"] + 1 for r in xs], [r["partition"] for r in xs], marker="o", label=label)
                a2.plot([r["epoch"] + 1 for r in xs], [r["wall_s"] * 1e3 for r in xs], marker="o", label=label)
            a1.axhline(best_p, color="grey", ls="--", lw=0.8, label="sweep's best")
            a1.set_yscale("log")
            a1.set_xlabel("epoch")
            a1.set_ylabel("partition size (points)")
            a2.axhline(best_t * 1e3, color="grey", ls="--", lw=0.8)
            a2.axhline(best_t * 1.03e3, color="grey", ls=":", lw=0.8)
            a2.set_yscale("log")
            a2.set_xlabel("epoch")
            a2.set_ylabel("epoch wall time (ms)")
            a1.legend(fontsize=8)
            fig.suptitle(f"objective={objective}")
            fig.tight_layout()
            fig.savefig(out / f"convergence-{objective.replace('+', '-')}.png", dpi=110)
            plt.close(fig)
    except ImportError:
        pass
    print((out / "summary.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main())
