#!/usr/bin/env python3
"""NAS BT-MZ (or SP-MZ, LU-MZ: --benchmark) under `aloe run --mpi --lend off|reactive|predictive`
beside DLB LeWI (issue 19: lending on an external hybrid code nobody here wrote).

BT-MZ (NPB3.3-MZ-MPI, Fortran + MPI + OpenMP) is built outside this repository as
bench/results/bt-mz-20261125/command.txt says (<npb-mz>, and for --binary runtime the
schedule(runtime) copy <npb-mz-runtime> that `bt_mz.py --prepare-runtime` makes). 2 ranks bound
one per core (`mpirun -np 2 --bind-to core`, bt_mz.py's mpirun options), OMP_NUM_THREADS=T
(default 1: the 2-core VM). Variants, interleaved (each repetition runs every class and
variant once, the variants' order rotated by one per repetition):

    plain       the binary alone on libgomp (no aloe, no DLB): a reference
    off         aloe run --mpi --lend off        (the baseline of the ratios)
    reactive    aloe run --mpi --lend reactive   (DLB LeWI's rule, through aloed)
    predictive  aloe run --mpi --lend predictive (slack-predicted lending, through aloed)
    dlb-busy    LLVM libomp preloaded (it serves gfortran's GOMP_ calls) under DLB LeWI's OMPT
                mode (<dlb-prefix>/share/doc/dlb/scripts/lewi_omp.sh), OpenMPI's busy MPI
    dlb-yield   dlb-busy with `--mca mpi_yield_when_idle 1`

The aloe variants all run with the same private aloed (started here on a socket in a private
temporary folder, ALOE_DAEMON_SOCKET; stopped at the end), so `off` differs from the others by
the lending mode only. Every aloe run writes `--mpi-stats` (each rank's `lending` object:
lends, seconds lent, requests, take-backs; MPI_Waitall's time and slack) and `--stats` (each
region's threads): runs.jsonl keeps them per run. DLB runs leave no stale entry: `dlb_shm -l`
after each, `--delete` only when it lists one.

The time is the benchmark's own "Time in seconds"; a run counts when it exits 0 within
--timeout and prints "Verification Successful" (a failed or timed-out run is listed, never
dropped; a timed-out run's process group is killed). --niter N runs N time steps through the
benchmark's own input file instead of the class's (class S's 60 steps of 0.5 ms are too short
for its 0.01 s timer); NAS's reference norms then do not apply, and a run counts when its ten
RMS norms equal those of an untimed plain run of the same steps. Per class and variant: median, quartiles
[p25-p75], spread (p75-p25)/median, ratio to `off` and to `plain`, and the ideal ratio
BT-MZ's own zone mapping gives ("Calculated speedup" / its threads, from runs with the asked
thread count: what moving cores perfectly could reach). Each run also records what BT-MZ printed as its thread count (a warning that
the active count differs from OMP_NUM_THREADS is kept), the load average before, the seconds
waited for a quiet machine (--quiet-wait, dlb_lewi.py's rule), and the CPU time other
processes took during it (foreign_cpu_s).

Diagnostics (untimed, once per class; --no-diagnostics skips them): reactive and predictive
with `aloe daemon status --json` sampled every 0.2 s (the most cores each rank had lent and
borrowed, and the job ids the daemon saw); dlb-busy and dlb-yield with DLB_ARGS=--verbose=ompt
(how many blocking calls lent, teams grown, threads rebound).

Writes result.md, result.json, runs.jsonl, command.txt and machine.txt under --out (commands
with <repo>, <npb-mz>, <npb-mz-runtime>, <dlb-prefix>, <tmp> and <socket> in place of this
machine's paths).

    .venv/bin/python bench/micro/bt_mz_lending.py --npb-mz <npb-mz> --dlb-prefix <dlb-prefix> \\
        --classes W,S --reps 3 --out bench/results/bt-mz-lending-<date>
    .venv/bin/python bench/micro/bt_mz_lending.py --npb-mz <npb-mz> --dlb-prefix <dlb-prefix> \\
        --classes S --niter 6000 --reps 5 --out bench/results/bt-mz-s-lending-<date>
    .venv/bin/python bench/micro/bt_mz_lending.py --npb-mz <npb-mz> --npb-mz-runtime <npb-mz-runtime> \\
        --binary runtime --aloe-schedule dynamic,chunk=1 --reps 1 --out <scratch>

Exit status: 0 every run verified, 1 a run failed or timed out (still reported), 2 a bad
command line or a missing binary.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bt_mz  # noqa: E402  (the run's verification and time, mpirun's options, the clean environment)
from dlb_lewi import busy_jiffies, children_ticks, sha, wait_quiet  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
RANKS = bt_mz.RANKS
LIBOMP = "/usr/lib/x86_64-linux-gnu/libomp.so.5"
ALOE_VARIANTS = ("off", "reactive", "predictive")
DLB_VARIANTS = ("dlb-busy", "dlb-yield")
VARIANTS = {
    "plain": "the binary alone, plain libgomp",
    "off": "aloe run --mpi --lend off (aloed running)",
    "reactive": "aloe run --mpi --lend reactive (aloed)",
    "predictive": "aloe run --mpi --lend predictive (aloed)",
    "dlb-busy": "LLVM libomp under DLB LeWI (OMPT), busy-polling MPI",
    "dlb-yield": "dlb-busy + --mca mpi_yield_when_idle 1",
}
THREADS_RE = re.compile(r"Total number of threads:\s*(\d+)\s*\(\s*([0-9.]+)\s*threads/process\)")
WARNING_RE = re.compile(r"Warning: Requested\s+(\d+) threads per process, but the active value is\s+(\d+)")
SPEEDUP_RE = re.compile(r"Calculated speedup\s*=\s*([0-9.]+)")
# A line of the verification's tables: "[FAILURE:] m computed reference difference"; the computed norm.
NORM_RE = re.compile(r"^\s*(?:FAILURE:)?\s*[1-5]\s+([0-9.]+E[-+][0-9]+)\s+[0-9.]+E[-+][0-9]+\s+[0-9.]+E[-+][0-9]+\s*$", re.M)


def same_norms(norms: list[float], reference: list[float], rel: float = 1e-9) -> bool:
    """Whether a run's ten RMS norms equal the reference run's: the threads a rank had change the
    order of the norms' sums only."""
    return len(norms) == len(reference) and all(abs(x - y) <= rel * max(abs(y), 1e-300)
                                                for x, y in zip(norms, reference))


