"""Runs a matrix: one subprocess per run, interleaved, every record validated.

Order (DESIGN.md "Measuring": compare interleaved, so drift hits every config equally):
  1. one `--runtime serial` run per workload: the checksum every other run must reproduce
     bit for bit (and the first serial time);
  2. one quiet `libgomp:static` calibration run per workload and thread count that an
     `inject:…,frac=F` regime needs (δ = F × its median step time);
  3. the timed runs: for rep in range(reps), one quiet serial run per workload (the ideal is
     the median serial time / threads, so it gets repetitions like everything else), then the
     groups (workload, regime, threads) in an order rotated by rep, and inside each group its
     runs rotated by rep (A B C, B C A, …);
  4. with timelines, one extra `--timeline` run per selected config (timed runs never carry
     --timeline, so they carry no instrumentation).
Every run is appended to runs.jsonl as it finishes. A failed run is recorded, printed loudly
and the rest goes on; Ctrl-C stops the loop and keeps what was gathered.

An `aloe-run:S[@KIND]` run is the workload under `aloe run --schedule S` (the libgomp
interposer), its loops compiled schedule(runtime); `libgomp:runtime,KIND` the same loops on
plain libgomp. Every run's OMP_SCHEDULE is the one it names (matrix.Run.env) or unset.

An MPI workload (one rank count of an MPI program, matrix.py) runs every one of its runs,
serial reference and calibration included, under `mpirun -np R` (mpi.py builds it) in a
scratch folder of its own, rank 0's record read from a file there; timed runs also preload
libaloe-mpi when the matrix asks for statistics, and timed aloe runs then also write each
rank's loop statistics (ALOE_STATS). Its entries carry `ranks` and `mpi` (the launch, each
rank's MPI statistics and, for aloe runs, its loop sites' summary).
"""
from __future__ import annotations

import dataclasses
import json
import os
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

from . import mpi, summary
from .matrix import Matrix, Run, Workload, noise_for, runs_for, threads_for
from .provenance import display_command
from .regimes import Regime, RegimeError
from . import files

SERIAL = Run("serial", "serial")
CALIBRATION = Run("libgomp", "static")
QUIET = Regime(spec="none", kind="none")
EXIT_MEANING = {1: "runtime failure", 2: "bad command line", 3: "result check failed"}


@dataclasses.dataclass(frozen=True)
class Config:
    workload: Workload
    regime: Regime
    run: Run
    threads: int

    @property
    def group(self) -> tuple[str, str, int]:
        return (self.workload.name, self.regime.name, self.threads)


@dataclasses.dataclass
class Outcome:
    entries: list[dict]
    problems: list[str]   # loud one-line messages: failed runs and skipped configs
    interrupted: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems and not self.interrupted


def configs(m: Matrix) -> list[Config]:
    """Every timed configuration, grouped by workload, regime and threads."""
    return [Config(w, r, run, t) for w in m.workloads for r in noise_for(m, w)
            for t in threads_for(m, w) for run in runs_for(m, w)]


def interleave(cfgs: list[Config], reps: int) -> list[tuple[int, Config]]:
    """(rep, config) in run order: groups and runs within each group rotated by rep."""
    groups: dict[tuple, list[Config]] = {}
    for c in cfgs:
        groups.setdefault(c.group, []).append(c)
    keys = list(groups)
    return [(rep, c) for rep in range(reps) for g in _rotate(keys, rep)
            for c in _rotate(groups[g], rep)]


def with_serial_runs(order: list[tuple[int, Config]],
                     workloads: list[Workload]) -> list[tuple[int, Config]]:
    """`order` with one quiet serial run per workload at the start of every rep after the
    first (rep 0's serial run is the reference, made before everything else)."""
    out, seen = [], set()
    for rep, c in order:
        if rep > 0 and rep not in seen:
            out += [(rep, Config(w, QUIET, SERIAL, 1)) for w in workloads]
        seen.add(rep)
        out.append((rep, c))
    return out


def _rotate(items: list, n: int) -> list:
    n %= max(len(items), 1)
    return items[n:] + items[:n]


