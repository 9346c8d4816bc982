"""Issue 14's evidence beside the adaptive matrix: tuning kept across runs (on/off) and what
`adaptive` costs a program against `program` and plain libgomp.

    python -m aloe_harness.tuning_evidence --aloe build/release/tools/aloe/aloe \\
        --apps-dir build/release/apps --npb-bin NPB3.4-OMP/bin --out bench/results/tuning-DATE

`--npb-bin` is the bin folder of an NPB 3.4 OpenMP build whose worksharing loops were made
`schedule(runtime)` (bench/harness/aloe_harness/npb_variant.py rewrites the sources; build it
outside the repository). Every configuration runs `--reps` times, interleaved; the results
are medians with p25-p75 spreads and ratios, in result.md, with the raw rows in runs.csv.

Persistence: for each program, `off` runs `aloe run --schedule adaptive` (or the app's
`--schedule adaptive`) with no file; `on` runs the same with a tuning file that `aloe tune
--runs 3` (three plain runs with the file, for the apps) filled once before. "First good
invocation" is, per adaptive site, the invocation at which the schedule the site ends on first
ran (0: recalled from the file at once), from the site's trace of its first 256 invocations.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import provenance
from .files import write_csv, write_text

NPB_TIME = re.compile(r"Time in seconds\s*=\s*([0-9.]+)")


def _run(argv: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> tuple[int, str, str, float]:
    t0 = time.perf_counter()
    p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    return p.returncode, p.stdout, p.stderr, time.perf_counter() - t0


def first_good(steps: list[dict], converged_at: int) -> int | None:
    """The 1-based invocation at which the schedule a site ends on first ran; 0 when it was
    recalled converged; None without a trace."""
    if converged_at == 0:
        return 0
    if not steps:
        return None
    final = steps[-1]["schedule"]
    for s in steps:
        if s["schedule"] == final:
            return int(s.get("invocation", steps.index(s) + 1))
    return None


def summarize(values: list[float]) -> dict:
    v = sorted(values)
    q = statistics.quantiles(v, n=4) if len(v) >= 2 else [v[0], v[0], v[0]]
    return {"median": statistics.median(v), "p25": q[0], "p75": q[2], "n": len(v)}


def _fmt(s: dict, unit: float = 1.0, digits: int = 3) -> str:
    return f"{s['median'] * unit:.{digits}f} [{s['p25'] * unit:.{digits}f}, {s['p75'] * unit:.{digits}f}]"


class Runner:
    def __init__(self, aloe: str, apps_dir: str, workdir: Path):
        self.aloe = aloe
        self.apps_dir = apps_dir
        self.work = workdir

    # One run of a program; returns (seconds, first-good invocations per site).
    def app(self, name: str, args: list[str], schedule: str, runtime: str, tuning: str | None):
        exe = str(Path(self.apps_dir) / f"aloe-app-{name}")
        env = dict(os.environ)
        env.pop("ALOE_TUNING", None)
        if tuning:
            env["ALOE_TUNING"] = tuning
        rc, out, err, _ = _run([exe, *args, "--runtime", runtime, "--schedule", schedule, "--threads", "2",
                                "--json", "-"], env)
        if rc != 0:
            raise RuntimeError(f"{name} failed ({rc}): {err[-400:]}")
        rec = json.loads(out)
        goods = [first_good(t.get("steps", []), int(t.get("converged_at", -1))) for t in rec.get("tuning") or []]
        return float(rec["total_s"]), goods

    def npb(self, exe: str, mode: str, tuning: str | None):
        stats = str(self.work / "stats.json")
        if mode == "libgomp":
            env = dict(os.environ, OMP_SCHEDULE="static", OMP_NUM_THREADS="2")
            argv = [exe]
        else:
            # `program` runs the loops' own schedule: static, from OMP_SCHEDULE. Otherwise
            # OMP_SCHEDULE must be unset: a runtime schedule of static keeps OpenMP's static
            # mapping whatever --schedule says (docs/openmp.md).
            env = {k: v for k, v in os.environ.items() if k != "OMP_SCHEDULE"}
            if mode == "program":
                env["OMP_SCHEDULE"] = "static"
            argv = [self.aloe, "run", "--threads", "2", "--summary", "none", "--schedule", mode]
            if mode == "adaptive":
                argv += ["--stats", stats]
            if tuning:
                argv += ["--tuning", tuning]
            argv += ["--", exe]
        rc, out, err, wall = _run(argv, env)
        if rc != 0 or not NPB_TIME.search(out):
            raise RuntimeError(f"{exe} {mode} failed ({rc}): {err[-400:]}{out[-400:]}")
        goods: list = []
        if mode == "adaptive" and Path(stats).exists():
            data = json.loads(Path(stats).read_text())
            for loop in data.get("loops", []):
                t = loop.get("tuning")
                if t:
                    goods.append(first_good(t.get("steps", []), int(t.get("converged_at", -1))))
            Path(stats).unlink()
        # The process's wall time: NPB prints its own to 10 ms only.
        return wall, goods


def persistence(r: Runner, reps: int, npb_progs: list[str]) -> list[dict]:
    rows = []
    cases = [("barnes-hut", ["--bodies", "8192", "--steps", "10", "--warmup", "1"])]
    for name, args in cases:
        f = str(r.work / f"{name}.tuning")
        for _ in range(3):  # fill: three runs with the file, as aloe tune does
            r.app(name, args, "adaptive", "aloe", f)
        for rep in range(reps):
            for mode in ("off", "on", "peer"):
                if mode == "peer":
                    s, g = r.app(name, args, "dynamic,8", "libgomp", None)
                else:
                    s, g = r.app(name, args, "adaptive", "aloe", f if mode == "on" else None)
                rows.append({"program": name, "mode": mode, "rep": rep, "seconds": s,
                             "first_good": ";".join("-" if x is None else str(x) for x in g)})
    for exe in npb_progs:
        name = Path(exe).name
        f = str(r.work / f"{name}.tuning")
        rc, _, err, _ = _run([r.aloe, "tune", "--runs", "3", "--tuning", f, "--threads", "2", "--", exe],
                             {k: v for k, v in os.environ.items() if k != "OMP_SCHEDULE"})
        if rc != 0:
            raise RuntimeError(f"aloe tune {name} failed: {err[-400:]}")
        for rep in range(reps):
            for mode in ("off", "on", "static"):
                if mode == "static":
                    s, g = r.npb(exe, "libgomp", None)
                else:
                    s, g = r.npb(exe, "adaptive", f if mode == "on" else None)
                rows.append({"program": name, "mode": mode if mode != "static" else "libgomp static", "rep": rep,
                             "seconds": s, "first_good": ";".join("-" if x is None else str(x) for x in g)})
    return rows


def first_cost(r: Runner, reps: int, npb_progs: list[str]) -> list[dict]:
    rows = []
    for rep in range(reps):
        for exe in npb_progs:
            for mode in ("libgomp", "program", "static", "adaptive"):
                s, _ = r.npb(exe, mode, None)
                rows.append({"program": Path(exe).name, "mode": mode, "rep": rep, "seconds": s})
    return rows


def table(rows: list[dict], modes: list[str], base: str, extra_first_good: bool = False) -> str:
    out = []
    progs = list(dict.fromkeys(x["program"] for x in rows))
    head = "| program | " + " | ".join(f"{m}: median [p25, p75] s" for m in modes) + " | " + \
        " | ".join(f"{m} / {base}" for m in modes if m != base)
    if extra_first_good:
        head += " | first good invocation, off | on"
    out.append(head + " |")
    out.append("|---" * (1 + len(modes) + len(modes) - 1 + (2 if extra_first_good else 0)) + "|")
    for p in progs:
        stats = {}
        for m in modes:
            v = [x["seconds"] for x in rows if x["program"] == p and x["mode"] == m]
            stats[m] = summarize(v) if v else None
        cells = [_fmt(stats[m]) if stats[m] else "–" for m in modes]
        ratios = [f"{stats[m]['median'] / stats[base]['median']:.3f}" if stats[m] and stats[base] else "–"
                  for m in modes if m != base]
        line = f"| {p} | " + " | ".join(cells) + " | " + " | ".join(ratios)
        if extra_first_good:
            for m in ("off", "on"):
                fg = [x["first_good"] for x in rows if x["program"] == p and x["mode"] == m]
                vals = [int(v) for s in fg for v in s.split(";") if v not in ("", "-")]
                line += f" | {statistics.median(vals):.0f} (max {max(vals)})" if vals else " | –"
        out.append(line + " |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m aloe_harness.tuning_evidence", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--aloe", required=True)
    p.add_argument("--apps-dir", required=True)
    p.add_argument("--npb-bin", required=True, help="bin folder of the schedule(runtime) NPB build")
    p.add_argument("--npb", default="mg.W.x,cg.W.x,ft.W.x,bt.S.x,sp.S.x", help="programs in it")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--out", required=True)
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    # The NPB folder is this machine's: named by its role.
    shown = [x if x != a.npb_bin else "NPB3.4-OMP/bin" for x in (argv or sys.argv[1:])]
    write_text(out / "command.txt", "PYTHONPATH=bench/harness " +
               provenance.display_command(["python", "-m", "aloe_harness.tuning_evidence", *shown]) + "\n")
    provenance.write_machine(out, a.aloe)
    progs = [str(Path(a.npb_bin) / n) for n in a.npb.split(",") if n]
    missing = [x for x in progs if not Path(x).exists()]
    if missing:
        print(f"tuning_evidence: missing NPB programs: {', '.join(missing)}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="aloe-tuning-evidence-") as work:
        r = Runner(a.aloe, a.apps_dir, Path(work))
        pers = persistence(r, a.reps, progs)
        cost = first_cost(r, a.reps, progs)
    write_csv(out / "persistence.csv", ["program", "mode", "rep", "seconds", "first_good"], pers)
    write_csv(out / "first_cost.csv", ["program", "mode", "rep", "seconds"], cost)
    md = ["# Issue 14: tuning kept across runs, and what adaptive costs", "",
          f"Command: see command.txt; machine: machine.json. {a.reps} interleaved repetitions, 2 threads.", "",
          "## Persistence on/off", "",
          "`off`: adaptive, no file; `on`: adaptive starting from a file three runs filled (`aloe tune --runs 3`; "
          "barnes-hut: three runs with ALOE_TUNING); a peer for scale (barnes-hut: libgomp dynamic,8, the best "
          "peer of issue 4's matrix; NPB: plain libgomp, OMP_SCHEDULE=static). Seconds: the program's own total "
          "(barnes-hut: the timed steps; NPB: the process's wall time, aloe run's start included under aloe). First good invocation: per adaptive site, the "
          "invocation at which the schedule it ends on first ran (0: recalled converged), median and max over "
          "sites and repetitions.", "",
          table([x for x in pers if x["program"] == "barnes-hut"], ["off", "on", "peer"], "on", True), "",
          table([x for x in pers if x["program"] != "barnes-hut"], ["off", "on", "libgomp static"], "on", True), "",
          "## First-invocation cost and short loops", "",
          "NPB with every worksharing loop `schedule(runtime)`: plain libgomp (OMP_SCHEDULE=static), and under "
          "`aloe run --schedule` program (the loops' own schedule, static), static and adaptive (no file, "
          "OMP_SCHEDULE unset). Seconds: the process's wall time.", "",
          table(cost, ["libgomp", "program", "static", "adaptive"], "static"), ""]
    write_text(out / "result.md", "\n".join(md))
    print(f"tuning_evidence: wrote {out / 'result.md'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
