"""`npb`: `adaptive` on codes whose loops are short and many, against plain static (issue 14,
part B): the NAS Parallel Benchmarks with their worksharing loops made schedule(runtime).

    PYTHONPATH=bench/harness .venv/bin/python -m aloe_harness npb --npb-bin DIR \\
        [--programs mg.A.x,cg.A.x] [--variants libgomp,static,adaptive[,program]] [--reps 15] \\
        [--threads 2] [--bind close|none] [--aloe PATH] [--quick] [--out DIR]

DIR is the bin folder of an NPB 3.4 OpenMP build (NPB3.4-OMP of github.com/LLNL/NPB, the
reference sources) rewritten by `python -m aloe_harness.npb_variant` so that its worksharing
loops are schedule(runtime) where that keeps it correct, built outside this repository
(bench/harness/README.md, "NPB").
Each program runs in a scratch folder, once per variant and repetition, interleaved:
  libgomp    plain GNU libgomp, OMP_SCHEDULE=static
  static     `aloe run --schedule static`, OMP_SCHEDULE unset
  adaptive   `aloe run --schedule adaptive`, OMP_SCHEDULE unset, no tuning file
  program    `aloe run --schedule program`, OMP_SCHEDULE=static (not run unless named)
(A static run-sched-var keeps OpenMP's mapping under every --schedule, so the aloe schedules
run with it unset; the loops the variant left static stay static.) A run counts when it exits 0 and NPB says "Verification = SUCCESSFUL".
The time is the process's wall time (NPB prints its own to 10 ms only; both are kept).

Results: result.md (per program: medians, p25–p75 spreads, ratios to libgomp and adaptive /
static, the target of ≤ 1.05 × static, steady: three runs in four within it (paired p75);
what one `--stats` run of adaptive shows of the loop sites), runs.jsonl, npb.csv,
stats/*.json, command.txt, machine.json, noise-{before,after}.json. Exit status as first-cost.
"""
from __future__ import annotations

import argparse
import re
import sys
import tempfile
from pathlib import Path

from . import site_tuning, summary
from . import timed_runs as tr

VARIANTS = ("libgomp", "static", "adaptive", "program")
TARGET = 1.05   # issue 14: adaptive at most 1.05 × plain static on short-loop codes
QUICK_REPS = 2
_TIME = re.compile(r"Time in seconds\s*=\s*([0-9.eE+-]+)")
_VERIFIED = re.compile(r"Verification\s*=\s*(\w+)")


def add_parser(sub) -> None:
    p = tr.add_subcommand(sub, "npb", "adaptive on NPB's short loops against static "
                          "(issue 14, B)", __doc__)
    add_npb_arguments(p, "mg.A.x,cg.A.x")
    p.add_argument("--variants", default="libgomp,static,adaptive",
                   help=f"some of {', '.join(VARIANTS)} (libgomp is always run: the base)")
    tr.add_common_arguments(p, reps=15)


def add_npb_arguments(p, programs: str) -> None:
    p.add_argument("--npb-bin", required=True, help="bin folder of the schedule(runtime) "
                   "NPB build (see bench/harness/README.md, NPB)")
    p.add_argument("--programs", default=programs, help=f"programs in it (default {programs})")


def npb_programs(a: argparse.Namespace) -> tuple[list[str], str | None]:
    """The programs' paths, or what is missing."""
    names = [x for x in a.programs.split(",") if x]
    tr.hide(a.npb_bin, "<npb-bin>")
    paths = [str(Path(a.npb_bin).resolve() / n) for n in names]
    missing = [n for n, p in zip(names, paths) if not Path(p).is_file()]
    if not names or missing:
        return [], (f"no such program in {a.npb_bin}: {', '.join(missing) or '(none named)'} "
                    "(build it there: make MG CLASS=A, …; see bench/harness/README.md, NPB)")
    return paths, None


def parse_output(stdout: str) -> tuple[float | None, str | None]:
    """(NPB's own seconds, None) of a verified run, or (None, why it does not count)."""
    m = _TIME.search(stdout)
    if not m:
        return None, "no 'Time in seconds' in the output"
    verified = _VERIFIED.search(stdout)
    if not verified or verified.group(1) != "SUCCESSFUL":
        return None, f"NPB's verification: {verified.group(1) if verified else 'not printed'}"
    return float(m.group(1)), None


