"""Command line: `python -m aloe_harness bench|report|compare|first-cost|npb|persistence …`.

`first-cost`, `npb` and `persistence` are issue 14's evidence (their modules' opening comments).

Exit status: 0 every run passed; 1 a run failed or a config was skipped (all else was still
run and written); 2 a bad command line or matrix (nothing was run); 130 interrupted (what was
gathered is written). MPI workloads that cannot run here (no mpirun, program not built) are
skipped with the reason on stderr and in summary.md, without changing the status.
"""
from __future__ import annotations

import argparse
import datetime
import shutil
import sys
from pathlib import Path

try:
    from . import matrix as mx
    from . import adaptive, compare, interposer, mpi, plots, provenance, report, summary, sweep
    from . import first_cost, npb, persistence, sim_validation
    from .runner import Runner
    from . import files
except ModuleNotFoundError as missing:
    # numpy and matplotlib live in the project venv (scripts/install-deps.sh makes it); a
    # Python without them gets one line naming the module, not a traceback.
    if missing.name is None or missing.name.split(".")[0] not in ("numpy", "matplotlib"):
        raise
    sys.exit(f"aloe: the benchmark harness needs the Python module '{missing.name}', which "
             f"{sys.executable} lacks: run scripts/install-deps.sh (it makes the project venv "
             f".venv), or pass --python with an interpreter that has numpy and matplotlib")

REPO = provenance.REPO_ROOT
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="aloe_harness", description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    b = sub.add_parser("bench", help="run a benchmark matrix into a results folder",
                       description="Runs a matrix of workloads × runs × noise regimes × "
                       "threads, interleaved, and writes a results folder.")
    b.add_argument("--matrix", default="demo",
                   help="TOML matrix file, or the name of one in bench/matrices/ (demo, full, "
                   "adaptive, interposer; default: demo)")
    b.add_argument("--workloads", nargs="+", metavar="W",
                   help="workloads to run instead of the matrix's (names, or a comma list)")
    b.add_argument("--runs", nargs="+", metavar="RUNTIME:SCHEDULE",
                   help="runs instead of the matrix's, e.g. libgomp:guided "
                   "aloe:hybrid,fs=0.8 (also ';'-separated, or comma-joined)")
    b.add_argument("--noise", nargs="+", metavar="REGIME",
                   help="noise regimes instead of the matrix's: none, "
                   "inject:p=P,frac=F|us=D[,core=C][,seed=S], "
                   "background:cpu=C,duty=D[,period_us=P]")
    b.add_argument("--threads", metavar="T[,T…]", help="thread counts, e.g. 2 or 1,2")
    b.add_argument("--ranks", metavar="R[,R…]",
                   help="MPI rank counts of the MPI workloads, e.g. 1,2,4")
    b.add_argument("--mpirun", default=shutil.which("mpirun"),
                   help="mpirun for the MPI workloads (default: mpirun on PATH); without one "
                   "they are skipped, said on stderr and in summary.md")
    b.add_argument("--reps", type=int, metavar="N", help="timed repetitions of every config")
    b.add_argument("--quick", action="store_true",
                   help="each workload's quick flags and at most %d reps" % mx.QUICK_REPS)
    b.add_argument("--apps-dir", default=_in_repo("build/release/apps"),
                   help="folder of the aloe-app-* programs (default in a source tree: "
                   "build/release/apps)")
    b.add_argument("--aloe",
                   help="the aloe tool, for `info`, `noise` and the aloe-run runs (`aloe run`); "
                   "default: the one of the build that holds --apps-dir (<apps-dir>/../tools/"
                   "aloe/aloe), else build/release/tools/aloe/aloe in a source tree, else "
                   "`aloe` on PATH")
    b.add_argument("--out", help="results folder (default: bench/results/<kind>-<date-time>)")
    b.add_argument("--sweep", choices=["fs"], help="sweep aloe's fs for one workload and regime")
    b.add_argument("--workload", help="the workload of a sweep")
    b.add_argument("--timelines", action="store_true",
                   help="after the timed runs, one --timeline run per selected config")
    b.add_argument("--plots", action=argparse.BooleanOptionalAction, default=True,
                   help="write plots/*.png (default: yes)")
    c = sub.add_parser("compare", help="do two results folders agree within their spreads?")
    c.add_argument("a", help="first results folder")
    c.add_argument("b", help="second results folder (the same matrix, run again)")
    c.add_argument("--out", help="also write the Markdown report to this file")
    r = sub.add_parser("report", help="write DIR/report.html from a results folder")
    r.add_argument("dir", help="results folder written by bench")
    r.add_argument("--plots", action=argparse.BooleanOptionalAction, default=False,
                   help="(re)make plots/*.png first (default: no)")
    for evidence in (first_cost, npb, persistence, sim_validation):
        evidence.add_parser(sub)
    return p


