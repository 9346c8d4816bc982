"""MPI workloads (issue 15): the mpirun command, the records, per-rank statistics and slack.

An MPI workload (matrix.MPI_WORKLOADS, e.g. jacobi3d-mpi) runs as

  mpirun -np R [--oversubscribe] --map-by … --bind-to core|core:overload-allowed|none
         [--allow-run-as-root] [-x LD_PRELOAD=<lib>/libaloe-mpi.so -x ALOE_MPI_STATS=<scratch>/mpi.%r.json]
         [-x ALOE_STATS=<scratch>/loops.%r.json]     (timed aloe runs)
         <apps>/aloe-app-jacobi3d-mpi <workload flags> --runtime … --threads T
         --bind close|none --json <scratch>/record.json <noise flags>

in a scratch folder of its own (<results>/mpi-scratch/run-N, removed when the run is valid),
so that the ranks' files of two runs never meet. Binding (`bind_to` in the matrix):
  core, R × T ≤ CPUs   --map-by slot:PE=T --bind-to core: each rank gets T cores of its own,
                       and the program pins its threads inside them (--bind close)
  core, R × T > CPUs   --oversubscribe --map-by core --bind-to core:overload-allowed: each
                       rank on one core, ranks sharing cores (--bind close)
  none                 --bind-to none (--oversubscribe when R × T > CPUs), --bind none
CPUs are those the harness may use (its affinity mask). Every run's entry in runs.jsonl
holds `mpi`: the ranks, the mpirun argv, the binding asked for and the one used, whether it
oversubscribed, the CPUs, and with libaloe-mpi the per-rank statistics files (their rows,
the largest MAX_STATS_ROWS by time inside when a rank has more).

Rank 0's record (apps/README.md) has step_s = per step the slowest rank's, `mpi` (ranks, mode,
decomposition, …) and `ranks`: per rank its step_s, compute_s and wait_s per timed step. From
those and the statistics files, rank_rows() gives per config and rank: compute and wait
time (the program's own clocks), time inside MPI's waiting calls, slack (waiting for the last
rank to arrive) and communication cost (libaloe-mpi, when it measures them), and per slack
predictor (last, median, type, naive) its mean error, weighted by predictions (error_of_slack,
and error_of_interval), each the median over the repetitions. Fields a library or program
does not write are left empty, never guessed.

Loop statistics (the slack policy's evidence, docs/mpi.md): timed aloe runs (runtime aloe)
also export ALOE_STATS=<scratch>/loops.%r.json, and each rank's file is kept in the entry's
`mpi.loops` as loop_summary() trims it: per loop site (the MAX_LOOP_SITES with the most
total_s) its name, schedule, invocations, total_s, chunks and steals summed over the threads'
totals (chunks = dequeues), and, where the site has a `slack` policy, its call, planned,
lowered, fd_before_mean, fd_after_mean, predicted_mean_s, actual_mean_s and guard.
rank_rows() adds per rank: the dynamic fraction before → after the slack policy and the
predicted and actual slack per invocation (means over the slack sites, weighted by their
planned invocations), lowered and planned invocations (summed), and dequeues (and steals) per
step: Σ chunks over the sites / the most invocations of one site, serial ones included (the
per-step loops run the most; a loop that ran once spreads over the steps). With one thread per
rank every loop runs serially: no chunks, and no slack policy acts.
"""
from __future__ import annotations

import dataclasses
import json
import os
import shutil
import statistics
from pathlib import Path

from .provenance import display_path
from .summary import _fmt, write_rows_csv

PREDICTORS = ("last", "median", "type", "naive")
STATS_PATTERN = "mpi.%r.json"      # ALOE_MPI_STATS in a run's scratch folder (%r: the rank)
RECORD_FILE = "record.json"        # rank 0's --json
MAX_STATS_ROWS = 40                # call rows kept per rank in runs.jsonl (the rest summed)
MPI_LIBRARY = "libaloe-mpi.so"
LOOP_STATS_PATTERN = "loops.%r.json"  # ALOE_STATS of aloe runs in a run's scratch folder
MAX_LOOP_SITES = 8                 # loop sites kept per rank in runs.jsonl (most total_s first)
LOOP_COLUMNS = ["fd_before", "fd_after", "slack_lowered", "slack_planned", "dequeues_per_step",
                "steals_per_step", "slack_predicted_s", "slack_actual_s"]
