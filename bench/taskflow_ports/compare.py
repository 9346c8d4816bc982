#!/usr/bin/env python3
"""Taskflow's benchmark programs against their aloe ports: Taskflow, oneTBB, OpenMP and aloe.

For each benchmark (fibonacci, binary_tree, wavefront, graph_traversal, for_each, reduce_sum,
black_scholes, mandelbrot) runs Taskflow's program bench_<name> once per model (-m tf, tbb,
omp) and the aloe port (aloe_taskflow_ports <name>), interleaved: repetition r runs the
models rotated by r (tf tbb omp aloe, tbb omp aloe tf, ...), one process per run. Each
program sweeps its sizes and prints one row per size (mean over --rounds, in ms); the
comparison is on the largest size, and results.csv keeps every row of every run.

Writes into --out (default bench/results/taskflow-ports-<YYYYMMDD>):
  results.csv   every row of every run (rep, benchmark, model, order, size, runtime_ms,
                wall_s, the 1-minute load average at the run's start, status)
  summary.md    per benchmark and model: median, min-max, p25-p75 of the largest size, the
                ratio of medians aloe / best peer and the paired (per repetition) ratio
  command.txt   the command (build folders as $TASKFLOW_BUILD, $ALOE_BUILD)
  machine.txt   CPU (lscpu), kernel, compilers and flags of both builds, oneTBB, libgomp,
                the Taskflow and aloe commits, load average before and after
  raw/          each run's output (ignored by git)

Needs only python3's standard library, the Taskflow build folder (cmake -S <taskflow>
-DTF_BUILD_BENCHMARKS=ON; see README.md here) and the aloe build folder (or --ports).

    python3 bench/taskflow_ports/compare.py --taskflow-build DIR [--aloe-build build/release]
        [--threads 2] [--rounds 1] [--reps 5] [--benchmarks fibonacci,...] [--models tf,tbb,omp,aloe]
        [--fibonacci 30] [--num-layers 22] [--aloe-extra binary_tree:variant=group ...]
        [--env NAME=VALUE ...] [--out DIR] [--timeout 900]
    python3 bench/taskflow_ports/compare.py --summarize DIR     # summary.md again from results.csv

Exit status: 0 done (the target aloe <= 1.0x the best peer is reported, not enforced),
1 a run failed, 2 a bad command line or a missing build.
"""
from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
BENCHMARKS = ("fibonacci", "binary_tree", "wavefront", "graph_traversal", "for_each", "reduce_sum",
              "black_scholes", "mandelbrot")
PEERS = ("tf", "tbb", "omp")
MODELS = PEERS + ("aloe",)
PEER_NAMES = {"tf": "Taskflow", "tbb": "oneTBB", "omp": "OpenMP (libgomp)", "aloe": "aloe"}
TARGET = 1.0  # aloe's median at most this times the best peer's
# Environment that would change what a runtime does; removed before every run (--env adds).
SCRUBBED = re.compile(r"^(ALOE_|OMP_|GOMP_|KMP_|TBB_|LD_PRELOAD$)")
CSV_FIELDS = ["rep", "benchmark", "model", "order", "size", "runtime_ms", "largest", "wall_s", "load1", "status"]


