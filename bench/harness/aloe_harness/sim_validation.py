"""`sim-validation`: `aloe sim`'s predictions against real runs of the same loop (issue 16,
part 4): per configuration the measured and the predicted total (sum of the timed steps) and
median step, their error, and the two step-time histograms overlaid.

    PYTHONPATH=bench/harness .venv/bin/python -m aloe_harness sim-validation \\
        [--aloe build/release/tools/aloe/aloe] [--apps-dir build/release/apps] [--reps 5] \\
        [--steps 200] [--seeds 5] [--mpirun mpirun] [--no-mpi] [--quick] [--out DIR]

What runs, in this order:
 1. the machine's noise: `aloe noise --json --trace --method fwq` twice, all CPUs at once
    (what a job that fills the machine sees) and --one-at-a-time (what a one-CPU job sees: the
    machine's other work can move to the CPU it leaves free); again after the runs;
 2. the real runs, interleaved (groups and schedules rotated per repetition), each writing its
    --json record: jacobi3d (128³ points, 126 planes per step) on 1 and 2 threads, and
    jacobi3d-mpi (--n 128 --decomp z --mode thread0, launched as the bench harness does,
    mpi.Launch) on 2 ranks × 1 thread and 1 rank × 2 threads; schedules static, dynamic,
    hybrid,fs=0.5 and adaptive (aloe's); quiet and with the injector (--noise-p 0.3
    --noise-us 1000, --noise-delay-us 100: each timed step, with probability 0.3, one CPU of
    the team, drawn, is taken 100 µs after the step starts by a SCHED_FIFO thread that spins
    for 1 ms; apps/common/noise_injector.cpp); one untimed libaloe-mpi run first measures
    what OpenMPI's shared memory costs here (its calibration's latencies and per-byte costs);
 3. profiles from the measurements only (`aloe sim calibrate`): the noise of the matching
    measurement (one-at-a-time for a one-CPU job, all at once otherwise), the overhead
    benchmark's overhead.csv and the iteration cost t1 from a quiet static record (per
    iteration of that record's loop: 126 planes, 63 for a rank of 2), in two ways:
      A  t1 from the 1-thread jacobi3d run (one calibration for every configuration);
      B  t1 from the static quiet run of the same layout (threads, ranks): the per-thread-
         count calibration, for a loop whose iteration cost depends on how many cores share
         the memory system;
    injected noise is added as a per-step source matching the injector; MPI profiles get the
    measured network (Allreduce latency, point-to-point per-byte cost, one 128×128×8-byte
    halo face per neighbour, 1-D grid);
 4. `aloe sim --nodes R --cores T --iterations N --steps S --best-fs off` (N: 126
    planes, 63 per rank on 2 ranks) per profile and seed (--seeds
    seeds), its steps.csv read;
 5. summary.md (the table), validation.csv, plots/hist-*.png (measured and predicted
    step-time histograms overlaid, one panel per schedule and noise), runs.jsonl.gz (every
    run with its steps), profiles/, records/, sim/, noise-*.json, command.txt, machine.json.

No simulator input is tuned per configuration: every number in a profile comes from a
measurement named in its "measured" object, or from the injector's flags.
"""
from __future__ import annotations

import argparse
import csv
import dataclasses
import gzip
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from . import files, mpi, provenance
from . import timed_runs as tr

SCHEDULES = ("static", "dynamic", "hybrid,fs=0.5", "adaptive")
NOISE = {"quiet": None, "inject": {"p": 0.3, "us": 1000.0, "delay_us": 100.0}}
GRID = 128                          # points per side
HALO_BYTES = GRID * GRID * 8        # one z face of doubles
TARGET = 0.10                       # |predicted / measured − 1| on totals
OVERHEAD_CSV = "bench/results/overhead-20261121-bound/overhead.csv"
DEFAULT_NETWORK = {"alpha_s": 1.5e-6, "beta_s_per_byte": 1e-10, "source": "aloe sim's default"}


@dataclasses.dataclass(frozen=True)
class Layout:
    name: str          # "shared T=1", "mpi 2x1"
    kind: str          # "shared" or "mpi"
    ranks: int
    threads: int

    @property
    def iterations(self) -> int:
        """Planes each rank's loop runs per step (jacobi3d: nz − 2, split by --decomp z)."""
        interior = GRID - 2
        return interior // self.ranks

    @property
    def cpus(self) -> int:
        return self.ranks * self.threads

    @property
    def slug(self) -> str:
        return self.name.replace(" ", "-").replace("=", "")


LAYOUTS = (Layout("shared T=1", "shared", 1, 1), Layout("shared T=2", "shared", 1, 2),
           Layout("mpi 2x1", "mpi", 2, 1), Layout("mpi 1x2", "mpi", 1, 2))