RANK_COLUMNS = (["workload", "noise", "threads", "ranks", "run", "rank", "reps", "steps",
                 "compute_s", "wait_s", "mpi_s", "slack_s", "comm_s", "calls"]
                + [f"{p}_error_{k}" for p in PREDICTORS for k in ("slack", "interval")]
                + LOOP_COLUMNS)


def available_cpus() -> int:
    """The CPUs this process may use (its affinity mask), as mpirun's ranks will."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


@dataclasses.dataclass(frozen=True)
class Launch:
    """How one MPI run is launched; `describe()` goes into the run's record."""
    ranks: int
    threads: int
    cpus: int
    bind_to: str                      # asked for: "core" or "none"
    root: bool = False

    @property
    def oversubscribed(self) -> bool:
        return self.ranks * self.threads > self.cpus

    @property
    def binding(self) -> str:
        """mpirun's --bind-to value used."""
        if self.bind_to == "none":
            return "none"
        return "core:overload-allowed" if self.oversubscribed else "core"

    @property
    def app_bind(self) -> str:
        """The program's --bind: its threads pinned inside the rank's cores, or not at all."""
        return "none" if self.bind_to == "none" else "close"

    def mpirun_options(self) -> list[str]:
        opts = ["-np", str(self.ranks)]
        if self.oversubscribed:
            opts.append("--oversubscribe")
        if self.bind_to == "core":
            opts += ["--map-by", "core" if self.oversubscribed else f"slot:PE={self.threads}"]
        opts += ["--bind-to", self.binding]
        if self.root:
            opts.append("--allow-run-as-root")
        return opts

    def describe(self) -> dict:
        return {"ranks": self.ranks, "threads_per_rank": self.threads, "cpus": self.cpus,
                "bind_to": self.bind_to, "binding": self.binding, "app_bind": self.app_bind,
                "oversubscribe": self.oversubscribed, "allow_run_as_root": self.root}


def command(mpirun: str, launch: Launch, app_argv: list[str],
            env: dict[str, str] | None = None) -> list[str]:
    """`mpirun <options> [-x K=V …] <app argv>`: the variables go to the ranks only (never
    to mpirun itself, which must not preload libaloe-mpi)."""
    exported = [w for k, v in (env or {}).items() for w in ("-x", f"{k}={v}")]
    return [mpirun, *launch.mpirun_options(), *exported, *app_argv]


def display_argv(argv: list[str], scratch: Path) -> list[str]:
    """argv as records show it: the run's scratch folder as <scratch>, repository paths
    relative (also as the value of K=V and --flag=V), other words as they are."""
    out = []
    for word in argv:
        word = word.replace(str(scratch), "<scratch>")
        head, eq, value = word.partition("=")
        if eq and value.startswith("/"):
            word = f"{head}={display_path(value)}"
        elif word.startswith("/"):
            word = display_path(word)
        out.append(word)
    return out


def stats_env(library: str, scratch: Path) -> dict[str, str]:
    """LD_PRELOAD of libaloe-mpi and ALOE_MPI_STATS=<scratch>/mpi.%r.json."""
    return {"LD_PRELOAD": str(library), "ALOE_MPI_STATS": str(Path(scratch) / STATS_PATTERN)}


def loop_stats_env(scratch: Path) -> dict[str, str]:
    """ALOE_STATS=<scratch>/loops.%r.json: each rank's loop sites (aloe expands %r)."""
    return {"ALOE_STATS": str(Path(scratch) / LOOP_STATS_PATTERN)}


def stats_library(apps_dir: Path) -> Path:
    """libaloe-mpi.so of the build that holds the apps (<apps>/../lib)."""
    return Path(apps_dir).parent / "lib" / MPI_LIBRARY


def skip_reason(mpirun: str | None, app: Path) -> str | None:
    """Why MPI workloads cannot run here (None: they can)."""
    if not mpirun or not (shutil.which(mpirun) or Path(mpirun).is_file()):
        return (f"mpirun {'(' + mpirun + ') ' if mpirun else ''}not found: install an MPI "
                "(OpenMPI) or pass --mpirun PATH")
    if not app.is_file():
        return (f"{app.name} is not built in {display_path(app.parent)}/ (it is built when "
                "CMake finds an MPI; pass --apps-dir for another build)")
    return None