def cases(a: argparse.Namespace, programs: list[str]) -> list[tr.Case]:
    out = []
    for path in programs:
        for v in a.variants:
            static = (("OMP_SCHEDULE", "static"),) if v in ("libgomp", "program") else ()
            threads = (("OMP_NUM_THREADS", str(a.threads)),) if v == "libgomp" else ()
            argv = [path] if v == "libgomp" else tr.aloe_run(a, v) + [path]
            out.append(tr.Case(Path(path).name, v, tuple(argv),
                               tr.bind_env(a) + static + threads))
    return out


def main(a: argparse.Namespace, argv: list[str]) -> int:
    problem = tr.check_common(a)
    programs, missing = npb_programs(a)
    names = [v for v in a.variants.split(",") if v]
    if not problem and any(v not in VARIANTS for v in names):
        problem = f"--variants: expected some of {', '.join(VARIANTS)}"
    if problem or missing:
        print(f"aloe_harness npb: {problem or missing}", file=sys.stderr)
        return 2
    a.variants = [v for v in VARIANTS if v in names or v == "libgomp"]
    if a.quick:
        a.reps = min(a.reps, QUICK_REPS)
    started = tr.begin(a, "npb-short-loops", argv, "npb")
    if started is None:
        return 2
    out, noise_before = started
    entries, problems = [], []
    plan = tr.order(cases(a, programs), a.reps)
    with tempfile.TemporaryDirectory(prefix="aloe-npb-") as scratch, \
            open(out / "runs.jsonl", "w") as stream:
        for i, (rep, case) in enumerate(plan):
            entry = run_npb(stream, rep, case, a.timeout, scratch)
            entries.append(entry)
            tr.progress(i, len(plan), rep, case, entry, f"{entry['process_s']:.3f} s", problems)
        tuning = stats_runs(a, programs, out / "stats", scratch, problems)
    noise_after = tr.finish_folder(out, a.aloe, problems)
    rows = table_rows(entries, [Path(p).name for p in programs])
    summary.write_rows_csv(out / "npb.csv", rows, ROW_KEYS)
    return tr.write_result(out, "npb", markdown(a, rows, tuning, entries, problems,
                                                noise_before, noise_after), problems)


def run_npb(stream, rep: int, case: tr.Case, timeout: float, cwd: str, **extra) -> dict:
    """One run of an NPB program: logged, with NPB's own time and the verification."""
    outcome = tr.run(case, timeout, cwd=cwd)
    npb_s = None
    if outcome.error is None:
        npb_s, outcome.error = parse_output(outcome.stdout)
    return tr.log(stream, rep, case, outcome, npb_s=npb_s, **extra)


def stats_runs(a: argparse.Namespace, programs: list[str], folder: Path, cwd: str,
               problems: list[str]) -> dict[str, list]:
    """One untimed `aloe run --schedule adaptive --stats` per program: its sites' tuning."""
    folder.mkdir(exist_ok=True)
    out = {}
    for path in programs:
        name = Path(path).name
        stats = folder / f"adaptive-{name}.json"
        case = tr.Case(name, "adaptive", tuple(tr.aloe_run(a, "adaptive", "--stats", str(stats))
                                               + [path]), tr.bind_env(a))
        outcome = tr.run(case, a.timeout, cwd=cwd)
        try:
            out[name] = (site_tuning.read(stats), outcome.wall_s)
            tr.scrub(stats)
        except (OSError, ValueError, KeyError) as e:
            problems.append(f"stats run {name}: {outcome.error or e}")
    return out


# --- analysis (pure; tests/python/test_npb.py) ---------------------------------------------

ROW_KEYS = ["program", "variant", "reps", "median_s", "p25_s", "p75_s", "spread", "min_s",
            "max_s", "per_libgomp", "per_libgomp_paired", "per_libgomp_paired_p25",
            "per_libgomp_paired_p75", "per_static", "per_static_paired",
            "per_static_paired_p75", "npb_median_s"]