def app_command(apps_dir: Path, workload: Workload, run: Run, threads: int,
                noise_flags: list[str], timeline: bool = False,
                aloe: str | None = None) -> list[str]:
    """`<apps>/aloe-app-W <workload flags> --runtime R --schedule S --threads T --json - <noise>`;
    an aloe-run run prefixes `<aloe> run --schedule S --threads T --summary none --` and runs
    the app at `--runtime libgomp --schedule runtime`."""
    argv = [str(apps_dir / f"aloe-app-{workload.app}"), *workload.args, "--runtime",
            run.app_runtime, "--schedule", run.app_schedule, "--threads", str(threads),
            "--json", "-", *noise_flags]
    if run.is_aloe_run:
        if not aloe:
            raise ValueError(f"run {run.label} needs the aloe tool (--aloe)")
        argv = [aloe, "run", "--schedule", run.aloe_schedule, "--threads", str(threads),
                "--summary", "none", "--"] + argv
    return argv + ["--timeline"] if timeline else argv


def run_environment(run: Run, base: dict[str, str] | None = None) -> dict[str, str]:
    """The run's environment: `base` (os.environ) without OMP_SCHEDULE, plus what the run sets."""
    env = dict(os.environ if base is None else base)
    env.pop("OMP_SCHEDULE", None)
    return env | run.env


def display_run_command(argv: list[str], run: Run) -> str:
    """The command line as a shell would take it, with the variables the run sets first."""
    prefix = "".join(f"{k}={shlex.quote(v)} " for k, v in run.env.items())
    return prefix + display_command(argv)


def validate(record: dict | None, *, exit_status: int | None, run: Run, threads: int,
             reference_bits: str | None) -> list[str]:
    """What is wrong with one run (empty: valid). reference_bits None: no checksum compare."""
    errors = []
    if exit_status != 0:
        meaning = EXIT_MEANING.get(exit_status, "killed or timed out" if exit_status is None
                                   or exit_status < 0 else "unexpected")
        errors.append(f"exit status {exit_status} ({meaning})")
    if record is None:
        return errors + ["no JSON record on stdout"]
    if record.get("ok") is not True:
        failed = [c.get("what", "?") for c in record.get("checks", []) if not c.get("ok")]
        errors.append("record says ok=false" + (f": {'; '.join(failed)}" if failed else ""))
    echoed = [("runtime", run.app_runtime), ("threads", threads)] if run is not SERIAL else []
    if run.app_runtime in ("libgomp", "libomp", "tbb"):
        echoed.append(("schedule", run.app_schedule))  # aloe prints its canonical form
    for key, want in echoed:
        if key in record and record[key] != want:
            errors.append(f"record {key} is {record[key]!r}, expected {want!r}")
    errors += _runtime_schedule_errors(record, run)
    if run.is_aloe_run:
        errors += _interposer_errors(record, run)
    bits = record.get("checksum_bits")
    if not bits:
        errors.append("record has no checksum_bits")
    elif reference_bits is not None and bits != reference_bits:
        errors.append(f"checksum_bits {bits} differ from the serial run's {reference_bits}")
    if run.app_runtime in ("libgomp", "libomp"):
        lib = record.get("openmp_library") or ""
        if not Path(lib).name.startswith(f"{run.app_runtime}.so"):
            errors.append(f"openmp_library is {lib or None!r}, expected {run.app_runtime}.so*: "
                          "the wrong OpenMP runtime was loaded")
    if not isinstance(record.get("total_s"), (int, float)) or not record.get("step_s"):
        errors.append("record lacks total_s or step_s")
    return errors


def _runtime_schedule_errors(record: dict, run: Run) -> list[str]:
    """A run that set OMP_SCHEDULE=KIND: the record's run-sched-var (omp_get_schedule() at the
    start) must have KIND's kind (modifiers aside), and its chunk when KIND names one. Records
    that predate the runtime_schedule key are not checked."""
    want = run.omp_schedule
    got = record.get("runtime_schedule")
    if not want or not isinstance(got, dict):
        return []
    kind, _, chunk = _bare(want).partition(",")
    if _bare(str(got.get("kind"))) != kind or (chunk and got.get("chunk") != int(chunk)):
        return [f"the run-sched-var was {got.get('value')!r}, expected OMP_SCHEDULE={want!r}"
                " (did the variable reach the program?)"]
    return []


def _bare(kind: str) -> str:
    """A schedule kind without its ordering modifier: libgomp reports static as
    monotonic:static, and omp_get_schedule() has no nonmonotonic flag."""
    return kind.removeprefix("nonmonotonic:").removeprefix("monotonic:")


