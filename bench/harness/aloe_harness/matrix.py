"""The run matrix: which workloads, runs, noise regimes and thread counts, how many times.

A matrix file is TOML (bench/matrices/demo.toml is the small example):

  description = "…"                 # optional, shown in the summary and report
  reps = 7                          # timed repetitions of every configuration
  threads = [2]                     # thread counts
  noise = ["none", "inject:p=0.2,frac=0.2"]        # regimes (regimes.py)
  runs = ["libgomp:guided", "aloe:hybrid,fs=0.8"]  # runtime:schedule
  timeline_runs = ["libgomp:static"]  # optional: what --timelines records (default: the
                                      # best aloe and best peer runs, plus libgomp:static)
  run_timeout_s = 600                 # optional: one run is killed after this long
  fs_values = [0.0, 0.5, 1.0]         # optional: the fs of every workload's fs_sweep
                                      # (default 0, 0.1, …, 1)
  [workloads.jacobi3d]                # one table per workload, in run order
  args = "--nx 128 --steps 40"        # its flags (a string split like a shell, or a list)
  quick = "--steps 10"                # optional: appended with --quick (the last flag wins)
  runs = ["libgomp:dynamic,256"]      # optional: runs for this workload only, after the
                                      # common ones (a chunk that suits its grain)
  [workloads.synthetic-ramp]          # a second configuration of one program: any name,
  program = "synthetic"               # with the program it runs
  fs_sweep = "staggered,chunk=16"     # optional: one more run per value of fs_values,
                                      # aloe:staggered,fs=F,chunk=16 (after its runs)
  [sweep]                             # optional: defaults of `bench --sweep fs` (sweep.py)

A run is "runtime:schedule", split on the FIRST colon only, because schedules hold colons and
commas ("libomp:nonmonotonic:dynamic,1", "aloe:hybrid,fs=0.8"). Unknown keys and malformed
entries raise MatrixError naming the entry.

OpenMP's schedule(runtime) and `aloe run` (the libgomp interposer, issue 5):
  libgomp:runtime             the app's loops compiled schedule(runtime), OMP_SCHEDULE unset
                              (libgomp's default run-sched-var); also libomp:runtime
  libgomp:runtime,KIND        the same with OMP_SCHEDULE=KIND, e.g. libgomp:runtime,dynamic,16
  aloe-run:S[@KIND]           `aloe run --schedule S --threads T --summary none -- aloe-app-W
                              --runtime libgomp --schedule runtime …` with OMP_SCHEDULE=KIND
                              (unset without @KIND). S is an aloe schedule (adaptive,
                              staggered,fs=0.5,chunk=8), `program` (each loop's own OpenMP
                              schedule, run by aloe) or `forward` (every loop left to libgomp)
KIND is what OMP_SCHEDULE accepts: [monotonic:|nonmonotonic:]static|dynamic|guided|auto[,C].
An aloe-run run is neither aloe nor a peer in the tables' "best" columns; summary.md's
"Interposer" section (interposer.py) compares it with the libgomp runs.

Task workloads (TASK_WORKLOADS: fib, uts, sort, nqueens, stencil1d-tasks) run their own task
programs; the schedule of a run is validated and recorded but unused (bench/matrices/tasks.toml
gives each runtime one run at its default schedule).

MPI workloads (issue 15; program = one of MPI_WORKLOADS, e.g. jacobi3d-mpi) run under
`mpirun -np R` (mpi.py builds the command). Keys for them:
  ranks = [1, 2, 4]                   # top level or per workload: rank counts; required for
                                      # an MPI workload (a non-MPI workload may not set it)
  bind_to = "core"                    # optional: "core" (default) or "none"; oversubscribed
                                      # runs (ranks × threads > the CPUs the harness may use)
                                      # get --oversubscribe, and core binding overload-allowed
  mpi_stats = true                    # optional (default true): preload libaloe-mpi so every
                                      # rank writes its MPI statistics (slack tables)
  quick_ranks = [2], quick_threads = [1]
                                      # optional: with --quick, keep only these rank and
                                      # thread counts (a list without any keeps its first)
An MPI workload becomes one workload per rank count, named NAME-npR ("jacobi3d-mpi-np2"):
each has its own serial reference (`mpirun -np R … --runtime serial`), calibration and
groups, so ratios compare runs with the same ranks only. Per workload (any workload):
  threads = [1]                       # its thread counts instead of the matrix's
  noise = ["none"]                    # its regimes instead of the matrix's
  common_runs = false                 # run only its own `runs`, not the matrix's
"""
from __future__ import annotations