def parse_args(argv: list[str]) -> argparse.Namespace:
    doc = __doc__ or ""
    p = argparse.ArgumentParser(description=doc.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(doc.splitlines()[2:]))
    p.add_argument("--npb-mz", required=True, help="NPB-MZ folder of the original build (bin/bt-mz.<CLASS>.2)")
    p.add_argument("--npb-mz-runtime", help="NPB-MZ folder of the schedule(runtime) build (for --binary runtime)")
    p.add_argument("--binary", choices=("original", "runtime"), default="original",
                   help="which build every variant runs (default original: BT-MZ as NAS ships it)")
    p.add_argument("--aloe-schedule", default=None,
                   help="ALOE_OMP_SCHEDULE for the aloe variants (default: unset, each loop's own); "
                        "with --binary runtime the other variants get OMP_SCHEDULE=static")
    p.add_argument("--aloe", default=str(REPO / "build/release/tools/aloe/aloe"), help="the aloe tool")
    p.add_argument("--aloed", default=str(REPO / "build/release/tools/aloed/aloed"), help="the node daemon")
    p.add_argument("--dlb-prefix", default=None, help="DLB's install prefix (omit: no dlb variants)")
    p.add_argument("--libomp", default=LIBOMP, help=f"LLVM's libomp.so.5 for the dlb variants (default {LIBOMP})")
    p.add_argument("--classes", default="W,S", help="NPB classes, comma-separated (default W,S)")
    p.add_argument("--benchmark", choices=("bt-mz", "sp-mz", "lu-mz"), default="bt-mz",
                   help="which NPB-MZ program (default bt-mz; sp-mz and lu-mz are built the same way)")
    p.add_argument("--threads", type=int, default=1, help="OMP_NUM_THREADS per rank (default 1)")
    p.add_argument("--niter", type=int, default=0,
                   help="time steps through the benchmark's own input file (input<benchmark>.data: niter, "
                        "the class's dt, no timers) instead of the class's; bt-mz and sp-mz only. NAS's "
                        "reference norms hold for the class's steps only, so a run then counts when its norms "
                        "equal those of an untimed plain run of the same steps (relative 1e-9)")
    p.add_argument("--variants", default=",".join(VARIANTS), help=f"subset of {', '.join(VARIANTS)}")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--timeout", type=int, default=300, help="seconds per run (default 300)")
    p.add_argument("--quiet-wait", type=float, default=15.0,
                   help="before each run wait up to this many seconds for under 0.3 busy CPUs (0: never)")
    p.add_argument("--no-diagnostics", action="store_true", help="skip the untimed diagnostic runs")
    p.add_argument("--out", help="results folder (default bench/results/bt-mz-lending-<date>)")
    a = p.parse_args(argv)
    a.class_names = [c.strip().upper() for c in a.classes.split(",") if c.strip()]
    a.variant_names = [v.strip() for v in a.variants.split(",") if v.strip()]
    bad = [v for v in a.variant_names if v not in VARIANTS]
    if bad:
        p.error(f"unknown variants {bad}: choose among {', '.join(VARIANTS)}")
    if not a.dlb_prefix:
        a.skipped = [v for v in a.variant_names if v in DLB_VARIANTS]
        a.variant_names = [v for v in a.variant_names if v not in DLB_VARIANTS]
    else:
        a.skipped = []
    if not a.variant_names or not a.class_names:
        p.error("no variant or no class left to run")
    if a.reps < 1 or a.threads < 1 or a.timeout < 1:
        p.error("--reps, --threads and --timeout need values of at least 1")
    if a.niter < 0:
        p.error("--niter needs a count of steps (0: the class's own)")
    if a.niter and a.benchmark == "lu-mz":
        p.error("--niter: LU-MZ's input file (inputlu-mz.data) has another layout; use bt-mz or sp-mz")
    if a.binary == "runtime" and not a.npb_mz_runtime:
        p.error("--binary runtime needs --npb-mz-runtime")
    a.out = Path(a.out) if a.out else REPO / "bench" / "results" / f"{a.benchmark}-lending-{datetime.date.today():%Y%m%d}"
    return a


# --- the private daemon ----------------------------------------------------------------------

