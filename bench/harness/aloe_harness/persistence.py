"""`persistence`: `adaptive` with and without a tuning file (issue 14, part C): the time to each
loop site's first good invocation, and the total time.

    PYTHONPATH=bench/harness .venv/bin/python -m aloe_harness persistence \\
        [--apps-dir build/release/apps] [--barnes-hut-args "--steps 10 --warmup 1"] \\
        [--no-barnes-hut] [--npb-bin DIR --programs bt.W.x] [--tune-runs 3] [--no-reference] \\
        [--reps 9] [--threads 2] [--bind close|none] [--aloe PATH] [--quick] [--out DIR]

Programs: barnes-hut (apps/, its one main loop run 11 times with --steps 10 --warmup 1, made
schedule(runtime) by `--runtime libgomp --schedule runtime`) and, with --npb-bin, NPB programs
built with schedule(runtime) loops (see `npb`; a program nobody here wrote). For each program
`aloe tune --runs N --tuning F` first fills a tuning file (tuning/<program>.txt, kept, with
its output); then, interleaved, every repetition runs
  off        `aloe run --schedule adaptive --stats S`: no tuning file, tuned from scratch
  on         the same with `--tuning` a fresh copy of F (each run starts from what the tune
             runs left, not from what the runs before it added)
  static     plain libgomp static (OMP_SCHEDULE=static), for scale (not with --no-reference)
OMP_SCHEDULE is unset in the adaptive runs. From each run's statistics (site_tuning.py): per
adaptive site the schedule it settled on, the first invocation that ran it and the loop time
before that; a site still searching at the end settled on nothing (barnes-hut without a
file: its race needs about 19 invocations). The time is the program's own (barnes-hut: its
timed steps; NPB: its 'Time in seconds', to 10 ms) and the process's.

Results: result.md, runs.jsonl (every run, with its sites), persistence.csv, tuning/,
stats/ (the first repetition's statistics), command.txt, machine.json,
noise-{before,after}.json. Exit status as first-cost.
"""
from __future__ import annotations

import argparse
import dataclasses
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from . import files, npb, provenance, runner, site_tuning, summary
from . import timed_runs as tr

MODES = ("off", "on", "static")
QUICK = {"reps": 2, "tune_runs": 2}


@dataclasses.dataclass(frozen=True)
class Program:
    name: str
    argv: tuple[str, ...]           # the program under aloe run
    reference: tuple[str, ...]      # the plain static run
    kind: str                       # "app" (a JSON record) or "npb"


def add_parser(sub) -> None:
    p = tr.add_subcommand(sub, "persistence", "adaptive with and without a tuning file "
                          "(issue 14, C)", __doc__)
    p.add_argument("--apps-dir", help="folder of the aloe-app-* programs (default: beside "
                   "--aloe's build, <build>/apps)")
    p.add_argument("--barnes-hut-args", default="--steps 10 --warmup 1",
                   help="barnes-hut's workload flags (default: --steps 10 --warmup 1)")
    p.add_argument("--no-barnes-hut", action="store_true", help="NPB programs only")
    p.add_argument("--npb-bin", help="bin folder of the schedule(runtime) NPB build")
    p.add_argument("--programs", default="bt.W.x", help="NPB programs in it (default bt.W.x)")
    p.add_argument("--tune-runs", type=int, default=3, help="aloe tune --runs (default 3)")
    p.add_argument("--no-reference", action="store_true", help="no plain libgomp static runs")
    tr.add_common_arguments(p, reps=9)


def programs(a: argparse.Namespace) -> tuple[list[Program], str | None]:
    out = []
    threads = str(a.threads)
    if not a.no_barnes_hut:
        apps = Path(a.apps_dir or Path(a.aloe).resolve().parents[2] / "apps")
        app = apps / "aloe-app-barnes-hut"
        if not app.is_file():
            return [], (f"no barnes-hut program at {provenance.display_path(app)} (build the "
                        "apps, or pass --apps-dir)")
        flags = [str(app), *shlex.split(a.barnes_hut_args)]
        tail = ["--threads", threads, "--json", "-"]
        out.append(Program("barnes-hut", tuple(flags + ["--runtime", "libgomp", "--schedule",
                                                        "runtime"] + tail),
                           tuple(flags + ["--runtime", "libgomp", "--schedule", "static"] + tail),
                           "app"))
    if a.npb_bin:
        paths, missing = npb.npb_programs(a)
        if missing:
            return [], missing
        out += [Program(Path(p).name, (p,), (p,), "npb") for p in paths]
    if not out:
        return [], "nothing to run: --no-barnes-hut and no --npb-bin"
    return out, None


def cases(a: argparse.Namespace, progs: list[Program], modes: list[str]) -> list[tr.Case]:
    """The timed cases; an adaptive case's --stats and --tuning are filled in per run."""
    out = []
    for p in progs:
        for m in modes:
            if m == "static":
                env = (("OMP_SCHEDULE", "static"), ("OMP_NUM_THREADS", str(a.threads)))
                out.append(tr.Case(p.name, m, p.reference, tr.bind_env(a) + env))
            else:
                out.append(tr.Case(p.name, m, tuple(tr.aloe_run(a, "adaptive")) + p.argv,
                                   tr.bind_env(a)))
    return out