import dataclasses
import re
import shlex
import tomllib
from pathlib import Path

from . import regimes

PEER_RUNTIMES = ("libgomp", "libomp", "tbb")
ALOE_RUN = "aloe-run"  # aloe's schedules through `aloe run` and the libgomp interposer
RUNTIMES = ("aloe",) + PEER_RUNTIMES + (ALOE_RUN,)
ALOE_RUN_MODES = ("program", "forward")  # aloe run's schedules that are not aloe schedules
WORKLOADS = ("synthetic", "jacobi3d", "stencil1d", "mandelbrot", "spmv", "barnes-hut")
# Task workloads (apps/README.md, "Task workloads"): task programs, no loop; a run's schedule is
# checked and recorded but changes nothing, so give them one run per runtime (tasks.toml).
TASK_WORKLOADS = ("fib", "uts", "sort", "nqueens", "stencil1d-tasks")
MPI_WORKLOADS = ("jacobi3d-mpi",)  # programs run under mpirun, one workload per rank count
BIND_TO = ("core", "none")
# Flags the runner sets itself; a workload's args must not carry them.
RUNNER_FLAGS = ("--runtime", "--schedule", "--threads", "--json", "--noise-p", "--noise-us",
                "--noise-core", "--noise-seed", "--background", "--timeline")
# ... and of an MPI workload also these (the harness matches --bind to mpirun's binding).
MPI_RUNNER_FLAGS = ("--bind",)
QUICK_REPS = 2  # --quick caps the repetitions here: enough to see that everything runs
FS_VALUES = [round(i / 10, 1) for i in range(11)]  # a workload's fs_sweep, unless fs_values

_OMP_SCHEDULE = re.compile(r"(static|dynamic|guided|nonmonotonic:dynamic)(,[1-9][0-9]*)?")
_TBB_SCHEDULE = re.compile(r"(simple|auto|affinity)(,[1-9][0-9]*)?|static")
_ALOE_SCHEDULE = re.compile(r"[a-z_]+(,[a-z_]+=[^,=\s]+)*")
# OMP_SCHEDULE's value: an optional modifier, the kind, an optional chunk.
_OMP_ENV_SCHEDULE = re.compile(r"((?:non)?monotonic:)?(static|dynamic|guided|auto)(,[1-9][0-9]*)?")
_TOP_KEYS = {"description", "reps", "threads", "noise", "runs", "timeline_runs",
             "run_timeout_s", "workloads", "sweep", "fs_values", "ranks", "bind_to",
             "mpi_stats", "quick_ranks", "quick_threads"}
_WORKLOAD_KEYS = {"args", "quick", "program", "runs", "fs_sweep", "ranks", "threads", "noise",
                  "common_runs"}
_WORKLOAD_NAME = re.compile(r"[a-z0-9][a-z0-9_-]*")


class MatrixError(ValueError):
    """A malformed matrix file or override; the message names the entry."""