def table_rows(entries: list[dict], programs: list[str]) -> list[dict]:
    rows = []
    for name in programs:
        times = tr.values_by_rep(entries, name, "process_s")
        if "libgomp" not in times:
            continue
        lib = tr.compare(times, "libgomp")
        sta = tr.compare(times, "static") if "static" in times else {}
        npb_s = tr.values_by_rep(entries, name, "npb_s")
        for v, s in lib.items():
            st = sta.get(v, {})
            rows.append({
                "program": name, "variant": v, "reps": s["reps"], "median_s": s["median"],
                "p25_s": s["p25"], "p75_s": s["p75"], "spread": s["spread"], "min_s": s["min"],
                "max_s": s["max"], "per_libgomp": s["ratio"],
                "per_libgomp_paired": s["paired"]["median"],
                "per_libgomp_paired_p25": s["paired"]["p25"],
                "per_libgomp_paired_p75": s["paired"]["p75"],
                "per_static": st.get("ratio"),
                "per_static_paired": st.get("paired", {}).get("median"),
                "per_static_paired_p75": st.get("paired", {}).get("p75"),
                "npb_median_s": tr.describe(list(npb_s.get(v, {}).values()))["median"]})
    return rows


def verdict(row: dict) -> str:
    """≤ 1.05 × plain static (libgomp), and steady: the paired p75 within it too."""
    r, p75 = row["per_libgomp_paired"], row["per_libgomp_paired_p75"]
    if r is None:
        return "–"
    if r > TARGET:
        return f"missed: {r:.3f} × static (target ≤ {TARGET:g})"
    if p75 is not None and p75 > TARGET:
        return f"not steady: median {r:.3f}, but p75 {p75:.3f} > {TARGET:g}"
    return f"met: {r:.3f} × static, p75 {p75:.3f}" if p75 is not None else f"met: {r:.3f}"


def _f(value, form: str) -> str:
    return "–" if value is None else form.format(value)


def markdown(a, rows: list[dict], tuning: dict, entries: list[dict], problems: list[str],
             noise_before, noise_after) -> str:
    lines = ["# `adaptive` on NPB's short loops against static (issue 14, B)", "",
             f"Command: see command.txt; machine: machine.json. NPB 3.4 OpenMP, worksharing "
             f"loops schedule(runtime); {a.threads} threads, bind {a.bind}; {a.reps} "
             "repetitions, interleaved. Times: the process's wall time (NPB's own, to 10 ms, "
             "in npb.csv); ratios of medians, and paired (per repetition) median [p25–p75]. "
             "Spread: (p75 − p25) / median.", ""]
    lines += tr.failures(problems)
    body = [[r["program"], r["variant"], tr.span(r),
             tr.percent(r["spread"]), f"{r['min_s']:.4g}–{r['max_s']:.4g}",
             _f(r["per_libgomp"], "{:.3f}") + (
                 f"; paired {r['per_libgomp_paired']:.3f} [{r['per_libgomp_paired_p25']:.3f}–"
                 f"{r['per_libgomp_paired_p75']:.3f}]" if r["variant"] != "libgomp" else ""),
             _f(r["per_static"], "{:.3f}"),
             verdict(r) if r["variant"] == "adaptive" else ""] for r in rows]
    lines += ["## Times and ratios", ""]
    lines += tr.table(["program", "variant", "median [p25–p75] s", "spread", "min–max s",
                       "/ libgomp static", "/ aloe static", f"adaptive ≤ {TARGET:g} × static"],
                      body) + [""]
    lines += ["## The loop sites (one extra adaptive run per program, with --stats)", "",
              "Invocations per second: of the adaptive sites, over that run's process time; "
              "µs per invocation: their loop time over their invocations.", ""]
    body = []
    for name, (tuned, wall_s) in tuning.items():
        s = site_tuning.summary(tuned)
        chosen = ", ".join(f"{k} ×{n}" for k, n in
                           list(site_tuning.chosen_counts(tuned).items())[:4])
        body.append([name, str(s["sites"]), str(s["invocations"]),
                     f"{s['invocations'] / wall_s:,.0f}" if wall_s else "–",
                     f"{s['loop_s'] / s['invocations'] * 1e6:.1f}" if s["invocations"] else "–",
                     f"{s['settled']}", chosen])
    lines += tr.table(["program", "adaptive sites", "invocations", "per second",
                       "µs per invocation", "settled", "settled on (most common)"], body) + [""]
    lines += tr.repeatability(noise_before, noise_after, entries)
    return "\n".join(lines) + "\n"