def _interposer_errors(record: dict, run: Run) -> list[str]:
    """An aloe-run run: the record must show libaloe-gomp loaded with `aloe run`'s schedule."""
    got = record.get("interposer")
    if not isinstance(got, dict) or not str(got.get("library", "")).startswith("libaloe-gomp"):
        return [f"record shows no aloe interposer loaded (interposer: {got!r}): the loop ran "
                "on plain libgomp"]
    told = got.get("ALOE_OMP_SCHEDULE")
    if told is not None and told != run.aloe_schedule:
        return [f"the interposer was told ALOE_OMP_SCHEDULE={told!r}, expected "
                f"{run.aloe_schedule!r}"]
    return []


def parse_record(stdout: str) -> dict | None:
    """The JSON object on stdout (text before its first '{' is ignored), or None."""
    start = stdout.find("{")
    if start < 0:
        return None
    try:
        record, _ = json.JSONDecoder().raw_decode(stdout[start:])
    except json.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


class Runner:
    """Runs one matrix into runs.jsonl; progress and failures go to `progress`."""

    def __init__(self, apps_dir: Path, runs_path: Path, *, progress=None,
                 aloe: str | None = None, mpirun: str | None = None,
                 mpi_library: Path | None = None, cpus: int | None = None):
        self.apps_dir = Path(apps_dir)
        self.aloe = aloe  # the aloe tool, for aloe-run runs
        self.mpirun = mpirun  # for MPI workloads
        self.mpi_library = Path(mpi_library) if mpi_library else mpi.stats_library(apps_dir)
        self.cpus = cpus or mpi.available_cpus()
        self.mpi = None       # the matrix's MpiOptions, set by execute()
        self.stats_note = ""  # why MPI statistics are off although asked for
        self._warned: set = set()
        self.runs_path = Path(runs_path)
        self.timeout_s = 600.0  # replaced by the matrix's run_timeout_s
        self.progress = progress or sys.stderr
        self.outcome = Outcome(entries=[], problems=[])
        self._done = 0
        self._total = 0
        self._start = time.monotonic()

    def missing_apps(self, m: Matrix) -> list[str]:
        """Missing programs of non-MPI workloads (MPI ones are skipped instead: skip_mpi)."""
        return list(dict.fromkeys(str(self.apps_dir / f"aloe-app-{w.app}") for w in m.workloads
                                  if not w.is_mpi
                                  and not (self.apps_dir / f"aloe-app-{w.app}").is_file()))

    def skip_mpi(self, m: Matrix) -> tuple[Matrix, list[str]]:
        """`m` without the MPI workloads that cannot run here (no mpirun, program not built),
        and one line per family saying which and why."""
        skipped, keep = {}, []
        for w in m.workloads:
            reason = mpi.skip_reason(self.mpirun, self.apps_dir / f"aloe-app-{w.app}") \
                if w.is_mpi else None
            if reason:
                skipped.setdefault(w.family, ([], reason))[0].append(w.ranks)
            else:
                keep.append(w)
        lines = [f"{family} (ranks {', '.join(map(str, ranks))}): all its rows skipped: {why}"
                 for family, (ranks, why) in skipped.items()]
        return dataclasses.replace(m, workloads=keep), lines

    def stats_problem(self, m: Matrix) -> str | None:
        """Why MPI statistics asked for cannot be measured (None: they can, or are off)."""
        if not m.has_mpi or not m.mpi.stats or self.mpi_library.is_file():
            return None
        return (f"{mpi.MPI_LIBRARY} is not built in {self.mpi_library.parent.name}/ next to "
                "the apps: MPI runs go on without slack statistics")

    def aloe_run_problem(self, m: Matrix) -> str | None:
        """Why the matrix's aloe-run runs cannot run (None: they can, or there are none): the
        aloe tool is missing, or `aloe run --help` fails (a tool without the subcommand)."""
        if not any(r.is_aloe_run for w in m.workloads for r in runs_for(m, w)):
            return None
        if not self.aloe:
            return "aloe-run runs need the aloe tool: pass --aloe PATH"
        argv = [self.aloe, "run", "--help"]
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"aloe-run runs need the aloe tool, and '{self.aloe}' cannot run: {e}"
        if p.returncode != 0:
            said = (p.stderr.strip() or p.stdout.strip()).splitlines()[:1]
            return (f"aloe-run runs need `aloe run`, and '{display_command(argv)}' exited "
                    f"{p.returncode}{': ' + said[0] if said else ''} (build aloe_cli and the "
                    "interposer, or pass --aloe PATH)")
        return None

    def execute(self, m: Matrix, *, timelines: bool = False) -> Outcome:
        """Runs everything; never raises on a failed run, stops cleanly on Ctrl-C."""
        self.timeout_s = m.run_timeout_s
        self.mpi = m.mpi
        problem = self.stats_problem(m)
        if problem:
            self.stats_note = problem
            print(f"aloe_harness: note: {problem}", file=self.progress)
        self.scratch = self.runs_path.parent / "mpi-scratch"
        calibrate = sorted({(w.name, t) for w in m.workloads for t in threads_for(m, w)
                            if any(r.needs_calibration for r in noise_for(m, w))})
        order = with_serial_runs(interleave(configs(m), m.reps), m.workloads)
        self._total = len(m.workloads) + len(calibrate) + len(order)
        try:
            reference = {w.name: self._serial(w) for w in m.workloads}
            quiet = {}
            for w in m.workloads:
                for t in threads_for(m, w):
                    if (w.name, t) not in calibrate:
                        continue
                    if reference[w.name] is None:
                        self._total -= 1
                    else:
                        quiet[w.name, t] = self._calibrate(w, t, noise_for(m, w),
                                                           reference[w.name])
            skipped = set()
            for rep, c in order:
                bits = reference[c.workload.name]
                flags = [] if c.run is SERIAL else self._noise_flags(c, quiet, skipped)
                if bits is None or flags is None:
                    self._total -= 1
                    continue
                self._one("serial" if c.run is SERIAL else "timed", c, flags, bits, rep, m.reps)
            if timelines:
                chosen = timeline_selection(m, summary.summarize(self.outcome.entries))
                self._total += len(chosen)
                for c in chosen:
                    flags = self._noise_flags(c, quiet, skipped)
                    if reference[c.workload.name] is not None and flags is not None:
                        self._one("timeline", c, flags, reference[c.workload.name], 0, 1,
                                  timeline=True)
        except KeyboardInterrupt:
            self.outcome.interrupted = True
            self._problem(f"INTERRUPTED (Ctrl-C) after {self._done} runs: the results are "
                          "partial")
        finally:
            try:
                self.scratch.rmdir()  # only when every run's folder was removed (all valid)
            except OSError:
                pass
        return self.outcome

    def _serial(self, w: Workload) -> str | None:
        entry = self._one("serial", Config(w, QUIET, SERIAL, 1), [], None, 0, 1)
        if not entry["valid"]:
            self._problem(f"{w.name}: the serial reference run failed; its configs are skipped")
            return None
        return entry["record"]["checksum_bits"]

    def _calibrate(self, w: Workload, threads: int, noise: list[Regime],
                   reference_bits: str) -> float | None:
        entry = self._one("calibration", Config(w, QUIET, CALIBRATION, threads), [],
                          reference_bits, 0, 1)
        if not entry["valid"]:
            self._problem(f"{w.name} t={threads}: the calibration run failed; regimes with "
                          "frac= are skipped")
            return None
        quiet = statistics.median(entry["record"]["step_s"])
        entry["quiet_step_s"] = quiet
        entry["noise_us"] = {r.name: r.delta_us(quiet) for r in noise if r.needs_calibration}
        self._rewrite_last(entry)
        return quiet

    def _noise_flags(self, c: Config, quiet: dict, skipped: set) -> list[str] | None:
        try:
            return c.regime.app_flags(quiet.get((c.workload.name, c.threads)))
        except RegimeError as e:
            if (c.group) not in skipped:
                skipped.add(c.group)
                self._problem(f"{c.workload.name} {c.regime.name} t={c.threads}: skipped: {e}")
            return None

    def _one(self, role: str, c: Config, noise_flags: list[str], reference_bits: str | None,
             rep: int, reps: int, timeline: bool = False) -> dict:
        what = {"calibration": "calibration", "timeline": "timeline"}.get(
            role, "reference" if role == "serial" and rep == 0 else f"rep {rep + 1}/{reps}")
        self._report(f"{c.workload.name} {c.regime.name} {c.run.label} t={c.threads} {what}")
        if c.workload.is_mpi:
            return self._one_mpi(role, c, noise_flags, reference_bits, rep, what, timeline)
        argv = app_command(self.apps_dir, c.workload, c.run, c.threads, noise_flags, timeline,
                           aloe=self.aloe)
        started = time.monotonic()
        try:
            p = subprocess.run(argv, capture_output=True, text=True, timeout=self.timeout_s,
                               env=run_environment(c.run))
            status, stdout, stderr = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            status, stdout = None, ""
            stderr = f"killed after {self.timeout_s:g} s\n{_text(e.stderr)}"
        except OSError as e:
            status, stdout, stderr = None, "", f"could not start: {e}"
        record = parse_record(stdout)
        errors = validate(record, exit_status=status, run=c.run, threads=c.threads,
                          reference_bits=reference_bits)
        return self._log(role, c, noise_flags, rep, what, display_run_command(argv, c.run),
                         status, started, errors, stderr, record)

    def _one_mpi(self, role: str, c: Config, noise_flags: list[str],
                 reference_bits: str | None, rep: int, what: str, timeline: bool) -> dict:
        """One run of an MPI workload under mpirun, in its own scratch folder."""
        if c.run.is_aloe_run:
            errors = [f"{c.run.label}: aloe-run runs are not supported for MPI workloads"]
            return self._log(role, c, noise_flags, rep, what, "", None, time.monotonic(),
                             errors, "", None)
        # mpirun runs in the scratch folder: every path it is given is absolute
        scratch = (self.scratch / f"run-{self._done + 1:05d}").resolve()
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        launch = mpi.Launch(c.workload.ranks, c.threads, self.cpus, self.mpi.bind_to,
                            root=mpi.is_root())
        stats = role == "timed" and self.mpi.stats and self.mpi_library.is_file()
        app = app_command(self.apps_dir.resolve(), c.workload, c.run, c.threads, noise_flags,
                          timeline)
        app[app.index("--json") + 1] = str(scratch / mpi.RECORD_FILE)
        app += ["--bind", launch.app_bind]
        mpirun = str(Path(self.mpirun).resolve()) if "/" in self.mpirun else self.mpirun
        # timed aloe runs: each rank's loop sites too (the slack policy's fractions, dequeues)
        loops = role == "timed" and self.mpi.stats and c.run.runtime == "aloe"
        env = mpi.stats_env(self.mpi_library.resolve(), scratch) if stats else {}
        env |= mpi.loop_stats_env(scratch) if loops else {}
        argv = mpi.command(mpirun, launch, app, env)
        started = time.monotonic()
        status, stdout, stderr = _run_group(argv, self.timeout_s, run_environment(c.run),
                                            scratch)
        record = None
        if (scratch / mpi.RECORD_FILE).is_file():
            record = parse_record((scratch / mpi.RECORD_FILE).read_text())
        record = record if record is not None else parse_record(stdout)
        errors = validate(record, exit_status=status, run=c.run, threads=c.threads,
                          reference_bits=reference_bits)
        if record is not None:
            errors += mpi.record_errors(record, c.workload.ranks)
        shown = mpi.display_argv(argv, scratch)
        info = launch.describe() | {"argv": shown,
                                    "stats_requested": bool(self.mpi.stats and role == "timed"),
                                    "stats_note": self.stats_note if self.mpi.stats else ""}
        warnings = []
        if stats:
            info["stats"], warnings = mpi.read_stats(scratch, c.workload.ranks)
            info["stats_pattern"] = mpi.STATS_PATTERN
        if loops:
            info["loops"], loop_warnings = mpi.read_loop_stats(scratch, c.workload.ranks)
            info["loops_pattern"] = mpi.LOOP_STATS_PATTERN
            warnings += loop_warnings
        entry = self._log(role, c, noise_flags, rep, what,
                          "".join(f"{k}={shlex.quote(v)} " for k, v in c.run.env.items())
                          + shlex.join(shown),
                          status, started, errors, stderr, record,
                          extra={"ranks": c.workload.ranks, "program": c.workload.app,
                                 "mpi": info, "warnings": warnings})
        if warnings and not errors and c.workload.name not in self._warned:
            self._warned.add(c.workload.name)
            self._problem(f"{c.workload.name} {c.regime.name} {c.run.label} t={c.threads} "
                          f"{what}: per-rank statistics incomplete: {'; '.join(warnings)} (the "
                          "run's times count; later runs of this workload are not reported)")
        if not errors:
            shutil.rmtree(scratch, ignore_errors=True)
        return entry

    def _log(self, role: str, c: Config, noise_flags: list[str], rep: int, what: str,
             command: str, status, started: float, errors: list[str], stderr: str,
             record: dict | None, extra: dict | None = None) -> dict:
        entry = {
            "role": role, "workload": c.workload.name, "noise": c.regime.name,
            "noise_spec": c.regime.spec, "runtime": c.run.runtime, "schedule": c.run.schedule,
            "env": c.run.env, "threads": c.threads, "rep": rep, "noise_flags": noise_flags,
            "command": command, "exit_status": status,
            "wall_s": round(time.monotonic() - started, 4), "valid": not errors,
            "errors": errors, "stderr_tail": stderr[-2000:] if errors else "", "record": record,
        } | (extra or {})
        self._done += 1
        self.outcome.entries.append(entry)
        with self.runs_path.open("a") as f:
            f.write(json.dumps(entry) + "\n")
        if errors:
            self._problem(f"FAILED {c.workload.name} {c.regime.name} {c.run.label} "
                          f"t={c.threads} {what}: {'; '.join(errors)}", entry["stderr_tail"])
        return entry

    def _rewrite_last(self, entry: dict) -> None:
        """Rewrites runs.jsonl's last line (the calibration entry gained its results)."""
        lines = self.runs_path.read_text().splitlines()
        lines[-1] = json.dumps(entry)
        files.write_text(self.runs_path, "\n".join(lines) + "\n")

    def _problem(self, message: str, detail: str = "") -> None:
        self.outcome.problems.append(message)
        print(f"\n*** {message}", file=self.progress)
        if detail.strip():
            print("    " + detail.strip().replace("\n", "\n    "), file=self.progress)

    def _report(self, what: str) -> None:
        elapsed = time.monotonic() - self._start
        eta = elapsed / self._done * (self._total - self._done) if self._done else None
        width = len(str(self._total))
        print(f"[{self._done + 1:>{width}}/{self._total}] {what}  elapsed {_clock(elapsed)} "
              f"eta {_clock(eta) if eta is not None else '?'}", file=self.progress, flush=True)