@dataclasses.dataclass(frozen=True)
class Run:
    """One runtime with one schedule, e.g. libomp + "nonmonotonic:dynamic,1"."""
    runtime: str
    schedule: str

    @property
    def label(self) -> str:
        return f"{self.runtime}:{self.schedule}"

    @property
    def is_peer(self) -> bool:
        return self.runtime in PEER_RUNTIMES

    @property
    def is_aloe_run(self) -> bool:
        return self.runtime == ALOE_RUN

    @property
    def omp_schedule(self) -> str | None:
        """The OMP_SCHEDULE this run sets (None: unset): "runtime,KIND"'s or "S@KIND"'s KIND."""
        if self.is_aloe_run:
            return self.schedule.partition("@")[2] or None
        if self.runtime in ("libgomp", "libomp") and self.schedule.startswith("runtime,"):
            return self.schedule.partition(",")[2]
        return None

    @property
    def aloe_schedule(self) -> str | None:
        """What `aloe run --schedule` gets (aloe-run runs only)."""
        return self.schedule.partition("@")[0] if self.is_aloe_run else None

    @property
    def app_runtime(self) -> str:
        """The workload program's --runtime (aloe-run runs run it on libgomp)."""
        return "libgomp" if self.is_aloe_run else self.runtime

    @property
    def app_schedule(self) -> str:
        """The workload program's --schedule: `runtime` where OMP_SCHEDULE decides."""
        return "runtime" if self.is_aloe_run or self.omp_schedule is not None else self.schedule

    @property
    def env(self) -> dict[str, str]:
        """Environment variables the run sets (OMP_SCHEDULE; the runner unsets it otherwise)."""
        return {"OMP_SCHEDULE": self.omp_schedule} if self.omp_schedule else {}


@dataclasses.dataclass(frozen=True)
class Workload:
    name: str
    args: tuple[str, ...] = ()
    quick: tuple[str, ...] = ()
    program: str = ""                # the aloe-app-* it runs; empty: the name
    runs: tuple[Run, ...] = ()       # runs for this workload only, after the matrix's
    ranks: int = 0                   # MPI ranks (mpirun -np); 0: not an MPI workload
    base: str = ""                   # the name in the matrix file (MPI: before "-npR")
    threads: tuple[int, ...] = ()    # its own thread counts; empty: the matrix's
    noise: tuple[regimes.Regime, ...] = ()  # its own regimes; empty: the matrix's
    common_runs: bool = True         # False: only its own runs

    @property
    def app(self) -> str:
        return self.program or self.name

    @property
    def is_mpi(self) -> bool:
        return self.ranks > 0

    @property
    def family(self) -> str:
        """The name in the matrix file (an MPI workload's name without -npR)."""
        return self.base or self.name


def mpi_name(base: str, ranks: int) -> str:
    """The workload name of one rank count: "jacobi3d-mpi", 2 -> "jacobi3d-mpi-np2"."""
    return f"{base}-np{ranks}"


def runs_for(m: "Matrix", w: Workload) -> list[Run]:
    """The matrix's runs, then the workload's own (each once); only its own when the workload
    says common_runs = false."""
    return list(dict.fromkeys([*(m.runs if w.common_runs else []), *w.runs]))


def threads_for(m: "Matrix", w: Workload) -> list[int]:
    """The workload's thread counts: its own, else the matrix's."""
    return list(w.threads) or list(m.threads)


def noise_for(m: "Matrix", w: Workload) -> list[regimes.Regime]:
    """The workload's noise regimes: its own, else the matrix's."""
    return list(w.noise) or list(m.noise)


@dataclasses.dataclass(frozen=True)
class MpiOptions:
    """How MPI workloads are launched (mpi.py): mpirun's binding and libaloe-mpi's stats."""
    bind_to: str = "core"            # "core" or "none"
    stats: bool = True               # preload libaloe-mpi and read each rank's statistics


@dataclasses.dataclass
class Matrix:
    workloads: list[Workload]
    runs: list[Run]
    noise: list[regimes.Regime]
    threads: list[int]
    reps: int
    description: str = ""
    timeline_runs: list[Run] | None = None
    run_timeout_s: float = 600.0
    sweep: dict = dataclasses.field(default_factory=dict)
    source: str = ""
    ranks: list[int] | None = None   # the matrix's rank counts (MPI workloads without their own)
    mpi: MpiOptions = MpiOptions()
    quick_ranks: list[int] | None = None
    quick_threads: list[int] | None = None

    @property
    def has_mpi(self) -> bool:
        return any(w.is_mpi for w in self.workloads)