def step_summary(lending: dict | None) -> dict | None:
    """The `lending` object with its per-step array (a few hundred entries a run) replaced by
    medians and totals: runs.jsonl stays small, and what the analysis used is kept."""
    if not isinstance(lending, dict) or not isinstance(lending.get("steps"), list):
        return lending
    steps = [x for x in lending["steps"] if isinstance(x, dict)]
    out = {k: v for k, v in lending.items() if k != "steps"}

    def med(key):
        values = [float(x[key]) for x in steps if isinstance(x.get(key), (int, float))]
        return round(statistics.median(values), 6) if values else None

    out["steps"] = {"count": len(steps), "median_seconds": med("seconds"), "median_compute_s": med("compute_s"),
                    "median_waited_s": med("waited_s"), "median_predicted_s": med("predicted_s"),
                    "lent_core_s": round(sum(float(x.get("lent_core_s") or 0) for x in steps), 6),
                    "borrowed_core_s": round(sum(float(x.get("borrowed_core_s") or 0) for x in steps), 6)}
    return out


class PrivateDaemon:
    """An aloed of this script's own on a socket in a private folder; stopped by stop()."""

    def __init__(self, aloed: Path, aloe: Path, folder: Path):
        self.aloed, self.aloe = aloed, aloe
        self.socket = folder / "aloed.sock"
        self.log = folder / "aloed.log"
        self.proc: subprocess.Popen | None = None

    def start(self) -> None:
        with self.log.open("w") as log:
            self.proc = subprocess.Popen([str(self.aloed), "--socket", str(self.socket)],
                                         stdout=subprocess.DEVNULL, stderr=log)
        for _ in range(200):
            if self.socket.exists() or self.proc.poll() is not None:
                break
            time.sleep(0.05)
        if not self.socket.exists():
            self.stop()
            raise RuntimeError(f"aloed did not start: {self.log.read_text()[-500:]}")

    def status(self) -> dict | None:
        try:
            p = subprocess.run([str(self.aloe), "daemon", "status", "--socket", str(self.socket), "--json"],
                               capture_output=True, text=True, timeout=5)
            return json.loads(p.stdout) if p.returncode == 0 else None
        except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
            return None

    def stop(self) -> None:
        if self.proc is None or self.proc.poll() is not None:
            return
        subprocess.run([str(self.aloe), "daemon", "stop", "--socket", str(self.socket)],
                       capture_output=True, timeout=10)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


# --- running ---------------------------------------------------------------------------------

