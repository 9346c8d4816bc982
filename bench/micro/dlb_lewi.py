#!/usr/bin/env python3
"""jacobi3d-mpi with a heavy rank: DLB's LeWI against slack-conscious scheduling (issue 15).

Runs build/.../apps/aloe-app-jacobi3d-mpi on 2 ranks (one core each, `--bind-to core`) with 1
and 2 threads per rank, in a heavy case (`--heavy-rank 1:1.5`) and a balanced one, under these
variants, interleaved (each repetition runs every variant once, the order rotated by one each
repetition):

    a    --runtime libgomp --schedule static                     (the baseline)
    a2   --runtime libomp --schedule static, OMP_WAIT_POLICY=passive, no DLB (b's runtime alone)
    b    a on LLVM libomp under DLB LeWI (lewi_omp.sh), busy-polling MPI
    c    b with --mca mpi_yield_when_idle 1
    d    a with --mca mpi_yield_when_idle 1
    e    --runtime aloe --schedule adaptive, libaloe-mpi preloaded (slack on)
    f    --runtime aloe --schedule adaptive,slack=off, libaloe-mpi preloaded
    g    --runtime aloe --schedule hybrid,fs=0.8,slack=on, libaloe-mpi preloaded

DLB (bsc-pm/dlb) is built outside the repository; pass its install prefix. Each DLB rank runs
`<dlb-prefix>/share/doc/dlb/scripts/lewi_omp.sh sh -c WRAP _ APP ...` where WRAP exports the
environment the harness would otherwise re-execute itself to get (ALOE_APPS_CPUS from the
rank's mask, OMP_PROC_BIND=close, OMP_PLACES=cores, ALOE_PROC_BIND=close): the harness's
re-execution of a process that DLB has registered leaves a stale entry in DLB's shared memory
and the next run fails with DLB_ERR_NOMEM. OMP_NUM_THREADS is set to --threads for DLB runs:
DLB's omp5 thread manager resets the team size to OMP_NUM_THREADS after every blocking MPI
call. A run with DLB_ARGS=--verbose=ompt per DLB variant and thread count counts how often
LeWI changed a team (Acquire / Rebinding lines).

Writes result.json, runs.jsonl (every run, failed ones too) and machine.json under --out;
bench/results/dlb-lewi-20261125/result.md and command.txt were written from them by hand.
Every run waits (up to 15 s) for the machine to be quiet (under 0.3 busy CPUs over 0.5 s) and
records the CPU time other processes took during it (foreign_cpu_s).

    python3 bench/micro/dlb_lewi.py --dlb-prefix <dlb-prefix> [--reps 5] [--n 192] [--steps 150]
        [--out bench/results/dlb-lewi-YYYYMMDD]
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
APP = "build/release/apps/aloe-app-jacobi3d-mpi"
MPI_LIB = "build/release/lib/libaloe-mpi.so"
LIBOMP = "/usr/lib/x86_64-linux-gnu/libomp.so.5"
WRAP = ('export ALOE_APPS_CPUS=$(awk "/Cpus_allowed_list/{print \\$2}" /proc/self/status) '
        'OMP_PROC_BIND=close OMP_PLACES=cores ALOE_PROC_BIND=close; exec "$@"')

VARIANTS = {
    "a": "libgomp static (plain)",
    "a2": "libomp static, passive wait, no DLB",
    "b": "libomp static under DLB LeWI, busy-polling MPI",
    "c": "b + mpi_yield_when_idle 1",
    "d": "a + mpi_yield_when_idle 1",
    "e": "aloe adaptive, libaloe-mpi (slack on)",
    "f": "aloe adaptive,slack=off, libaloe-mpi",
    "g": "aloe hybrid,fs=0.8,slack=on, libaloe-mpi",
}
CASES = {
    "heavy": {"heavy": "1:1.5", "mode": "thread0", "variants": list(VARIANTS)},
    "balanced": {"heavy": None, "mode": "thread0", "variants": ["a", "a2", "b", "e"]},
    "heavy-overlap": {"heavy": "1:1.5", "mode": "overlap", "variants": ["a", "b", "c", "d", "e"]},
}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--dlb-prefix", required=True, help="DLB's install prefix")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--n", type=int, default=192)
    p.add_argument("--steps", type=int, default=150)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--threads", default="1,2")
    p.add_argument("--cases", default="heavy,balanced,heavy-overlap")
    p.add_argument("--out", default=None)
    p.add_argument("--libomp", default=LIBOMP, help=f"LLVM's libomp.so.5 (default: Debian's, {LIBOMP})")
    a = p.parse_args(argv)
    a.threads = [int(t) for t in a.threads.split(",")]
    a.cases = a.cases.split(",")
    a.out = Path(a.out or REPO / "bench" / "results" / f"dlb-lewi-{datetime.date.today():%Y%m%d}")
    return a


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:16]


class Runner:
    def __init__(self, a, shim: str, tmp: str):
        self.a, self.shim, self.tmp = a, shim, tmp
        self.dlb = str(Path(a.dlb_prefix).resolve())
        self.placeholders = [(self.dlb, "<dlb-prefix>"), (shim, "<libomp-shim>"), (tmp, "<tmp>"),
                             (str(REPO) + "/", ""), (str(REPO), ".")]

    def hide(self, text: str) -> str:
        for real, shown in self.placeholders:
            text = text.replace(real, shown)
        return text

    def argv(self, case: str, variant: str, threads: int, json_path: str, extra_env=None):
        c = CASES[case]
        mpirun = ["mpirun", "--allow-run-as-root", "-np", "2", "--bind-to", "core"]
        env: dict[str, str] = dict(extra_env or {})
        launcher: list[str] = []
        runtime = ["--runtime", "libgomp", "--schedule", "static"]
        if variant in ("c", "d"):
            mpirun += ["--mca", "mpi_yield_when_idle", "1"]
        if variant == "a2":
            runtime = ["--runtime", "libomp", "--schedule", "static"]
            env.update(LD_LIBRARY_PATH=self.shim, OMP_WAIT_POLICY="passive")
        if variant in ("b", "c"):
            runtime = ["--runtime", "libomp", "--schedule", "static"]
            env.update(LD_LIBRARY_PATH=self.shim, OMP_NUM_THREADS=str(threads))
            launcher = [f"{self.dlb}/share/doc/dlb/scripts/lewi_omp.sh", "sh", "-c", WRAP, "_"]
        if variant in ("e", "f", "g"):
            sched = {"e": "adaptive", "f": "adaptive,slack=off", "g": "hybrid,fs=0.8,slack=on"}[variant]
            runtime = ["--runtime", "aloe", "--schedule", sched]
            env["LD_PRELOAD"] = str(REPO / MPI_LIB)
        for k, v in env.items():
            mpirun += ["-x", f"{k}={v}"]
        app = [str(REPO / APP), *runtime, "--threads", str(threads), "--n", str(self.a.n), "--decomp", "z",
               "--mode", c["mode"], "--steps", str(self.a.steps), "--warmup", str(self.a.warmup)]
        if c["heavy"]:
            app += ["--heavy-rank", c["heavy"]]
        app += ["--json", json_path]
        return mpirun + launcher + app, env

    def run(self, case, variant, threads, rep, extra_env=None, keep_output=False):
        jp = os.path.join(self.tmp, "run.json")
        if os.path.exists(jp):
            os.remove(jp)
        argv, env = self.argv(case, variant, threads, jp, extra_env)
        waited = wait_quiet(0.3, 15)
        t0 = datetime.datetime.now()
        hz = os.sysconf("SC_CLK_TCK")
        b0, c0, w0 = busy_jiffies(), children_ticks(), time.monotonic()
        try:
            p = subprocess.run(argv, cwd=REPO, capture_output=True, text=True, timeout=120)
            rc, out = p.returncode, p.stdout + p.stderr
        except subprocess.TimeoutExpired as e:
            rc, out = 124, (e.stdout or b"").decode(errors="replace") + (e.stderr or b"").decode(errors="replace")
        rec = {"case": case, "variant": variant, "threads": threads, "rep": rep, "start": t0.isoformat(timespec="seconds"),
               "command": self.hide(shlex.join(argv)), "env": {k: self.hide(v) for k, v in env.items()},
               "rc": rc, "ok": False, "total_s": None, "waited_for_quiet_s": round(waited, 1)}
        b1, c1, w1 = busy_jiffies(), children_ticks(), time.monotonic()
        # CPU time that other processes took during the run (machine busy time less this run's).
        rec["wall_s"] = round(w1 - w0, 3)
        rec["foreign_cpu_s"] = round(max(0.0, (b1 - b0) - (c1 - c0)) / hz, 3)
        if extra_env:
            rec["diagnostic"] = True
        try:
            r = json.load(open(jp))
            rec.update(ok=bool(r["ok"]) and rc == 0, total_s=r["total_s"], openmp_library=r.get("openmp_library"),
                       checks=r.get("checks"), schedule=r.get("schedule"),
                       ranks=[{"rank": x["rank"], "cpus": x["cpus"], "thread_cpus": x["thread_cpus"],
                               "compute_s": round(sum(x["compute_s"]), 4), "wait_s": round(sum(x["wait_s"]), 4)}
                              for x in r["ranks"]])
        except Exception as e:  # noqa: BLE001 - a failed run is recorded, not dropped
            rec["error"] = f"{type(e).__name__}: {e}"
        if rc != 0 or not rec["ok"]:
            rec["output_tail"] = self.hide(out[-1500:])
        if variant in ("b", "c"):
            shm = subprocess.run([f"{self.dlb}/bin/dlb_shm", "-l"], capture_output=True, text=True)
            if re.search(r"\|\s*\d+\s*\|", shm.stdout + shm.stderr):
                subprocess.run([f"{self.dlb}/bin/dlb_shm", "--delete"], capture_output=True)
                rec["dlb_shm_cleaned"] = True
        if keep_output:
            rec["_output"] = out
        return rec


def busy_jiffies() -> int:
    """Non-idle CPU time of the whole machine, in clock ticks (/proc/stat)."""
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    return sum(f) - f[3] - f[4]  # less idle and iowait


def children_ticks() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * os.sysconf("SC_CLK_TCK")


def wait_quiet(limit_cpus: float, max_wait_s: float) -> float:
    """Waits until the machine's busy CPUs over 0.5 s fall below limit_cpus; returns seconds waited."""
    hz = os.sysconf("SC_CLK_TCK")
    t0 = time.monotonic()
    while True:
        b0 = busy_jiffies()
        time.sleep(0.5)
        if (busy_jiffies() - b0) / hz / 0.5 < limit_cpus or time.monotonic() - t0 > max_wait_s:
            return time.monotonic() - t0


