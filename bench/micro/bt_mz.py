#!/usr/bin/env python3
"""NAS BT-MZ (NPB3.3-MZ-MPI, MPI + OpenMP) under plain libgomp and under `aloe run --mpi`
(issue 15: one external imbalanced hybrid code nobody here wrote).

Two builds of the same NPB-MZ sources, both outside this repository:
  <npb-mz>          the sources as NAS ships them (BT-MZ's `!$omp do` loops are static:
                    GCC inlines them and no interposer sees them);
  <npb-mz-runtime>  a copy whose loops ask for schedule(runtime) wherever the program stays
                    correct under any schedule (bench/harness/aloe_harness/npb_variant.py's
                    rule; `--prepare-runtime` makes the copy, then `make bt-mz CLASS=W NPROCS=2`).

Variants (ratios to a):
  a  original binary, plain libgomp, OMP_SCHEDULE unset
  b  runtime binary, OMP_SCHEDULE=static, plain libgomp
  c  runtime binary, OMP_SCHEDULE=dynamic,1, plain libgomp
  d  runtime binary, aloe run --mpi, ALOE_OMP_SCHEDULE=adaptive            (slack on by default)
  e  runtime binary, aloe run --mpi, ALOE_OMP_SCHEDULE=adaptive,slack=off
  f  runtime binary, aloe run --mpi, ALOE_OMP_SCHEDULE=hybrid,fs=0.8,slack=on
  g  runtime binary, aloe run --mpi, ALOE_OMP_SCHEDULE=hybrid,fs=0.8
2 ranks, OMP_NUM_THREADS=T for each --threads value; `mpirun --bind-to core --map-by
slot:PE=T` when ranks × T fits the CPUs, else `--oversubscribe --bind-to none`. --reps
interleaved repetitions (every repetition runs every T and variant once, in order). The time
is the benchmark's own "Time in seconds"; every run must print "Verification Successful"
(a failed run is listed, not dropped). Then, once per T and per aloe variant (not timed),
a diagnostic run with `--stats loops.%r.json --mpi-stats mpi.%r.json`: per rank the MPI
calls with the most time (time inside, slack) and the loop sites (how many run a schedule
with the slack policy, and the policy's fields where the statistics carry them).

Writes result.md, result.json, runs.jsonl, command.txt and machine.txt under --out.

    python3 bench/micro/bt_mz.py --npb-mz <npb-mz> --npb-mz-runtime <npb-mz-runtime> \\
        --aloe build/release/tools/aloe/aloe --class W --reps 5 --out bench/results/bt-mz-<date>
    python3 bench/micro/bt_mz.py --npb-mz <npb-mz> --npb-mz-runtime <npb-mz-runtime> --prepare-runtime

Exit status: 0 done, 1 a run failed (still reported), 2 a bad command line or a missing binary.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
RANKS = 2
VARIANTS = {  # name: (binary, environment, under aloe run)
    "a": ("original", {}, False),
    "b": ("runtime", {"OMP_SCHEDULE": "static"}, False),
    "c": ("runtime", {"OMP_SCHEDULE": "dynamic,1"}, False),
    "d": ("runtime", {"ALOE_OMP_SCHEDULE": "adaptive"}, True),
    "e": ("runtime", {"ALOE_OMP_SCHEDULE": "adaptive,slack=off"}, True),
    "f": ("runtime", {"ALOE_OMP_SCHEDULE": "hybrid,fs=0.8,slack=on"}, True),
    "g": ("runtime", {"ALOE_OMP_SCHEDULE": "hybrid,fs=0.8"}, True),
}
DESCRIBE = {
    "a": "original binary, plain libgomp (OMP_SCHEDULE unset)",
    "b": "schedule(runtime) binary, OMP_SCHEDULE=static",
    "c": "schedule(runtime) binary, OMP_SCHEDULE=dynamic,1",
    "d": "aloe run --mpi, adaptive (slack on)",
    "e": "aloe run --mpi, adaptive,slack=off",
    "f": "aloe run --mpi, hybrid,fs=0.8,slack=on",
    "g": "aloe run --mpi, hybrid,fs=0.8",
}
# Variables that must not leak from this shell into the ranks (each variant sets its own).
SCRUB = ("OMP_SCHEDULE", "OMP_NUM_THREADS", "LD_PRELOAD", "GOMP_SPINCOUNT", "OMP_WAIT_POLICY")
TIME_RE = re.compile(r"Time in seconds\s*=\s*([0-9.Ee+-]+)")
VERIFIED_RE = re.compile(r"Verification\s+Successful|Verification\s*=\s*SUCCESSFUL")
FAILED_RE = re.compile(r"Verification\s+failed|Verification\s*=\s*UNSUCCESSFUL", re.I)


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="\n".join(__doc__.splitlines()[2:]))
    p.add_argument("--npb-mz", required=True, help="NPB-MZ folder of the original build (bin/bt-mz.<CLASS>.2)")
    p.add_argument("--npb-mz-runtime", required=True, help="NPB-MZ folder of the schedule(runtime) build")
    p.add_argument("--aloe", default=str(REPO / "build/release/tools/aloe/aloe"), help="the aloe tool")
    p.add_argument("--class", dest="cls", default="W", help="NPB class (default W)")
    p.add_argument("--threads", default="1,2", help="OMP_NUM_THREADS values, comma-separated (default 1,2)")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--variants", default=",".join(VARIANTS), help="subset of a..g (a is always run)")
    p.add_argument("--no-diagnostics", action="store_true", help="skip the untimed --stats runs")
    p.add_argument("--timeout", type=int, default=600, help="seconds per run (default 600)")
    p.add_argument("--out", help="results folder (default bench/results/bt-mz-<date>)")
    p.add_argument("--from-runs", help="take the timed runs from this runs.jsonl (of an earlier, "
                   "interrupted call) instead of running them; the diagnostics still run")
    p.add_argument("--prepare-runtime", action="store_true",
                   help="only copy <npb-mz> to <npb-mz-runtime> (which must not exist) and rewrite "
                        "BT-MZ/*.f to schedule(runtime); build it yourself afterwards")
    a = p.parse_args(argv)
    try:
        a.thread_counts = [int(x) for x in a.threads.split(",") if x.strip()]
    except ValueError:
        p.error(f"--threads must be integers separated by commas (got {a.threads!r})")
    a.variant_names = [v.strip() for v in a.variants.split(",") if v.strip()]
    bad = [v for v in a.variant_names if v not in VARIANTS]
    if bad:
        p.error(f"unknown variants {bad}: choose among {', '.join(VARIANTS)}")
    if "a" not in a.variant_names:
        a.variant_names.insert(0, "a")
    if a.reps < 1 or not a.thread_counts or min(a.thread_counts) < 1:
        p.error("--reps and --threads need values of at least 1")
    return a


# --- the schedule(runtime) copy ---------------------------------------------------------------

def prepare_runtime(src: Path, dst: Path) -> int:
    """Copies the NPB-MZ tree (no .git, bin or objects) and rewrites BT-MZ's Fortran loops with
    the repository's rule (aloe_harness.npb_variant.rewrite_fortran)."""
    sys.path.insert(0, str(REPO / "bench" / "harness"))
    from aloe_harness.npb_variant import rewrite_fortran  # noqa: E402
    if dst.exists():
        print(f"bt_mz.py: {dst} exists already; remove it or name another folder", file=sys.stderr)
        return 2
    if not (src / "BT-MZ").is_dir():
        print(f"bt_mz.py: {src} has no BT-MZ folder (not an NPB-MZ tree?)", file=sys.stderr)
        return 2
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".git", "bin", "*.o"))
    total: collections.Counter = collections.Counter()
    for path in sorted((dst / "BT-MZ").glob("*.f")):
        text, counts = rewrite_fortran(path.read_text())
        if counts:
            path.write_text(text)
            total.update(counts)
            print(f"BT-MZ/{path.name}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    print("all: " + ", ".join(f"{k} {v}" for k, v in sorted(total.items())))
    return 0


# --- running -----------------------------------------------------------------------------------

class Paths:
    def __init__(self, a: argparse.Namespace):
        self.npb = Path(a.npb_mz).resolve()
        self.npb_rt = Path(a.npb_mz_runtime).resolve()
        self.aloe = Path(a.aloe).resolve()
        name = f"bt-mz.{a.cls}.{RANKS}"
        self.binary = {"original": self.npb / "bin" / name, "runtime": self.npb_rt / "bin" / name}

    def display(self, word: str) -> str:
        """A word of a command as records show it: no path of this machine."""
        for path, name in ((self.npb_rt, "<npb-mz-runtime>"), (self.npb, "<npb-mz>")):
            word = word.replace(str(path), name)
        try:
            rel = self.aloe.relative_to(REPO)
            word = word.replace(str(self.aloe), str(rel))
        except ValueError:
            word = word.replace(str(self.aloe), "<aloe>")
        return word.replace(str(REPO) + "/", "")


def mpirun_options(threads: int) -> list[str]:
    cpus = len(os.sched_getaffinity(0))
    opts = ["-np", str(RANKS)]
    if RANKS * threads <= cpus:
        opts += ["--bind-to", "core", "--map-by", f"slot:PE={threads}"]
    else:
        opts += ["--oversubscribe", "--bind-to", "none"]
    if os.geteuid() == 0:
        opts.append("--allow-run-as-root")
    return opts


def command(paths: Paths, variant: str, threads: int, stats: bool = False) -> list[str]:
    binary, env, under_aloe = VARIANTS[variant]
    exported = {"OMP_NUM_THREADS": str(threads), **env}
    cmd = [shutil.which("mpirun") or "mpirun", *mpirun_options(threads)]
    for k, v in exported.items():
        cmd += ["-x", f"{k}={v}"]
    if under_aloe:
        cmd += [str(paths.aloe), "run", "--mpi", "--summary", "none"]
        if stats:
            cmd += ["--stats", "loops.%r.json", "--mpi-stats", "mpi.%r.json"]
        cmd.append("--")
    cmd.append(str(paths.binary[binary]))
    return cmd


def clean_environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in SCRUB and not k.startswith("ALOE_")}