class Runner:
    def __init__(self, a: argparse.Namespace, tmp: Path, daemon: PrivateDaemon | None):
        self.a, self.tmp, self.daemon = a, tmp, daemon
        self.aloe = Path(a.aloe).resolve()
        self.dlb = Path(a.dlb_prefix).resolve() if a.dlb_prefix else None
        self.tree = Path(a.npb_mz_runtime if a.binary == "runtime" else a.npb_mz).resolve()
        shown = [(str(daemon.socket), "<socket>")] if daemon else []
        if self.dlb:
            shown.append((str(self.dlb), "<dlb-prefix>"))
        shown += [(str(self.tree), "<npb-mz-runtime>" if a.binary == "runtime" else "<npb-mz>"),
                  (str(tmp), "<tmp>"), (str(REPO), "<repo>")]
        self.placeholders = shown
        self.input_file = f"input{a.benchmark}.data"
        self.reference_norms: dict[str, list[float]] = {}

    def hide(self, text: str) -> str:
        for real, name in self.placeholders:
            text = text.replace(real, name)
        return text

    def binary(self, cls: str) -> Path:
        return self.tree / "bin" / f"{self.a.benchmark}.{cls}.{RANKS}"

    def argv(self, variant: str, cls: str, folder: Path, extra_env: dict[str, str] | None = None):
        exported = {"OMP_NUM_THREADS": str(self.a.threads)}
        mpirun = ["mpirun", *bt_mz.mpirun_options(self.a.threads)]
        launcher: list[str] = []
        if variant in ALOE_VARIANTS:
            exported["ALOE_DAEMON_SOCKET"] = str(self.daemon.socket)
            if self.a.aloe_schedule:
                exported["ALOE_OMP_SCHEDULE"] = self.a.aloe_schedule
            launcher = [str(self.aloe), "run", "--mpi", "--lend", variant, "--summary", "none",
                        "--stats", str(folder / "loops.%r.json"), "--mpi-stats", str(folder / "mpi.%r.json"), "--"]
        else:
            if self.a.binary == "runtime":
                exported["OMP_SCHEDULE"] = "static"
            if variant in DLB_VARIANTS:
                exported |= {"LD_PRELOAD": self.a.libomp, "DLB_HOME": str(self.dlb)}
                launcher = [str(self.dlb / "share/doc/dlb/scripts/lewi_omp.sh")]
                if variant == "dlb-yield":
                    mpirun += ["--mca", "mpi_yield_when_idle", "1"]
        exported |= extra_env or {}
        for k, v in exported.items():
            mpirun += ["-x", f"{k}={v}"]
        return mpirun + launcher + [str(self.binary(cls))], exported

    def execute(self, argv: list[str], folder: Path, during=None) -> tuple[object, str, float]:
        """Runs argv in its own process group; on a timeout the whole group is killed.
        `during(proc)` runs in a thread while it goes (the daemon sampler)."""
        t0 = time.monotonic()
        with open(folder / "output.txt", "w+") as out:
            env = {k: v for k, v in bt_mz.clean_environment().items() if not k.startswith("DLB_")}
            proc = subprocess.Popen(argv, cwd=folder, env=env, stdout=out,
                                    stderr=subprocess.STDOUT, start_new_session=True)
            sampler = threading.Thread(target=during, args=(proc,), daemon=True) if during else None
            if sampler:
                sampler.start()
            try:
                rc: object = proc.wait(timeout=self.a.timeout)
            except subprocess.TimeoutExpired:
                rc = "timeout"
                for sig in (signal.SIGTERM, signal.SIGKILL):
                    try:
                        os.killpg(proc.pid, sig)
                    except ProcessLookupError:
                        break
                    try:
                        proc.wait(timeout=5)
                        break
                    except subprocess.TimeoutExpired:
                        continue
            if sampler:
                sampler.join(timeout=10)
            out.seek(0)
            text = out.read()
        return rc, text, time.monotonic() - t0

    def run(self, variant: str, cls: str, rep: int, kind: str = "timed", extra_env=None, during=None) -> dict:
        folder = Path(tempfile.mkdtemp(prefix="run-", dir=self.tmp))
        if self.a.niter:
            (folder / self.input_file).write_text(f"{self.a.niter}\n0\n0\n")
        argv, env = self.argv(variant, cls, folder, extra_env)
        waited = wait_quiet(0.3, self.a.quiet_wait) if self.a.quiet_wait > 0 else 0.0
        hz = os.sysconf("SC_CLK_TCK")
        rec = {"kind": kind, "class": cls, "variant": variant, "rep": rep, "threads": self.a.threads,
               "ranks": RANKS, "binary": self.a.binary, "loadavg_before": bt_mz.loadavg(),
               "waited_for_quiet_s": round(waited, 1),
               "command": self.hide(shlex.join(argv).replace(str(folder), "<run>"))}
        b0, c0 = busy_jiffies(), children_ticks()
        rc, out, wall = self.execute(argv, folder, during)
        b1, c1 = busy_jiffies(), children_ticks()
        rec |= {"rc": rc, "wall_s": round(wall, 3), "foreign_cpu_s": round(max(0.0, (b1 - b0) - (c1 - c0)) / hz, 3)}
        m = bt_mz.TIME_RE.search(out)
        rec["time_s"] = float(m.group(1)) if m else None
        if self.a.niter:
            rec["niter"] = self.a.niter
            rec["norms"] = [float(x) for x in NORM_RE.findall(out)]
            ref = self.reference_norms.get(cls)
            rec["verified"] = rc == 0 and len(rec["norms"]) == 10 and (ref is None or same_norms(rec["norms"], ref))
        else:
            rec["verified"] = bool(bt_mz.VERIFIED_RE.search(out)) and not bt_mz.FAILED_RE.search(out) and rc == 0
        if m := THREADS_RE.search(out):
            rec["total_threads"], rec["threads_per_process"] = int(m.group(1)), float(m.group(2))
        if m := WARNING_RE.search(out):
            rec["thread_warning"] = m.group(0)
        if m := SPEEDUP_RE.search(out):
            rec["calculated_speedup"] = float(m.group(1))
        if variant in ALOE_VARIANTS:
            rec["ranks_detail"] = [self.rank_stats(folder, r) for r in range(RANKS)]
        if variant in DLB_VARIANTS:
            self.clean_dlb_shm(rec)
        stray = sorted(p.name for p in folder.iterdir()
                       if p.name != "output.txt" and not re.fullmatch(r"(mpi|loops)\.\d+\.json", p.name))
        if stray:
            rec["stray_files"] = stray
        if not rec["verified"]:
            rec["output_tail"] = self.hide(out[-2000:])
        rec["_output"] = out
        shutil.rmtree(folder, ignore_errors=True)
        return rec

    @staticmethod
    def rank_stats(folder: Path, rank: int) -> dict:
        entry: dict = {"rank": rank}
        try:
            mpi = json.loads((folder / f"mpi.{rank}.json").read_text())
            entry["lending"] = step_summary(mpi.get("lending"))
            waitall = [c for c in mpi.get("calls") or [] if c.get("call") == "MPI_Waitall"]
            entry["waitall_calls"] = sum(int(c.get("calls") or 0) for c in waitall)
            entry["waitall_s"] = round(sum(float(c.get("time_s") or 0) for c in waitall), 4)
            entry["waitall_slack_s"] = round(sum(float(c.get("slack_s") or 0) for c in waitall), 4)
        except (OSError, ValueError, TypeError, AttributeError) as e:
            entry["mpi_error"] = f"{type(e).__name__}: {e}"
        try:
            loops = json.loads((folder / f"loops.{rank}.json").read_text())
            regions = [r for r in loops.get("regions") or [] if isinstance(r, dict)]
            entry["region_threads_max"] = max((int(r.get("threads_max") or 0) for r in regions), default=None)
            entry["region_threads_last"] = sorted({int(r.get("threads_last") or 0) for r in regions})
            entry["program_sets_threads"] = loops.get("program_sets_threads")
            entry["loop_sites_taken"] = sum(1 for l in loops.get("loops") or [] if (l.get("taken") or 0) > 0)
        except (OSError, ValueError, TypeError, AttributeError) as e:
            entry["loops_error"] = f"{type(e).__name__}: {e}"
        return entry

    def clean_dlb_shm(self, rec: dict) -> None:
        shm = subprocess.run([str(self.dlb / "bin/dlb_shm"), "-l"], capture_output=True, text=True)
        if re.search(r"\|\s*\d+\s*\|", shm.stdout + shm.stderr):
            subprocess.run([str(self.dlb / "bin/dlb_shm"), "--delete"], capture_output=True)
            rec["dlb_shm_cleaned"] = True


# --- diagnostics -----------------------------------------------------------------------------

