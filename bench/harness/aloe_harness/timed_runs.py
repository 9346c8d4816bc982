"""Variants of a program run as child processes: timed, interleaved, summarised.

The shared part of `first-cost`, `npb` and `persistence` (issue 14). A Case is one command
(argv, the variables it sets and those it clears) with the group it is compared within (a
loop time, a program) and its variant's name (libgomp, program, adaptive, off, on, …).
`order` interleaves the cases as the bench runner does (groups, and the variants inside each,
rotated by repetition, so drift of the machine hits every variant alike); `run` times one case
as a child process (the wall clock around the process: what a user waits for); `describe`
and `compare` give medians, p25–p75 spreads and ratios: of medians, and paired per
repetition (variant / base of the same repetition, which cancels drift slower than a
repetition). Nothing timed runs in Python but the process itself.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Iterable

import numpy as np

from . import files, provenance, runner

# Variables a variant's environment never inherits: how aloe is loaded and what it keeps
# across runs is the variant's to say (an ALOE_TUNING left in the shell would make every
# adaptive run a tuned one).
CLEARED = ("LD_PRELOAD", "ALOE_SCHEDULE", "ALOE_OMP_SCHEDULE", "ALOE_TUNING", "ALOE_STATS",
           "ALOE_OMP_STATS", "ALOE_OMP_SUMMARY", "ALOE_TRACE", "OMP_SCHEDULE")


# Folders outside the repository whose paths results must not hold (a results folder is
# committed; a path of one machine means nothing on another): absolute folder -> placeholder.
_HIDDEN: dict[str, str] = {}


def hide(folder: str | Path, placeholder: str) -> None:
    """From now on, shown() writes `folder` (and paths below it) as `placeholder`."""
    _HIDDEN[str(Path(folder).resolve())] = placeholder


def shown(text: str) -> str:
    """`text` with hidden folders replaced by their placeholders and the repository's paths
    made relative."""
    for folder, name in sorted(_HIDDEN.items(), key=lambda x: -len(x[0])):
        text = text.replace(folder, name)
    root = provenance.REPO_ROOT
    return text.replace(f"{root}/", "") if root else text


def shown_argv(argv: list[str]) -> list[str]:
    """argv with every word naming a path below a hidden folder written as its placeholder."""
    out = []
    for word in argv:
        real = str(Path(word).resolve()) if "/" in word and Path(word).exists() else None
        hit = real and next((f for f in _HIDDEN if real == f or real.startswith(f + "/")), None)
        out.append(_HIDDEN[hit] + real[len(hit):] if hit else word)
    return out


def scrub(path: Path) -> None:
    """Rewrites a file aloe wrote (statistics, a log) with its paths as shown()."""
    files.write_text(path, shown(Path(path).read_text()))


@dataclasses.dataclass(frozen=True)
class Case:
    group: str                               # compared within: "1000 µs", "mg.A.x", …
    variant: str                             # "libgomp", "adaptive", "on", …
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...] = ()    # set for this case
    # Sets of the environment are applied after CLEARED is removed, so OMP_SCHEDULE is
    # unset unless the case sets it.

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in (os.environ if base is None else base).items()
               if k not in CLEARED}
        return env | dict(self.env)

    def command_line(self) -> str:
        """As a shell takes it, the variables the case sets first (paths as shown())."""
        return shown("".join(f"{k}={v} " for k, v in self.env)
                     + provenance.display_command(list(self.argv)))


@dataclasses.dataclass
class Outcome:
    exit_status: int | None      # None: did not start or timed out
    wall_s: float
    stdout: str
    stderr: str
    error: str | None = None     # why the run failed, in one line; None: it ran and exited 0


def run(case: Case, timeout: float, cwd: str | Path | None = None) -> Outcome:
    """Runs the case once; the wall time is the process's, start to exit."""
    start = time.perf_counter()
    try:
        p = subprocess.run(list(case.argv), capture_output=True, text=True, timeout=timeout,
                           env=case.environment(), cwd=cwd)
    except subprocess.TimeoutExpired:
        return Outcome(None, time.perf_counter() - start, "", "", f"timed out after {timeout:g} s")
    except OSError as e:
        return Outcome(None, 0.0, "", "", f"could not start: {e}")
    wall = time.perf_counter() - start
    error = None if p.returncode == 0 else shown(
        f"exit status {p.returncode}: " + (_last_line(p.stderr) or _last_line(p.stdout)))
    return Outcome(p.returncode, wall, p.stdout, p.stderr, error)