def parse_run(text: str) -> Run:
    """Parses "runtime:schedule" (split on the first colon); raises MatrixError."""
    runtime, colon, schedule = text.strip().partition(":")
    if not colon or not schedule:
        raise MatrixError(f"run '{text}': expected runtime:schedule, e.g. libgomp:guided")
    if runtime == "serial":
        raise MatrixError(f"run '{text}': the serial reference run is added automatically")
    if runtime not in RUNTIMES:
        raise MatrixError(f"run '{text}': unknown runtime '{runtime}' (expected one of "
                          f"{', '.join(RUNTIMES)})")
    if runtime == ALOE_RUN:
        return _aloe_run(text, schedule)
    if runtime in ("libgomp", "libomp") and (schedule == "runtime"
                                             or schedule.startswith("runtime,")):
        kind = schedule.partition(",")[2]
        if schedule != "runtime" and not _OMP_ENV_SCHEDULE.fullmatch(kind):
            raise MatrixError(f"run '{text}': '{kind}' is not an OMP_SCHEDULE value (expected "
                              "[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,C])")
        return Run(runtime, schedule)
    pattern = {"aloe": _ALOE_SCHEDULE, "tbb": _TBB_SCHEDULE}.get(runtime, _OMP_SCHEDULE)
    if not pattern.fullmatch(schedule):
        raise MatrixError(f"run '{text}': '{schedule}' is not a {runtime} schedule "
                          "(apps/README.md lists them)")
    return Run(runtime, schedule)


def _aloe_run(text: str, schedule: str) -> Run:
    """aloe-run:S[@KIND]: S an aloe schedule, program or forward; KIND an OMP_SCHEDULE."""
    aloe, at, kind = schedule.partition("@")
    if not _ALOE_SCHEDULE.fullmatch(aloe):
        raise MatrixError(f"run '{text}': '{aloe}' is not an aloe run schedule (an aloe "
                          f"schedule, {' or '.join(ALOE_RUN_MODES)})")
    if aloe.split(",")[0] in ALOE_RUN_MODES and aloe not in ALOE_RUN_MODES:
        raise MatrixError(f"run '{text}': '{aloe.split(',')[0]}' takes no options")
    if at and not _OMP_ENV_SCHEDULE.fullmatch(kind):
        raise MatrixError(f"run '{text}': '@{kind}' is not an OMP_SCHEDULE value (expected "
                          "@[monotonic:|nonmonotonic:]static|dynamic|guided|auto[,C])")
    return Run(ALOE_RUN, schedule)


def split_runs(texts: list[str]) -> list[str]:
    """Splits command-line run lists: words, ';', or a ',' that starts a new runtime:…"""
    return _split(texts, r",(?=(?:%s):)" % "|".join(sorted(RUNTIMES, key=len, reverse=True)))


def split_regimes(texts: list[str]) -> list[str]:
    """Splits command-line regime lists: words, ';', or a ',' that starts a new regime."""
    return _split(texts, r",(?=none(?:,|$)|inject:|background:)")


def _split(texts: list[str], comma: str) -> list[str]:
    out = []
    for text in texts:
        for part in re.split(r"[;\s]+", text):
            out += [p for p in re.split(comma, part) if p]
    return out