def daemon_sampler(daemon: PrivateDaemon, sink: dict):
    """Samples `aloe daemon status --json` every 0.2 s while the run goes."""
    def sample(proc: subprocess.Popen) -> None:
        most: dict[str, dict] = {}
        jobs: set[str] = set()
        samples = 0
        while proc.poll() is None:
            st = daemon.status()
            if st:
                samples += 1
                for c in st.get("clients") or []:
                    m = most.setdefault(str(c.get("pid")), {"lent_max": 0, "borrowed_max": 0, "threads_max": 0,
                                                             "samples_lending": 0, "samples_borrowing": 0})
                    m["lent_max"] = max(m["lent_max"], int(c.get("lent") or 0))
                    m["borrowed_max"] = max(m["borrowed_max"], int(c.get("borrowed") or 0))
                    m["threads_max"] = max(m["threads_max"], int(c.get("threads") or 0))
                    m["samples_lending"] += int((c.get("lent") or 0) > 0)
                    m["samples_borrowing"] += int((c.get("borrowed") or 0) > 0)
                    jobs.add(str(c.get("job")))
            time.sleep(0.2)
        sink.update(status_samples=samples, clients=list(most.values()), jobs_seen=len(jobs))
    return sample


def diagnostics(R: Runner, a: argparse.Namespace, log) -> list[dict]:
    found = []
    for cls in a.class_names:
        for v in a.variant_names:
            if v in ("reactive", "predictive"):
                sink: dict = {}
                rec = R.run(v, cls, -1, "diagnostic", during=daemon_sampler(R.daemon, sink))
                rec["daemon"] = sink
            elif v in DLB_VARIANTS:
                rec = R.run(v, cls, -1, "diagnostic", extra_env={"DLB_ARGS": "--verbose=ompt"})
                out = rec["_output"]
                rec["lewi"] = {"into_blocking_call": out.count("IntoBlockingCall"),
                               "acquire": out.count("Acquire - Setting new mask"),
                               "rebinding": out.count("Rebinding thread"),
                               "runtime_detected": "Detected OpenMP runtime" in out}
            else:
                continue
            log(rec)
            found.append(rec)
    return found


# --- summary ---------------------------------------------------------------------------------