def loadavg() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "?"


def run_once(paths: Paths, variant: str, threads: int, timeout: int, scratch: Path,
             stats: bool = False) -> dict:
    cmd = command(paths, variant, threads, stats)
    record = {"variant": variant, "threads": threads, "ranks": RANKS,
              "command": " ".join(paths.display(w) for w in cmd), "loadavg_before": loadavg()}
    t0 = time.monotonic()
    try:
        proc = subprocess.run(cmd, cwd=scratch, env=clean_environment(), capture_output=True,
                              text=True, timeout=timeout)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc = "timeout"
    record["wall_s"] = round(time.monotonic() - t0, 3)
    # Files a run leaves in its working folder that nobody asked for (aloe 0.1.0 under mpirun
    # with no --trace writes a trace to ".rank<r>"): named with their size, then removed.
    stray = sorted(p for p in scratch.iterdir() if p.is_file() and p.name.startswith(".rank"))
    if stray:
        record["stray_files"] = {p.name: p.stat().st_size for p in stray}
        for p in stray:
            p.unlink()
    m = TIME_RE.search(out)
    record["time_s"] = float(m.group(1)) if m else None
    record["rc"] = rc
    record["verified"] = bool(VERIFIED_RE.search(out)) and not FAILED_RE.search(out) and rc == 0
    if not record["verified"]:
        record["output_tail"] = paths.display(out[-1500:])
    return record