def parse_args(argv: list[str]) -> argparse.Namespace:
    doc = __doc__.splitlines()
    p = argparse.ArgumentParser(description=doc[0], epilog="\n".join(doc[2:]),
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--taskflow-build", help="Taskflow's build folder (holds benchmarks/bench_<name>)")
    p.add_argument("--aloe-build", default="build/release",
                   help="aloe's build folder (default build/release, relative to the repository)")
    p.add_argument("--ports", help="the aloe_taskflow_ports program (default: in --aloe-build)")
    p.add_argument("--threads", type=int, default=2, help="threads of every model (default 2)")
    p.add_argument("--rounds", type=int, default=1, help="rounds per size inside a run (-r; default 1)")
    p.add_argument("--reps", type=int, default=5, help="runs of every model per benchmark (default 5)")
    p.add_argument("--benchmarks", default=",".join(BENCHMARKS), help="comma-separated subset")
    p.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of tf,tbb,omp,aloe")
    p.add_argument("--fibonacci", type=int, default=30, help="fibonacci's -f: sweep n = 1..F (default 30)")
    p.add_argument("--num-layers", type=int, default=22,
                   help="binary_tree's -l: sweep 1..L layers (default 22)")
    p.add_argument("--aloe-extra", action="append", default=[], metavar="BENCH:KEY=VALUE",
                   help="another aloe model for BENCH, with --variant or --schedule VALUE "
                   "(KEY variant or schedule), e.g. binary_tree:variant=group; repeatable")
    p.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                   help="set in every run's environment (after the scrub); repeatable")
    p.add_argument("--out", help="results folder (default bench/results/taskflow-ports-<date>)")
    p.add_argument("--timeout", type=float, default=900, help="seconds before a run is killed")
    p.add_argument("--summarize", metavar="DIR", help="only rewrite DIR/summary.md from DIR/results.csv")
    a = p.parse_args(argv)
    if a.summarize:
        return a
    a.benchmarks = [b for b in a.benchmarks.split(",") if b]
    a.models = [m for m in a.models.split(",") if m]
    for b in a.benchmarks:
        if b not in BENCHMARKS:
            p.error(f"--benchmarks: unknown '{b}' (one of {', '.join(BENCHMARKS)})")
    for m in a.models:
        if m not in MODELS:
            p.error(f"--models: unknown '{m}' (one of {', '.join(MODELS)})")
    for name in ("threads", "rounds", "reps", "fibonacci", "num_layers"):
        if getattr(a, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    extras = []
    for spec in a.aloe_extra:
        m = re.fullmatch(r"([a-z_]+):(variant|schedule)=(.+)", spec)
        if not m or m.group(1) not in BENCHMARKS:
            p.error(f"--aloe-extra {spec}: expected BENCH:variant=V or BENCH:schedule=S")
        extras.append((m.group(1), m.group(2), m.group(3)))
    a.aloe_extra = extras
    env = {}
    for spec in a.env:
        name, eq, value = spec.partition("=")
        if not eq or not name:
            p.error(f"--env {spec}: expected NAME=VALUE")
        env[name] = value
    a.env = env
    if not a.taskflow_build:
        p.error("--taskflow-build DIR is required (Taskflow built with -DTF_BUILD_BENCHMARKS=ON; "
                "see bench/taskflow_ports/README.md)")
    return a


# --- the programs -------------------------------------------------------------------------

def in_repo(path: str) -> Path:
    p = Path(path)
    return p if p.is_absolute() else REPO / p


def check_builds(a: argparse.Namespace) -> str | None:
    """What is missing, in words, or None."""
    tf = Path(a.taskflow_build)
    if not tf.is_dir():
        return (f"--taskflow-build {a.taskflow_build}: no such folder. Build Taskflow's benchmarks "
                "outside the repository first (cmake -S <taskflow> -B DIR -DTF_BUILD_BENCHMARKS=ON; "
                "see bench/taskflow_ports/README.md)")
    if any(m in PEERS for m in a.models):
        missing = [b for b in a.benchmarks if not os.access(tf / "benchmarks" / f"bench_{b}", os.X_OK)]
        if missing:
            return (f"--taskflow-build {a.taskflow_build}: no benchmarks/bench_{{{','.join(missing)}}} "
                    "(is it a Taskflow build with -DTF_BUILD_BENCHMARKS=ON, and were these targets built?)")
    if "aloe" in a.models or a.aloe_extra:
        a.ports = a.ports or str(in_repo(a.aloe_build) / "bench/taskflow_ports/aloe_taskflow_ports")
        if not os.access(a.ports, os.X_OK):
            return (f"the aloe port is not at {a.ports} (build the target aloe_taskflow_ports, or "
                    "pass --aloe-build/--ports)")
    return None


def models_of(a: argparse.Namespace, benchmark: str) -> list[str]:
    """The models run for one benchmark: the chosen ones, then its --aloe-extra ones."""
    out = list(a.models)
    for b, key, value in a.aloe_extra:
        if b == benchmark:
            out.append(f"aloe[{key}={value}]")
    return out


def command(a: argparse.Namespace, benchmark: str, model: str) -> list[str]:
    sizes = []
    if benchmark == "fibonacci":
        sizes = ["-f", str(a.fibonacci)]
    elif benchmark == "binary_tree":
        sizes = ["-l", str(a.num_layers)]
    common = ["-t", str(a.threads), "-r", str(a.rounds)]
    if model in PEERS:
        return [str(Path(a.taskflow_build) / "benchmarks" / f"bench_{benchmark}"), *common, "-m", model, *sizes]
    argv = [a.ports, benchmark, *common, "-m", "aloe", *sizes]
    m = re.fullmatch(r"aloe\[(variant|schedule)=(.+)\]", model)
    if m:
        argv += [f"--{m.group(1)}", m.group(2)]
    return argv


def environment(a: argparse.Namespace) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not SCRUBBED.match(k)}
    env["ALOE_NUM_THREADS"] = str(a.threads)  # the port sets it too (-t)
    return env | a.env