def median_of(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def summarize(runs: list[dict], a: argparse.Namespace) -> list[dict]:
    rows = []
    for cls in a.class_names:
        mine = [r for r in runs if r["class"] == cls]
        med: dict[str, float] = {}
        for v in a.variant_names:
            rs = [r for r in mine if r["variant"] == v]
            ok = [r["time_s"] for r in rs if r["verified"] and r["time_s"] is not None]
            row = {"class": cls, "variant": v, "what": VARIANTS[v], "runs": len(rs), "verified": len(ok),
                   "failed": len(rs) - len(ok), "times_s": [r["time_s"] for r in rs],
                   "threads_per_process": sorted({r.get("threads_per_process") for r in rs} - {None}),
                   "thread_warnings": sum(1 for r in rs if r.get("thread_warning")),
                   "foreign_cpu_s_max": max((r["foreign_cpu_s"] for r in rs), default=None),
                   "wall_s_median": median_of([r["wall_s"] for r in rs if r["verified"]])}
            if ok:
                p25, m, p75 = bt_mz.quartiles(ok)
                row |= {"median_s": m, "p25_s": p25, "p75_s": p75, "spread": (p75 - p25) / m if m else None}
                med[v] = m
            if v in ALOE_VARIANTS:
                for rank in range(RANKS):
                    lend = [((r.get("ranks_detail") or [{}] * RANKS)[rank].get("lending") or {}) for r in rs]
                    row[f"rank{rank}_lends_median"] = median_of([x.get("lends") for x in lend])
                    row[f"rank{rank}_lent_s_median"] = median_of([x.get("lent_s") for x in lend])
                    row[f"rank{rank}_asks_median"] = median_of([x.get("asks") for x in lend])
                    row[f"rank{rank}_polite_waits_median"] = median_of([x.get("polite_waits") for x in lend])
                    row[f"rank{rank}_waitall_s_median"] = median_of(
                        [(r.get("ranks_detail") or [{}] * RANKS)[rank].get("waitall_s") for r in rs])
                    row[f"rank{rank}_region_threads_max"] = max(
                        ((r.get("ranks_detail") or [{}] * RANKS)[rank].get("region_threads_max") or 0 for r in rs),
                        default=None)
            rows.append(row)
        # BT-MZ's speedup estimate is over all its threads: read it where each rank ran the asked count.
        balance = [r["calculated_speedup"] / r["total_threads"] for r in mine
                   if r.get("calculated_speedup") and r.get("total_threads") == RANKS * a.threads]
        ideal = statistics.median(balance) if balance else None
        for row in rows[-len(a.variant_names):]:
            m = row.get("median_s")
            row["ratio_to_off"] = m / med["off"] if m and med.get("off") else None
            row["ratio_to_plain"] = m / med["plain"] if m and med.get("plain") else None
            row["ideal_ratio"] = ideal
    return rows


def fmt(x, spec="{:.3f}") -> str:
    return "–" if x is None else spec.format(x)


def markdown(rows, diags, runs, a, machine) -> list[str]:
    out = [f"# {a.benchmark.upper()}, {RANKS} ranks × {a.threads} thread: aloe's core lending against DLB LeWI (issue 19)", "",
           f"Machine: {machine['cpu_model']}, {machine['nproc']} CPUs; load average at start "
           f"{machine['loadavg_at_start']}, at end {machine['loadavg_at_end']}; {machine['date']}; "
           f"aloe commit {machine['git_commit'][:12]} ({machine['git_worktree_modified_files']} files modified "
           "in the work tree; binaries' hashes in machine.txt).", "",
           f"Binary: {a.binary} (`{'<npb-mz-runtime>' if a.binary == 'runtime' else '<npb-mz>'}/bin/{a.benchmark}.<class>.{RANKS}`)"
           + (f", ALOE_OMP_SCHEDULE={a.aloe_schedule}" if a.aloe_schedule else "") + ". "
           f"The benchmark's own \"Time in seconds\", {a.reps} interleaved repetitions; median [p25–p75]; "
           "spread = (p75 − p25)/median; ratios of medians. `ideal` is the benchmark's own \"Calculated speedup\" / its threads "
           "(its zone mapping's balance: the time perfect core moving would reach against no lending). "
           "Commands: command.txt; every run: runs.jsonl.", ""]
    if a.niter:
        out += [f"Steps: {a.niter} per run, through the benchmark's own input file ({a.benchmark}'s "
                f"`input{a.benchmark}.data`: niter {a.niter}, the class's dt, no timers), not the class's. NAS's "
                "reference norms hold for the class's steps only: `verified` here means the run's ten RMS norms "
                "equal those of an untimed plain run of the same steps (relative 1e-9).", ""]
    if a.skipped:
        out += [f"Not run (no --dlb-prefix): {', '.join(a.skipped)}.", ""]
    out += ["| class | variant | what | median s | [p25–p75] | spread | ratio to off | ratio to plain | ideal | "
            "verified | threads/process printed | lends r0 / r1 | lent s r0 / r1 | Waitall s r0 / r1 |",
            "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        aloe_v = r["variant"] in ALOE_VARIANTS
        lends = f"{fmt(r.get('rank0_lends_median'), '{:.0f}')} / {fmt(r.get('rank1_lends_median'), '{:.0f}')}" if aloe_v else "–"
        lent = f"{fmt(r.get('rank0_lent_s_median'))} / {fmt(r.get('rank1_lent_s_median'))}" if aloe_v else "–"
        wait = f"{fmt(r.get('rank0_waitall_s_median'))} / {fmt(r.get('rank1_waitall_s_median'))}" if aloe_v else "–"
        tpp = ", ".join(f"{x:g}" for x in r["threads_per_process"]) or "–"
        if r["thread_warnings"]:
            tpp += f" ({r['thread_warnings']} warned)"
        out.append(f"| {r['class']} | {r['variant']} | {r['what']} | {fmt(r.get('median_s'))} | "
                   f"[{fmt(r.get('p25_s'))}–{fmt(r.get('p75_s'))}] | {fmt(r.get('spread'), '{:.1%}')} | "
                   f"{fmt(r.get('ratio_to_off'))} | {fmt(r.get('ratio_to_plain'))} | {fmt(r.get('ideal_ratio'))} | "
                   f"{r['verified']}/{r['runs']} | {tpp} | {lends} | {lent} | {wait} |")
    if diags:
        out += ["", "## Diagnostic runs (untimed, one per class and variant)", "",
                "aloe: `aloe daemon status --json` every 0.2 s during the run (per rank: most cores lent / "
                "borrowed at once, samples with any lent / borrowed); DLB: DLB_ARGS=--verbose=ompt line counts.", "",
                "| class | variant | verified | time s | what was seen |", "|---|---|---|---|---|"]
        for d in diags:
            if "daemon" in d:
                dm = d["daemon"]
                seen = (f"{dm.get('status_samples', 0)} samples, {dm.get('jobs_seen', 0)} job(s); "
                        + "; ".join(f"client {i + 1}: lent ≤ {c['lent_max']} ({c['samples_lending']} samples), "
                                    f"borrowed ≤ {c['borrowed_max']} ({c['samples_borrowing']} samples)"
                                    for i, c in enumerate(dm.get("clients") or [])))
                stats = d.get("ranks_detail") or []
                seen += "; statistics: " + ", ".join(
                    f"r{s['rank']} lends {(s.get('lending') or {}).get('lends')} asks {(s.get('lending') or {}).get('asks')} "
                    f"region threads ≤ {s.get('region_threads_max')}" for s in stats)
            else:
                lw = d.get("lewi") or {}
                seen = (f"IntoBlockingCall {lw.get('into_blocking_call')}, Acquire (team grew or shrank) "
                        f"{lw.get('acquire')}, Rebinding {lw.get('rebinding')}, OMPT runtime detected: "
                        f"{'yes' if lw.get('runtime_detected') else 'NO'}")
            out.append(f"| {d['class']} | {d['variant']} | {'yes' if d['verified'] else 'NO'} | "
                       f"{fmt(d.get('time_s'), '{:.2f}')} | {seen} |")
    bad = [r for r in runs if not r["verified"]]
    warned = [r for r in runs if r.get("thread_warning")]
    out += ["", "## Checks", "",
            f"- Runs: {len(runs)} timed + {len(diags)} diagnostic; not verified or timed out: "
            + (", ".join(f"{r['class']} {r['variant']} rep {r['rep']} (rc {r['rc']})" for r in bad) or "none") + "."]
    if warned:
        out.append(f"- BT-MZ warned in {len(warned)} runs ({', '.join(sorted({r['variant'] for r in warned}))}): "
                   f"\"{warned[0]['thread_warning'].strip()}\": it then sets omp_set_num_threads to the active value.")
    no_lend = [r for r in runs if r["variant"] in ("reactive", "predictive")
               and all(((d.get("lending") or {}).get("lends") or 0) == 0 for d in r.get("ranks_detail") or [])]
    polite = [((d.get("lending") or {}).get("polite_waits") or 0) for r in runs if r["variant"] in ALOE_VARIANTS
              for d in r.get("ranks_detail") or []]
    if polite:
        out.append(f"- libaloe-mpi's polite waits per rank and run (aloe variants): {min(polite)} to {max(polite)}"
                   + (": no Fortran call waited politely (a libaloe-mpi older than its Fortran polite waits, "
                      "or an MPI whose Fortran functions it could not find), so no rank lent." if max(polite) == 0 else "."))
    waitalls = [d.get("waitall_calls") or 0 for r in runs for d in r.get("ranks_detail") or []]
    lewi = [d["lewi"]["into_blocking_call"] for d in diags if d.get("lewi")]
    if lewi and waitalls and max(lewi) < max(waitalls):
        out.append(f"- DLB lent at {min(lewi)}–{max(lewi)} blocking calls per diagnostic run (both ranks; `IntoBlockingCall`), "
                   f"against {max(waitalls)} MPI_Waitall calls per rank: DLB 3.7 does not class MPI_Waitall as blocking "
                   "(its src/mpi/mpi_calls_coded.h), so LeWI lends at the set-up collectives only.")
    if no_lend:
        out.append(f"- {len(no_lend)} of {sum(1 for r in runs if r['variant'] in ('reactive', 'predictive'))} "
                   "reactive/predictive runs recorded no lend on any rank (statistics' `lending.lends`).")
    return out


def machine_description(a: argparse.Namespace, R: Runner) -> dict:
    def sh(cmd: list[str]) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=REPO, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return "?"
    lscpu = sh(["lscpu"])
    hashed = [Path(a.aloe), Path(a.aloed), REPO / "build/release/lib/libaloe-gomp.so",
              REPO / "build/release/lib/libaloe-mpi.so"] + [R.binary(c) for c in a.class_names]
    return {
        "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
        "cpu_model": next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith("Model name")), "?"),
        "nproc": os.cpu_count(), "kernel": platform.release(),
        "loadavg_at_start": bt_mz.loadavg(),
        "git_commit": sh(["git", "rev-parse", "HEAD"]) or "?",
        "git_worktree_modified_files": len([l for l in sh(["git", "status", "--porcelain"]).splitlines() if l[:2].strip() and not l.startswith("??")]),
        "binaries_sha256_16": {R.hide(str(p.resolve())): (sha(p) if p.is_file() else "missing") for p in hashed},
        "mpirun": (sh(["mpirun", "--version"]).splitlines() or ["?"])[0],
        "gfortran": (sh(["gfortran", "--version"]).splitlines() or ["?"])[0],
        "dlb": ((sh([str(R.dlb / "bin/dlb"), "--version"]).splitlines() or ["?"])[0] if R.dlb else "not run"),
        "libomp": (f"{a.libomp} -> {Path(os.path.realpath(a.libomp)).name} of "
                   f"{Path(os.path.realpath(a.libomp)).parent.parent.name}" if R.dlb else "not used"),
    }