# --- diagnostics -----------------------------------------------------------------------------

def mpi_summary(path: Path) -> dict:
    data = json.loads(path.read_text())
    calls = sorted((c for c in data.get("calls") or [] if isinstance(c, dict)),
                   key=lambda c: (-float(c.get("slack_s") or 0), -float(c.get("time_s") or 0)))
    return {"rank": data.get("rank"), "calibration_ran": (data.get("calibration") or {}).get("ran"),
            "total_time_s": sum(float(c.get("time_s") or 0) for c in calls),
            "total_slack_s": sum(float(c.get("slack_s") or 0) for c in calls),
            "top": [{k: c.get(k) for k in ("call", "site", "calls", "time_s", "slack_s", "comm_s", "max_s")}
                    | {"median_error_of_slack": ((c.get("predictors") or {}).get("median") or {}).get("error_of_slack"),
                       "median_error_of_interval": ((c.get("predictors") or {}).get("median") or {}).get("error_of_interval")}
                    for c in calls[:3]]}


def slack_schedule(schedule: str | None) -> bool:
    """Whether a site's aloe schedule carries the slack policy (adaptive unless slack=off;
    any schedule with slack=on)."""
    s = schedule or ""
    return "slack=on" in s or (s.startswith("adaptive") and "slack=off" not in s)