def quart(v):
    if len(v) == 1:
        return v[0], v[0], v[0]
    q = statistics.quantiles(v, n=4, method="inclusive")
    return q[0], statistics.median(v), q[2]


def main(argv):
    a = parse_args(argv)
    a.out.mkdir(parents=True, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="dlb-lewi-")
    shim = os.path.join(tmp, "shim")
    os.makedirs(shim)
    os.symlink(a.libomp, os.path.join(shim, "libgomp.so.1"))
    R = Runner(a, shim, tmp)
    subprocess.run([f"{R.dlb}/bin/dlb_shm", "--delete"], capture_output=True)

    def git(*args):
        return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True).stdout.strip()

    bins = {p: sha(REPO / p) for p in (APP, MPI_LIB, "build/release/libaloe.so.0")}
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    machine = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "cpu_model": next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith("Model name")), ""),
        "nproc": os.cpu_count(),
        "loadavg_at_start": open("/proc/loadavg").read().split()[:3],
        "kernel": platform.release(),
        "git_commit": git("rev-parse", "HEAD"),
        "git_worktree_modified_files": len([l for l in git("status", "--porcelain").splitlines() if l.startswith(" M") or l.startswith("M")]),
        "binaries_sha256_16": bins,
        "mpirun": subprocess.run(["mpirun", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        "dlb": subprocess.run([f"{R.dlb}/bin/dlb", "--version"], capture_output=True, text=True).stdout.splitlines()[0],
        # the LLVM release whose libomp.so.5 the shim names (no local path in the record)
        "libomp": "libomp.so.5 of " + Path(os.path.realpath(a.libomp)).parent.parent.name,
        "note": "2-vCPU VM: 2 ranks bound one per core; --threads 2 puts two threads of a rank on its one core (oversubscription)",
    }
    runs = []
    runs_f = open(a.out / "runs.jsonl", "w")

    def log(rec):
        rec.pop("_output", None)
        runs.append(rec)
        runs_f.write(json.dumps(rec) + "\n")
        runs_f.flush()
        print(f"{rec['case']:14s} {rec['variant']:3s} T={rec['threads']} rep={rec['rep']} "
              f"total={rec['total_s']} ok={rec['ok']}", flush=True)

    # LeWI diagnostics: how often did a team change (untimed runs, DLB verbose on).
    diag = {}
    for case in a.cases:
        for v in ("b", "c"):
            if v not in CASES[case]["variants"]:
                continue
            for t in a.threads:
                rec = R.run(case, v, t, -1, extra_env={"DLB_ARGS": "--verbose=ompt"}, keep_output=True)
                out = rec.get("_output", "")
                diag[f"{case}/{v}/T{t}"] = {
                    "acquire": out.count("Acquire - Setting new mask"),
                    "rebinding": out.count("Rebinding thread"),
                    "into_blocking_call": out.count("IntoBlockingCall"),
                    "ok": rec["ok"], "total_s": rec["total_s"],
                }
                log(rec)

    for case in a.cases:
        vs = CASES[case]["variants"]
        for rep in range(a.reps):
            for t in a.threads:
                order = vs[rep % len(vs):] + vs[:rep % len(vs)]
                for v in order:
                    log(R.run(case, v, t, rep))
    runs_f.close()
    machine["binaries_sha256_16_at_end"] = {p: sha(REPO / p) for p in bins}
    machine["loadavg_at_end"] = open("/proc/loadavg").read().split()[:3]

    # Summaries.
    summary = []
    for case in a.cases:
        for t in a.threads:
            base = None
            for v in CASES[case]["variants"]:
                rs = [r for r in runs if r["case"] == case and r["threads"] == t and r["variant"] == v and not r.get("diagnostic")]
                good = [r["total_s"] for r in rs if r["ok"]]
                row = {"case": case, "threads": t, "variant": v, "what": VARIANTS[v], "runs": len(rs), "ok": len(good)}
                if good:
                    p25, med, p75 = quart(good)
                    row.update(median_s=med, p25_s=p25, p75_s=p75)
                    for k in ("compute_s", "wait_s"):
                        for rk in (0, 1):
                            row[f"rank{rk}_{k}"] = statistics.median(
                                r["ranks"][rk][k] for r in rs if r["ok"])
                row["foreign_cpu_s_median"] = statistics.median(r["foreign_cpu_s"] for r in rs) if rs else None
                row["foreign_cpu_s_max"] = max((r["foreign_cpu_s"] for r in rs), default=None)
                if v == "a":
                    base = row.get("median_s")
                if base and row.get("median_s"):
                    row["ratio_to_a"] = row["median_s"] / base
                summary.append(row)
    result = {"workload": "jacobi3d-mpi", "n": a.n, "steps": a.steps, "warmup": a.warmup, "reps": a.reps,
              "ranks": 2, "binding": "mpirun --bind-to core (one core per rank)", "variants": VARIANTS,
              "cases": {k: {kk: vv for kk, vv in CASES[k].items()} for k in a.cases},
              "lewi_diagnostics": diag, "summary": summary, "machine": machine}
    (a.out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    (a.out / "machine.json").write_text(json.dumps(machine, indent=1) + "\n")
    print(json.dumps(diag, indent=1))
    for row in summary:
        print(f"{row['case']:14s} T={row['threads']} {row['variant']:3s} "
              f"{row.get('median_s', float('nan')):.4f} [{row.get('p25_s', float('nan')):.4f}-{row.get('p75_s', float('nan')):.4f}] "
              f"x{row.get('ratio_to_a', float('nan')):.3f} ok {row['ok']}/{row['runs']} "
              f"r0 c/w {row.get('rank0_compute_s', 0):.3f}/{row.get('rank0_wait_s', 0):.3f} "
              f"r1 c/w {row.get('rank1_compute_s', 0):.3f}/{row.get('rank1_wait_s', 0):.3f} "
              f"foreign max {row['foreign_cpu_s_max']}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
