"""Mixes of OpenMP programs sharing one node: stock time-sharing, static partitions, aloed.

What it measures, and why: `aloed` gives each OpenMP program run under `aloe run` a share of
the node's cores by measured efficiency, after SCAF (Creech's thesis, 2015). SCAF was judged
by the *sum of speedups* of programs run together (speedup = the program's 1-thread time /
its time in the mix) against two baselines, and so is aloed here:

  oversubscribed  plain programs, each with OMP_NUM_THREADS = all CPUs: what users get.
                  A strong baseline, not a straw man: Iancu et al. (IPDPS'10) found
                  +27% throughput from oversubscription over partitioning.
  equipartition   each program pinned (taskset -c) to its own equal share of the CPUs with
                  that many threads; a program that ends leaves its CPUs idle.
  aloed           a private daemon (aloe daemon start --socket S --no-background-load), each
                  program under `aloe run --summary none --`, OMP_NUM_THREADS = all CPUs.

Each mix (e.g. cg,mg; cg@0,mg@0.5 starts mg 0.5 s after cg: staggered arrivals) runs once
per configuration and repetition, and each program once alone on all CPUs and once on one
thread (the references); all interleaved, the order rotated per repetition so that drift of
the machine hits every configuration alike. A program's time is the wall clock around its
process (from its own start to its exit). Per mix and configuration: medians and p25-p75 of
each program's time and speedup, the makespan, the sum of speedups, ANTT (mean of
T_mix / T_alone: lower is better) and the ratios aloed / equipartition and aloed /
oversubscribed. A run that exits non-zero, times out (it is killed) or prints a
"Verification" line that is not SUCCESSFUL (NPB) is failed: listed in result.md, counted,
and left out of the medians (and its repetition out of that mix's sums).

    .venv/bin/python bench/coord/mixes.py --out DIR --program cg=/path/cg.A.x \\
        --program mg=/path/mg.A.x --mix cg,mg --mix cg@0,mg@0.5 [--reps 5] \\
        [--configs oversubscribed,equipartition,aloed] [--timeout 120] [--aloe PATH]

Writes in DIR (new or empty): runs.csv (one row per process run; seq numbers the units in
the order run, a unit being a mix under one configuration or one reference run; slot is the
program's place in the mix), summary.csv, result.md, command.txt, daemon/*.log (each aloed
run's log) and failed/*.txt (each failed run's command, reason and output). Programs run in a
scratch folder. Exit status: 0 every run passed, 1 some failed (all written), 2 a bad
command line.
"""
from __future__ import annotations

import argparse
import csv
import math
import os
import platform
import re
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

CONFIGS = ("oversubscribed", "equipartition", "aloed")
REFERENCES = ("alone", "serial")   # all CPUs alone; 1 thread alone
REPO = Path(__file__).resolve().parents[2]
DEFAULT_ALOE = REPO / "build" / "release" / "tools" / "aloe" / "aloe"
RUN_FIELDS = ("seq", "rep", "mix", "config", "slot", "label", "program", "delay_s", "start_s",
              "wall_s", "threads", "cpus", "exit_code", "verification", "status", "reason",
              "daemon_clients", "team_sizes")
WIN, LOSS = 1.05, 0.95             # SCAF's win / break-even / loss bounds on a ratio


class UsageError(Exception):
    """A bad command line: reported in one line, exit status 2."""


@dataclass(frozen=True)
class Member:
    """One program of a mix: its name, when it starts (s after the mix's start), its label."""
    name: str
    delay: float
    label: str


# ---- parsing ---------------------------------------------------------------------------

def parse_number(text: str, what: str, *, integer=False, minimum=0.0, strict=False):
    try:
        value = int(text) if integer else float(text)
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a{'n integer' if integer else ' number'}")
    if not math.isfinite(value) or value < minimum or (strict and value == minimum):
        raise UsageError(f"{what}: {text!r} must be {'>' if strict else '>='} {minimum:g}")
    return value