ROW = re.compile(r"^\s*(\d+)\s+([0-9.eE+-]+|nan|inf)\s*$")


def parse_output(text: str) -> list[tuple[int, float]]:
    """The (size, runtime in ms) rows of a Taskflow-style output: a settings line, a header
    line, then one row of two numbers per size."""
    return [(int(m.group(1)), float(m.group(2))) for m in map(ROW.match, text.splitlines()) if m]


def run_one(argv: list[str], env: dict, timeout: float) -> tuple[list[tuple[int, float]], float, str, str]:
    """Rows, wall seconds, the output, and what went wrong ('' when nothing)."""
    start = time.monotonic()
    try:
        p = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return parse_output(out), time.monotonic() - start, out, f"timed out after {timeout:g} s"
    except OSError as e:
        return [], time.monotonic() - start, "", str(e)
    wall = time.monotonic() - start
    rows = parse_output(p.stdout)
    text = p.stdout + ("\n--- stderr ---\n" + p.stderr if p.stderr.strip() else "")
    if p.returncode != 0:
        return rows, wall, text, f"exit status {p.returncode}: {p.stderr.strip()[-600:]}"
    if not rows:
        return rows, wall, text, "no size/runtime rows in the output"
    return rows, wall, text, ""


# --- paths shown in files -------------------------------------------------------------------

def shown(word: str, a: argparse.Namespace) -> str:
    """A command-line word with this machine's paths replaced: the repository's made relative,
    the build folders and the port as $TASKFLOW_BUILD / $ALOE_BUILD."""
    roots = [(Path(a.taskflow_build).resolve(), "$TASKFLOW_BUILD")] if a.taskflow_build else []
    aloe_build = in_repo(a.aloe_build).resolve()
    if REPO not in aloe_build.parents:
        roots.append((aloe_build, "$ALOE_BUILD"))
    if a.ports and REPO not in Path(a.ports).resolve().parents and not any(
            r in Path(a.ports).resolve().parents for r, _ in roots):
        roots.append((Path(a.ports).resolve(), "$ALOE_PORTS"))
    flag, eq, value = word.partition("=")
    if eq and flag.startswith("-"):
        return f"{flag}={shown(value, a)}"
    if not word.startswith("/"):
        return word
    path = Path(word).resolve()
    for root, name in roots:
        if path == root or root in path.parents:
            return name + ("/" + str(path.relative_to(root)) if path != root else "")
    if path == REPO or REPO in path.parents:
        return str(path.relative_to(REPO)) or "."
    return "<path>"


def shown_command(argv: list[str], a: argparse.Namespace) -> str:
    words = [shown(w, a) for w in argv]
    return " ".join(w if w.startswith(("$", "<")) else shlex.quote(w) for w in words)


# --- the machine ----------------------------------------------------------------------------

def output_of(argv: list[str], cwd: Path | None = None) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30, cwd=cwd).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return ""


def cmake_cache(build: Path) -> dict[str, str]:
    values = {}
    try:
        for line in (build / "CMakeCache.txt").read_text(errors="replace").splitlines():
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*):[A-Z]+=(.*)$", line)
            if m:
                values[m.group(1)] = m.group(2)
    except OSError:
        pass
    return values


def build_description(label: str, build: Path) -> list[str]:
    cache = cmake_cache(build)
    if not cache:
        return [f"{label}: no CMakeCache.txt"]
    kind = cache.get("CMAKE_BUILD_TYPE", "")
    compiler = cache.get("CMAKE_CXX_COMPILER", "")
    version = output_of([compiler, "--version"]).splitlines()[:1] if compiler else []
    flags = " ".join(x for x in (cache.get("CMAKE_CXX_FLAGS", ""), cache.get(f"CMAKE_CXX_FLAGS_{kind.upper()}", ""))
                     if x)
    return [f"{label}: {version[0] if version else 'compiler unknown'}; CMAKE_BUILD_TYPE={kind}; flags: {flags}"]


