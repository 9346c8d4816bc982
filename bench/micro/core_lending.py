#!/usr/bin/env python3
"""Ranks that wait lend their cores (issue 19): aloe's reactive and predictive lending beside
DLB LeWI and no lending, on jacobi3d-mpi with one heavier rank.

R ranks (--ranks, default 2) of T threads (--threads, default 1) bound to their cores
(`mpirun --bind-to core`, and `--map-by slot:PE=T` for T > 1), rank 1 the heavy or noisy one,
k parallel regions per step (`--regions-per-step k`, each step ends with an MPI_Allreduce).
The 2-vCPU VM runs the defaults; the 16-core device machine `--ranks 4 --threads 4`. Variants, interleaved
(each repetition runs every variant once, the order rotated by one per repetition):

    gomp        --runtime libgomp --schedule static: the plain baseline
    off         --runtime aloe --schedule dynamic,chunk=1, libaloe-mpi preloaded, ALOE_LEND=off
    dlb-busy    libomp static under DLB LeWI (lewi_omp.sh), OpenMPI's default busy-polling MPI
    dlb-yield   dlb-busy with --mca mpi_yield_when_idle 1
    reactive    off with ALOE_LEND=reactive (aloed running: a private one, started here)
    predictive  off with ALOE_LEND=predictive
    run-off, run-reactive, run-predictive
                the same program as an unmodified OpenMP one: --runtime libgomp --schedule
                runtime under `aloe run --mpi --lend MODE --schedule dynamic,chunk=1`; its
                regions take borrowed cores at their start (ratios to run-off)

Cases: heavy 1:2 and 1:3 (`--heavy-rank 1:F`); noise (balanced work, and in half of the
steps rank 1's CPU is taken for 3 ms: `--noise-ranks 1 --noise-p 0.5 --noise-us 3000`);
balanced (the cost of lending where there is nothing to move). The ideal for a heavy case is the
total work over the cores: with work 1 on R - 1 ranks and F on one it is (R - 1 + F) / (R F)
of the time without lending ((1 + F) / (2 F) on two ranks; `ratio_to_ideal`; it ignores the
MPI cost, which here is microseconds per step against milliseconds).

DLB (bsc-pm/dlb v3.7.0) is built outside the repository (bench/results/dlb-lewi-20261125's
command.txt says how); pass its prefix. Without --dlb-prefix the dlb variants are left out
and said so in result.json.

Writes runs.jsonl (every run), result.json and machine.json under --out.

    .venv/bin/python bench/micro/core_lending.py [--dlb-prefix <dlb-prefix>] [--reps 3]
        [--ks 1,4,20] [--cases heavy2,heavy3,noise,balanced] [--n 192] [--steps 40]
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dlb_lewi import WRAP, busy_jiffies, children_ticks, quart, sha, wait_quiet  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
APP = "build/release/apps/aloe-app-jacobi3d-mpi"
MPI_LIB = "build/release/lib/libaloe-mpi.so"
ALOED = "build/release/tools/aloed/aloed"
ALOE = "build/release/tools/aloe/aloe"
LIBOMP = "/usr/lib/x86_64-linux-gnu/libomp.so.5"

VARIANTS = {
    "gomp": "libgomp static (plain)",
    "off": "aloe dynamic,chunk=1, libaloe-mpi, ALOE_LEND=off",
    "dlb-busy": "libomp static under DLB LeWI, busy-polling MPI",
    "dlb-yield": "dlb-busy + mpi_yield_when_idle 1",
    "reactive": "aloe dynamic,chunk=1, ALOE_LEND=reactive, aloed",
    "predictive": "aloe dynamic,chunk=1, ALOE_LEND=predictive, aloed",
    "run-off": "libgomp under aloe run --mpi --lend off (taken loops dynamic,chunk=1)",
    "run-reactive": "run-off with --lend reactive (regions take borrowed cores), aloed",
    "run-predictive": "run-off with --lend predictive, aloed",
    "run-auto": "run-off with --lend auto (the default: the rank lends, its regions keep their count), aloed",
}
CASES = {
    "heavy2": {"args": ["--heavy-rank", "1:2"], "factor": 2.0},
    "heavy3": {"args": ["--heavy-rank", "1:3"], "factor": 3.0},
    "noise": {"args": ["--noise-ranks", "1", "--noise-p", "0.5", "--noise-us", "3000"], "factor": None},
    "balanced": {"args": [], "factor": 1.0},
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dlb-prefix", default=None, help="DLB's install prefix (omit: no DLB variants)")
    p.add_argument("--libomp", default=LIBOMP, help=f"LLVM's libomp for the DLB variants (default {LIBOMP})")
    p.add_argument("--quiet-wait", type=float, default=15,
                   help="at most this many seconds before each run for the machine to go quiet (default 15)")
    p.add_argument("--preload-variable", default="LD_PRELOAD",
                   help="the variable that names libaloe-mpi to preload (make_lending_kit.sh's kit: ALOE_KIT_PRELOAD)")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--ranks", type=int, default=2, help="MPI ranks (rank 1 is the heavy or noisy one)")
    p.add_argument("--threads", type=int, default=1, help="threads (and cores) per rank")
    p.add_argument("--n", type=int, default=192)
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--ks", default="1,4,20")
    p.add_argument("--cases", default="heavy2,heavy3,noise,balanced")
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    if a.ranks < 2:
        p.error(f"--ranks {a.ranks}: lending needs at least 2 ranks")
    if a.threads < 1:
        p.error(f"--threads {a.threads}: at least 1")
    a.ks = [int(k) for k in a.ks.split(",")]
    a.cases = a.cases.split(",")
    a.variants = [v for v in a.variants.split(",") if a.dlb_prefix or not v.startswith("dlb")]
    a.out = Path(a.out or REPO / "bench" / "results" / f"core-lending-{datetime.date.today():%Y%m%d}")
    return a


class Runner:
    def __init__(self, a, tmp: str):
        self.a, self.tmp = a, tmp
        self.dlb = str(Path(a.dlb_prefix).resolve()) if a.dlb_prefix else None
        self.shim = os.path.join(tmp, "shim")
        os.makedirs(self.shim)
        os.symlink(a.libomp, os.path.join(self.shim, "libgomp.so.1"))
        self.socket = os.path.join(tmp, "aloed.sock")
        self.placeholders = [(self.dlb or "\0", "<dlb-prefix>"), (self.shim, "<libomp-shim>"), (tmp, "<tmp>"),
                             (str(REPO) + "/", ""), (str(REPO), ".")]

    def hide(self, text: str) -> str:
        for real, shown in self.placeholders:
            text = text.replace(real, shown)
        return text

    def argv(self, case: str, variant: str, k: int, json_path: str):
        t = self.a.threads
        mpirun = ["mpirun", "--allow-run-as-root", "-np", str(self.a.ranks), "--bind-to", "core"]
        if t > 1:
            mpirun += ["--map-by", f"slot:PE={t}"]
        env: dict[str, str] = {}
        launcher: list[str] = []
        runtime = ["--runtime", "aloe", "--schedule", "dynamic,chunk=1"]
        if variant == "gomp":
            runtime = ["--runtime", "libgomp", "--schedule", "static"]
        elif variant.startswith("dlb"):
            runtime = ["--runtime", "libomp", "--schedule", "static"]
            env.update(LD_LIBRARY_PATH=self.shim, OMP_NUM_THREADS=str(t))
            launcher = [f"{self.dlb}/share/doc/dlb/scripts/lewi_omp.sh", "sh", "-c", WRAP, "_"]
            if variant == "dlb-yield":
                mpirun += ["--mca", "mpi_yield_when_idle", "1"]
        elif variant.startswith("run-"):
            # An unmodified OpenMP program: the interposer takes its loops, libaloe-mpi lends.
            runtime = ["--runtime", "libgomp", "--schedule", "runtime"]
            env.update(ALOE_DAEMON_SOCKET=self.socket, OMP_NUM_THREADS=str(t))
            launcher = [str(REPO / ALOE), "run", "--mpi", "--lend", variant[4:], "--schedule", "dynamic,chunk=1",
                        "--summary", "none", "--mpi-stats", os.path.join(self.tmp, "mpi.json"), "--"]
        else:
            env.update({self.a.preload_variable: str(REPO / MPI_LIB)}, ALOE_LEND=variant, ALOE_DAEMON_SOCKET=self.socket,
                       ALOE_MPI_STATS=os.path.join(self.tmp, "mpi.json"), ALOE_STATS=os.path.join(self.tmp, "loops.json"))
        for key, v in env.items():
            mpirun += ["-x", f"{key}={v}"]
        app = [str(REPO / APP), *runtime, "--threads", str(t), "--n", str(self.a.n), "--decomp", "z", "--mode", "thread0",
               "--steps", str(self.a.steps), "--warmup", str(self.a.warmup), "--regions-per-step", str(k),
               *CASES[case]["args"], "--json", json_path]
        return mpirun + launcher + app, env

    def run(self, case, variant, k, rep):
        jp = os.path.join(self.tmp, "run.json")
        for f in [jp] + [os.path.join(self.tmp, f"{s}.rank{r}.json") for s in ("mpi", "loops") for r in range(self.a.ranks)]:
            if os.path.exists(f):
                os.remove(f)
        argv, env = self.argv(case, variant, k, jp)
        waited = wait_quiet(0.3, self.a.quiet_wait)
        hz = os.sysconf("SC_CLK_TCK")
        b0, c0, w0 = busy_jiffies(), children_ticks(), time.monotonic()
        try:
            p = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=180)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out = 124, (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        b1, c1, w1 = busy_jiffies(), children_ticks(), time.monotonic()
        rec = {"case": case, "variant": variant, "k": k, "rep": rep, "command": self.hide(shlex.join(argv)),
               "env": {key: self.hide(v) for key, v in env.items()}, "rc": rc, "ok": False, "total_s": None,
               "waited_for_quiet_s": round(waited, 1), "wall_s": round(w1 - w0, 3),
               "foreign_cpu_s": round(max(0.0, (b1 - b0) - (c1 - c0)) / hz, 3)}
        try:
            r = json.load(open(jp))
            rec.update(ok=bool(r["ok"]) and rc == 0, total_s=r["total_s"],
                       ranks=[{"rank": x["rank"], "compute_s": round(sum(x["compute_s"]), 4),
                               "wait_s": round(sum(x["wait_s"]), 4)} for x in r["ranks"]])
        except Exception as e:  # noqa: BLE001 - a failed run is recorded, not dropped
            rec["error"] = f"{type(e).__name__}: {e}"
        if variant in ("off", "reactive", "predictive") or variant.startswith("run-"):
            lending, guests = [], []
            for rank in range(self.a.ranks):
                try:
                    got = json.load(open(os.path.join(self.tmp, f"mpi.rank{rank}.json")))["lending"]
                    lending.append({key: v for key, v in got.items() if key != "steps"})  # steps: per run, large
                except Exception:  # noqa: BLE001
                    lending.append(None)
                try:
                    sites = json.load(open(os.path.join(self.tmp, f"loops.rank{rank}.json")))["sites"]
                    # Iterations run by participants beyond the rank's own threads (borrowed cores).
                    guests.append(sum(t["iterations"] for s in sites for t in s["total"] if t["thread"] >= self.a.threads))
                except Exception:  # noqa: BLE001 - none for run-* (the interposer's loops)
                    guests.append(None)
            rec["lending"], rec["iterations_on_borrowed_cores"] = lending, guests
        if rc != 0 or not rec["ok"]:
            rec["output_tail"] = self.hide(out[-1500:])
        if self.dlb and variant.startswith("dlb"):
            subprocess.run([f"{self.dlb}/bin/dlb_shm", "--delete"], capture_output=True)
        return rec


def main(argv):
    a = parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="core-lending-")
    R = Runner(a, tmp)
    daemon = subprocess.Popen([str(REPO / ALOED), "--socket", R.socket], stdout=subprocess.DEVNULL,
                              stderr=open(os.path.join(tmp, "aloed.log"), "w"))
    for _ in range(100):
        if os.path.exists(R.socket):
            break
        time.sleep(0.05)

    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    machine = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "cpu_model": next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith("Model name")), ""),
        "nproc": os.cpu_count(), "kernel": platform.release(),
        "loadavg_at_start": open("/proc/loadavg").read().split()[:3],
        "git_commit": git("rev-parse", "HEAD"),
        "git_worktree_modified_files": len([l for l in git("status", "--porcelain").splitlines() if l[:2].strip()]),
        "binaries_sha256_16": {p: sha(REPO / p) for p in (APP, MPI_LIB, "build/release/libaloe.so.0", ALOED)},
        "mpirun": subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "dlb": (subprocess.run([f"{R.dlb}/bin/dlb", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
                if R.dlb else "not run (no --dlb-prefix)"),
    }
    runs = []
    with open(a.out / "runs.jsonl", "w") as runs_f:
        try:
            for case in a.cases:
                for k in a.ks:
                    for rep in range(a.reps):
                        vs = a.variants
                        for v in vs[rep % len(vs):] + vs[:rep % len(vs)]:
                            rec = R.run(case, v, k, rep)
                            runs.append(rec)
                            runs_f.write(json.dumps(rec) + "\n")
                            runs_f.flush()
                            print(f"{case:9s} k={k:<3d} {v:11s} rep={rep} total={rec['total_s']} ok={rec['ok']}"
                                  f" borrowed-iterations={rec.get('iterations_on_borrowed_cores')}", flush=True)
        finally:
            daemon.terminate()
            daemon.wait(timeout=10)

    summary = []
    for case in a.cases:
        for k in a.ks:
            med = {}
            for v in a.variants:
                good = [r["total_s"] for r in runs if (r["case"], r["k"], r["variant"]) == (case, k, v) and r["ok"]]
                row = {"case": case, "k": k, "variant": v, "what": VARIANTS[v], "ok": len(good),
                       "runs": sum(1 for r in runs if (r["case"], r["k"], r["variant"]) == (case, k, v))}
                if good:
                    p25, m, p75 = quart(good)
                    row.update(median_s=m, p25_s=p25, p75_s=p75)
                    med[v] = m
                summary.append(row)
            factor = CASES[case]["factor"]
            for row in summary[-len(a.variants):]:
                m = row.get("median_s")
                if m and med.get("off"):
                    row["ratio_to_off"] = m / med["off"]
                if m and row["variant"].startswith("run-") and med.get("run-off"):
                    row["ratio_to_run_off"] = m / med["run-off"]
                if m and med.get("gomp"):
                    row["ratio_to_gomp"] = m / med["gomp"]
                dlbs = [med[v] for v in ("dlb-busy", "dlb-yield") if v in med]
                if m and dlbs:
                    row["ratio_to_best_dlb"] = m / min(dlbs)
                base = med.get("run-off") if row["variant"].startswith("run-") else med.get("off")
                if m and factor and base:
                    row["ratio_to_ideal"] = m / (base * (a.ranks - 1 + factor) / (a.ranks * factor))
    machine["loadavg_at_end"] = open("/proc/loadavg").read().split()[:3]
    result = {"workload": "jacobi3d-mpi", "n": a.n, "steps": a.steps, "warmup": a.warmup, "reps": a.reps,
              "ranks": a.ranks, "threads_per_rank": a.threads,
              "binding": "mpirun --bind-to core" + (f" --map-by slot:PE={a.threads}" if a.threads > 1 else ""),
              "variants": VARIANTS,
              "cases": {c: CASES[c] for c in a.cases}, "summary": summary, "machine": machine}
    (a.out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    (a.out / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    for row in summary:
        print(f"{row['case']:9s} k={row['k']:<3d} {row['variant']:11s} {row.get('median_s', float('nan')):.4f} "
              f"[{row.get('p25_s', float('nan')):.4f}-{row.get('p75_s', float('nan')):.4f}] "
              f"/off {row.get('ratio_to_off', float('nan')):.3f} /dlb {row.get('ratio_to_best_dlb', float('nan')):.3f} "
              f"/ideal {row.get('ratio_to_ideal', float('nan')):.3f} ok {row['ok']}/{row['runs']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