def _in_repo(relative: str) -> str | None:
    return str(REPO / relative) if REPO else None


def aloe_tool(given: str | None, apps_dir: str | None) -> str:
    """--aloe as given; else the aloe of the build that holds the apps (`aloe bench` passes
    its own path), else build/release's in a source tree, else `aloe` on PATH."""
    if given:
        return given
    candidates = [Path(apps_dir).parent / "tools/aloe/aloe"] if apps_dir else []
    candidates += [Path(p) for p in [_in_repo("build/release/tools/aloe/aloe")] if p]
    return next((str(c) for c in candidates if c.is_file()), "aloe")


def _matrix_path(text: str) -> Path:
    """A path as given, else a name in the matrices folder ("full" -> …/matrices/full.toml)."""
    path = Path(text)
    named = provenance.MATRICES_DIR / f"{text}.toml"
    if path.exists() or not named.exists():
        return path
    return named


def _ints(text: str | None, flag: str) -> list[int] | None:
    if text is None:
        return None
    try:
        return [int(t) for t in text.split(",")]
    except ValueError:
        raise mx.MatrixError(f"{flag} '{text}': expected integers, e.g. 2 or 1,2") from None


def _matrix(a: argparse.Namespace) -> mx.Matrix:
    m = mx.load(_matrix_path(a.matrix))
    threads = _ints(a.threads, "--threads")
    ranks = _ints(getattr(a, "ranks", None), "--ranks")
    workloads = [w for x in a.workloads for w in x.split(",") if w] if a.workloads else None
    runs = mx.split_runs(a.runs) if a.runs else None
    noise = mx.split_regimes(a.noise) if a.noise else None
    if a.sweep:
        if not a.workload:
            raise mx.MatrixError("--sweep fs needs --workload W")
        m = mx.apply_overrides(m, threads=threads, reps=a.reps, quick=a.quick)
        return sweep.sweep_matrix(m, workload=a.workload, noise=noise, peers=runs)
    if a.workload:
        raise mx.MatrixError("--workload is for --sweep; use --workloads")
    return mx.apply_overrides(m, workloads=workloads, runs=runs, noise=noise, threads=threads,
                              reps=a.reps, quick=a.quick, ranks=ranks)