# --- per-rank statistics files -----------------------------------------------------------

def read_stats(scratch: Path, ranks: int) -> tuple[list[dict | None], list[str]]:
    """Each rank's statistics file (None where missing or unreadable) and what went wrong."""
    out, problems = [], []
    for r in range(ranks):
        path = Path(scratch) / STATS_PATTERN.replace("%r", str(r))
        try:
            data = json.loads(path.read_text())
            out.append(trim_stats(data) if isinstance(data, dict) else None)
            if not isinstance(data, dict):
                problems.append(f"rank {r}'s MPI statistics are not a JSON object")
        except FileNotFoundError:
            out.append(None)
            problems.append(f"rank {r} wrote no MPI statistics ({path.name})")
        except (OSError, json.JSONDecodeError) as e:
            out.append(None)
            problems.append(f"rank {r}'s MPI statistics cannot be read: {e}")
    return out, problems


def trim_stats(data: dict) -> dict:
    """The file with at most MAX_STATS_ROWS call rows (the most time inside first; the rest
    summed into one row named "(other rows)")."""
    calls = [c for c in data.get("calls") or [] if isinstance(c, dict)]
    if len(calls) <= MAX_STATS_ROWS:
        return data
    calls.sort(key=lambda c: -_num(c.get("time_s")))
    kept, rest = calls[:MAX_STATS_ROWS - 1], calls[MAX_STATS_ROWS - 1:]
    other = {"call": "(other rows)", "kind": "mixed", "site": f"{len(rest)} rows"}
    for key in ("calls", "time_s", "slack_s", "comm_s"):
        values = [c[key] for c in rest if isinstance(c.get(key), (int, float))]
        if values:
            other[key] = sum(values)
    return data | {"calls": kept + [other], "calls_trimmed": len(rest)}


def rank_totals(stats: dict | None) -> dict:
    """One rank's file summed over its waiting calls (MPI_Init/Finalize, kind "lifetime", left
    out): time inside, slack and communication cost (None when no row has them), calls, and per
    predictor the prediction-weighted mean error of slack and of interval (None: undefined)."""
    out = {"mpi_s": None, "slack_s": None, "comm_s": None, "calls": None}
    out |= {f"{p}_error_{k}": None for p in PREDICTORS for k in ("slack", "interval")}
    if not isinstance(stats, dict):
        return out
    rows = [c for c in stats.get("calls") or []
            if isinstance(c, dict) and c.get("kind") != "lifetime"]
    for key, field in (("mpi_s", "time_s"), ("slack_s", "slack_s"), ("comm_s", "comm_s"),
                       ("calls", "calls")):
        values = [c[field] for c in rows if _is_num(c.get(field))]
        out[key] = sum(values) if values else None
    for p in PREDICTORS:
        for k in ("slack", "interval"):
            weighted = [(c["predictors"][p]["predictions"], c["predictors"][p][f"error_of_{k}"])
                        for c in rows if _predictor_ok(c, p, k)]
            total = sum(n for n, _ in weighted)
            out[f"{p}_error_{k}"] = sum(n * e for n, e in weighted) / total if total else None
    return out


def _predictor_ok(row: dict, predictor: str, key: str) -> bool:
    p = (row.get("predictors") or {}).get(predictor)
    return (isinstance(p, dict) and _is_num(p.get("predictions")) and p["predictions"] > 0
            and _is_num(p.get(f"error_of_{key}")) and p[f"error_of_{key}"] >= 0)