def loop_summary(path: Path) -> dict:
    data = json.loads(path.read_text())
    loops = [l for l in data.get("loops") or [] if isinstance(l, dict)]
    taken = [l for l in loops if (l.get("taken") or 0) > 0]
    with_slack = [l for l in taken if slack_schedule(l.get("schedule"))]
    policies = []  # the slack link's fields, where the statistics carry `policies`
    for l in loops:
        for pol in l.get("policies") or []:
            if isinstance(pol, dict) and pol.get("name") == "slack" and isinstance(pol.get("slack"), dict):
                policies.append(pol["slack"] | {"site": l.get("site")})
    chosen = collections.Counter(l["tuning"].get("chosen") for l in taken if isinstance(l.get("tuning"), dict))
    out = {"sites": len(loops), "taken_sites": len(taken), "slack_schedule_sites": len(with_slack),
           "adaptive_chose": dict(chosen),
           "loop_time_s": sum(float(l.get("time_s") or 0) for l in taken),
           "policy_fields_reported": bool(policies),
           "sites_detail": [{k: l.get(k) for k in ("site", "source", "asked", "schedule", "calls", "taken",
                                                   "time_s", "imbalance_mean")}
                            | ({"tuning_chosen": l["tuning"].get("chosen"), "tuning_state": l["tuning"].get("state")}
                               if isinstance(l.get("tuning"), dict) else {})
                            for l in sorted(taken, key=lambda l: -float(l.get("time_s") or 0))]}
    if policies:
        planned = sum(float(p.get("planned") or 0) for p in policies)
        out["slack_policy"] = {
            "sites": len(policies), "planned": planned,
            "lowered": sum(float(p.get("lowered") or 0) for p in policies),
            "fd_before_mean": (sum(float(p.get("planned") or 0) * float(p.get("fd_before_mean") or 0) for p in policies)
                               / planned) if planned else None,
            "fd_after_mean": (sum(float(p.get("planned") or 0) * float(p.get("fd_after_mean") or 0) for p in policies)
                              / planned) if planned else None,
            "guards": dict(collections.Counter(str(p.get("guard")) for p in policies))}
    return out


def diagnostic(paths: Paths, variant: str, threads: int, timeout: int) -> dict:
    with tempfile.TemporaryDirectory(prefix="bt-mz-diag-") as tmp:
        scratch = Path(tmp)
        rec = run_once(paths, variant, threads, timeout, scratch, stats=True)
        rec["kind"] = "diagnostic"
        rec["ranks_detail"] = []
        for r in range(RANKS):
            entry = {"rank": r}
            for key, name, fn in (("mpi", f"mpi.{r}.json", mpi_summary), ("loops", f"loops.{r}.json", loop_summary)):
                try:
                    entry[key] = fn(scratch / name)
                except (OSError, json.JSONDecodeError, TypeError, ValueError) as e:
                    entry[key] = {"error": f"{name}: {type(e).__name__}: {e}"}
            rec["ranks_detail"].append(entry)
    return rec


# --- summary -----------------------------------------------------------------------------------

def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) == 1:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


def summarize(runs: list[dict], variants: list[str], thread_counts: list[int]) -> list[dict]:
    rows = []
    for t in thread_counts:
        base = None
        for v in variants:
            mine = [r for r in runs if r["variant"] == v and r["threads"] == t]
            ok = [r["time_s"] for r in mine if r["verified"] and r["time_s"] is not None]
            row = {"threads": t, "variant": v, "what": DESCRIBE[v], "runs": len(mine), "verified": len(ok),
                   "failed": len(mine) - len(ok), "times_s": [r["time_s"] for r in mine]}
            if ok:
                p25, med, p75 = quartiles(ok)
                row |= {"median_s": med, "p25_s": p25, "p75_s": p75, "spread": (p75 - p25) / med if med else None}
                if v == "a":
                    base = med
                row["ratio_to_a"] = med / base if base else None
            rows.append(row)
    return rows