def bench(a: argparse.Namespace, argv: list[str]) -> int:
    try:
        m = _matrix(a)
    except mx.MatrixError as e:
        print(f"aloe_harness: {e}", file=sys.stderr)
        return EXIT_USAGE
    if a.apps_dir is None:
        print("aloe_harness: --apps-dir is needed outside a source tree", file=sys.stderr)
        return EXIT_USAGE
    a.aloe = aloe_tool(a.aloe, a.apps_dir)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    kind = f"sweep-fs-{m.workloads[0].name}" if a.sweep else "apps"
    results = REPO / "bench/results" if REPO else Path.cwd()
    out = Path(a.out) if a.out else results / f"{kind}-{stamp}"
    runner = Runner(Path(a.apps_dir), out / "runs.jsonl", aloe=a.aloe, mpirun=a.mpirun)
    m, skipped = runner.skip_mpi(m)
    for line in skipped:
        print(f"aloe_harness: SKIPPED MPI workload {line}", file=sys.stderr)
    if not m.workloads:
        print("aloe_harness: nothing left to run (every workload was skipped)", file=sys.stderr)
        return EXIT_USAGE
    missing = runner.missing_apps(m)
    if missing:
        print(f"aloe_harness: missing workload program(s): {', '.join(missing)} "
              "(build them first, or pass --apps-dir)", file=sys.stderr)
        return EXIT_USAGE
    problem = runner.aloe_run_problem(m)
    if problem:
        print(f"aloe_harness: {problem}", file=sys.stderr)
        return EXIT_USAGE
    if report.runs_file(out) is not None:
        print(f"aloe_harness: {out} already holds results (runs.jsonl); choose another --out",
              file=sys.stderr)
        return EXIT_USAGE
    out.mkdir(parents=True, exist_ok=True)
    try:
        return _run_and_write(a, argv, m, runner, out, skipped)
    except KeyboardInterrupt:
        print("\naloe_harness: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED


def _run_and_write(a: argparse.Namespace, argv: list[str], m: mx.Matrix, runner: Runner,
                   out: Path, skipped: list[str] = ()) -> int:
    provenance.write_command(out, argv)
    provenance.write_machine(out, a.aloe)
    print(f"aloe_harness: measuring the machine's noise "
          f"({provenance.display_path(a.aloe)} noise --quick)", file=sys.stderr)
    before = provenance.write_noise(out, a.aloe, "before")
    n = sum(len(mx.runs_for(m, w)) * len(mx.noise_for(m, w)) * len(mx.threads_for(m, w))
            for w in m.workloads)
    print(f"aloe_harness: {n} configs × {m.reps} reps, plus {len(m.workloads)} serial runs "
          f"and calibrations, into {provenance.display_path(out.resolve())}", file=sys.stderr)
    outcome = runner.execute(m, timelines=a.timelines)
    after = provenance.write_noise(out, a.aloe, "after", skip_reason="interrupted before the "
                                   "runs ended" if outcome.interrupted else None)
    if skipped:
        files.write_text(out / "skipped.txt", "\n".join(skipped) + "\n")
    finish(out, m, outcome.entries, outcome.problems, before, after,
           is_sweep=bool(a.sweep), make_plots=a.plots, skipped=skipped)
    print(f"aloe_harness: {'INTERRUPTED; ' if outcome.interrupted else ''}"
          f"{len(outcome.entries)} runs, {len(outcome.problems)} problem(s); see "
          f"{provenance.display_path((out / 'summary.md').resolve())}", file=sys.stderr)
    if outcome.interrupted:
        return EXIT_INTERRUPTED
    return EXIT_OK if outcome.ok else EXIT_FAILED


def finish(out: Path, m: mx.Matrix, entries: list[dict], problems: list[str], before, after,
           *, is_sweep: bool, make_plots: bool, skipped: list[str] = ()) -> None:
    """Writes results.csv, sweep.csv, adaptive.csv, interposer.csv, mpi.csv, problems.txt,
    summary.md, plots and report.html."""
    rows = summary.summarize(entries)
    summary.write_csv(out / "results.csv", rows)
    arows = adaptive.rows(entries, rows)
    if arows:
        adaptive.write_csv(out / "adaptive.csv", arows)
    irows = interposer.rows(rows)
    if irows:
        interposer.write_csv(out / "interposer.csv", irows)
    mrows = mpi.rank_rows(entries)
    if mrows:
        mpi.write_csv(out / "mpi.csv", mrows)
    srows, extra = None, []
    if is_sweep:
        srows = sweep.sweep_rows(rows)
        sweep.write_csv(out / "sweep.csv", srows)
        extra = sweep.markdown(srows)
    if problems:
        files.write_text(out / "problems.txt", "\n".join(problems) + "\n")
    summary.write_markdown(out / "summary.md", rows, description=m.description,
                           problems=problems, noise_before=before, noise_after=after,
                           lead=adaptive.markdown(arows) + interposer.markdown(irows)
                           + mpi.markdown(mrows, entries, skipped),
                           extra=extra)
    if make_plots:
        plots.make_all(out, entries, rows, srows)
    report.write(out)
    for t in summary.tables(rows):
        print(f"  {t.title}: {t.verdict}", file=sys.stderr)


def report_command(a: argparse.Namespace) -> int:
    folder = Path(a.dir)
    if report.runs_file(folder) is None:
        print(f"aloe_harness: {folder} has no runs.jsonl: not a results folder", file=sys.stderr)
        return EXIT_USAGE
    if a.plots:
        entries = report.read_entries(folder)
        rows = summary.summarize(entries)
        srows = sweep.read_csv(folder / "sweep.csv") if (folder / "sweep.csv").exists() else None
        plots.make_all(folder, entries, rows, srows)
    print(report.write(folder))
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["sim-plots"]:  # aloe sim draws its folder's plots (sim_plots.py)
        from . import sim_plots
        return sim_plots.main(argv[1:])
    a = _parser().parse_args(argv)
    evidence = {"first-cost": first_cost, "npb": npb, "persistence": persistence,
                "sim-validation": sim_validation}
    if a.command in evidence:
        return evidence[a.command].main(a, argv)
    if a.command == "compare":
        try:
            return compare.run(Path(a.a), Path(a.b), Path(a.out) if a.out else None)
        except FileNotFoundError as e:
            print(f"aloe_harness: {e}", file=sys.stderr)
            return EXIT_USAGE
    return bench(a, argv) if a.command == "bench" else report_command(a)


if __name__ == "__main__":
    sys.exit(main())