def _is_num(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _num(x) -> float:
    return float(x) if _is_num(x) else 0.0


# --- per-rank loop statistics (ALOE_STATS) -----------------------------------------------

SLACK_FIELDS = ("call", "planned", "lowered", "fd_before_mean", "fd_after_mean",
                "predicted_mean_s", "actual_mean_s", "guard")


def read_loop_stats(scratch: Path, ranks: int) -> tuple[list[dict | None], list[str]]:
    """Each rank's ALOE_STATS file as loop_summary() trims it (None where missing or
    unreadable) and what went wrong."""
    out, problems = [], []
    for r in range(ranks):
        path = Path(scratch) / LOOP_STATS_PATTERN.replace("%r", str(r))
        try:
            data = json.loads(path.read_text())
        except FileNotFoundError:
            out.append(None)
            problems.append(f"rank {r} wrote no loop statistics ({path.name})")
            continue
        except (OSError, json.JSONDecodeError) as e:
            out.append(None)
            problems.append(f"rank {r}'s loop statistics cannot be read: {e}")
            continue
        if not isinstance(data, dict) or not isinstance(data.get("sites"), list):
            out.append(None)
            problems.append(f"rank {r}'s loop statistics have no 'sites' list")
            continue
        out.append(loop_summary(data))
    return out, problems


def loop_summary(data: dict) -> dict:
    """An ALOE_STATS file cut to what the MPI tables need: per site (the MAX_LOOP_SITES with
    the most total_s) site, schedule, invocations (parallel) and serial_invocations (a loop
    on one thread, or nested, runs serially: no chunks, no policy), total_s, chunks and
    steals (summed over the threads' `total`), and `slack` (SLACK_FIELDS) where the site has
    a slack policy."""
    sites = [s for s in data.get("sites") or [] if isinstance(s, dict)]
    sites.sort(key=lambda s: -_num(s.get("total_s")))
    kept = []
    for s in sites[:MAX_LOOP_SITES]:
        threads = [t for t in s.get("total") or [] if isinstance(t, dict)]
        row = {"site": s.get("site"), "schedule": s.get("schedule"),
               "invocations": s.get("invocations"),
               "serial_invocations": s.get("serial_invocations"), "total_s": s.get("total_s"),
               "chunks": sum(int(t["chunks"]) for t in threads if _is_num(t.get("chunks"))),
               "steals": sum(int(t["steals"]) for t in threads if _is_num(t.get("steals")))}
        slack = next((p.get("slack") for p in s.get("policies") or []
                      if isinstance(p, dict) and p.get("name") == "slack"
                      and isinstance(p.get("slack"), dict)), None)
        if slack is not None:
            row["slack"] = {k: slack.get(k) for k in SLACK_FIELDS}
        kept.append(row)
    out = {"sites": kept}
    if len(sites) > len(kept):
        out["sites_left_out"] = len(sites) - len(kept)
    return out


def loop_totals(loops: dict | None) -> dict:
    """One rank's loop summary as the LOOP_COLUMNS (None where not measured): the slack
    sites' fd before/after and predicted/actual slack per invocation weighted by their
    planned invocations, lowered and planned summed; Σ chunks (steals) over the sites / the
    most invocations (parallel and serial) of one site."""
    out = dict.fromkeys(LOOP_COLUMNS)
    if not isinstance(loops, dict):
        return out
    sites = [s for s in loops.get("sites") or [] if isinstance(s, dict)]
    steps = max((_num(s.get("invocations")) + _num(s.get("serial_invocations"))
                 for s in sites), default=0)
    if steps > 0:
        out["dequeues_per_step"] = sum(_num(s.get("chunks")) for s in sites) / steps
        out["steals_per_step"] = sum(_num(s.get("steals")) for s in sites) / steps
    slack = [s["slack"] for s in sites if isinstance(s.get("slack"), dict)]
    for key, field in (("slack_planned", "planned"), ("slack_lowered", "lowered")):
        values = [x[field] for x in slack if _is_num(x.get(field))]
        out[key] = sum(values) if values else None
    for key, field in (("fd_before", "fd_before_mean"), ("fd_after", "fd_after_mean"),
                       ("slack_predicted_s", "predicted_mean_s"),
                       ("slack_actual_s", "actual_mean_s")):
        weighted = [(x["planned"], x[field]) for x in slack
                    if _is_num(x.get("planned")) and x["planned"] > 0 and _is_num(x.get(field))]
        total = sum(n for n, _ in weighted)
        out[key] = sum(n * v for n, v in weighted) / total if total else None
    return out


# --- record checks -----------------------------------------------------------------------

def record_errors(record: dict, ranks: int) -> list[str]:
    """What an MPI run's record lacks: `mpi` with the ranks asked for, and one `ranks` entry
    per rank."""
    errors = []
    info = record.get("mpi")
    if not isinstance(info, dict):
        return [f"record has no 'mpi' object (is {record.get('workload')!r} an MPI program?)"]
    if info.get("ranks") != ranks:
        errors.append(f"record's mpi.ranks is {info.get('ranks')!r}, expected {ranks}")
    per_rank = record.get("ranks")
    if not isinstance(per_rank, list) or len(per_rank) != ranks:
        errors.append(f"record's 'ranks' has {len(per_rank) if isinstance(per_rank, list) else 'no'}"
                      f" entries, expected {ranks}")
    return errors


# --- per-rank rows -----------------------------------------------------------------------

def rank_rows(entries: list[dict]) -> list[dict]:
    """Per MPI config (workload, noise, threads, run) and rank: medians over its valid timed
    repetitions of the summed per-step compute and wait times and of the statistics' totals."""
    configs: dict[tuple, list[dict]] = {}
    for e in entries:
        if e["role"] == "timed" and e["valid"] and e.get("mpi"):
            key = (e["workload"], e["noise"], e["threads"], f"{e['runtime']}:{e['schedule']}")
            configs.setdefault(key, []).append(e)
    rows = []
    for (workload, noise, threads, run), es in configs.items():
        ranks = es[0]["mpi"].get("ranks") or 0
        for r in range(ranks):
            per_rep = [_rank_rep(e, r) for e in es]
            row = dict(workload=workload, noise=noise, threads=threads, ranks=ranks, run=run,
                       rank=r, reps=len(es), steps=_median([x["steps"] for x in per_rep]))
            for key in RANK_COLUMNS[8:]:
                row[key] = _median([x[key] for x in per_rep])
            rows.append(row)
    return rows


def _rank_rep(e: dict, r: int) -> dict:
    per_rank = (e.get("record") or {}).get("ranks") or []
    mine = next((x for x in per_rank if isinstance(x, dict) and x.get("rank") == r), None)
    if mine is None and r < len(per_rank) and isinstance(per_rank[r], dict):
        mine = per_rank[r]
    mine = mine or {}
    out = {"steps": len(mine.get("step_s") or []) or None}
    for key in ("compute_s", "wait_s"):
        values = [v for v in mine.get(key) or [] if _is_num(v)]
        out[key] = sum(values) if values else None
    stats = (e["mpi"].get("stats") or [])
    loops = (e["mpi"].get("loops") or [])
    return (out | rank_totals(stats[r] if r < len(stats) else None)
            | loop_totals(loops[r] if r < len(loops) else None))


def _median(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def write_csv(path: Path, rows: list[dict]) -> None:
    write_rows_csv(path, rows, RANK_COLUMNS)


INTRO = ("Per MPI configuration and rank, medians over the repetitions: compute and wait are "
         "the program's own per-step clocks summed over the timed steps; in MPI, slack "
         "(waiting for the last rank) and communication are libaloe-mpi's totals over the "
         "waiting calls of the whole run (warmup and set-up included; MPI_Init/Finalize left "
         "out); the predictors' columns are the mean "
         "relative error of each slack predictor, of the slack / of the interval, weighted by "
         "its predictions. `–`: not measured (no statistics, or a library without that field). "
         "Imbalance: the slowest rank's compute over the mean rank's. "
         "The loop columns (aloe runs; aloe's ALOE_STATS per rank) show the slack policy "
         "(docs/mpi.md) at work: the dynamic fraction the schedule chose → the one that ran "
         "(means over the invocations), invocations lowered / planned, dequeues per step "
         "(chunks taken, over the most invocations of one loop site) and the slack predicted "
         "/ actually found per invocation (the loop's share, µs); a rank with slack should "
         "show a lower fraction and fewer dequeues with no loss in step time (the "
         "step-time tables). `–` there: no slack policy (a schedule without `slack=on`, or "
         "`adaptive,slack=off`) or not an aloe run.")


def tables(rows: list[dict]) -> list[tuple[str, list[str], list[list[str]]]]:
    """One table per (workload, noise, threads): a line per run and rank."""
    out = []
    header = (["run", "rank", "compute (s)", "wait (s)", "in MPI (s)", "slack (s)", "comm (s)",
               "imbalance"] + [f"{p} err" for p in PREDICTORS]
              + ["fd before → after", "lowered/planned", "dequeues/step",
                 "slack pred / actual (µs)"])
    for key in dict.fromkeys((r["workload"], r["noise"], r["threads"]) for r in rows):
        mine = [r for r in rows if (r["workload"], r["noise"], r["threads"]) == key]
        body = []
        for run in dict.fromkeys(r["run"] for r in mine):
            ranks = [r for r in mine if r["run"] == run]
            imbalance = _imbalance([r["compute_s"] for r in ranks])
            for r in ranks:
                body.append([run, str(r["rank"]), _fmt(r["compute_s"], "{:.4g}"),
                             _fmt(r["wait_s"], "{:.4g}"), _fmt(r["mpi_s"], "{:.4g}"),
                             _fmt(r["slack_s"], "{:.4g}"), _fmt(r["comm_s"], "{:.4g}"),
                             _fmt(imbalance, "{:.3f}") if r["rank"] == 0 else ""]
                            + [_errors(r, p) for p in PREDICTORS] + loop_cells(r))
        ranks = mine[0]["ranks"]
        out.append((f"{key[0]}, noise {key[1]}, {ranks} rank{'s' * (ranks != 1)} × {key[2]} "
                    f"thread{'s' * (key[2] != 1)}", header, body))
    return out


def loop_cells(row: dict) -> list[str]:
    """The table's loop columns of one rank's row (`–` where not measured)."""
    fd = ("–" if row["fd_before"] is None and row["fd_after"] is None else
          f"{_fmt(row['fd_before'], '{:.3f}')} → {_fmt(row['fd_after'], '{:.3f}')}")
    lowered = ("–" if row["slack_planned"] is None else
               f"{_fmt(row['slack_lowered'], '{:.0f}')}/{row['slack_planned']:.0f}")
    pred, actual = row["slack_predicted_s"], row["slack_actual_s"]
    slack = ("–" if pred is None and actual is None else
             f"{_fmt(None if pred is None else pred * 1e6, '{:.4g}')} / "
             f"{_fmt(None if actual is None else actual * 1e6, '{:.4g}')}")
    return [fd, lowered, _fmt(row["dequeues_per_step"], "{:.4g}"), slack]


def _imbalance(values: list) -> float | None:
    values = [v for v in values if v is not None]
    if not values or not statistics.mean(values):
        return None
    return max(values) / statistics.mean(values)


def _errors(row: dict, predictor: str) -> str:
    s, i = row[f"{predictor}_error_slack"], row[f"{predictor}_error_interval"]
    if s is None and i is None:
        return "–"
    return f"{_fmt(s, '{:.1%}')} / {_fmt(i, '{:.1%}')}"


def launches(entries: list[dict]) -> list[str]:
    """One line per distinct way MPI runs were launched (ranks, threads, binding)."""
    seen = {}
    for e in entries:
        info = e.get("mpi")
        if info and e["role"] == "timed":
            key = (info.get("ranks"), info.get("threads_per_rank"), info.get("binding"),
                   info.get("oversubscribe"))
            seen.setdefault(key, info)
    return [f"{i.get('ranks')} rank(s) × {i.get('threads_per_rank')} thread(s) on "
            f"{i.get('cpus')} CPU(s): --bind-to {i.get('binding')}"
            + (", --oversubscribe" if i.get("oversubscribe") else "")
            + (f"; libaloe-mpi statistics {'on' if i.get('stats_requested') else 'off'}"
               + (f" ({i['stats_note']})" if i.get("stats_note") else ""))
            for i in seen.values()]


def markdown(rows: list[dict], entries: list[dict], skipped: list[str] = ()) -> list[str]:
    """summary.md's MPI section: how runs were launched, skipped MPI workloads, the tables."""
    if not rows and not skipped and not launches(entries):
        return []
    lines = ["## MPI", ""]
    if skipped:
        lines += ["Skipped:", ""] + [f"- {s}" for s in skipped] + [""]
    launched = launches(entries)
    if launched:
        lines += ["Launched as:", ""] + [f"- {x}" for x in launched] + [""]
    if rows:
        lines += [INTRO + " The plots `rankhist-*.png` show each rank's step times.", ""]
    for title, header, body in tables(rows):
        lines += [f"### {title}", "", "| " + " | ".join(header) + " |",
                  "|" + "---|" * len(header)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in row) + " |" for row in body]
        lines += [""]
    return lines