def parse_program(text: str) -> tuple[str, list[str]]:
    """'NAME=COMMAND' -> (name, argv) with argv[0] resolved to an executable's path."""
    name, sep, command = text.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", name):
        raise UsageError(f"--program {text!r}: expected NAME=COMMAND (NAME: letters, digits, _.-)")
    try:
        argv = shlex.split(command)
    except ValueError as e:
        raise UsageError(f"--program {name}: {e}")
    if not argv:
        raise UsageError(f"--program {name}: no command")
    path = shutil.which(argv[0])
    if path is None:
        raise UsageError(f"--program {name}: {argv[0]} is not an executable file")
    return name, [str(Path(path).resolve()), *argv[1:]]


def parse_mix(text: str, known) -> list[Member]:
    """'cg,mg' or 'cg@0,mg@0.5' (mg starts 0.5 s after the mix starts) -> members.
    A name twice in a mix is two copies (labels cg#1, cg#2)."""
    parts = [p.strip() for p in text.split(",")]
    if len(parts) < 2 or not all(parts):
        raise UsageError(f"--mix {text!r}: name two or more programs, comma-separated")
    members = []
    for part in parts:
        name, at, delay = part.partition("@")
        if name not in known:
            raise UsageError(f"--mix {text!r}: unknown program {name!r} "
                             f"(known: {', '.join(sorted(known)) or 'none; add --program'})")
        members.append((name, parse_number(delay, f"--mix {text!r}: delay of {name}")
                        if at else 0.0))
    names = [n for n, _ in members]
    count = {n: 0 for n in names}
    out = []
    for name, delay in members:
        count[name] += 1
        label = name if names.count(name) == 1 else f"{name}#{count[name]}"
        out.append(Member(name, delay, label))
    return out


def verification(output: str) -> bool | None:
    """None when the output has no 'Verification' line; else whether it says SUCCESSFUL
    (NPB's 'Verification    =               SUCCESSFUL' and nothing failed)."""
    lines = [ln for ln in output.splitlines() if "verification" in ln.lower()]
    if not lines:
        return None
    said = re.findall(r"Verification\s*=\s*(\S+)", "\n".join(lines), re.IGNORECASE)
    if said:
        return all(s.upper() == "SUCCESSFUL" for s in said)
    text = "\n".join(lines).upper()
    return bool(re.search(r"\bSUCCESSFUL\b", text)) and not re.search(r"FAIL|UNSUCCESSFUL", text)


def team_sizes(output: str) -> str:
    """What aloe_coord_region_team_sizes printed ('team sizes: 2:346' -> '2:346'), else ''.
    That program runs for a fixed time, so its regions per team size, not its time, show
    what it was given."""
    m = re.search(r"^team sizes:\s*(.*)$", output, re.M)
    return m.group(1).strip() if m else ""