def with_files(case: tr.Case, stats: Path, tuning: Path | None) -> tr.Case:
    """The case with `--stats S [--tuning F]` put before its `--`."""
    argv = list(case.argv)
    cut = argv.index("--")
    extra = ["--stats", str(stats)] + (["--tuning", str(tuning)] if tuning else [])
    return dataclasses.replace(case, argv=tuple(argv[:cut] + extra + argv[cut:]))


def program_seconds(p: Program, outcome: tr.Outcome) -> tuple[float | None, str | None]:
    """The program's own time, or why the run does not count."""
    if outcome.error:
        return None, outcome.error
    if p.kind == "npb":
        return npb.parse_output(outcome.stdout)
    record = runner.parse_record(outcome.stdout)
    if record is None:
        return None, "the workload printed no JSON record"
    if not record.get("ok"):
        return None, "the workload's own check failed"
    return record["total_s"], None


def tune(a: argparse.Namespace, p: Program, folder: Path, cwd: str) -> tuple[Path, tr.Outcome]:
    """`aloe tune --runs N --tuning folder/<name>.txt -- program`; its output beside it."""
    path = folder / f"{p.name}.txt"
    case = tr.Case(p.name, "tune", (a.aloe, "tune", "--runs", str(a.tune_runs), "--tuning",
                                    str(path), "--threads", str(a.threads), "--") + p.argv,
                   tr.bind_env(a))
    outcome = tr.run(case, a.timeout * a.tune_runs, cwd=cwd)
    Path(f"{path}.lock").unlink(missing_ok=True)  # aloe's lock of the file, empty
    files.write_text(folder / f"{p.name}.log", f"$ {case.command_line()}\n# {outcome.wall_s:.3f} s, "
                     f"exit status {outcome.exit_status}\n{tr.shown(outcome.stderr)}")
    return path, outcome


def main(a: argparse.Namespace, argv: list[str]) -> int:
    problem = tr.check_common(a)
    if not problem and a.tune_runs < 1:
        problem = "--tune-runs must be at least 1"
    progs, missing = programs(a) if not problem else ([], None)
    if problem or missing:
        print(f"aloe_harness persistence: {problem or missing}", file=sys.stderr)
        return 2
    if a.quick:
        a.reps, a.tune_runs = (min(getattr(a, k), v) for k, v in QUICK.items())
    modes = [m for m in MODES if m != "static" or not a.no_reference]
    started = tr.begin(a, "persistence", argv, "persistence")
    if started is None:
        return 2
    out, noise_before = started
    for sub in ("tuning", "stats"):
        (out / sub).mkdir(exist_ok=True)
    entries, problems, tuned, tune_s = [], [], {}, {}
    with tempfile.TemporaryDirectory(prefix="aloe-persistence-") as scratch:
        tr.hide(scratch, "<scratch>")
        for p in progs:
            tuned[p.name], outcome = tune(a, p, out / "tuning", scratch)
            tune_s[p.name] = outcome.wall_s
            if outcome.error:  # its runs are left out: `on` would not be what it says
                problems.append(f"aloe tune {p.name}: {outcome.error}")
                del tuned[p.name]
        by_name = {p.name: p for p in progs}
        plan = tr.order(cases(a, [p for p in progs if p.name in tuned], modes), a.reps)
        with open(out / "runs.jsonl", "w") as stream:
            for i, (rep, case) in enumerate(plan):
                entry = run_one(a, stream, rep, case, by_name[case.group], tuned[case.group],
                                Path(scratch), out / "stats")
                entries.append(entry)
                what = f"{entry['program_s'] or 0:.4g} s" + (
                    f", {entry['settled']}/{entry['sites']} sites settled" if "sites" in entry
                    else "")
                tr.progress(i, len(plan), rep, case, entry, what, problems)
    noise_after = tr.finish_folder(out, a.aloe, problems)
    rows = table_rows(entries, [p.name for p in progs])
    summary.write_rows_csv(out / "persistence.csv", rows, ROW_KEYS)
    return tr.write_result(out, "persistence", markdown(a, rows, tune_s, entries, problems,
                                                        noise_before, noise_after), problems)


def run_one(a, stream, rep: int, case: tr.Case, p: Program, tuning: Path, scratch: Path,
            stats_dir: Path) -> dict:
    """One timed run: an adaptive one with its statistics (and a fresh copy of the tuning
    file when `on`), logged with its sites' first good invocations."""
    stats = None
    if case.variant != "static":
        stats = (stats_dir if rep == 0 else scratch) / f"{p.name}-{case.variant}.json"
        copy = None
        if case.variant == "on":
            copy = scratch / f"{p.name}.tuning.txt"
            shutil.copyfile(tuning, copy)
        case = with_files(case, stats, copy)
    outcome = tr.run(case, a.timeout, cwd=scratch)
    seconds, outcome.error = program_seconds(p, outcome)
    fields: dict = {"program_s": seconds}
    if stats is not None and stats.exists():
        try:
            sites = site_tuning.read(stats)
        except (OSError, ValueError, KeyError) as e:
            outcome.error = outcome.error or f"unreadable statistics: {e}"
        else:
            fields |= site_tuning.summary(sites)
            fields["site_list"] = [dataclasses.asdict(s) for s in sites]
        if rep == 0:
            tr.scrub(stats)
    elif stats is not None:
        outcome.error = outcome.error or "no statistics written"
    return tr.log(stream, rep, case, outcome, **fields)