def load(path: str | Path) -> Matrix:
    """Reads a matrix file; raises MatrixError naming the file and the entry."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text())
    except OSError as e:
        raise MatrixError(f"matrix {path}: cannot read it: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise MatrixError(f"matrix {path}: not valid TOML: {e}") from None
    try:
        return from_dict(data, source=str(path))
    except MatrixError as e:
        raise MatrixError(f"matrix {path}: {e}") from None


def from_dict(data: dict, source: str = "") -> Matrix:
    """Builds a Matrix from parsed TOML; every entry is checked."""
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise MatrixError(f"unknown key(s) {', '.join(sorted(unknown))} (expected "
                          f"{', '.join(sorted(_TOP_KEYS))})")
    for key in ("workloads", "runs", "noise", "threads", "reps"):
        if key not in data:
            raise MatrixError(f"missing key '{key}'")
    table = data["workloads"]
    if not isinstance(table, dict) or not table:
        raise MatrixError("'workloads' must hold one [workloads.NAME] table per workload")
    fs_values = _fs_values(data.get("fs_values", FS_VALUES))
    ranks = _counts(data["ranks"], "ranks") if "ranks" in data else None
    workloads = [x for name, spec in table.items()
                 for x in _workloads(name, spec, fs_values, ranks)]
    _unique([w.name for w in workloads], "workload")
    bind_to = data.get("bind_to", "core")
    if bind_to not in BIND_TO:
        raise MatrixError(f"bind_to = {bind_to!r}: expected one of {', '.join(BIND_TO)}")
    stats = data.get("mpi_stats", True)
    if not isinstance(stats, bool):
        raise MatrixError(f"mpi_stats = {stats!r}: expected true or false")
    timeline = data.get("timeline_runs")
    timeout = data.get("run_timeout_s", 600)
    if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or timeout <= 0:
        raise MatrixError(f"run_timeout_s = {timeout!r}: expected a positive number")
    sweep = data.get("sweep", {})
    if not isinstance(sweep, dict):
        raise MatrixError("'sweep' must be a table")
    description = data.get("description", "")
    if not isinstance(description, str):
        raise MatrixError("'description' must be a string")
    return Matrix(
        workloads=workloads,
        runs=_runs(_strings(data["runs"], "runs"), "runs"),
        noise=_regimes(_strings(data["noise"], "noise")),
        threads=_threads(data["threads"]),
        reps=_reps(data["reps"]),
        description=description,
        timeline_runs=_runs(_strings(timeline, "timeline_runs"), "timeline_runs")
        if timeline is not None else None,
        run_timeout_s=float(timeout),
        sweep=sweep,
        source=source,
        ranks=ranks,
        mpi=MpiOptions(bind_to=bind_to, stats=stats),
        quick_ranks=_counts(data["quick_ranks"], "quick_ranks") if "quick_ranks" in data
        else None,
        quick_threads=_threads(data["quick_threads"]) if "quick_threads" in data else None,
    )


def apply_overrides(m: Matrix, *, workloads=None, runs=None, noise=None, threads=None,
                    reps=None, quick=False, ranks=None) -> Matrix:
    """Returns a copy of `m` with command-line overrides applied (None: keep the file's).

    workloads: names (a name the file lacks runs with the app's default flags; an MPI
    workload's file name selects all its rank counts, NAME-npR one of them); runs, noise:
    spec strings; threads, ranks: ints (they replace the workloads' own too); quick: append
    each workload's quick args, cap the reps, keep only quick_ranks and quick_threads (those
    not given as ranks and threads).
    """
    m = dataclasses.replace(m)
    if workloads is not None:
        chosen = []
        for n in _unique(workloads, "workload"):
            mine = [w for w in m.workloads if n in (w.name, w.family)]
            chosen += mine or _workloads(n, {}, FS_VALUES, m.ranks)
        m.workloads = list({w.name: w for w in chosen}.values())
    if runs is not None:
        m.runs = _runs(runs, "--runs")
    if noise is not None:
        m.noise = _regimes(noise)
        m.workloads = [dataclasses.replace(w, noise=()) for w in m.workloads]
    if threads is not None:
        m.threads = _threads(list(threads))
        m.workloads = [dataclasses.replace(w, threads=()) for w in m.workloads]
    if ranks is not None:
        m.ranks = _counts(list(ranks), "--ranks")
        m.workloads = _with_ranks(m.workloads, lambda w, have: m.ranks)
    if quick:
        m.workloads = [dataclasses.replace(w, args=w.args + w.quick) for w in m.workloads]
        m.reps = min(m.reps, QUICK_REPS)
        if m.quick_threads and threads is None:  # --threads, given, wins
            m.threads = _keep(m.threads, m.quick_threads)
            m.workloads = [dataclasses.replace(w, threads=tuple(_keep(w.threads, m.quick_threads)))
                           for w in m.workloads]
        if m.quick_ranks and ranks is None:  # --ranks, given, wins
            m.workloads = _with_ranks(m.workloads, lambda w, have: _keep(have, m.quick_ranks))
    if reps is not None:
        m.reps = _reps(reps)
    return m


def _keep(values, wanted: list[int]) -> list[int]:
    """--quick: the values also in `wanted`, else the first value (empty stays empty)."""
    values = list(values)
    return [v for v in values if v in wanted] or values[:1]


def _with_ranks(workloads: list[Workload], ranks_of) -> list[Workload]:
    """MPI workloads re-expanded per family: ranks_of(first, its current ranks) gives the new
    rank counts; other workloads stay, in order."""
    out, done = [], set()
    for w in workloads:
        if not w.is_mpi:
            out.append(w)
            continue
        if w.family in done:
            continue
        done.add(w.family)
        have = [x.ranks for x in workloads if x.is_mpi and x.family == w.family]
        out += [dataclasses.replace(w, ranks=r, name=mpi_name(w.family, r))
                for r in ranks_of(w, have)]
    return out


def _workloads(name: str, spec, fs_values: list[float], ranks: list[int] | None
               ) -> list[Workload]:
    """One workload, or an MPI workload's one per rank count (its own ranks, else `ranks`)."""
    w = _workload(name, spec, fs_values)
    own = spec.get("ranks") if isinstance(spec, dict) else None
    if not w.is_mpi:
        if own is not None:
            raise MatrixError(f"workload '{name}': ranks is for MPI programs "
                              f"({', '.join(MPI_WORKLOADS)})")
        return [w]
    counts = _counts(own, f"workloads.{name}.ranks") if own is not None else ranks
    if not counts:
        raise MatrixError(f"workload '{name}' runs the MPI program {w.app}: give ranks = "
                          "[…] (in its table or at the top of the matrix, or --ranks)")
    return [dataclasses.replace(w, ranks=r, name=mpi_name(name, r), base=name, program=w.app)
            for r in counts]


def _counts(value, key: str) -> list[int]:
    if not isinstance(value, list) or not value or not all(
            isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in value):
        raise MatrixError(f"{key} = {value!r}: expected a non-empty list of integers >= 1")
    return _unique(value, f"{key} entry")


def _workload(name: str, spec, fs_values: list[float] = FS_VALUES) -> Workload:
    if not isinstance(spec, dict):
        raise MatrixError(f"workload '{name}': expected a table with args = \"…\"")
    program = spec.get("program", name)
    programs = WORKLOADS + TASK_WORKLOADS + MPI_WORKLOADS
    if not isinstance(program, str) or program not in programs:
        raise MatrixError(f"workload '{name}': program {program!r} is unknown (expected one of "
                          f"{', '.join(programs)})" if "program" in spec else
                          f"workload '{name}': unknown (expected one of {', '.join(programs)}, "
                          "or a table with program = \"…\")")
    if not _WORKLOAD_NAME.fullmatch(name):
        raise MatrixError(f"workload '{name}': a name is lower-case letters, digits, '-' and '_'")
    unknown = set(spec) - _WORKLOAD_KEYS
    if unknown:
        raise MatrixError(f"workload '{name}': unknown key(s) {', '.join(sorted(unknown))} "
                          f"(expected {', '.join(sorted(_WORKLOAD_KEYS))})")
    mpi = program in MPI_WORKLOADS
    args, quick = (_args(name, key, spec.get(key, []), mpi) for key in ("args", "quick"))
    runs = _strings(spec["runs"], f"workloads.{name}.runs") if "runs" in spec else []
    if "fs_sweep" in spec:
        runs = runs + fs_sweep_runs(name, spec["fs_sweep"], fs_values)
    runs = tuple(_runs(runs, f"workloads.{name}.runs")) if runs else ()
    common = spec.get("common_runs", True)
    if not isinstance(common, bool):
        raise MatrixError(f"workload '{name}': common_runs = {common!r}: expected true or false")
    if not common and not runs:
        raise MatrixError(f"workload '{name}': common_runs = false needs its own runs = […]")
    threads = tuple(_threads(spec["threads"])) if "threads" in spec else ()
    noise = tuple(_regimes(_strings(spec["noise"], f"workloads.{name}.noise"))) \
        if "noise" in spec else ()
    return Workload(name, args, quick, program="" if program == name else program, runs=runs,
                    ranks=1 if mpi else 0, threads=threads, noise=noise, common_runs=common)


def fs_sweep_runs(name: str, kind, fs_values: list[float]) -> list[str]:
    """A workload's fs_sweep "staggered,chunk=16" as runs "aloe:staggered,fs=F,chunk=16", one
    per F: fs goes right after the kind, the order the adaptive schedule reports its choice in,
    so a sweep point and adaptive's `chosen` read alike."""
    if not isinstance(kind, str) or not _ALOE_SCHEDULE.fullmatch(kind):
        raise MatrixError(f"workload '{name}': fs_sweep = {kind!r}: expected an aloe schedule "
                          "without fs, e.g. \"staggered,chunk=16\"")
    head, _, rest = kind.partition(",")
    if any(item.split("=", 1)[0] == "fs" for item in rest.split(",")):
        raise MatrixError(f"workload '{name}': fs_sweep = {kind!r} sets fs itself (the sweep "
                          "sets it from fs_values)")
    return [f"aloe:{head},fs={v:g}" + (f",{rest}" if rest else "") for v in fs_values]


def _fs_values(value) -> list[float]:
    if not isinstance(value, list) or not value or not all(
            isinstance(v, (int, float)) and not isinstance(v, bool) and 0 <= v <= 1
            for v in value):
        raise MatrixError(f"fs_values = {value!r}: expected a non-empty list of numbers in [0, 1]")
    return _unique([float(v) for v in value], "fs value")


def _args(name: str, key: str, value, mpi: bool = False) -> tuple[str, ...]:
    if isinstance(value, str):
        words = shlex.split(value)
    elif isinstance(value, list) and all(isinstance(w, str) for w in value):
        words = list(value)
    else:
        raise MatrixError(f"workload '{name}': {key} must be a string or a list of strings")
    for w in words:
        if w.split("=", 1)[0] in RUNNER_FLAGS + (MPI_RUNNER_FLAGS if mpi else ()):
            raise MatrixError(f"workload '{name}': {key} sets {w.split('=', 1)[0]}, which the "
                              "runner sets itself (use runs, noise or threads)")
    return tuple(words)


def _strings(value, key: str) -> list[str]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise MatrixError(f"'{key}' must be a non-empty list of strings, got {value!r}")
    return value


def _runs(texts: list[str], key: str) -> list[Run]:
    runs = [parse_run(t) for t in _unique(texts, "run")]
    if not runs:
        raise MatrixError(f"'{key}' is empty")
    return runs


def _regimes(texts: list[str]) -> list[regimes.Regime]:
    out = []
    for text in _unique(texts, "noise regime"):
        try:
            out.append(regimes.parse(text))
        except regimes.RegimeError as e:
            raise MatrixError(str(e)) from None
    names = [r.name for r in out]
    for name in names:
        if names.count(name) > 1:
            raise MatrixError(f"noise: two regimes share the name '{name}'")
    return out


def _threads(value) -> list[int]:
    if not isinstance(value, list) or not value:
        raise MatrixError(f"threads = {value!r}: expected a non-empty list of integers")
    for t in value:
        if not isinstance(t, int) or isinstance(t, bool) or t < 1:
            raise MatrixError(f"threads entry {t!r}: expected an integer >= 1")
    return _unique(value, "thread count")


def _reps(value) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise MatrixError(f"reps = {value!r}: expected an integer >= 1")
    return value


def _unique(items: list, what: str) -> list:
    seen = []
    for item in items:
        if item in seen:
            raise MatrixError(f"{what} '{item}' is listed twice")
        seen.append(item)
    return seen