def command_text(a: argparse.Namespace, R: Runner, runs: list[dict], argv: list[str]) -> str:
    def word(w: str) -> str:
        if "/" not in w or not Path(w).exists():
            return w
        path = Path(w).resolve()
        if path == a.out.resolve() and not path.is_relative_to(REPO):
            return "<out>"
        return str(path.relative_to(REPO)) if path.is_relative_to(REPO) else R.hide(str(path))
    shown = " ".join(shlex.quote(word(w)) for w in argv)
    lines = [
        "# BT-MZ (NPB3.3-MZ-MPI 3.3.1) under aloe's core lending beside DLB LeWI (issue 19).",
        "# Nothing of NPB or DLB is in this repository: <npb-mz>, <npb-mz-runtime> and <dlb-prefix> are folders",
        "# outside it; <repo> is the repository's root.",
        "#",
        "# 1. Sources and build: bench/results/bt-mz-20261125/command.txt, steps 1-3 (GitHub repository",
        "#    gmezan/npb-mz-custom, its root is NPB3.3-MZ-MPI; config/make.def with mpif90 and",
        "#    FFLAGS = -O3 -g -fopenmp -fallow-argument-mismatch):",
        "#      cd <npb-mz> && mkdir -p bin && make bt-mz CLASS=W NPROCS=2 && make bt-mz CLASS=S NPROCS=2",
        "#      (--benchmark sp-mz or lu-mz: make sp-mz CLASS=W NPROCS=2, make lu-mz CLASS=W NPROCS=2)",
        "#      .venv/bin/python bench/micro/bt_mz.py --npb-mz <npb-mz> --npb-mz-runtime <npb-mz-runtime> --prepare-runtime",
        "#      cd <npb-mz-runtime> && mkdir -p bin && make bt-mz CLASS=W NPROCS=2 && make bt-mz CLASS=S NPROCS=2",
        "# 2. DLB v3.7.0 at <dlb-prefix>: bench/results/dlb-lewi-20261125/command.txt.",
        "# 3. aloe: cmake --preset release && cmake --build build/release (tools/aloe/aloe, tools/aloed/aloed,",
        "#    lib/libaloe-gomp.so, lib/libaloe-mpi.so).",
        "#",
        "# The measurement (from <repo>):",
        f".venv/bin/python bench/micro/bt_mz_lending.py {shown}",
        "#",
        "# The private daemon the script starts and stops (<socket> in a private temporary folder):",
        "#   build/release/tools/aloed/aloed --socket <socket>  ...  build/release/tools/aloe/aloe daemon stop --socket <socket>",
        "# Each variant's command as the script ran it (in an empty folder <run>; runs.jsonl has every run's):",
    ]
    if a.niter:
        lines.insert(-1, f"# With --niter: each run's folder <run> holds input{a.benchmark}.data (lines {a.niter}, 0, 0); "
                         "an untimed plain run first gives the reference norms.")
    for v in a.variant_names:
        for cls in a.class_names:
            first = next((r for r in runs if r["variant"] == v and r["class"] == cls), None)
            if first:
                lines.append(f"# {v}, class {cls}:")
                lines.append(first["command"])
                break
    lines += ["# Diagnostics: the dlb variants again with -x DLB_ARGS=--verbose=ompt; reactive and predictive again",
              "# while `aloe daemon status --socket <socket> --json` is sampled every 0.2 s.",
              "# After a killed DLB run: <dlb-prefix>/bin/dlb_shm --delete"]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="bt-mz-lending-"))
    daemon = PrivateDaemon(Path(a.aloed).resolve(), Path(a.aloe).resolve(), tmp) \
        if any(v in ALOE_VARIANTS for v in a.variant_names) else None
    R = Runner(a, tmp, daemon)
    missing = [R.hide(str(R.binary(c))) for c in a.class_names if not R.binary(c).is_file()]
    if daemon:
        missing += [R.hide(str(p)) for p in (daemon.aloe, daemon.aloed) if not p.is_file()]
    if R.dlb:
        missing += [R.hide(str(p)) for p in (R.dlb / "share/doc/dlb/scripts/lewi_omp.sh", R.dlb / "bin/dlb_shm",
                                             Path(a.libomp)) if not p.exists()]
    if missing:
        print("bt_mz_lending.py: missing " + ", ".join(missing) + " (see the docstring: how to build them)",
              file=sys.stderr)
        tmp.rmdir()
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    machine = machine_description(a, R)
    print(f"bt_mz_lending.py: load average at start {machine['loadavg_at_start']}", flush=True)
    runs: list[dict] = []
    diags: list[dict] = []
    try:
        if daemon:
            daemon.start()
        with (a.out / "runs.jsonl").open("w") as log_f:
            def log(rec: dict) -> None:
                rec.pop("_output", None)
                log_f.write(json.dumps(rec) + "\n")
                log_f.flush()
            vs = a.variant_names
            for cls in a.class_names if a.niter else []:
                rec = R.run("plain", cls, -1, "reference")
                log(rec)
                if not rec["verified"]:
                    print(f"bt_mz_lending.py: the reference run of class {cls} with {a.niter} steps failed "
                          f"(rc {rec['rc']}, {len(rec['norms'])} norms)", file=sys.stderr)
                    return 1
                R.reference_norms[cls] = rec["norms"]
                print(f"reference {cls}: {a.niter} steps, {rec['time_s']} s, norms {rec['norms'][:2]}...", flush=True)
            for rep in range(a.reps):
                for cls in a.class_names:
                    for v in vs[rep % len(vs):] + vs[:rep % len(vs)]:
                        rec = R.run(v, cls, rep)
                        log(rec)
                        runs.append(rec)
                        lends = [((d.get("lending") or {}).get("lends")) for d in rec.get("ranks_detail") or []]
                        print(f"rep {rep} {cls} {v:10s} {rec['time_s']} s {'ok' if rec['verified'] else 'FAILED'}"
                              f" threads/process {rec.get('threads_per_process')}"
                              + (f" lends {lends}" if lends else ""), flush=True)
            if not a.no_diagnostics:
                diags = diagnostics(R, a, log)
                for d in diags:
                    print(f"diagnostic {d['class']} {d['variant']}: {d['time_s']} s "
                          f"{'ok' if d['verified'] else 'FAILED'} {d.get('daemon') or d.get('lewi')}", flush=True)
    finally:
        if daemon:
            daemon.stop()
            machine["aloed_log_tail"] = R.hide(daemon.log.read_text()[-500:]) if daemon.log.exists() else ""
        shutil.rmtree(tmp, ignore_errors=True)
    machine["loadavg_at_end"] = bt_mz.loadavg()
    rows = summarize(runs, a)
    (a.out / "result.json").write_text(json.dumps(
        {"benchmark": f"{a.benchmark.upper()} (NPB3.3-MZ-MPI 3.3.1)", "classes": a.class_names, "ranks": RANKS,
         "threads_per_rank": a.threads, "niter": a.niter or None, "binary": a.binary, "aloe_schedule": a.aloe_schedule, "reps": a.reps,
         "binding": "mpirun -np 2 --bind-to core --map-by slot:PE=T", "variants": {v: VARIANTS[v] for v in a.variant_names},
         "not_run": a.skipped, "machine": machine, "summary": rows, "diagnostics": diags}, indent=1) + "\n")
    (a.out / "result.md").write_text("\n".join(markdown(rows, diags, runs, a, machine)) + "\n")
    (a.out / "machine.txt").write_text("".join(
        f"{k}: {json.dumps(v) if isinstance(v, dict) else v}\n" for k, v in machine.items()))
    (a.out / "command.txt").write_text(command_text(a, R, runs, argv))
    for r in rows:
        print(f"{r['class']} {r['variant']:10s} {fmt(r.get('median_s'))} [{fmt(r.get('p25_s'))}-{fmt(r.get('p75_s'))}]"
              f" /off {fmt(r.get('ratio_to_off'))} /plain {fmt(r.get('ratio_to_plain'))} ideal {fmt(r.get('ideal_ratio'))}"
              f" verified {r['verified']}/{r['runs']}")
    failed = any(not r["verified"] for r in runs + diags)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