@dataclasses.dataclass(frozen=True)
class Config:
    layout: Layout
    schedule: str
    noise: str          # a key of NOISE

    @property
    def group(self) -> str:
        return f"{self.layout.name} {self.noise}"

    @property
    def name(self) -> str:
        return f"{self.layout.name} {self.schedule} {self.noise}"


def configs(layouts=LAYOUTS, schedules=SCHEDULES, noises=tuple(NOISE)) -> list[Config]:
    return [Config(lay, s, n) for lay in layouts for n in noises for s in schedules]


# --- commands ------------------------------------------------------------------------------

def app_argv(c: Config, apps: Path, record: Path, steps: int, warmup: int,
             mpirun: str | None = None, cpus: int = 2, root: bool = False) -> list[str]:
    """The program's command line (mpirun's for MPI layouts, as the bench harness builds it)."""
    lay = c.layout
    flags = ["--runtime", "aloe", "--schedule", c.schedule, "--threads", str(lay.threads),
             "--steps", str(steps), "--warmup", str(warmup), "--json", str(record)]
    inj = NOISE[c.noise]
    if inj:
        flags += ["--noise-p", f"{inj['p']:g}", "--noise-us", f"{inj['us']:g}",
                  "--noise-delay-us", f"{inj['delay_us']:g}"]
    if lay.kind == "shared":
        return [str(apps / "aloe-app-jacobi3d"), "--nx", str(GRID), "--ny", str(GRID),
                "--nz", str(GRID), "--bind", "close", *flags]
    launch = mpi.Launch(lay.ranks, lay.threads, cpus, "core", root)
    app = [str(apps / "aloe-app-jacobi3d-mpi"), "--n", str(GRID), "--decomp", "z", "--mode",
           "thread0", "--bind", launch.app_bind, *flags]
    return mpi.command(mpirun or "mpirun", launch, app)


def sim_argv(aloe: str, profile: Path, lay: Layout, schedules, steps: int, seed: int,
             out: Path) -> list[str]:
    return [aloe, "sim", "--profile", str(profile), "--nodes", str(lay.ranks), "--cores",
            str(lay.threads), "--iterations", str(lay.iterations), "--schedules", ",".join(schedules), "--steps", str(steps),
            "--seed", str(seed), "--best-fs", "off", "--out", str(out), "--quiet"]


# --- pure parts (tests/python/test_sim_validation.py) -------------------------------------

def record_steps(record: dict) -> list[float]:
    """A workload record's timed step times (the job's: the slowest rank's for MPI)."""
    steps = record.get("step_s")
    if not isinstance(steps, list) or not steps:
        raise ValueError("the record has no step_s")
    return [float(s) for s in steps]