def timeline_selection(m: Matrix, rows: list[dict]) -> list[Config]:
    """Configs that get a --timeline run: the matrix's timeline_runs, or per group the best
    peer, the best aloe run and libgomp:static (those that ran)."""
    chosen = []
    for w in m.workloads:
        by_label = {r.label: r for r in runs_for(m, w)}
        for regime in noise_for(m, w):
            for t in threads_for(m, w):
                if m.timeline_runs is not None:
                    runs = m.timeline_runs
                else:
                    group = [r for r in rows if (r["workload"], r["noise"], r["threads"])
                             == (w.name, regime.name, t)]
                    labels = [summary.label(b) for b in (summary.best(group, peer=True),
                                                         summary.best(group, peer=False)) if b]
                    labels += ["libgomp:static"] if "libgomp:static" in by_label else []
                    runs = [by_label[x] for x in dict.fromkeys(labels)]
                chosen += [Config(w, regime, run, t) for run in runs]
    return chosen


def _run_group(argv: list[str], timeout: float, env: dict[str, str],
               cwd: Path) -> tuple[int | None, str, str]:
    """Runs argv (mpirun and its ranks) in a process group of its own: on a timeout or Ctrl-C
    the whole group is ended (mpirun's ranks too), then the exception goes on."""
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             env=env, cwd=cwd, start_new_session=True)
    except OSError as e:
        return None, "", f"could not start: {e}"
    try:
        stdout, stderr = p.communicate(timeout=timeout)
        return p.returncode, stdout, stderr
    except subprocess.TimeoutExpired:
        _end_group(p)
        stdout, stderr = p.communicate()
        return None, stdout, f"killed after {timeout:g} s\n{stderr}"
    except BaseException:
        _end_group(p)
        p.communicate()
        raise


def _end_group(p: subprocess.Popen) -> None:
    """SIGTERM to the run's process group, SIGKILL if it is still there after 5 s."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, None)):
        try:
            os.killpg(p.pid, sig)
        except ProcessLookupError:
            return
        try:
            p.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def _clock(seconds: float) -> str:
    s = int(seconds)
    return f"{s // 3600}h{s // 60 % 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"


def _text(data) -> str:
    return data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