def library_version(binary: str, stem: str) -> str:
    """The file a program loads for library `stem` (libtbb, libgomp), by its resolved name."""
    for line in output_of(["ldd", binary]).splitlines():
        m = re.match(rf"\s*({re.escape(stem)}\S*) => (\S+)", line)
        if m:
            return Path(os.path.realpath(m.group(2))).name
    return "not linked"


def taskflow_commit(build: Path) -> str:
    marker = build / "taskflow-commit.txt"  # written when the build was made (README.md)
    if marker.is_file():
        return marker.read_text().strip()
    source = cmake_cache(build).get("CMAKE_HOME_DIRECTORY")
    if source and Path(source).is_dir():
        commit = output_of(["git", "rev-parse", "HEAD"], cwd=Path(source))
        if commit:
            return commit
    return "unknown (no taskflow-commit.txt in the build folder, no git checkout of its source)"


def machine_text(a: argparse.Namespace, started: str, load_before: str, load_after: str) -> str:
    keep = ("Architecture", "Model name", "CPU(s)", "On-line CPU(s) list", "Thread(s) per core",
            "Core(s) per socket", "Socket(s)", "NUMA node(s)", "CPU max MHz", "L1d cache", "L2 cache",
            "L3 cache", "Hypervisor vendor", "Virtualization type")
    lscpu = [line for line in output_of(["lscpu"]).splitlines()
             if line.split(":", 1)[0].strip() in keep]
    os_name = ""
    try:
        os_name = next((line.split("=", 1)[1].strip('"') for line in
                        Path("/etc/os-release").read_text().splitlines() if line.startswith("PRETTY_NAME=")), "")
    except OSError:
        pass
    aloe_commit = output_of(["git", "rev-parse", "HEAD"], cwd=REPO) or "unknown"
    dirty = output_of(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO)
    lines = [f"started: {started}; finished: {datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}",
             f"kernel: {platform.system()} {platform.release()}; {os_name}",
             f"CPUs this process may use: {len(os.sched_getaffinity(0))}",
             f"load average before: {load_before}; after: {load_after}",
             "", "lscpu:", *("  " + x for x in lscpu), ""]
    lines += build_description("Taskflow build", Path(a.taskflow_build))
    lines += build_description("aloe build", in_repo(a.aloe_build))
    lines += ["aloe port compiled at -O3 (bench/taskflow_ports/CMakeLists.txt), libaloe at the build's flags"]
    probe = str(Path(a.taskflow_build) / "benchmarks" / f"bench_{a.benchmarks[0]}")
    lines += [f"oneTBB: {library_version(probe, 'libtbb')}; OpenMP: {library_version(probe, 'libgomp')}",
              f"Taskflow commit: {taskflow_commit(Path(a.taskflow_build))}",
              f"aloe commit: {aloe_commit}" + (" (uncommitted changes)" if dirty else ""),
              f"aloe port: {port_identity(a.ports)}",
              f"python: {platform.python_version()}"]
    return "\n".join(lines) + "\n"


def port_identity(path: str | None) -> str:
    """The port binary's build time and content hash: which build of a changing tree ran."""
    if not path or not Path(path).is_file():
        return "not run"
    data = Path(path).read_bytes()
    built = datetime.datetime.fromtimestamp(Path(path).stat().st_mtime).astimezone()
    return f"built {built:%Y-%m-%d %H:%M %Z}, sha256 {hashlib.sha256(data).hexdigest()[:16]}"


def load_average() -> str:
    try:
        return " ".join(Path("/proc/loadavg").read_text().split()[:3])
    except OSError:
        return "unknown"


# --- statistics and the summary ---------------------------------------------------------------

def quantile(xs: list[float], f: float) -> float:
    """Linear interpolation between order statistics (numpy's default)."""
    xs = sorted(xs)
    pos = f * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def run_times(rows: list[dict], whole_sweep: bool = False) -> dict[str, dict[str, dict[int, float]]]:
    """benchmark -> model -> repetition -> ms of its successful runs: the largest size's, or
    with whole_sweep the sum of the run's sizes."""
    times: dict[str, dict[str, dict[int, float]]] = {}
    for r in rows:
        if r["status"] != "ok" or not (whole_sweep or r["largest"] == "1"):
            continue
        per_rep = times.setdefault(r["benchmark"], {}).setdefault(r["model"], {})
        rep = int(r["rep"])
        per_rep[rep] = per_rep.get(rep, 0.0) + float(r["runtime_ms"])
    return times