def equal_shares(cpus: list[int], k: int) -> list[list[int]]:
    """k contiguous, near-equal parts of cpus (the first ones one larger); with more programs
    than CPUs each gets one CPU, shared round-robin."""
    n = len(cpus)
    if k > n:
        return [[cpus[i % n]] for i in range(k)]
    bounds = [i * n // k for i in range(k + 1)]
    return [cpus[bounds[i]:bounds[i + 1]] for i in range(k)]


def schedule(mixes: list[str], configs: list[str], programs: list[str], rep: int) -> list[tuple]:
    """A repetition's order: (mix, config) for each mix and config, then (None, reference,
    program) for each program and reference, rotated by rep (config A, B, C, A, B, C, ...)."""
    units = [(m, c) for m in mixes for c in configs]
    units += [(None, r, p) for p in programs for r in REFERENCES]
    k = rep % len(units)
    return units[k:] + units[:k]


def check_out(folder: Path) -> None:
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise UsageError(f"--out {folder}: exists and is not an empty folder (will not overwrite)")


# ---- statistics ------------------------------------------------------------------------

def pct(values: list[float], q: float) -> float:
    """The q-th percentile (0..100), linear between order statistics; nan when empty."""
    v = sorted(values)
    if not v:
        return math.nan
    x = (len(v) - 1) * q / 100
    lo = math.floor(x)
    return v[lo] + (v[min(lo + 1, len(v) - 1)] - v[lo]) * (x - lo)


def spread(values: list[float]) -> tuple[float, float, float]:
    return pct(values, 50), pct(values, 25), pct(values, 75)


def references(rows: list[dict]) -> dict[tuple[str, str], float]:
    """(program, 'alone' | 'serial') -> median wall time of its passed reference runs."""
    times: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if r["config"] in REFERENCES and r["status"] == "ok":
            times.setdefault((r["program"], r["config"]), []).append(float(r["wall_s"]))
    return {k: statistics.median(v) for k, v in times.items()}


def rep_metrics(run: list[dict], refs: dict) -> dict[str, float]:
    """One mix run (its rows, all passed): makespan, speedup per label, sum of speedups, ANTT
    (nan where a reference is missing)."""
    out = {"makespan": max(float(r["start_s"]) + float(r["wall_s"]) for r in run)
           - min(float(r["start_s"]) for r in run)}
    speedups, slowdowns = [], []
    for r in run:
        t = float(r["wall_s"])
        s = refs.get((r["program"], "serial"), math.nan) / t
        out[f"speedup:{r['label']}"] = s
        speedups.append(s)
        slowdowns.append(t / refs.get((r["program"], "alone"), math.nan))
    out["sum_speedup"] = sum(speedups)
    out["antt"] = statistics.fmean(slowdowns)
    return out


def summarise(rows: list[dict], mixes: dict[str, list[Member]], configs: list[str]) -> list[dict]:
    """summary.csv's rows: per mix and config each quantity's median, p25, p75, n (passed)
    and failed (failed runs, or for mix-wide quantities repetitions with a failed run); the
    references; and the ratios of medians aloed / other config."""
    refs = references(rows)
    out = []

    def add(mix, config, quantity, values, failed):
        values = [v for v in values if not math.isnan(v)]
        med, p25, p75 = spread(values)
        out.append(dict(mix=mix, config=config, quantity=quantity, median=med, p25=p25,
                        p75=p75, n=len(values), failed=failed))

    for kind in REFERENCES:
        for prog in sorted({r["program"] for r in rows if r["config"] == kind}):
            mine = [r for r in rows if r["config"] == kind and r["program"] == prog]
            add("", kind, f"wall:{prog}", [float(r["wall_s"]) for r in mine if r["status"] == "ok"],
                sum(r["status"] != "ok" for r in mine))
    for mix, members in mixes.items():
        medians = {}
        for config in configs:
            mine = [r for r in rows if r["mix"] == mix and r["config"] == config]
            for m in members:
                runs = [r for r in mine if r["label"] == m.label]
                add(mix, config, f"wall:{m.label}",
                    [float(r["wall_s"]) for r in runs if r["status"] == "ok"],
                    sum(r["status"] != "ok" for r in runs))
            by_rep: dict[int, list[dict]] = {}
            for r in mine:
                by_rep.setdefault(int(r["rep"]), []).append(r)
            whole = [run for run in by_rep.values()
                     if len(run) == len(members) and all(r["status"] == "ok" for r in run)]
            metrics = [rep_metrics(run, refs) for run in whole]
            incomplete = len(by_rep) - len(whole)
            for q in [f"speedup:{m.label}" for m in members] + ["makespan", "sum_speedup", "antt"]:
                add(mix, config, q, [m[q] for m in metrics], incomplete)
                medians[(config, q)] = out[-1]["median"], out[-1]["n"]
        if "aloed" in configs:
            for base in (c for c in configs if c != "aloed"):
                for q in ("sum_speedup", "antt", "makespan"):
                    (a, na), (b, nb) = medians[("aloed", q)], medians[(base, q)]
                    out.append(dict(mix=mix, config=f"aloed/{base}", quantity=q,
                                    median=a / b if b else math.nan, p25=math.nan,
                                    p75=math.nan, n=min(na, nb), failed=0))
    return out


# ---- running ---------------------------------------------------------------------------

def base_env() -> dict[str, str]:
    """The driver's environment less what each configuration sets: thread counts, preloads,
    every ALOE_* variable (a daemon socket, schedules, outputs)."""
    return {k: v for k, v in os.environ.items()
            if k not in ("OMP_NUM_THREADS", "LD_PRELOAD") and not k.startswith("ALOE_")}


def run_together(launches: list[dict], timeout: float, scratch: Path) -> list[dict]:
    """Starts each launch (argv, env, delay) at its delay after now, in scratch as the working
    folder; returns per launch start_s, wall_s, exit_code (None: timed out, killed, or not
    started), reason and output. One thread per process, so each one's exit time is taken
    as it happens."""
    t0 = time.monotonic()
    results: list[dict] = [{} for _ in launches]

    def one(i: int, launch: dict) -> None:
        time.sleep(max(0.0, t0 + launch["delay"] - time.monotonic()))
        with open(scratch / f"out{i}.txt", "w+b") as f:
            start = time.monotonic()
            res = dict(start_s=start - t0, exit_code=None, reason="")
            try:
                p = subprocess.Popen(launch["argv"], env=launch["env"], cwd=scratch,
                                     stdin=subprocess.DEVNULL, stdout=f,
                                     stderr=subprocess.STDOUT, start_new_session=True)
            except OSError as e:
                res.update(wall_s=0.0, reason=f"could not start: {e}", output="")
                results[i] = res
                return
            try:
                res["exit_code"] = p.wait(timeout)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait()
                res["reason"] = f"timed out after {timeout:g} s, killed"
            res["wall_s"] = time.monotonic() - start
            f.seek(0)
            res["output"] = f.read().decode(errors="replace")
        results[i] = res

    threads = [threading.Thread(target=one, args=(i, x)) for i, x in enumerate(launches)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results


def judge(res: dict) -> tuple[str, str, str]:
    """(status 'ok' | 'failed', reason, verification '' | 'SUCCESSFUL' | 'not SUCCESSFUL')."""
    ver = verification(res.get("output", ""))
    shown = "" if ver is None else ("SUCCESSFUL" if ver else "not SUCCESSFUL")
    if res["reason"]:
        return "failed", res["reason"], shown
    if res["exit_code"] != 0:
        return "failed", f"exit status {res['exit_code']}", shown
    if ver is False:
        return "failed", "Verification is not SUCCESSFUL", shown
    return "ok", "", shown


class Daemon:
    """A private aloed for one mix run: started on enter, stopped on exit; `clients` counts
    the programs that joined it (from its log)."""

    def __init__(self, aloe: str, socket: Path, env: dict):
        self.cmd, self.socket, self.env = [aloe, "daemon"], socket, env
        self.log = Path(f"{socket}.log")

    def __enter__(self):
        r = subprocess.run(self.cmd + ["start", "--socket", str(self.socket),
                                       "--no-background-load"], env=self.env,
                           capture_output=True, text=True, timeout=30)
        if r.returncode != 0:
            raise RuntimeError(f"aloe daemon start failed ({r.returncode}): "
                               f"{(r.stderr or r.stdout).strip()}")
        m = re.search(r"; log (\S+)", r.stdout + r.stderr)
        self.log = Path(m.group(1)) if m else self.log
        m = re.search(r"\(pid (\d+)\)", r.stdout + r.stderr)
        self.pid = int(m.group(1)) if m else None
        return self

    def __exit__(self, *exc):
        r = subprocess.run(self.cmd + ["stop", "--socket", str(self.socket)], env=self.env,
                           capture_output=True, timeout=30)
        if r.returncode != 0 and self.pid:       # never leave our daemon behind
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass

    def clients(self) -> int:
        try:
            return len(re.findall(r"^client \d+ .* joined", self.log.read_text(), re.M))
        except OSError:
            return -1


def launches_for(unit: tuple, mixes, programs, cpus, aloe, socket) -> list[dict]:
    """The processes of one unit: a mix under a config, or a reference run."""
    n, env = len(cpus), base_env()
    if unit[0] is None:                      # (None, 'alone' | 'serial', program)
        threads = n if unit[1] == "alone" else 1
        return [dict(member=Member(unit[2], 0.0, unit[2]), argv=programs[unit[2]], delay=0.0,
                     threads=threads, cpus="", env={**env, "OMP_NUM_THREADS": str(threads)})]
    mix, config = unit
    members = mixes[mix]
    shares = equal_shares(cpus, len(members))
    out = []
    for m, share in zip(members, shares):
        argv, threads, pinned, e = programs[m.name], n, "", dict(env)
        if config == "equipartition":
            pinned, threads = ",".join(map(str, share)), len(share)
            argv = ["taskset", "-c", pinned, *argv]
        elif config == "aloed":
            argv = [aloe, "run", "--summary", "none", "--", *argv]
            e["ALOE_DAEMON_SOCKET"] = str(socket)
        e["OMP_NUM_THREADS"] = str(threads)
        out.append(dict(member=m, argv=argv, delay=m.delay, threads=threads, cpus=pinned, env=e))
    return out


def run_unit(unit, rep, seq, a, scratch, out_dir) -> list[dict]:
    """Runs one unit; its rows (a failed daemon start fails every process of the unit)."""
    socket = scratch / f"d{seq}.sock"
    launches = launches_for(unit, a.mixes, a.programs, a.cpus, a.aloe, socket)
    clients, results = "", None
    if unit[0] is not None and unit[1] == "aloed":
        try:
            with Daemon(a.aloe, socket, {**base_env(), "ALOE_DAEMON_SOCKET": str(socket)}) as d:
                results = run_together(launches, a.timeout, scratch)
            clients = d.clients()
            if d.log.exists():
                (out_dir / "daemon").mkdir(exist_ok=True)
                shutil.copy(d.log, out_dir / "daemon" / f"{seq:04d}.log")
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            results = [dict(start_s=0.0, wall_s=0.0, exit_code=None, reason=str(e), output="")
                       for _ in launches]
    else:
        results = run_together(launches, a.timeout, scratch)
    rows = []
    for slot, (launch, res) in enumerate(zip(launches, results)):
        status, reason, ver = judge(res)
        m = launch["member"]
        rows.append(dict(seq=seq, rep=rep, mix=unit[0] or "", config=unit[1], slot=slot,
                         label=m.label, program=m.name, delay_s=m.delay,
                         start_s=round(res["start_s"], 4), wall_s=round(res["wall_s"], 4),
                         threads=launch["threads"], cpus=launch["cpus"],
                         exit_code="" if res["exit_code"] is None else res["exit_code"],
                         verification=ver, status=status, reason=reason,
                         daemon_clients=clients,
                         team_sizes=team_sizes(res.get("output", ""))))
        if status != "ok":
            (out_dir / "failed").mkdir(exist_ok=True)
            (out_dir / "failed" / f"{seq:04d}-{slot}.txt").write_text(
                f"{shlex.join(launch['argv'])}\n{reason}\n\n{res.get('output', '')}")
    return rows


# ---- outputs ---------------------------------------------------------------------------

def machine(label: str) -> dict[str, str]:
    model = ""
    try:
        m = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
        model = m.group(1).strip() if m else ""
    except OSError:
        pass
    return {"label": label, "cpu": model or platform.processor() or "unknown",
            "cpus": f"{len(os.sched_getaffinity(0))} usable of {os.cpu_count()}",
            "kernel": f"{platform.system()} {platform.release()}",
            "python": platform.python_version()}


def cell(row: dict | None, digits=3) -> str:
    if row is None or row["n"] == 0 or math.isnan(row["median"]):
        return "–"
    text = f"{row['median']:.{digits}g}"
    if row["n"] > 1 and not math.isnan(row["p25"]):
        text += f" [{row['p25']:.{digits}g}–{row['p75']:.{digits}g}]"
    return text


def verdict(ratio: float, higher_is_better=True) -> str:
    if math.isnan(ratio):
        return ""
    r = ratio if higher_is_better else 1 / ratio
    return "win" if r >= WIN else "loss" if r <= LOSS else "break-even"


def result_md(a, rows, summary, info, load_before, load_after) -> str:
    find = {(s["mix"], s["config"], s["quantity"]): s for s in summary}
    failed = [r for r in rows if r["status"] != "ok"]
    omp = {k: v for k, v in os.environ.items() if k.startswith(("OMP_", "GOMP_"))
           and k != "OMP_NUM_THREADS"}
    lines = ["# OpenMP program mixes: oversubscribed, equipartition, aloed", "",
             f"Command: `{a.command}`", "",
             f"Machine: {info['label'] + '; ' if info['label'] else ''}{info['cpu']}; "
             f"{info['cpus']} CPUs; {info['kernel']}; Python {info['python']}.",
             f"Load average (1, 5, 15 min) before: {', '.join(f'{x:.2f}' for x in load_before)}; "
             f"after: {', '.join(f'{x:.2f}' for x in load_after)}.",
             f"Repetitions: {a.reps}; configurations: {', '.join(a.configs)}; timeout "
             f"{a.timeout:g} s per process; inherited OpenMP variables: "
             f"{', '.join(f'{k}={v}' for k, v in omp.items()) or 'none'}.", "",
             "Times are wall seconds around each process, median [p25–p75] over the passed "
             "runs. Speedup = the program's median 1-thread time / its time in the mix; "
             "Σ speedup is SCAF's metric (higher is better); ANTT = mean of T_mix / T_alone "
             "(lower is better). Ratios are of medians; SCAF's classes: win ≥ 1.05×, loss "
             "≤ 0.95× (for ANTT, of the inverse).", "", "## References", "",
             "| program | alone, all CPUs (s) | 1 thread (s) | speedup alone | failed |",
             "|---|---|---|---|---|"]
    for prog in sorted({m.name for ms in a.mixes.values() for m in ms}):
        al, se = find.get(("", "alone", f"wall:{prog}")), find.get(("", "serial", f"wall:{prog}"))
        solo = se["median"] / al["median"] if al and se and al["n"] and se["n"] else math.nan
        lines.append(f"| {prog} | {cell(al)} | {cell(se)} | "
                     f"{'–' if math.isnan(solo) else f'{solo:.3g}'} | "
                     f"{(al or {}).get('failed', 0) + (se or {}).get('failed', 0)} |")
    for mix, members in a.mixes.items():
        labels = [m.label for m in members]
        lines += ["", f"## Mix {mix}", "",
                  "| config | " + " | ".join(f"{x} time (s)" for x in labels) + " | "
                  + " | ".join(f"{x} speedup" for x in labels)
                  + " | makespan (s) | Σ speedup | ANTT | failed runs |",
                  "|---" * (2 * len(labels) + 5) + "|"]
        for c in a.configs:
            g = lambda q: find.get((mix, c, q))  # noqa: E731
            nfail = sum(r["status"] != "ok" for r in rows if r["mix"] == mix and r["config"] == c)
            lines.append(f"| {c} | " + " | ".join(cell(g(f"wall:{x}")) for x in labels) + " | "
                         + " | ".join(cell(g(f"speedup:{x}")) for x in labels) + " | "
                         + " | ".join(cell(g(q)) for q in ("makespan", "sum_speedup", "antt"))
                         + f" | {nfail} |")
        for base in (c for c in a.configs if c != "aloed" and "aloed" in a.configs):
            s, t = find[(mix, f"aloed/{base}", "sum_speedup")], find[(mix, f"aloed/{base}", "antt")]
            lines.append(f"\naloed / {base}: Σ speedup {s['median']:.3f}× "
                         f"({verdict(s['median'])}), ANTT {t['median']:.3f}× "
                         f"({verdict(t['median'], higher_is_better=False)}), medians of {s['n']} "
                         "complete repetition(s) each.")
        seen = {c: [f"{r['label']} {r['team_sizes']}" for r in rows if r["mix"] == mix
                    and r["config"] == c and r["team_sizes"]] for c in a.configs}
        if any(seen.values()):
            lines.append("\nTeam sizes seen (size:regions, each run): " + "; ".join(
                f"{c}: {', '.join(v)}" for c, v in seen.items() if v) + ".")
        short = [r for r in rows if r["mix"] == mix and r["config"] == "aloed"
                 and r["slot"] == 0 and r["daemon_clients"] != ""
                 and int(r["daemon_clients"]) < len(members)]
        if short:
            lines.append(f"\nWarning: in {len(short)} aloed run(s) fewer programs joined the "
                         "daemon than the mix has (see daemon/*.log): those ran unmanaged.")
    lines += ["", "## Failed runs", ""]
    if not failed:
        lines.append("None.")
    for r in failed:
        lines.append(f"- unit {r['seq']} (rep {r['rep']}, {r['mix'] or 'reference'}, "
                     f"{r['config']}, {r['label']}): {r['reason']} (failed/{int(r['seq']):04d}-{r['slot']}.txt)")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, fields, rows) -> None:
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: (f"{v:.6g}" if isinstance(v, float) else v) for k, v in r.items()})