def _last_line(text: str) -> str:
    lines = [x for x in text.strip().splitlines() if x.strip()]
    return lines[-1][:300] if lines else ""


def order(cases: list[Case], reps: int) -> list[tuple[int, Case]]:
    """(rep, case) in run order: groups, and the variants inside each group, rotated by rep."""
    return runner.interleave(cases, reps)


def log(stream: IO[str], rep: int, case: Case, outcome: Outcome, **fields) -> dict:
    """Appends one run to runs.jsonl (the raw record) and returns it."""
    entry = {"rep": rep, "group": case.group, "variant": case.variant,
             "command": case.command_line(), "exit_status": outcome.exit_status,
             "process_s": outcome.wall_s, "error": outcome.error, **fields}
    stream.write(json.dumps(entry) + "\n")
    stream.flush()
    return entry


def describe(values: list[float]) -> dict:
    """reps, median, p25, p75 (numpy's linear percentiles, as summary.py), min, max and the
    spread (p75 − p25) / median (None for fewer than 2 values)."""
    if not values:
        return {"reps": 0, "median": None, "p25": None, "p75": None, "min": None, "max": None,
                "spread": None}
    p25, p75 = (float(x) for x in np.percentile(values, [25, 75]))
    median = statistics.median(values)
    return {"reps": len(values), "median": median, "p25": p25, "p75": p75, "min": min(values),
            "max": max(values),
            "spread": (p75 - p25) / median if len(values) > 1 and median else None}


def compare(by_rep: dict[str, dict[int, float]], base: str) -> dict[str, dict]:
    """Per variant ({variant: {rep: value}}): describe() of its values, `ratio` (its median /
    base's median) and `paired` (describe() of value / base's value of the same rep)."""
    ref = by_rep.get(base, {})
    ref_median = describe(list(ref.values()))["median"]
    out = {}
    for variant, values in by_rep.items():
        s = describe(list(values.values()))
        s["ratio"] = s["median"] / ref_median if s["median"] is not None and ref_median else None
        s["paired"] = describe([v / ref[r] for r, v in values.items() if ref.get(r)])
        out[variant] = s
    return out


def values_by_rep(entries: Iterable[dict], group: str, key: str) -> dict[str, dict[int, float]]:
    """{variant: {rep: entry[key]}} for one group's successful entries."""
    out: dict[str, dict[int, float]] = {}
    for e in entries:
        if e["group"] == group and e["error"] is None and e.get(key) is not None:
            out.setdefault(e["variant"], {})[e["rep"]] = e[key]
    return out


# --- results folder and Markdown ---------------------------------------------------------

def results_folder(given: str | None, kind: str) -> Path:
    """--out, else bench/results/<kind>-YYYYMMDD in a source tree (the current folder outside
    one); absolute, because the programs run in scratch folders and are handed paths in it."""
    if given:
        return Path(given).resolve()
    root = provenance.REPO_ROOT / "bench/results" if provenance.REPO_ROOT else Path.cwd()
    return root / f"{kind}-{datetime.date.today().strftime('%Y%m%d')}"


def begin(a, kind: str, argv: list[str], command: str) -> tuple[Path, dict] | None:
    """The results folder (--out, else bench/results/<kind>-YYYYMMDD) made and started, with
    the noise measured before; None, said on stderr, when it already holds results."""
    out = results_folder(a.out, kind)
    try:
        return out, start_folder(out, argv, a.aloe)
    except FileExistsError as e:
        print(f"aloe_harness {command}: {e}", file=sys.stderr)
        return None


def start_folder(out: Path, argv: list[str], aloe: str) -> dict:
    """Makes the folder (refusing one that holds runs.jsonl) and writes command.txt,
    machine.json and noise-before.json; returns the noise measurement."""
    if (out / "runs.jsonl").exists():
        raise FileExistsError(f"{out} already holds results (runs.jsonl); choose another --out")
    out.mkdir(parents=True, exist_ok=True)
    provenance.write_command(out, shown_argv(argv))
    if _HIDDEN:
        files.write_text(out / "command.txt", (out / "command.txt").read_text() + "".join(
            f"# {name}: a folder of the machine that ran it (not recorded)\n"
            for name in _HIDDEN.values()))
    provenance.write_machine(out, aloe)
    return provenance.write_noise(out, aloe, "before")