def summarize(rows: list[dict]) -> str:
    """summary.md from results.csv's rows (largest size only, successful runs)."""
    by = run_times(rows)
    sizes = {r["benchmark"]: r["size"] for r in rows if r["status"] == "ok" and r["largest"] == "1"}
    failed = [f"{r['benchmark']} {r['model']} rep {r['rep']}: {r['status']}" for r in rows if r["status"] != "ok"]
    out = ["| benchmark | size | model | runs | median ms | min–max ms | p25–p75 ms | / best peer "
           "(medians) | paired / best peer, median [p25, p75] |", "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for bench in [b for b in BENCHMARKS if b in by]:
        models = by[bench]
        medians = {m: statistics.median(t.values()) for m, t in models.items() if t}
        peers = {m: v for m, v in medians.items() if m in PEERS}
        best = min(peers, key=peers.get) if peers else None
        for m in sorted(models, key=lambda m: (m not in PEERS, MODELS.index(m) if m in MODELS else 9, m)):
            times = list(models[m].values())
            ratio = paired = ""
            if best and m.startswith("aloe"):
                ratio = f"{medians[m] / peers[best]:.3f}"
                # Per repetition: aloe's time over the best peer's time in the same repetition.
                pairs = [models[m][rep] / min(models[p][rep] for p in peers if rep in models[p])
                         for rep in models[m] if all(rep in models[p] for p in peers)]
                if pairs:
                    paired = (f"{statistics.median(pairs):.3f} [{quantile(pairs, 0.25):.3f}, "
                              f"{quantile(pairs, 0.75):.3f}]")
            elif m == best:
                ratio = "best peer"
            out.append(f"| {bench} | {sizes[bench]} | {PEER_NAMES.get(m, m)} | {len(times)} | "
                       f"{medians[m]:.2f} | {min(times):.2f}–{max(times):.2f} | "
                       f"{quantile(times, 0.25):.2f}–{quantile(times, 0.75):.2f} | {ratio} | {paired} |")
        for m in sorted(x for x in medians if x.startswith("aloe")):
            if not best:
                break
            r = medians[m] / peers[best]
            verdicts.append(f"- **{bench}**, {m}: / {PEER_NAMES[best]} = {r:.3f} — "
                            + ("met" if r <= TARGET else "missed") + f" (target ≤ {TARGET:.1f}×)")
    text = out + ["", "Target: aloe's median at most the best peer's (≤ 1.0×), per benchmark.", ""] + verdicts
    text += ["", *against_each_peer(rows)]
    if failed:
        text += ["", "Failed runs:", *(f"- {f}" for f in failed)]
    return "\n".join(text) + "\n"


def paired_ratios(times: dict[str, dict[int, float]], model: str, peer: str) -> list[float]:
    """model's time over peer's in each repetition both ran."""
    return [times[model][rep] / times[peer][rep] for rep in sorted(times.get(model, {}))
            if rep in times.get(peer, {}) and times[peer][rep] > 0]


def against_each_peer(rows: list[dict]) -> list[str]:
    """aloe against each peer separately, per repetition: at the largest size, and over the whole
    sweep (the sum of a run's sizes). The best-of-three median above is the lowest of three noisy
    medians, so on a shared machine aloe misses it even where it ties every peer; these rows say
    whether a peer is faster in most repetitions."""
    largest, sweep = run_times(rows), run_times(rows, whole_sweep=True)
    out = ["Against each peer, per repetition (aloe's time over the peer's in the same repetition): "
           "median [min, max], and in how many repetitions aloe was the faster.", "",
           "| benchmark | aloe | peer | largest size: ratio | faster | whole sweep: ratio | faster |",
           "|---|---|---|---:|---:|---:|---:|"]
    for bench in [b for b in BENCHMARKS if b in largest]:
        for m in sorted(x for x in largest[bench] if x.startswith("aloe")):
            for peer in [p for p in MODELS if p in PEERS and p in largest[bench]]:
                cells = []
                for times in (largest[bench], sweep[bench]):
                    pairs = paired_ratios(times, m, peer)
                    if not pairs:
                        cells += ["–", "–"]
                        continue
                    cells += [f"{statistics.median(pairs):.3f} [{min(pairs):.3f}, {max(pairs):.3f}]",
                              f"{sum(1 for x in pairs if x < 1)} of {len(pairs)}"]
                out.append(f"| {bench} | {m} | {PEER_NAMES.get(peer, peer)} | " + " | ".join(cells) + " |")
    return out


def header(a: argparse.Namespace, cmd: str) -> str:
    return "\n".join([
        "# Taskflow's benchmark programs: Taskflow, oneTBB, OpenMP and aloe", "",
        f"Command: `{cmd}` (machine: machine.txt).", "",
        f"{a.threads} threads, {a.rounds} round(s) per size inside a run, {a.reps} runs per model, "
        "interleaved (repetition r runs the models rotated by r), one process per run. Each "
        "program sweeps its sizes; the table is the largest size's runtime (ms, the program's "
        "own timer: graph building included where the benchmark times it). Every row of every run "
        "is in results.csv. Ratios: aloe's median over the best peer's median, and the median of "
        "the per-repetition ratios (aloe over the fastest peer of the same repetition).", "", ""])


# --- main -----------------------------------------------------------------------------------

def read_results(folder: Path) -> list[dict]:
    with open(folder / "results.csv", newline="") as f:
        return list(csv.DictReader(f))


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    if a.summarize:
        folder = Path(a.summarize)
        if not (folder / "results.csv").is_file():
            print(f"compare.py: no results.csv in {a.summarize}", file=sys.stderr)
            return 2
        old = (folder / "summary.md").read_text() if (folder / "summary.md").is_file() else ""
        head = old.split("| benchmark |", 1)[0] if "| benchmark |" in old else ""
        (folder / "summary.md").write_text(head + summarize(read_results(folder)))
        print((folder / "summary.md").read_text())
        return 0
    problem = check_builds(a)
    if problem:
        print(f"compare.py: {problem}", file=sys.stderr)
        return 2
    out = Path(a.out) if a.out else REPO / "bench/results" / f"taskflow-ports-{datetime.date.today():%Y%m%d}"
    (out / "raw").mkdir(parents=True, exist_ok=True)
    cmd = shown_command(["python3", str(Path(__file__).resolve()), *argv], a)
    (out / "command.txt").write_text(
        "# $TASKFLOW_BUILD: Taskflow's build folder (cmake -DTF_BUILD_BENCHMARKS=ON, outside the repository);\n"
        "# $ALOE_BUILD: aloe's build folder when outside the repository. See bench/taskflow_ports/README.md.\n"
        + cmd + "\n")
    load_before = load_average()
    started = f"{datetime.datetime.now().astimezone():%Y-%m-%d %H:%M %Z}"
    env = environment(a)
    failures = 0
    with open(out / "results.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        for rep in range(a.reps):
            for bench in a.benchmarks:
                models = models_of(a, bench)
                order = models[rep % len(models):] + models[:rep % len(models)]
                for position, model in enumerate(order):
                    argv_run = command(a, bench, model)
                    load1 = load_average().split(" ")[0]  # other work on the machine, at the start
                    rows, wall, text, error = run_one(argv_run, env, a.timeout)
                    tag = re.sub(r"[^A-Za-z0-9_.=-]", "_", model)
                    (out / "raw" / f"{bench}-{tag}-rep{rep}.txt").write_text(
                        shown_command(argv_run, a) + "\n" + text)
                    status = "ok" if not error else error.replace("\n", " ")
                    for k, (size, ms) in enumerate(rows or [(0, float("nan"))]):
                        writer.writerow({"rep": rep, "benchmark": bench, "model": model, "order": position,
                                         "size": size, "runtime_ms": ms, "largest": int(k == len(rows) - 1),
                                         "wall_s": f"{wall:.3f}", "load1": load1, "status": status})
                    f.flush()
                    last = f"{rows[-1][1]:.2f} ms at size {rows[-1][0]}" if rows else "no rows"
                    print(f"[rep {rep + 1}/{a.reps}] {bench} {model}: {last} ({wall:.1f} s)"
                          + (f" FAILED: {error}" if error else ""), file=sys.stderr)
                    failures += bool(error)
    (out / "machine.txt").write_text(machine_text(a, started, load_before, load_average()))
    (out / "summary.md").write_text(header(a, cmd) + summarize(read_results(out)))
    print((out / "summary.md").read_text())
    print(f"compare.py: wrote {shown(str(out.resolve()), a)}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