def fmt(x, spec="{:.3f}") -> str:
    return "–" if x is None else spec.format(x)


def markdown(rows: list[dict], diags: list[dict], a: argparse.Namespace, machine: dict) -> list[str]:
    out = [f"# BT-MZ class {a.cls}, {RANKS} ranks: plain libgomp against `aloe run --mpi`", "",
           f"Machine: {machine['model']}, {machine['nproc']} CPUs, load average at start {machine['loadavg_start']}, "
           f"{machine['date']}, aloe commit {machine['git_commit'][:12]}.", "",
           f"Benchmark's own \"Time in seconds\", {a.reps} interleaved repetitions; median [p25–p75]; "
           "ratio = median / median of a at the same T. Every run verified unless the `failed` column says otherwise.", "",
           "| T | variant | what | median s | [p25–p75] | spread | ratio to a | failed |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['threads']} | {r['variant']} | {r['what']} | {fmt(r.get('median_s'))} | "
                   f"[{fmt(r.get('p25_s'))}–{fmt(r.get('p75_s'))}] | {fmt(r.get('spread'), '{:.1%}')} | "
                   f"{fmt(r.get('ratio_to_a'))} | {r['failed']} |")
    if diags:
        out += ["", "## Diagnostic runs (one per T and aloe variant, not timed)", "",
                "Per rank: the three MPI call paths with the most slack (time s / slack s / calls), Σ slack "
                "over all calls, loop sites aloe took, how many run a schedule with the slack policy, and the "
                "policy's lowered/planned and fd before → after where the statistics report them.", "",
                "| T | variant | verified | time s | rank | top MPI calls: time / slack / calls | Σ slack s | "
                "taken sites | slack sites | adaptive chose | lowered/planned | fd before → after |",
                "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        for d in diags:
            for e in d["ranks_detail"]:
                mpi, loops = e.get("mpi") or {}, e.get("loops") or {}
                top = "; ".join(f"{c['call']} {fmt(c['time_s'])} / {fmt(c['slack_s'])} / {c['calls']}"
                                for c in mpi.get("top") or []) or mpi.get("error", "–")
                sp = loops.get("slack_policy")
                lowered = f"{sp['lowered']:.0f}/{sp['planned']:.0f}" if sp else "not reported"
                fd = f"{fmt(sp['fd_before_mean'])} → {fmt(sp['fd_after_mean'])}" if sp else "not reported"
                out.append(f"| {d['threads']} | {d['variant']} | {'yes' if d['verified'] else 'NO'} | "
                           f"{fmt(d['time_s'], '{:.2f}')} | {e['rank']} | {top} | {fmt(mpi.get('total_slack_s'))} | "
                           f"{loops.get('taken_sites', '–')} | {loops.get('slack_schedule_sites', '–')} | "
                           f"{', '.join(f'{k} {n}' for k, n in (loops.get('adaptive_chose') or {}).items()) or '–'} | "
                           f"{lowered} | {fd} |")
    failed = [r for r in rows if r["failed"]]
    if failed:
        out += ["", "Failed runs (kept in runs.jsonl with their output's tail): "
                + ", ".join(f"T={r['threads']} {r['variant']}: {r['failed']}" for r in failed)]
    return out


def machine_description(aloe: Path) -> dict:
    def sh(cmd: list[str], cwd: Path | None = None) -> str:
        try:
            return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            return "?"
    model = next((x.split(":", 1)[1].strip() for x in sh(["lscpu"]).splitlines()
                  if x.startswith("Model name:")), "unknown CPU")
    return {"model": model, "nproc": sh(["nproc"]), "loadavg_start": loadavg(),
            "date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
            "git_commit": sh(["git", "rev-parse", "HEAD"], REPO) or "?",
            "mpirun": sh(["mpirun", "--version"]).splitlines()[0] if sh(["mpirun", "--version"]) else "?",
            "gfortran": (sh(["gfortran", "--version"]).splitlines() or ["?"])[0],
            "aloe": sh([str(aloe), "--version"]) or "?"}


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    if a.prepare_runtime:
        return prepare_runtime(Path(a.npb_mz).resolve(), Path(a.npb_mz_runtime).resolve())
    paths = Paths(a)
    needed = {"original"} | {VARIANTS[v][0] for v in a.variant_names}
    missing = [f"{kind} binary {paths.display(str(paths.binary[kind]))}" for kind in sorted(needed)
               if not paths.binary[kind].is_file()]
    if any(VARIANTS[v][2] for v in a.variant_names) and not paths.aloe.is_file():
        missing.append(f"the aloe tool {paths.display(str(paths.aloe))}")
    if not shutil.which("mpirun"):
        missing.append("mpirun (not on PATH)")
    if missing:
        print("bt_mz.py: missing " + "; ".join(missing)
              + f". Build with `make bt-mz CLASS={a.cls} NPROCS={RANKS}` in each NPB-MZ folder "
              "(the runtime one made by --prepare-runtime), and aloe with CMake.", file=sys.stderr)
        return 2
    out = Path(a.out) if a.out else REPO / "bench/results" / f"bt-mz-{datetime.date.today():%Y%m%d}"
    out.mkdir(parents=True, exist_ok=True)
    machine = machine_description(paths.aloe)
    print(f"bt_mz.py: load average at start {machine['loadavg_start']}", flush=True)
    runs: list[dict] = []
    if a.from_runs:
        runs = [json.loads(line) for line in Path(a.from_runs).read_text().splitlines() if line.strip()]
        runs = [r for r in runs if r.get("kind") == "timed" and r["rep"] < a.reps]  # --reps caps them
        machine["loadavg_start"] = runs[0]["loadavg_before"] if runs else machine["loadavg_start"]
        a.reps = max((r["rep"] for r in runs), default=-1) + 1
    with (out / "runs.jsonl").open("w") as log, tempfile.TemporaryDirectory(prefix="bt-mz-") as tmp:
        for rec in runs:
            log.write(json.dumps(rec) + "\n")
        for rep in range(0 if a.from_runs else a.reps):
            for t in a.thread_counts:
                for v in a.variant_names:
                    rec = run_once(paths, v, t, a.timeout, Path(tmp)) | {"rep": rep, "kind": "timed"}
                    runs.append(rec)
                    log.write(json.dumps(rec) + "\n")
                    log.flush()
                    print(f"rep {rep} T={t} {v}: {rec['time_s']} s {'ok' if rec['verified'] else 'FAILED'}",
                          flush=True)
        diags = []
        if not a.no_diagnostics:
            for t in a.thread_counts:
                for v in a.variant_names:
                    if VARIANTS[v][2]:
                        d = diagnostic(paths, v, t, a.timeout)
                        diags.append(d)
                        log.write(json.dumps({k: d[k] for k in d if k != "ranks_detail"}
                                             | {"ranks_detail": "see result.json"}) + "\n")
                        print(f"diagnostic T={t} {v}: {d['time_s']} s {'ok' if d['verified'] else 'FAILED'}",
                              flush=True)
    machine["loadavg_end"] = loadavg()
    rows = summarize(runs, a.variant_names, a.thread_counts)
    shown_argv = [paths.display(str(Path(w).resolve())) if w and Path(w).exists() and "/" in w else w for w in argv]
    (out / "result.json").write_text(json.dumps(
        {"benchmark": f"BT-MZ class {a.cls} (NPB3.3-MZ-MPI 3.3.1)", "ranks": RANKS,
         "threads": a.thread_counts, "reps": a.reps, "variants": {v: DESCRIBE[v] for v in a.variant_names},
         "command": "python3 bench/micro/bt_mz.py " + " ".join(shown_argv),
         "machine": machine, "rows": rows, "diagnostics": diags}, indent=1) + "\n")
    (out / "result.md").write_text("\n".join(markdown(rows, diags, a, machine)) + "\n")
    (out / "machine.txt").write_text("".join(f"{k}: {v}\n" for k, v in machine.items()))
    failed = any(not r["verified"] for r in runs) or any(not d["verified"] for d in diags)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