# --- analysis (pure; tests/python/test_persistence.py) -------------------------------------

ROW_KEYS = ["program", "mode", "reps", "median_s", "p25_s", "p75_s", "spread", "per_off",
            "per_off_paired", "process_median_s", "process_per_off", "sites", "settled", "recalled",
            "first_good_median", "first_good_max", "before_good_s", "unsettled_s", "loop_s"]
_SITE_KEYS = ("sites", "settled", "recalled", "first_good_median", "first_good_max",
              "before_good_s", "unsettled_s", "loop_s")


def table_rows(entries: list[dict], names: list[str]) -> list[dict]:
    """Per program and mode: the program's time (median, spread, / off), the process time, and
    the medians over repetitions of each run's site numbers."""
    rows = []
    for name in names:
        times = tr.values_by_rep(entries, name, "program_s")
        if not times:
            continue
        cmp = tr.compare(times, "off") if "off" in times else {
            m: tr.describe(list(v.values())) | {"ratio": None, "paired": tr.describe([])}
            for m, v in times.items()}
        process = tr.values_by_rep(entries, name, "process_s")
        process = tr.compare(process, "off") if "off" in process else {
            m: tr.describe(list(v.values())) for m, v in process.items()}
        for mode in [m for m in MODES if m in cmp]:
            s = cmp[mode]
            mine = [e for e in entries if e["group"] == name and e["variant"] == mode
                    and e["error"] is None]
            row = {"program": name, "mode": mode, "reps": s["reps"], "median_s": s["median"],
                   "p25_s": s["p25"], "p75_s": s["p75"], "spread": s["spread"],
                   "per_off": s["ratio"], "per_off_paired": s["paired"]["median"],
                   "process_median_s": process.get(mode, {}).get("median"),
                   "process_per_off": process.get(mode, {}).get("ratio")}
            for key in _SITE_KEYS:
                values = [e[key] for e in mine if e.get(key) is not None]
                row[key] = statistics.median(values) if values else None
            rows.append(row)
    return rows


def _f(value, form: str, scale: float = 1.0) -> str:
    return "–" if value is None else form.format(value * scale)


def markdown(a, rows: list[dict], tune_s: dict[str, float], entries: list[dict],
             problems: list[str], noise_before, noise_after) -> str:
    lines = ["# `adaptive` with and without a tuning file (issue 14, C)", "",
             f"Command: see command.txt; machine: machine.json. {a.threads} threads, bind "
             f"{a.bind}; {a.reps} repetitions, interleaved; the tuning files were filled by "
             f"`aloe tune --runs {a.tune_runs}` ("
             + ", ".join(f"{n}: {s:.1f} s" for n, s in tune_s.items()) + "). off: no file; on: "
             "a fresh copy of the tuned file each run; static: plain libgomp. Times: the "
             "program's own (barnes-hut: its timed steps; NPB: its rounded 'Time in seconds'), "
             "median [p25–p75]; / off: ratio of medians, paired median in parentheses.", "",
             "Per run, over its adaptive sites (medians over repetitions): settled = converged by "
             "the end; recalled = converged from the file at invocation 0; first good = the "
             "invocation at which a settled site first ran the schedule it settled on (median "
             "over sites; max); before it: the loop time those sites spent before their first "
             "good invocation, summed; unsettled: the loop time of the sites that never settled.",
             ""]
    lines += tr.failures(problems)
    body = [[r["program"], r["mode"], tr.span(r),
             tr.percent(r["spread"]),
             _f(r["per_off"], "{:.3f}") + _f(r["per_off_paired"], " ({:.3f})"),
             _f(r["process_median_s"], "{:.4g}") + _f(r["process_per_off"], " ({:.3f})"),
             "–" if r["sites"] is None else f"{r['settled']:g} / {r['sites']:g}",
             _f(r["recalled"], "{:g}"),
             "–" if r["first_good_median"] is None else
             f"{r['first_good_median']:g} ({r['first_good_max']:g})",
             _f(r["before_good_s"], "{:.2f}", 1e3), _f(r["unsettled_s"], "{:.2f}", 1e3),
             _f(r["loop_s"], "{:.2f}", 1e3)] for r in rows]
    lines += tr.table(["program", "mode", "time [p25–p75] s", "spread", "/ off", "process s (/ off)",
                       "settled / sites", "recalled", "first good: median (max)",
                       "before it, ms", "unsettled, ms", "adaptive loops, ms"], body) + [""]
    lines += tr.repeatability(noise_before, noise_after, entries)
    return "\n".join(lines) + "\n"