def parse_steps_csv(text: str, schedules) -> dict[str, list[float]]:
    """aloe sim's steps.csv (nodes,schedule,step,step_s,watch_loop_s) as {schedule as given:
    step_s by step}. The simulator prints schedules canonically (dynamic -> dynamic,chunk=1),
    in the order given, so the n-th schedule met is the n-th of `schedules`."""
    seen: dict[str, list[tuple[int, float]]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        seen.setdefault(row["schedule"], []).append((int(row["step"]), float(row["step_s"])))
    if len(seen) != len(schedules):
        raise ValueError(f"steps.csv holds {len(seen)} schedules ({', '.join(seen)}), "
                         f"expected {len(schedules)}")
    return {given: [s for _, s in sorted(seen[canon])] for given, canon in zip(schedules, seen)}


def add_injected_noise(profile: dict, p: float, us: float, delay_us: float) -> dict:
    """The profile with a per-step source matching the workloads' injector: per node-step, with
    probability p, one core loses `us` (fixed) starting `delay_us` into the step."""
    out = json.loads(json.dumps(profile))
    out["noise"] = list(out.get("noise", [])) + [{
        "kind": "per-step", "probability": p, "length": {"dist": "fixed", "mean_s": us / 1e6},
        "delay_s": delay_us / 1e6}]
    return out


def add_network(profile: dict, alpha_s: float, beta_s_per_byte: float, halo_bytes: int,
                halo_dims: int = 1) -> dict:
    """The profile with the measured network and a halo exchange with grid neighbours."""
    out = json.loads(json.dumps(profile))
    net = dict(out.get("network", {}))
    net.update({"alpha_s": alpha_s, "beta_s_per_byte": beta_s_per_byte,
                "halo": {"dims": halo_dims, "bytes": halo_bytes}})
    out["network"] = net
    return out


def network_from_stats(stats: dict | None) -> dict:
    """alpha (the Allreduce's latency, libaloe-mpi's "reduction" class) and beta (the
    point-to-point per-byte cost) from a libaloe-mpi statistics file; the default without one."""
    try:
        cost = {c["class"]: c for c in stats["calibration"]["cost"]}
        alpha = float(cost["reduction"]["latency_s"])
        beta = float(cost["point_to_point"]["per_byte_s"])
    except (TypeError, KeyError, ValueError):
        return dict(DEFAULT_NETWORK)
    if not (alpha > 0 and beta >= 0):
        return dict(DEFAULT_NETWORK)
    return {"alpha_s": alpha, "beta_s_per_byte": beta,
            "p2p_latency_s": float(cost["point_to_point"]["latency_s"]),
            "source": "libaloe-mpi calibration (reduction latency, point-to-point per byte)"}


def _median(values):
    return statistics.median(values) if values else None


def _pct(values, q):
    import numpy as np
    return float(np.percentile(values, q)) if values else None


def error(predicted: float | None, measured: float | None) -> float | None:
    """predicted / measured − 1."""
    if predicted is None or not measured:
        return None
    return predicted / measured - 1


def compare(measured: list[list[float]], predicted: dict[str, list[list[float]]]) -> dict:
    """One configuration: `measured` the step times of each repetition, `predicted` per
    calibration the step times of each simulated seed. Totals are sums of steps; the total's
    median and p25–p75 over repetitions (seeds), the median step over all steps pooled, and
    each calibration's errors against the measured medians."""
    totals = [sum(r) for r in measured]
    pooled = [s for r in measured for s in r]
    row = {"reps": len(measured), "total_s": _median(totals), "total_p25_s": _pct(totals, 25),
           "total_p75_s": _pct(totals, 75), "step_p50_s": _median(pooled),
           "step_p90_s": _pct(pooled, 90)}
    for cal, runs in predicted.items():
        pt = [sum(r) for r in runs]
        ps = [s for r in runs for s in r]
        row |= {f"{cal}_total_s": _median(pt), f"{cal}_total_p25_s": _pct(pt, 25),
                f"{cal}_total_p75_s": _pct(pt, 75), f"{cal}_step_p50_s": _median(ps),
                f"{cal}_step_p90_s": _pct(ps, 90),
                f"{cal}_total_error": error(_median(pt), row["total_s"]),
                f"{cal}_step_error": error(_median(ps), row["step_p50_s"]),
                f"{cal}_within": None if not pt or not totals else
                abs(error(_median(pt), row["total_s"])) <= TARGET}
    return row


def _ms(x) -> str:
    return "–" if x is None else f"{x * 1e3:.3g}"


def _s(x) -> str:
    return "–" if x is None else f"{x:.3g}"


def _e(x) -> str:
    return "–" if x is None else f"{x:+.0%}"


def table(rows: list[dict], calibrations: list[str]) -> list[str]:
    """The Markdown table: one row per configuration."""
    header = ["config", "measured total s [p25–p75]", "median step ms"]
    for cal in calibrations:
        header += [f"{cal}: total s (err)", f"{cal}: median step ms (err)"]
    header += ["within 10%"]
    body = []
    for r in rows:
        cells = [r["config"], f"{_s(r['total_s'])} [{_s(r['total_p25_s'])}–{_s(r['total_p75_s'])}]",
                 _ms(r["step_p50_s"])]
        for cal in calibrations:
            cells += [f"{_s(r.get(f'{cal}_total_s'))} ({_e(r.get(f'{cal}_total_error'))})",
                      f"{_ms(r.get(f'{cal}_step_p50_s'))} ({_e(r.get(f'{cal}_step_error'))})"]
        cells.append(", ".join(c for c in calibrations if r.get(f"{c}_within")) or "no")
        body.append(cells)
    return tr.table(header, body)


# --- running -------------------------------------------------------------------------------

def add_parser(sub) -> None:
    p = tr.add_subcommand(sub, "sim-validation", "aloe sim's predictions against real runs "
                          "(issue 16, part 4)", __doc__)
    p.add_argument("--aloe", help="the aloe tool (default: build/release/tools/aloe/aloe)")
    p.add_argument("--apps-dir", help="folder of the aloe-app-* programs (default: beside "
                   "--aloe's build, <build>/apps)")
    p.add_argument("--mpirun", default=shutil.which("mpirun"), help="mpirun (default: on PATH)")
    p.add_argument("--no-mpi", action="store_true", help="jacobi3d only")
    p.add_argument("--reps", type=int, default=5, help="repetitions of every run (default 5)")
    p.add_argument("--steps", type=int, default=200, help="timed steps (default 200)")
    p.add_argument("--warmup", type=int, default=5, help="untimed steps (default 5)")
    p.add_argument("--seeds", type=int, default=5, help="simulated seeds per config (default 5)")
    p.add_argument("--noise-seconds", type=float, default=2,
                   help="aloe noise --seconds per measurement (default 2)")
    p.add_argument("--overhead", help=f"overhead.csv (default {OVERHEAD_CSV})")
    p.add_argument("--timeout", type=float, default=300, help="seconds before a run is killed")
    p.add_argument("--quick", action="store_true", help="1 rep, 20 steps, 1 seed, 0.5 s noise "
                   "(to see that it works; not to quote)")
    p.add_argument("--out", help="results folder (default: bench/results/sim-validation-DATE)")
    p.add_argument("--analyse", action="store_true", help="no runs: profiles, predictions, "
                   "table and plots again from the measurements already in --out")


def _say(text: str) -> None:
    print(f"aloe_harness sim-validation: {text}", file=sys.stderr)


def measure_noise(aloe: str, seconds: float, one_at_a_time: bool) -> tuple[dict | None, str]:
    argv = [aloe, "noise", "--json", "--method", "fwq", "--seconds", f"{seconds:g}"]
    help_text = subprocess.run([aloe, "noise", "--help"], capture_output=True, text=True).stdout
    if "--trace" in help_text:
        argv.append("--trace")
    if one_at_a_time:
        argv.append("--one-at-a-time")
    p = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    cmd = provenance.display_command(argv)
    if p.returncode != 0:
        return None, f"{cmd}: exit status {p.returncode}: {p.stderr.strip()[-300:]}"
    return json.loads(p.stdout), cmd


def _noise_summary(data: dict | None) -> str:
    if not data:
        return "not measured"
    return "; ".join(f"cpu {c.get('cpu')}: lost {c.get('lost_fraction', 0):.1%}, "
                     f"{c.get('events_per_s', 0):.0f} events/s of mean "
                     f"{c.get('event_mean_us', 0):.0f} µs"
                     + (f", {len(c['events_us'])} traced" if "events_us" in c else "")
                     for c in data.get("cpus", []))


def _loadavg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "?"


def _others() -> str:
    """The busiest processes of the machine (other users' work shares its two CPUs)."""
    p = subprocess.run(["ps", "-eo", "ni,pcpu,psr,etime,comm", "--sort=-pcpu"],
                       capture_output=True, text=True)
    return "\n".join(p.stdout.splitlines()[:8])


def mpi_network(a, apps: Path, scratch: Path, problems: list[str]) -> dict:
    """One untimed 2-rank run with libaloe-mpi: its calibration's costs."""
    lib = mpi.stats_library(apps)
    if not lib.is_file():
        problems.append(f"no {lib}: MPI network from aloe sim's defaults")
        return dict(DEFAULT_NETWORK)
    launch = mpi.Launch(2, 1, mpi.available_cpus(), "core", mpi.is_root())
    app = [str(apps / "aloe-app-jacobi3d-mpi"), "--n", str(GRID), "--steps", "10",
           "--warmup", "1", "--threads", "1", "--json", str(scratch / "netrun.json")]
    argv = mpi.command(a.mpirun, launch, app, mpi.stats_env(str(lib), scratch))
    p = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    try:
        stats = json.loads((scratch / "mpi.0.json").read_text())
    except (OSError, json.JSONDecodeError) as e:
        problems.append(f"libaloe-mpi calibration run: {e} (exit status {p.returncode})")
        return dict(DEFAULT_NETWORK)
    net = network_from_stats(stats)
    net["calibration"] = stats.get("calibration")
    net["command"] = tr.shown(provenance.display_command(mpi.display_argv(argv, scratch)))
    return net


def main(a: argparse.Namespace, argv: list[str]) -> int:
    if not a.aloe:
        built = provenance.REPO_ROOT and provenance.REPO_ROOT / "build/release/tools/aloe/aloe"
        a.aloe = str(built) if built and built.is_file() else "aloe"
    if a.quick:
        a.reps, a.steps, a.warmup, a.seeds, a.noise_seconds = 1, 20, 2, 1, 0.5
    out = tr.results_folder(a.out, "sim-validation")
    if a.analyse:
        if not _runs_path(out):
            _say(f"{out} holds no runs.jsonl(.gz) to analyse")
            return 2
        return analyse(a, out)
    apps = Path(a.apps_dir or Path(a.aloe).resolve().parents[2] / "apps").resolve()
    layouts = [lay for lay in LAYOUTS if lay.kind == "shared" or not a.no_mpi]
    if any(lay.kind == "mpi" for lay in layouts) and (
            reason := mpi.skip_reason(a.mpirun, apps / "aloe-app-jacobi3d-mpi")):
        _say(f"MPI layouts skipped: {reason}")
        layouts = [lay for lay in layouts if lay.kind == "shared"]
    if _runs_path(out):
        _say(f"{out} already holds results; choose another --out (or --analyse it)")
        return 2
    measure(a, argv, out, apps, layouts)
    return analyse(a, out)


def _runs_path(out: Path) -> Path | None:
    return next((p for p in (out / "runs.jsonl.gz", out / "runs.jsonl") if p.exists()), None)


def measure(a, argv: list[str], out: Path, apps: Path, layouts) -> None:
    """The measuring phase: noise before, the network, the runs, noise after. Writes
    runs.jsonl, records/, noise-*.json, network.json and measure.json (what analyse needs)."""
    for sub in ("records", "profiles", "sim", "plots"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    provenance.write_command(out, argv)
    provenance.write_machine(out, a.aloe)
    problems: list[str] = []
    notes = [f"load average before: {_loadavg()}", "busiest processes before:", _others()]
    noise_cmd = {}
    for mode, one in (("all", False), ("one", True)):
        _say(f"measuring the noise ({'one CPU at a time' if one else 'all CPUs at once'})")
        data, noise_cmd[f"before-{mode}"] = measure_noise(a.aloe, a.noise_seconds, one)
        files.write_text(out / f"noise-before-{mode}.json", json.dumps(data) + "\n")
    with tempfile.TemporaryDirectory(prefix="aloe-simval-") as scratch_name:
        scratch = Path(scratch_name)
        tr.hide(scratch, "<scratch>")
        network = mpi_network(a, apps, scratch, problems) if any(
            lay.kind == "mpi" for lay in layouts) else dict(DEFAULT_NETWORK)
        files.write_text(out / "network.json", json.dumps(network, indent=2) + "\n")
        cfgs = configs(layouts)
        cases = [tr.Case(c.group, c.schedule, tuple(app_argv(
            c, apps, scratch / "record.json", a.steps, a.warmup, a.mpirun,
            mpi.available_cpus(), mpi.is_root()))) for c in cfgs]
        by_case = {(c.group, c.schedule): c for c in cfgs}
        plan = tr.order(cases, a.reps)
        with open(out / "runs.jsonl", "w") as stream:
            for i, (rep, case) in enumerate(plan):
                (scratch / "record.json").unlink(missing_ok=True)
                cfg = by_case[(case.group, case.variant)]
                outcome = tr.run(case, a.timeout)
                fields: dict = {"config": cfg.name}
                if not outcome.error:
                    try:
                        record = json.loads((scratch / "record.json").read_text())
                        fields["step_s"] = record_steps(record)
                        fields["ok"] = record.get("ok")
                        fields["noise_record"] = record.get("noise")
                        if not record.get("ok"):
                            outcome.error = "the workload's own check failed"
                        if cfg.schedule == "static" and cfg.noise == "quiet":
                            fields["record_file"] = (f"records/{cfg.layout.slug}-static-quiet-"
                                                     f"rep{rep}.json")
                            files.write_text(out / fields["record_file"], json.dumps(record) + "\n")
                    except (OSError, ValueError) as e:
                        outcome.error = f"no usable record: {e}"
                entry = tr.log(stream, rep, case, outcome, **fields)
                what = f"total {sum(entry.get('step_s') or [0]):.4g} s"
                tr.progress(i, len(plan), rep, case, entry, what, problems)
    notes += [f"load average after: {_loadavg()}", "busiest processes after:", _others()]
    for mode, one in (("all", False), ("one", True)):
        data, noise_cmd[f"after-{mode}"] = measure_noise(a.aloe, a.noise_seconds, one)
        files.write_text(out / f"noise-after-{mode}.json", json.dumps(data) + "\n")
    files.write_text(out / "measure.json", json.dumps({
        "reps": a.reps, "steps": a.steps, "warmup": a.warmup, "layouts": [x.name for x in layouts],
        "noise_commands": noise_cmd, "notes": notes, "problems": problems}, indent=2) + "\n")


def _tool(argv: list[str], timeout: float = 600) -> subprocess.CompletedProcess:
    """Runs aloe; waits out a rebuild that replaces the binary meanwhile (EACCES/ETXTBSY)."""
    for attempt in range(60):
        try:
            return subprocess.run(argv, capture_output=True, text=True, timeout=timeout)
        except (PermissionError, OSError) as e:
            if attempt == 59 or getattr(e, "errno", None) not in (13, 26, 2):
                raise
            time.sleep(2)
    raise AssertionError("unreachable")


def analyse(a, out: Path) -> int:
    """Profiles, predictions, the table and the plots from a folder that measure() wrote."""
    for sub in ("profiles", "sim"):  # made again whole: nothing stale is left
        shutil.rmtree(out / sub, ignore_errors=True)
    for sub in ("profiles", "sim", "plots"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    meta = json.loads((out / "measure.json").read_text())
    a.steps = meta["steps"]
    layouts = [x for x in LAYOUTS if x.name in meta["layouts"]]
    network = json.loads((out / "network.json").read_text())
    overhead = Path(a.overhead or (provenance.REPO_ROOT or Path.cwd()) / OVERHEAD_CSV)
    runs = _runs_path(out)
    opener = gzip.open if runs.suffix == ".gz" else open
    with opener(runs, "rt") as f:
        entries = [json.loads(line) for line in f if line.strip()]
    problems = list(meta.get("problems", []))
    measured = {}
    for e in entries:
        if e["error"] is None:
            measured.setdefault(e["config"], []).append(e["step_s"])
    calib_record = _calibration_records(entries, out, layouts)
    base_t1 = calib_record.get("shared T=1")
    sims: dict = {}
    for lay in layouts:
        for noise_name in NOISE:
            for cal, when in (("A", "before"), ("B", "before"), ("B", "after")):
                record = base_t1 if cal == "A" else calib_record.get(lay.name)
                tag = cal if when == "before" else f"{cal}-after"
                if record is None:
                    problems.append(f"{lay.name} {tag}: no static quiet record to calibrate from")
                    continue
                mode = "one" if lay.cpus == 1 else "all"
                # calibrate's --iterations: the loop of the record t1 comes from (A: the
                # 1-thread jacobi3d's 126 planes), not the simulated rank's (sim --iterations)
                record_iterations = LAYOUTS[0].iterations if cal == "A" else lay.iterations
                profile = _profile(a, out, lay, noise_name, tag, record, record_iterations,
                                   overhead, out / f"noise-{when}-{mode}.json", network,
                                   problems)
                if profile is None:
                    continue
                for seed in range(1, a.seeds + 1):
                    sim_dir = out / "sim" / f"{lay.slug}-{noise_name}-{tag}-seed{seed}"
                    for sched, st in _simulate(a, profile, lay, sim_dir, seed, problems).items():
                        sims.setdefault((lay.name, sched, noise_name), {}).setdefault(
                            tag, []).append(st)
    calibrations = ["A", "B", "B-after"]
    rows = []
    for c in configs(layouts):
        row = {"config": c.name, "layout": c.layout.name, "schedule": c.schedule,
               "noise": c.noise}
        row |= compare(measured.get(c.name, []),
                       sims.get((c.layout.name, c.schedule, c.noise), {}))
        rows.append(row)
    _write_csv(out / "validation.csv", rows, calibrations)
    plot_files = _plots(out, configs(layouts), measured, sims)
    if runs.suffix != ".gz":
        with open(runs, "rb") as f_in, gzip.open(out / "runs.jsonl.gz", "wb") as f_out:
            shutil.copyfileobj(f_in, f_out)
        runs.unlink()
    noise = {}
    for when in ("before", "after"):
        for mode in ("all", "one"):
            path = out / f"noise-{when}-{mode}.json"
            noise[(when, mode)] = json.loads(path.read_text()) if path.exists() else None
    noise_cmd = {tuple(k.split("-")): v for k, v in meta.get("noise_commands", {}).items()}
    a.reps = meta["reps"]
    a.warmup = meta["warmup"]
    text = markdown(a, rows, calibrations, network, noise, noise_cmd, meta.get("notes", []),
                    problems, plot_files, entries)
    files.write_text(out / "summary.md", text)
    files.write_text(out / "machine-note.md", machine_note(meta.get("notes", []), noise))
    print(text)
    _say(f"wrote {provenance.display_path(out)}")
    return 1 if problems else 0


def machine_note(notes: list[str], noise: dict) -> str:
    """The machine around the runs: load, the busiest processes, the noise measured."""
    lines = ["# Machine note", "", "The VM has 2 CPUs shared with other work (below); timed runs "
             "ran at nice 0, nothing else of this harness ran beside them.", "", "```"]
    lines += notes + ["```", ""]
    for (when, mode), data in noise.items():
        lines.append(f"- noise {when}, {mode}: {_noise_summary(data)}")
    return "\n".join(lines) + "\n"


def _calibration_records(entries: list[dict], out: Path, layouts) -> dict[str, Path]:
    """Per layout, the static quiet record of the repetition whose total is the median."""
    chosen = {}
    for lay in layouts:
        mine = [e for e in entries if e["error"] is None and e.get("record_file")
                and e["config"] == Config(lay, "static", "quiet").name]
        if not mine:
            continue
        mine.sort(key=lambda e: sum(e["step_s"]))
        chosen[lay.name] = out / mine[(len(mine) - 1) // 2]["record_file"]
    return chosen


def _profile(a, out: Path, lay: Layout, noise_name: str, tag: str, record: Path,
             record_iterations: int, overhead: Path, noise_file: Path, network: dict,
             problems: list[str]) -> Path | None:
    path = out / "profiles" / f"{lay.slug}-{noise_name}-{tag}.json"
    argv = [a.aloe, "sim", "calibrate", "--noise", str(noise_file), "--workload", str(record),
            "--iterations", str(record_iterations), "--cores", str(lay.threads),
            "--name", f"this VM, {lay.name}, calibration {tag}"]
    if overhead.is_file():
        argv += ["--overhead", str(overhead)]
    if lay.kind == "mpi":
        argv += ["--alpha-us", f"{network['alpha_s'] * 1e6:.6g}",
                 "--beta-ns-per-byte", f"{network['beta_s_per_byte'] * 1e9:.6g}"]
    p = _tool(argv)
    if p.returncode != 0:
        problems.append(f"{tr.shown(provenance.display_command(argv))}: exit status "
                        f"{p.returncode}: {p.stderr.strip()[-400:]}")
        return None
    profile = json.loads(p.stdout)
    inj = NOISE[noise_name]
    if inj:
        profile = add_injected_noise(profile, inj["p"], inj["us"], inj["delay_us"])
    if lay.kind == "mpi" and lay.ranks > 1:
        profile = add_network(profile, network["alpha_s"], network["beta_s_per_byte"], HALO_BYTES)
    files.write_text(path, json.dumps(profile) + "\n")
    return path


def _simulate(a, profile: Path, lay: Layout, sim_dir: Path, seed: int,
              problems: list[str]) -> dict[str, list[float]]:
    argv = sim_argv(a.aloe, profile, lay, SCHEDULES, a.steps, seed, sim_dir)
    p = _tool(argv)
    if p.returncode != 0 or not (sim_dir / "steps.csv").is_file():
        problems.append(f"{tr.shown(provenance.display_command(argv))}: exit status "
                        f"{p.returncode}: {p.stderr.strip()[-400:]}")
        return {}
    text = (sim_dir / "steps.csv").read_text()
    steps = parse_steps_csv(text, SCHEDULES)
    # Keep what is small: the profile copy is in profiles/, the steps gzipped.
    with gzip.open(sim_dir / "steps.csv.gz", "wt") as f:
        f.write(text)
    for name in ("profile.json", "results.json", "best_fs.csv", "steps.csv"):
        (sim_dir / name).unlink(missing_ok=True)
    shutil.rmtree(sim_dir / "plots", ignore_errors=True)
    return steps


def load_results(out: Path, layouts=LAYOUTS) -> tuple[dict, dict]:
    """(measured, sims) as main() builds them, read back from a results folder: the runs of
    runs.jsonl.gz and each sim/<layout>-<noise>-<tag>-seed<K>/steps.csv."""
    measured: dict = {}
    with gzip.open(out / "runs.jsonl.gz", "rt") as f:
        for line in f:
            e = json.loads(line)
            if e["error"] is None:
                measured.setdefault(e["config"], []).append(e["step_s"])
    sims: dict = {}
    for folder in sorted((out / "sim").iterdir(), key=lambda p: p.name):
        lay = next((x for x in layouts if folder.name.startswith(x.slug + "-")), None)
        steps_file = next((f for f in (folder / "steps.csv.gz", folder / "steps.csv")
                           if f.is_file()), None)
        if lay is None or steps_file is None:
            continue
        noise_name, _, rest = folder.name[len(lay.slug) + 1:].partition("-")
        tag = rest.rpartition("-seed")[0]
        opener = gzip.open if steps_file.suffix == ".gz" else open
        with opener(steps_file, "rt") as f:
            text = f.read()
        for sched, st in parse_steps_csv(text, SCHEDULES).items():
            sims.setdefault((lay.name, sched, noise_name), {}).setdefault(tag, []).append(st)
    return measured, sims


def replot(out: Path) -> list[str]:
    """plots/ again from a results folder (no runs, no simulation)."""
    measured, sims = load_results(out)
    return _plots(out, configs(), measured, sims)


def _write_csv(path: Path, rows: list[dict], calibrations: list[str]) -> None:
    cols = ["config", "layout", "schedule", "noise", "reps", "total_s", "total_p25_s",
            "total_p75_s", "step_p50_s", "step_p90_s"]
    for cal in calibrations:
        cols += [f"{cal}_{k}" for k in ("total_s", "total_p25_s", "total_p75_s", "step_p50_s",
                                        "step_p90_s", "total_error", "step_error", "within")]
    from . import summary
    summary.write_rows_csv(path, rows, cols)


def _plots(out: Path, cfgs: list[Config], measured: dict, sims: dict) -> list[str]:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import matplotlib.ticker
    import numpy as np
    written = []
    layouts = list(dict.fromkeys(c.layout for c in cfgs))
    for lay in layouts:
        mine = [c for c in cfgs if c.layout == lay]
        noises = list(dict.fromkeys(c.noise for c in mine))
        fig, axes = plt.subplots(len(noises), len(SCHEDULES), figsize=(4 * len(SCHEDULES),
                                 3.2 * len(noises)), squeeze=False)
        for i, n in enumerate(noises):
            for j, s in enumerate(SCHEDULES):
                ax = axes[i][j]
                c = Config(lay, s, n)
                meas = [x * 1e3 for r in measured.get(c.name, []) for x in r]
                pred = sims.get((lay.name, s, n), {})
                series = [("measured", meas, "k")] + [
                    (f"sim {cal}", [x * 1e3 for r in pred.get(cal, []) for x in r], col)
                    for cal, col in (("A", "tab:orange"), ("B", "tab:blue"),
                                     ("B-after", "tab:green"))]
                values = [v for _, vs, _ in series for v in vs if v > 0]
                if not values:
                    ax.set_title(f"{s}, {n}: no data", fontsize=9)
                    continue
                lo, hi = min(values), max(values)
                bins = np.geomspace(lo * 0.98, hi * 1.02, 40) if hi > lo * 1.05 else 20
                for label, vs, col in series:
                    if vs:
                        ax.hist(vs, bins=bins, histtype="step" if label != "measured" else
                                "stepfilled", alpha=0.35 if label == "measured" else 1.0,
                                color=col, weights=np.full(len(vs), 1 / len(vs)),
                                label=f"{label} (median {statistics.median(vs):.3g} ms)",
                                linewidth=1.4)
                if isinstance(bins, np.ndarray):
                    ax.set_xscale("log")
                    ax.xaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter("%g"))
                    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
                ax.set_ylabel("fraction of steps")
                ax.set_title(f"{lay.name}, {s}, {n}", fontsize=9)
                ax.set_xlabel("step time, ms")
                ax.legend(fontsize=7)
        fig.suptitle(f"jacobi3d step times: measured vs aloe sim ({lay.name}); A: t1 from "
                     "1 thread, B: t1 from this layout, B-after: B with the noise measured "
                     "after the runs", fontsize=10)
        fig.tight_layout()
        name = f"plots/hist-{lay.slug}.png"
        fig.savefig(out / name, dpi=90)
        plt.close(fig)
        written.append(name)
    return written


def markdown(a, rows, calibrations, network, noise, noise_cmd, notes, problems, plot_files,
             entries) -> str:
    inj = NOISE["inject"]
    within = {cal: [r["config"] for r in rows if r.get(f"{cal}_within")] for cal in calibrations}
    lines = [
        "# aloe sim against real runs (issue 16, part 4)", "",
        f"Command: command.txt; machine: machine.json, machine-note.md. Real runs: {a.reps} "
        f"repetitions each, interleaved, {a.steps} timed steps after {a.warmup} untimed; "
        f"simulated: {a.seeds} seeds per configuration. Totals: the sum of the timed steps, "
        "median [p25–p75] over repetitions (predicted: median over seeds); median step: over "
        "every step pooled. err: predicted / measured − 1.", "",
        "Workloads: jacobi3d --nx 128 --ny 128 --nz 128 (the loop runs 126 planes a step) on 1 "
        "and 2 threads (`shared T=…`); jacobi3d-mpi --n 128 --decomp z --mode thread0 on 2 "
        "ranks × 1 thread (`mpi 2x1`, 63 planes a rank) and 1 rank × 2 threads (`mpi 1x2`). "
        f"Schedules: aloe's {', '.join(SCHEDULES)}. `inject`: --noise-p {inj['p']:g} "
        f"--noise-us {inj['us']:g} --noise-delay-us {inj['delay_us']:g} (per timed step, with "
        "probability 0.3, one CPU of the team (of each rank) is taken 100 µs into the step by "
        "a SCHED_FIFO spinner for 1 ms); in the profile a per-step source of the same "
        "probability, length and delay.", "",
        "Calibrations (from measurements only, the same for every schedule and noise of a "
        "layout): **A** t1 from the 1-thread static quiet jacobi3d run, for every layout; **B** "
        "t1 from the static quiet run of the layout itself (the per-thread-count calibration); "
        "**B-after** B with the noise measured after the runs instead of before. Noise: "
        "`aloe noise --json --trace --method fwq` replayed, measured one CPU at a time for the "
        "1-CPU layout and all CPUs at once for the 2-CPU layouts. MPI: alpha "
        f"{network['alpha_s'] * 1e6:.3g} µs, beta {network['beta_s_per_byte'] * 1e9:.3g} ns/B "
        f"({network.get('source')}), one {HALO_BYTES}-byte halo face per neighbour (1-D).", ""]
    lines += tr.failures(problems)
    lines += table(rows, calibrations) + [""]
    for cal in calibrations:
        lines.append(f"- Within 10% on the total with {cal}: {len(within[cal])} of {len(rows)}"
                     + (f" ({'; '.join(within[cal])})" if within[cal] else "") + ".")
    lines += ["", "Plots: " + ", ".join(plot_files) + ".", "", "## Noise", ""]
    for (when, mode), data in noise.items():
        lines.append(f"- {when}, {'one CPU at a time' if mode == 'one' else 'all CPUs at once'}"
                     f" (`{noise_cmd.get((when, mode), '?')}`): {_noise_summary(data)}.")
    lines += ["", f"Runs: {len(entries)}, failed: {sum(e['error'] is not None for e in entries)}."]
    return "\n".join(lines) + "\n"