# ---- main ------------------------------------------------------------------------------

def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="mixes.py", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--program", action="append", default=[], metavar="NAME=COMMAND",
                   help="a program (COMMAND split as by a shell); repeatable")
    p.add_argument("--mix", action="append", default=[], metavar="NAMES",
                   help="programs run together: cg,mg or cg@0,mg@0.5 (start delays, s); "
                        "repeatable")
    p.add_argument("--reps", default="5", help="repetitions (default 5)")
    p.add_argument("--configs", default=",".join(CONFIGS),
                   help=f"comma list, some of {', '.join(CONFIGS)} (default all)")
    p.add_argument("--out", required=True, help="results folder (new or empty)")
    p.add_argument("--timeout", default="120", help="seconds per process (default 120)")
    p.add_argument("--aloe", default=str(DEFAULT_ALOE), help="the aloe command")
    p.add_argument("--machine-label", default="", help="a name for the machine in result.md")
    a = p.parse_args(argv)
    # No path of this machine in a result: the script as the repository names it.
    a.command = shlex.join(["python", "bench/coord/mixes.py", *argv])
    a.reps = parse_number(a.reps, "--reps", integer=True, minimum=1)
    a.timeout = parse_number(a.timeout, "--timeout", minimum=0.0, strict=True)
    a.configs = [c.strip() for c in a.configs.split(",") if c.strip()]
    bad = [c for c in a.configs if c not in CONFIGS]
    if bad or not a.configs or len(set(a.configs)) != len(a.configs):
        raise UsageError(f"--configs {','.join(a.configs)}: name some of {', '.join(CONFIGS)}, "
                         "each once")
    a.programs = {}
    for text in a.program:
        name, cmd = parse_program(text)
        if name in a.programs:
            raise UsageError(f"--program {name}: named twice")
        a.programs[name] = cmd
    if not a.mix:
        raise UsageError("name at least one --mix")
    if len(set(a.mix)) != len(a.mix):
        raise UsageError("a --mix is named twice")
    a.mixes = {m: parse_mix(m, a.programs) for m in a.mix}
    if "aloed" in a.configs:
        found = shutil.which(a.aloe)
        if not found:
            raise UsageError(f"--aloe {a.aloe}: not an executable (build aloe, or pass --aloe)")
        a.aloe = str(Path(found).resolve())
    if "equipartition" in a.configs and not shutil.which("taskset"):
        raise UsageError("equipartition needs taskset (util-linux), not found on PATH")
    a.out = Path(a.out)
    check_out(a.out)
    a.cpus = sorted(os.sched_getaffinity(0))
    return a


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    try:
        a = parse_args(argv)
    except UsageError as e:
        print(f"mixes.py: {e}", file=sys.stderr)
        return 2
    a.out.mkdir(parents=True, exist_ok=True)
    (a.out / "command.txt").write_text(a.command + "\n")
    used = sorted({m.name for ms in a.mixes.values() for m in ms})
    info, load_before = machine(a.machine_label), os.getloadavg()
    rows: list[dict] = []
    seq = 0
    scratch = Path(tempfile.mkdtemp(prefix="aloe-mixes-"))
    try:
        for rep in range(a.reps):
            for unit in schedule(list(a.mixes), a.configs, used, rep):
                new = run_unit(unit, rep, seq, a, scratch, a.out)
                rows, seq = rows + new, seq + 1
                print(f"[rep {rep + 1}/{a.reps}] {unit[0] or 'reference'} {unit[1]}: "
                      + ", ".join(f"{r['label']} {r['wall_s']:.3f}s"
                                  + ("" if r["status"] == "ok" else f" FAILED ({r['reason']})")
                                  for r in new), flush=True)
    except KeyboardInterrupt:
        print("interrupted: writing what was gathered", file=sys.stderr)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    summary = summarise(rows, a.mixes, a.configs)
    write_csv(a.out / "runs.csv", RUN_FIELDS, rows)
    write_csv(a.out / "summary.csv", ("mix", "config", "quantity", "median", "p25", "p75", "n",
                                      "failed"), summary)
    md = result_md(a, rows, summary, info, load_before, os.getloadavg())
    (a.out / "result.md").write_text(md)
    print(md)
    return 1 if any(r["status"] != "ok" for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