def table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table (cells' '|' escaped)."""
    def line(cells: list[str]) -> str:
        return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"
    return [line(header), "|" + "---|" * len(header)] + [line(r) for r in rows]


def span(row: dict, key: str = "median_s", low: str = "p25_s", high: str = "p75_s") -> str:
    """'median [p25–p75]' of a table row, 4 significant digits; '–' without a median."""
    if row.get(key) is None:
        return "–"
    return f"{row[key]:.4g} [{row[low]:.4g}–{row[high]:.4g}]"


def percent(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def failures(problems: list[str]) -> list[str]:
    """result.md's FAILURES section (nothing when every run passed)."""
    if not problems:
        return []
    return [f"## FAILURES ({len(problems)})", ""] + [f"- {p}" for p in problems] + [""]


def repeatability(noise_before, noise_after, entries: list[dict]) -> list[str]:
    """result.md's closing section: the machine's noise around the runs, and the run count."""
    return ["## Repeatability", "",
            f"- Machine noise before: {provenance.describe_noise(noise_before)}.",
            f"- Machine noise after: {provenance.describe_noise(noise_after)}.",
            f"- Runs: {len(entries)}, failed: {sum(e['error'] is not None for e in entries)}."]


def progress(i: int, n: int, rep: int, case: Case, entry: dict, what: str,
             problems: list[str]) -> None:
    """One line on stderr per run; a failed run also goes into `problems`."""
    if entry["error"]:
        problems.append(f"rep {rep + 1} {case.group} {case.variant}: {entry['error']}")
        what = f"FAILED: {entry['error']}"
    print(f"[{i + 1}/{n}] {case.group} {case.variant}: {what}", file=sys.stderr)


def write_result(out: Path, command: str, text: str, problems: list[str]) -> int:
    """result.md, also printed; the exit status: 1 when a run failed, else 0."""
    files.write_text(out / "result.md", text)
    print(text)
    print(f"aloe_harness {command}: wrote {provenance.display_path(out)}", file=sys.stderr)
    return 1 if problems else 0


def finish_folder(out: Path, aloe: str, problems: list[str]) -> dict:
    """noise-after.json and problems.txt (when something failed); returns the noise."""
    if problems:
        files.write_text(out / "problems.txt", "\n".join(problems) + "\n")
    return provenance.write_noise(out, aloe, "after")


# --- command line ------------------------------------------------------------------------

BIND_CLOSE = (("OMP_PROC_BIND", "close"), ("OMP_PLACES", "cores"), ("ALOE_PROC_BIND", "close"))


def add_subcommand(sub, name: str, summary: str, doc: str):
    """A subparser whose --help shows its module's opening comment."""
    return sub.add_parser(name, help=summary, description=doc.splitlines()[0],
                          epilog="\n".join(doc.splitlines()[2:]),
                          formatter_class=argparse.RawDescriptionHelpFormatter)


def add_common_arguments(p, *, reps: int) -> None:
    """--aloe, --threads, --reps, --bind, --timeout, --quick and --out, as every subcommand
    of issue 14's takes them."""
    p.add_argument("--aloe", help="the aloe tool (default: build/release/tools/aloe/aloe in a "
                   "source tree, else `aloe` on PATH)")
    p.add_argument("--threads", type=int, default=2, help="team size of every run (default 2)")
    p.add_argument("--reps", type=int, default=reps,
                   help=f"timed repetitions of every variant (default {reps})")
    p.add_argument("--bind", choices=["close", "none"], default="close",
                   help="close (default): OMP_PROC_BIND=close OMP_PLACES=cores "
                   "ALOE_PROC_BIND=close for every run; none: no pinning")
    p.add_argument("--timeout", type=float, default=600, help="seconds before a run is killed")
    p.add_argument("--quick", action="store_true",
                   help="a small, short run to see that everything works (not to quote)")
    p.add_argument("--out", help="results folder (default: bench/results/<kind>-YYYYMMDD)")


def check_common(a) -> str | None:
    """What is wrong with the common arguments, or None; fills in --aloe."""
    if a.threads < 1 or a.reps < 1 or a.timeout <= 0:
        return "--threads, --reps and --timeout must be positive"
    if not a.aloe:
        built = provenance.REPO_ROOT and provenance.REPO_ROOT / "build/release/tools/aloe/aloe"
        a.aloe = str(built) if built and built.is_file() else "aloe"
    return None


def bind_env(a) -> tuple[tuple[str, str], ...]:
    return BIND_CLOSE if a.bind == "close" else ()


def aloe_run(a, schedule: str, *extra: str) -> list[str]:
    """`<aloe> run --schedule S --threads T --summary none [extra] --`."""
    return [a.aloe, "run", "--schedule", schedule, "--threads", str(a.threads), "--summary",
            "none", *extra, "--"]
