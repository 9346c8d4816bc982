#!/usr/bin/env python3
"""Validates libaloe-mpi's slack on a program whose imbalance is known exactly (issue 15, item 2).

Runs bench/micro/known_slack under mpirun with libaloe-mpi preloaded, `--reps` times for each
rank count, with the calibration on and off (ALOE_MPI_CALIBRATION), interleaved. For every
rank it compares the slack libaloe-mpi measured at the program's MPI_Allreduce with the slack
the program's delays imply (max_j d_j − d_r per step, summed), and reports the measured
communication cost per call, the slack it found at the balanced MPI_Barrier (ideally 0), and
each predictor's error at the Allreduce path (last value, median with change detection, per
call type, naive), relative to the slack and to the time between invocations. Writes
result.md, result.json, runs.jsonl, command.txt and machine.json under --out (default
bench/results/known-slack-<date>).

    .venv/bin/python bench/micro/known_slack.py [--build build/release] [--ranks 2,3]
        [--reps 5] [--steps 200] [--out DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from aloe_harness import provenance  # noqa: E402
from gomp_forward_overhead import start_results, machine_line  # noqa: E402

PREDICTORS = ("last", "median", "type", "naive")


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build/release")
    p.add_argument("--ranks", default="2,3", help="rank counts, comma-separated (default 2,3)")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--steps", type=int, default=200)
    p.add_argument("--late", type=int, default=10, help="a one-off late rank every N steps (0: never; default 10)")
    p.add_argument("--yield-when-idle", action="store_true",
                   help="OpenMPI's mpi_yield_when_idle: waiting ranks yield their core (ranks > cores)")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    try:
        a.rank_counts = [int(x) for x in a.ranks.split(",") if x.strip()]
    except ValueError:
        p.error(f"--ranks must be integers separated by commas (got {a.ranks!r})")
    if not a.rank_counts or min(a.rank_counts) < 2 or a.reps < 1 or a.steps < 2:
        p.error("--ranks needs counts of at least 2, --reps at least 1, --steps at least 2")
    return a


def mpirun_prefix(ranks: int, yield_when_idle: bool = False) -> list[str]:
    cmd = [shutil.which("mpirun") or "mpirun", "-np", str(ranks), "--oversubscribe"]
    if yield_when_idle:
        cmd += ["--mca", "mpi_yield_when_idle", "1"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    return cmd


def one_run(binary: Path, library: Path, ranks: int, a: argparse.Namespace, calibration: str, scratch: Path) -> dict:
    steps = a.steps
    scratch.mkdir(parents=True, exist_ok=True)
    cmd = mpirun_prefix(ranks, a.yield_when_idle) + ["-x", f"LD_PRELOAD={library}", "-x", "ALOE_MPI_STATS=stats.%r.json",
                                  "-x", f"ALOE_MPI_CALIBRATION={calibration}",
                                  str(binary), "--steps", str(steps), "--late", str(a.late), "--json", "expected.json"]
    proc = subprocess.run(cmd, cwd=scratch, capture_output=True, text=True, timeout=600)
    if proc.returncode != 0:
        raise RuntimeError(f"known_slack failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")
    expected = json.loads((scratch / "expected.json").read_text())
    out = {"ranks": ranks, "calibration": calibration, "per_rank": []}
    for e in expected["expected"]:
        stats = json.loads((scratch / f"stats.{e['rank']}.json").read_text())
        rows = {c["call"]: c for c in stats["calls"] if c["calls"] >= steps // 3}
        allreduce, barrier = rows["MPI_Allreduce"], rows["MPI_Barrier"]
        out["per_rank"].append({
            "rank": e["rank"],
            "expected_slack_s": e["allreduce_slack_s"],
            "measured_slack_s": allreduce["slack_s"],
            "cost_per_call_s": allreduce["comm_s"] / allreduce["calls"],
            "barrier_slack_per_call_s": barrier["slack_s"] / barrier["calls"],
            "predictors": {k: allreduce["predictors"][k] for k in PREDICTORS},
            "naive_s": stats["calibration"]["naive_s"],
        })
    return out


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    build = Path(a.build)
    binary, library = (build / "bench/micro/known_slack").resolve(), (build / "lib/libaloe-mpi.so").resolve()
    for what, path in (("known_slack", binary), ("libaloe-mpi", library)):
        if not path.is_file():
            print(f"known_slack.py: {what} is not at {provenance.display_path(path)} (build with an MPI "
                  "installed: scripts/install-deps.sh)", file=sys.stderr)
            return 2
    if shutil.which("mpirun") is None:
        print("known_slack.py: mpirun is not on PATH (scripts/install-deps.sh installs OpenMPI)", file=sys.stderr)
        return 2
    out, machine = start_results(a.out, "known-slack", "bench/micro/known_slack.py", argv, str(build / "tools/aloe/aloe"))
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="aloe-known-slack-") as tmp, open(out / "runs.jsonl", "w") as log:
        for rep in range(a.reps):
            for ranks in a.rank_counts:
                order = ("on", "off") if rep % 2 == 0 else ("off", "on")
                for calibration in order:
                    r = one_run(binary, library, ranks, a, calibration, Path(tmp) / f"{rep}-{ranks}-{calibration}")
                    r["rep"] = rep
                    runs.append(r)
                    log.write(json.dumps(r) + "\n")
    summary = summarise(runs)
    result = {"steps": a.steps, "reps": a.reps, "late": a.late, "yield_when_idle": a.yield_when_idle,
              "machine_line": machine_line(machine), "rows": summary}
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "result.md").write_text(report(result) + "\n")
    print(report(result))
    return 0


def summarise(runs: list[dict]) -> list[dict]:
    rows = []
    keys = sorted({(r["ranks"], r["calibration"]) for r in runs})
    for ranks, calibration in keys:
        group = [r for r in runs if r["ranks"] == ranks and r["calibration"] == calibration]
        for rank in range(ranks):
            per = [next(p for p in r["per_rank"] if p["rank"] == rank) for r in group]
            expected = statistics.median(p["expected_slack_s"] for p in per)
            measured = [p["measured_slack_s"] for p in per]
            slack_error = [abs(p["measured_slack_s"] - p["expected_slack_s"]) / p["expected_slack_s"]
                           for p in per if p["expected_slack_s"] > 0]
            row = {"ranks": ranks, "calibration": calibration, "rank": rank, "runs": len(per),
                   "expected_slack_s": expected, "measured_slack_s": statistics.median(measured),
                   "measured_min_s": min(measured), "measured_max_s": max(measured),
                   "slack_error": statistics.median(slack_error) if slack_error else None,
                   "cost_per_call_us": 1e6 * statistics.median(p["cost_per_call_s"] for p in per),
                   "barrier_slack_per_call_us": 1e6 * statistics.median(p["barrier_slack_per_call_s"] for p in per)}
            for k in PREDICTORS:
                row[f"{k}_error_of_slack"] = statistics.median(p["predictors"][k]["error_of_slack"] for p in per)
                row[f"{k}_error_of_interval"] = statistics.median(p["predictors"][k]["error_of_interval"] for p in per)
            rows.append(row)
    return rows


def report(result: dict) -> str:
    def pct(x):
        return "–" if x is None or x < 0 else f"{100 * x:.1f}%"

    late = f"a one-off late rank every {result['late']} steps" if result["late"] else "no one-off late steps"
    lines = [f"# libaloe-mpi slack on a program with known imbalance ({result['steps']} steps, {late}, "
             f"median of {result['reps']} runs" + (", MPI yields when idle" if result["yield_when_idle"] else "") + ")", "",
             f"Command: see command.txt. Machine: {result['machine_line']}; details in machine.json.", "",
             "Slack at the program's MPI_Allreduce, summed over the steps, against max_j d_j − d_r summed "
             "(the delays the program spun); cost: what libaloe-mpi counted as the call's communication per "
             "call; barrier: slack it found per call at a balanced MPI_Barrier (ideally 0).", "",
             "| ranks | calibration | rank | expected slack (ms) | measured (ms) [min–max] | error | cost/call (µs) | "
             "barrier slack/call (µs) |",
             "|---|---|---|---|---|---|---|---|"]
    for r in result["rows"]:
        lines.append(f"| {r['ranks']} | {r['calibration']} | {r['rank']} | {1e3 * r['expected_slack_s']:.2f} | "
                     f"{1e3 * r['measured_slack_s']:.2f} [{1e3 * r['measured_min_s']:.2f}–{1e3 * r['measured_max_s']:.2f}] | "
                     f"{pct(r['slack_error'])} | {r['cost_per_call_us']:.2f} | {r['barrier_slack_per_call_us']:.1f} |")
    lines += ["", "Prediction error at the Allreduce path: sum |predicted − actual| over the sum of the actual "
              "slack / over the sum of the times between invocations (the step).", "",
              "| ranks | calibration | rank | " + " | ".join(f"{k} (slack / step)" for k in PREDICTORS) + " |",
              "|---|---|---|" + "---|" * len(PREDICTORS)]
    for r in result["rows"]:
        cells = [f"{pct(r[f'{k}_error_of_slack'])} / {pct(r[f'{k}_error_of_interval'])}" for k in PREDICTORS]
        lines.append(f"| {r['ranks']} | {r['calibration']} | {r['rank']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
