#!/usr/bin/env python3
"""How soon a rank that lent its core has it back (issue 19: the reclaim bound, measured).

Builds bench/micro/reclaim_bound.cpp outside the repository (mpicxx, against include/ and
build/release's libaloe.so), starts a private aloed on a socket in a temporary folder (as
core_lending.py does), and runs the program under `mpirun -np 2 --bind-to core` with
libaloe-mpi preloaded and ALOE_LEND set, once per chunk length (interleaved over --rounds).
Rank 0 lends its core while it waits in MPI_Recv; rank 1 runs aloe dynamic loops whose
spare worker joins as a guest on rank 0's CPU; rank 1 ends rank 0's wait a random 1-3 ms
after the guest's first chunk there. Per lend/reclaim cycle (all instants CLOCK_MONOTONIC,
one clock for the machine's processes):

    borrow   rank 0's offer sent -> the guest's first chunk starts on rank 0's CPU
               hop: offer sent -> aloed's allocation (borrowed 1) reaches rank 1's socket
               poll: -> rank 1 reads it (participant 0 reads the socket every 0.5 ms, between chunks)
               join: -> the guest's first chunk starts
    reclaim  rank 0's take-back sent (its MPI_Recv is returning) -> the guest's last chunk on
             rank 0's CPU ends
               hop: take-back sent -> aloed's allocation (borrowed 0) reaches rank 1's socket
               poll: -> rank 1 reads it
               leave: -> the guest's chunk in progress ends (it takes no other)

The design's bound is hop + 0.5 ms + one chunk; result.md says how often it held. Also
reported: the lender's wake-up (rank 1 sent -> rank 0's MPI_Recv returned: the polite wait's
naps), the time the lender's first computation after the wait lost to the guest still on its
CPU, and the CPU time the guest thread used after its last chunk (its wait's spin and yield).

Writes result.md, result.json, cycles.csv, command.txt and machine.txt under --out; with
--keep-raw the ranks' own records under --out/raw/ (not committed). Waits (up to 30 s)
before each run for the machine to be quiet (under 0.3 busy CPUs over 0.5 s) and records the
CPU time other processes took during it.

    .venv/bin/python bench/micro/reclaim_bound.py [--chunks-us 10,100,1000] [--cycles 200]
        [--rounds 2] [--lend reactive] [--out bench/results/reclaim-bound-YYYYMMDD]
"""
from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import platform
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from core_lending import ALOED, MPI_LIB  # noqa: E402
from dlb_lewi import busy_jiffies, children_ticks, sha, wait_quiet  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
SOURCE = "bench/micro/reclaim_bound.cpp"
LIBALOE = "build/release/libaloe.so.0"
POLL_MS = 0.5  # the borrower's poll of the daemon's socket while lending is on (daemon_client.cpp)
KIND = {"offer": 4, "request": 5, "allocation": 64}


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chunks-us", default="10,100,1000", help="chunk lengths of the borrower's loop, in us")
    p.add_argument("--cycles", type=int, default=200, help="lend/reclaim cycles per run (after --warmup)")
    p.add_argument("--warmup", type=int, default=5, help="cycles run first and not counted")
    p.add_argument("--rounds", type=int, default=1, help="runs per chunk length, interleaved (cycles each)")
    p.add_argument("--lend", default="reactive", choices=["reactive", "predictive"])
    p.add_argument("--hold-min-us", type=float, default=1000)
    p.add_argument("--hold-max-us", type=float, default=3000)
    p.add_argument("--after-ms", type=float, default=20, help="the borrower's loop goes on this long after the send")
    p.add_argument("--lender-ms", type=float, default=25, help="the lender's computation after each wait")
    p.add_argument("--idle-ms", type=float, default=0,
                   help="the borrower sleeps this long before each loop (0: none; >0 shows a lend read at a loop's start)")
    p.add_argument("--guest-cpu", action="store_true",
                   help="read the guest thread's CPU time after each of its chunks (a system call per chunk) to "
                        "report what it used after its last one")
    p.add_argument("--background-load", action="store_true",
                   help="let aloed subtract foreign load (default: --no-background-load, so a build elsewhere "
                        "does not change the shares during the run)")
    p.add_argument("--quiet-wait-s", type=float, default=30)
    p.add_argument("--keep-raw", action="store_true")
    p.add_argument("--out", default=None)
    a = p.parse_args(argv)
    a.chunks = [float(x) for x in a.chunks_us.split(",") if x.strip()]
    if not a.chunks or min(a.chunks) <= 0 or a.cycles < 1 or a.rounds < 1:
        p.error("--chunks-us needs positive lengths, --cycles and --rounds at least 1")
    a.out = Path(a.out or REPO / "bench" / "results" / f"reclaim-bound-{datetime.date.today():%Y%m%d}")
    return a


class Placeholders:
    def __init__(self, tmp: str):
        self.pairs = [(tmp, "<tmp>"), (str(REPO), "<repo>")]

    def __call__(self, text: str) -> str:
        for real, shown in self.pairs:
            text = text.replace(real, shown)
        return text


def build(tmp: str) -> tuple[Path, list[str]]:
    binary = Path(tmp) / "reclaim_bound"
    cmd = ["mpicxx", "-std=c++20", "-O2", "-Wall", "-Wextra", "-U_FORTIFY_SOURCE",
           "-I", str(REPO / "include"), "-I", str(REPO / "src"), str(REPO / SOURCE), "-o", str(binary),
           "-L", str(REPO / "build/release"), "-laloe", f"-Wl,-rpath,{REPO / 'build/release'}", "-rdynamic"]
    subprocess.run(cmd, check=True)
    return binary, cmd


def run_argv(a, binary: Path, socket: str, chunk_us: float, seed: int, prefix: str) -> list[str]:
    env = {"LD_PRELOAD": str(REPO / MPI_LIB), "ALOE_LEND": a.lend, "ALOE_DAEMON_SOCKET": socket}
    argv = ["mpirun", "--allow-run-as-root", "-np", "2", "--bind-to", "core"]
    for k, v in env.items():
        argv += ["-x", f"{k}={v}"]
    argv += [str(binary), "--chunk-us", f"{chunk_us:g}", "--cycles", str(a.cycles), "--warmup", str(a.warmup),
             "--hold-min-us", f"{a.hold_min_us:g}", "--hold-max-us", f"{a.hold_max_us:g}",
             "--after-ms", f"{a.after_ms:g}", "--lender-ms", f"{a.lender_ms:g}", "--idle-ms", f"{a.idle_ms:g}",
             "--guest-cpu", "1" if a.guest_cpu else "0",
             "--seed", str(seed), "--out-prefix", prefix]
    return argv


# ---- the ranks' records ----

def read_rank(path: Path) -> dict:
    r: dict = {"events": [], "cycles": {}}
    for line in path.read_text().splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "rank":
            r["cpus"] = w[3]
            r["unit_ns"] = float(w[5])
        elif w[0] in ("lender_alone_ns", "chunk_alone_ns"):
            r[w[0]] = int(w[1])  # median, min, max
            r[w[0] + "_min"] = int(w[2])
        elif w[0] == "lender_cycle":
            r["cycles"][int(w[1])] = {"enter": int(w[2]), "ret": int(w[3]), "done": int(w[4])}
        elif w[0] == "borrower_cycle":
            v = [int(x) for x in w[1:]]
            names = ["i", "loop_start", "loop_end", "guest_seen", "hold", "send", "sent", "stop", "timed_out",
                     "guest_first", "guest_last_start", "guest_last_end", "guest_last_cpu", "guest_cpu_total",
                     "guest_tid", "guest_chunks", "guest_elsewhere", "own_chunks", "own_on_lender",
                     "guest_chunk_median", "dropped"]
            c = dict(zip(names, v))
            c["tail"] = [v[len(names) + 3 * k: len(names) + 3 * k + 3] for k in range(3)]  # start, end, cpu; last first
            r["cycles"][c["i"]] = c
        elif w[0] == "event":
            r["events"].append({"dir": w[1], "kind": int(w[2]), "t": int(w[3]), "queued": int(w[4]),
                                "a": int(w[5]), "b": int(w[6]), "c": int(w[7]), "d": int(w[8])})
        elif w[0] == "events_dropped":
            r["events_dropped"] = int(w[1])
    return r


def first(events, pred):
    return next((e for e in events if pred(e)), None)


def cycle_rows(r0: dict, r1: dict, chunk_us: float, warmup: int) -> list[dict]:
    """One row per counted cycle: the instants matched across the ranks, in ms."""
    offers = [e for e in r0["events"] if e["dir"] == "s" and e["kind"] == KIND["offer"]]
    wants = [e for e in r0["events"] if e["dir"] == "s" and e["kind"] == KIND["request"]]
    allocs = [e for e in r1["events"] if e["dir"] == "r" and e["kind"] == KIND["allocation"]]
    for e in allocs:
        if e["queued"] < 0:
            e["queued"] = e["t"]
    ms = 1e-6
    rows = []
    for i in sorted(r1["cycles"]):
        if i < warmup or i not in r0["cycles"]:
            continue
        L, B = r0["cycles"][i], r1["cycles"][i]
        row = {"cycle": i, "chunk_us": chunk_us, "status": "ok"}
        offer = first(offers, lambda e: L["enter"] <= e["t"] <= L["ret"])
        want = first(wants, lambda e: offer is not None and offer["t"] <= e["t"] <= L["ret"])
        row["lender_wake_ms"] = (L["ret"] - B["send"]) * ms
        # Against its quickest run alone (the one least disturbed by anything else).
        row["lender_lost_ms"] = ((L["done"] - L["ret"]) - r0["lender_alone_ns_min"]) * ms
        if B["timed_out"] or B["guest_first"] < 0:
            row["status"] = "no guest"
        elif offer is None or want is None:
            row["status"] = "no lend seen"
        if row["status"] != "ok":
            rows.append(row)
            continue
        b_alloc = first(allocs, lambda e: e["queued"] >= offer["t"] and e["d"] >= 1)
        r_alloc = first(allocs, lambda e: e["queued"] >= want["t"] and e["d"] == 0)
        row["lent_before_loop"] = offer["t"] < B["loop_start"]
        if b_alloc is not None and b_alloc["queued"] <= want["t"]:
            row["borrow_ms"] = (B["guest_first"] - offer["t"]) * ms
            row["borrow_hop_ms"] = (b_alloc["queued"] - offer["t"]) * ms
            row["borrow_poll_ms"] = (b_alloc["t"] - b_alloc["queued"]) * ms
            row["borrow_join_ms"] = (B["guest_first"] - b_alloc["t"]) * ms
        # A guest whose last chunk ended before the take-back (it was between chunks, off the
        # CPU, when the lender got it back, and left at its next look) held it no longer.
        row["guest_done_before_take_back"] = B["guest_last_end"] < want["t"]
        row["reclaim_ms"] = max(0, B["guest_last_end"] - want["t"]) * ms
        row["reclaim_from_return_ms"] = (B["guest_last_end"] - L["ret"]) * ms
        row["take_back_to_return_ms"] = (L["ret"] - want["t"]) * ms
        row["last_chunk_ms"] = (B["guest_last_end"] - B["guest_last_start"]) * ms
        row["guest_chunk_median_ms"] = B["guest_chunk_median"] * ms if B["guest_chunk_median"] >= 0 else None
        if B["guest_cpu_total"] >= 0 and B["guest_last_cpu"] > 0:
            row["guest_cpu_after_ms"] = (B["guest_cpu_total"] - B["guest_last_cpu"]) * ms
            last, before = B["tail"][0], B["tail"][1]
            if before[2] > 0 and last[2] > 0:
                # The CPU the last chunk got (from the end of the one before), against its wall time.
                row["last_chunk_cpu_ms"] = (last[2] - before[2]) * ms
        if B["guest_last_end"] >= B["stop"] - chunk_us * 1e3:
            row["status"] = "not reclaimed within the loop"
        if r_alloc is not None:
            row["reclaim_hop_ms"] = (r_alloc["queued"] - want["t"]) * ms
            row["reclaim_poll_ms"] = (r_alloc["t"] - r_alloc["queued"]) * ms
            row["reclaim_leave_ms"] = max(0, B["guest_last_end"] - r_alloc["t"]) * ms
            row["chunk_started_after_read"] = B["guest_last_start"] > r_alloc["t"]
            row["design_bound_ms"] = row["reclaim_hop_ms"] + POLL_MS + chunk_us * 1e-3
            row["within_design_bound"] = row["reclaim_ms"] <= row["design_bound_ms"]
        elif row["status"] == "ok":
            row["status"] = "no reclaim allocation seen"
        rows.append(row)
    return rows


def pct(v: list[float], q: float) -> float:
    """The q-quantile (0..1), linear between order statistics."""
    s = sorted(v)
    if len(s) == 1:
        return s[0]
    x = q * (len(s) - 1)
    lo = int(x)
    hi = min(lo + 1, len(s) - 1)
    return s[lo] + (s[hi] - s[lo]) * (x - lo)


def stats(v: list[float]) -> dict | None:
    v = [x for x in v if x is not None]
    if not v:
        return None
    return {"n": len(v), "median": pct(v, 0.5), "p90": pct(v, 0.9), "p99": pct(v, 0.99), "max": max(v),
            "min": min(v)}


MEASURES = ["borrow_ms", "borrow_hop_ms", "borrow_poll_ms", "borrow_join_ms",
            "reclaim_ms", "reclaim_hop_ms", "reclaim_poll_ms", "reclaim_leave_ms", "reclaim_from_return_ms",
            "take_back_to_return_ms", "last_chunk_ms", "last_chunk_cpu_ms", "guest_chunk_median_ms", "guest_cpu_after_ms",
            "lender_wake_ms", "lender_lost_ms"]


def summarise(rows: list[dict], chunk_us: float) -> dict:
    ok = [r for r in rows if r["status"] == "ok"]
    s: dict = {"chunk_us": chunk_us, "cycles": len(rows),
               "status_counts": {k: sum(1 for r in rows if r["status"] == k) for k in sorted({r["status"] for r in rows})}}
    for m in MEASURES:
        src = [r for r in ok if not r.get("lent_before_loop")] if m.startswith("borrow") else ok
        s[m] = stats([r.get(m) for r in src])
    within = [r["within_design_bound"] for r in ok if "within_design_bound" in r]
    s["within_design_bound"] = sum(within)
    s["checked_against_bound"] = len(within)
    s["excess_over_design_bound_ms"] = stats([r["reclaim_ms"] - r["design_bound_ms"] for r in ok if "design_bound_ms" in r])
    s["chunk_started_after_read"] = sum(1 for r in ok if r.get("chunk_started_after_read"))
    s["lent_before_loop"] = sum(1 for r in ok if r.get("lent_before_loop"))
    s["guest_done_before_take_back"] = sum(1 for r in ok if r.get("guest_done_before_take_back"))
    return s


def fmt(x, nd=3):
    return "–" if x is None else f"{x:.{nd}f}"


def report(result: dict) -> str:
    a = result["settings"]
    lines = [f"# Reclaim bound of a lent core (issue 19), {result['machine']['label']}", "",
             f"2 ranks bound one per core (`mpirun -np 2 --bind-to core`), libaloe-mpi preloaded, "
             f"ALOE_LEND={a['lend']}, a private aloed{'' if a['background_load'] else ' (--no-background-load)'}. "
             f"Rank 0 waits in MPI_Recv and lends its core; rank 1 runs aloe `dynamic,chunk=1` loops whose "
             f"iterations are chunks of calibrated work, on its own thread plus the spare worker that joins "
             f"as a guest on rank 0's CPU; rank 1 ends rank 0's wait {a['hold_min_us'] / 1e3:g}–{a['hold_max_us'] / 1e3:g} ms "
             f"(uniform) after the guest's first chunk there. {a['cycles']} counted cycles per run after "
             f"{a['warmup']} warm-up cycles, {a['rounds']} run(s) per chunk length. All instants CLOCK_MONOTONIC "
             f"(bench/micro/reclaim_bound.py has the definitions). Times in ms.", ""]
    lines += ["## Reclaim: take-back sent → the guest's last chunk on the lender's CPU ends", "",
              "| chunk | cycles ok | reclaim median | p90 | p99 | max | hop median | hop p99 | hop max | poll median | poll p99 | poll max | leave median | leave p99 | leave max | ≤ hop + 0.5 ms + chunk |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in result["summary"]:
        r, h, p, lv = s["reclaim_ms"], s["reclaim_hop_ms"], s["reclaim_poll_ms"], s["reclaim_leave_ms"]
        if r is None:
            lines.append(f"| {s['chunk_us']:g} us | 0 | | | | | | | | | | | | | | |")
            continue
        lines.append(f"| {s['chunk_us']:g} us | {r['n']} | {fmt(r['median'])} | {fmt(r['p90'])} | {fmt(r['p99'])} | "
                     f"{fmt(r['max'])} | {fmt(h and h['median'])} | {fmt(h and h['p99'])} | {fmt(h and h['max'])} | "
                     f"{fmt(p and p['median'])} | {fmt(p and p['p99'])} | {fmt(p and p['max'])} | "
                     f"{fmt(lv and lv['median'])} | {fmt(lv and lv['p99'])} | {fmt(lv and lv['max'])} | "
                     f"{s['within_design_bound']}/{s['checked_against_bound']} |")
    lines += ["", "## Borrow: offer sent → the guest's first chunk on the lender's CPU starts", "",
              "| chunk | cycles | borrow median | p90 | p99 | max | hop median | hop max | poll median | poll max | join median | join max |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in result["summary"]:
        b, h, p, j = s["borrow_ms"], s["borrow_hop_ms"], s["borrow_poll_ms"], s["borrow_join_ms"]
        if b is None:
            continue
        lines.append(f"| {s['chunk_us']:g} us | {b['n']} | {fmt(b['median'])} | {fmt(b['p90'])} | {fmt(b['p99'])} | "
                     f"{fmt(b['max'])} | {fmt(h and h['median'])} | {fmt(h and h['max'])} | {fmt(p and p['median'])} | "
                     f"{fmt(p and p['max'])} | {fmt(j and j['median'])} | {fmt(j and j['max'])} |")
    lines += ["", "## Around the reclaim", "",
              "Last chunk: the guest's last chunk on the lender's CPU, wall time and (with --guest-cpu) the CPU time "
              "it got; take-back → return: rank 0's take-back sent → its MPI_Recv returned; wake-up: rank 1 sent the "
              "message → rank 0's MPI_Recv returned (the polite wait's nap, then the CPU held by the guest); lost: "
              "rank 0's computation after the wait, less its quickest run alone; guest CPU after: what the guest "
              "thread used after its last chunk (its wait's spin and yield, with --guest-cpu).", "",
              "| chunk | chunk alone | last chunk median | p90 | max | its CPU median | max | take-back → return median | wake-up median | p90 | max | lost median | p90 | max | guest CPU after, median | max |",
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for s in result["summary"]:
        g, lc, lcc, tb, w, lo, ga = (s["guest_chunk_median_ms"], s["last_chunk_ms"], s["last_chunk_cpu_ms"],
                                    s["take_back_to_return_ms"], s["lender_wake_ms"], s["lender_lost_ms"],
                                    s["guest_cpu_after_ms"])
        lines.append(f"| {s['chunk_us']:g} us | {fmt(g and g['median'])} | {fmt(lc and lc['median'])} | "
                     f"{fmt(lc and lc['p90'])} | {fmt(lc and lc['max'])} | {fmt(lcc and lcc['median'])} | "
                     f"{fmt(lcc and lcc['max'])} | {fmt(tb and tb['median'])} | {fmt(w and w['median'])} | "
                     f"{fmt(w and w['p90'])} | {fmt(w and w['max'])} | {fmt(lo and lo['median'])} | "
                     f"{fmt(lo and lo['p90'])} | {fmt(lo and lo['max'])} | {fmt(ga and ga['median'])} | "
                     f"{fmt(ga and ga['max'])} |")
    lines += ["", "Cycles not counted, by reason:", ""]
    for s in result["summary"]:
        bad = {k: v for k, v in s["status_counts"].items() if k != "ok"}
        lines.append(f"- {s['chunk_us']:g} us: {bad or 'none'}; guest chunks started after the reclaim was read: "
                     f"{s['chunk_started_after_read']}; guest between chunks (off the CPU) at the take-back, counted as 0: "
                     f"{s['guest_done_before_take_back']}; lent before the loop started (not in the borrow figures): "
                     f"{s['lent_before_loop']}")
    lines += ["", "Runs (load while each ran):", ""]
    for r in result["runs"]:
        lines.append(f"- chunk {r['chunk_us']:g} us, round {r['round']}: rc {r['rc']}, {r['wall_s']} s, "
                     f"other processes' CPU {r['foreign_cpu_s']} s, load average {' '.join(r['loadavg'])}")
    return "\n".join(lines) + "\n"


def machine_text(binary_cmd: list[str], hide) -> tuple[str, dict]:
    def out(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"error: {e}"

    lscpu = out(["lscpu"])
    m = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "label": f"{os.cpu_count()}-CPU {platform.machine()} ({next((l.split(':', 1)[1].strip() for l in lscpu.splitlines() if l.startswith('Model name')), '?')})",
        "kernel": platform.release(), "nproc": os.cpu_count(),
        "loadavg_at_start": open("/proc/loadavg").read().split()[:3],
        "git_commit": out(["git", "-C", str(REPO), "rev-parse", "HEAD"]),
        "git_modified_files": len([l for l in out(["git", "-C", str(REPO), "status", "--porcelain",
                                                   "--untracked-files=no"]).splitlines() if l.strip()]),
        "binaries_sha256_16": {p: sha(REPO / p) for p in (LIBALOE, MPI_LIB, ALOED)},
        "mpirun": out(["mpirun", "--version"]).splitlines()[0] if shutil.which("mpirun") else "none",
        "compiler": out(["mpicxx", "--version"]).splitlines()[0] if shutil.which("mpicxx") else "none",
        "python": platform.python_version(),
    }
    text = "\n".join([f"{k}: {json.dumps(v) if isinstance(v, dict) else v}" for k, v in m.items()]
                     + ["build: " + hide(shlex.join(binary_cmd)), "", "lscpu:", lscpu]) + "\n"
    return text, m


def main(argv):
    a = parse_args(argv)
    for p in (ALOED, MPI_LIB, LIBALOE):
        if not (REPO / p).exists():
            print(f"reclaim_bound.py: {p} is missing (build build/release with MPI)", file=sys.stderr)
            return 2
    tmp = tempfile.mkdtemp(prefix="reclaim-bound-")
    hide = Placeholders(tmp)
    try:
        binary, build_cmd = build(tmp)
    except subprocess.CalledProcessError as e:
        print(f"reclaim_bound.py: the build failed ({e})", file=sys.stderr)
        return 1
    a.out.mkdir(parents=True, exist_ok=True)
    if a.keep_raw:
        (a.out / "raw").mkdir(exist_ok=True)
    mtext, machine = machine_text(build_cmd, hide)
    socket = os.path.join(tmp, "aloed.sock")
    daemon_cmd = [str(REPO / ALOED), "--socket", socket] + ([] if a.background_load else ["--no-background-load"])
    log = open(os.path.join(tmp, "aloed.log"), "w")
    daemon = subprocess.Popen(daemon_cmd, stdout=subprocess.DEVNULL, stderr=log)
    runs, rows, commands = [], [], []
    try:
        for _ in range(100):
            if os.path.exists(socket):
                break
            time.sleep(0.05)
        else:
            print("reclaim_bound.py: aloed did not create its socket", file=sys.stderr)
            return 1
        hz = os.sysconf("SC_CLK_TCK")
        for rnd in range(a.rounds):
            chunks = a.chunks[rnd % len(a.chunks):] + a.chunks[:rnd % len(a.chunks)]
            for chunk in chunks:
                prefix = os.path.join(tmp, f"run-{chunk:g}us-r{rnd}")
                argv_run = run_argv(a, binary, socket, chunk, 1000 * rnd + int(chunk), prefix)
                commands.append(hide(shlex.join(argv_run)))
                waited = wait_quiet(0.3, a.quiet_wait_s)
                b0, c0, w0 = busy_jiffies(), children_ticks(), time.monotonic()
                try:
                    p = subprocess.run(argv_run, capture_output=True, text=True, timeout=600)
                    rc, out = p.returncode, p.stdout + p.stderr
                except subprocess.TimeoutExpired as e:
                    rc, out = 124, str(e)
                b1, c1, w1 = busy_jiffies(), children_ticks(), time.monotonic()
                run = {"chunk_us": chunk, "round": rnd, "rc": rc, "wall_s": round(w1 - w0, 2),
                       "waited_for_quiet_s": round(waited, 1),
                       "foreign_cpu_s": round(max(0.0, (b1 - b0) - (c1 - c0)) / hz, 2),
                       "loadavg": open("/proc/loadavg").read().split()[:3], "command": hide(shlex.join(argv_run))}
                if rc != 0:
                    run["output_tail"] = hide(out[-2000:])
                    runs.append(run)
                    print(f"chunk {chunk:g} us round {rnd}: failed (rc {rc})\n{run['output_tail']}", flush=True)
                    continue
                r0, r1 = read_rank(Path(prefix + ".rank0.txt")), read_rank(Path(prefix + ".rank1.txt"))
                run["chunk_alone_us"] = round(r1.get("chunk_alone_ns", 0) / 1e3, 2)
                run["lender_alone_ms"] = round(r0.get("lender_alone_ns", 0) / 1e6, 3)
                got = cycle_rows(r0, r1, chunk, a.warmup)
                for r in got:
                    r["round"] = rnd
                rows += got
                runs.append(run)
                if a.keep_raw:
                    for rk in (0, 1):
                        shutil.copy(f"{prefix}.rank{rk}.txt", a.out / "raw" / f"{chunk:g}us-r{rnd}.rank{rk}.txt")
                okr = [r["reclaim_ms"] for r in got if r["status"] == "ok"]
                print(f"chunk {chunk:g} us round {rnd}: {len(okr)}/{len(got)} cycles ok, reclaim median "
                      f"{fmt(pct(okr, 0.5) if okr else None)} ms, max {fmt(max(okr) if okr else None)} ms; "
                      f"foreign CPU {run['foreign_cpu_s']} s", flush=True)
    finally:
        daemon.terminate()
        try:
            daemon.wait(timeout=10)
        except subprocess.TimeoutExpired:
            daemon.kill()
            daemon.wait()
        log.close()
    machine["loadavg_at_end"] = open("/proc/loadavg").read().split()[:3]
    mtext += f"loadavg_at_end: {machine['loadavg_at_end']}\n"
    summary = [summarise([r for r in rows if r["chunk_us"] == c], c) for c in a.chunks]
    result = {"what": "issue 19: the time a lender waits for its core back (reclaim) and the time a borrower takes "
                      "to use a lent core (borrow)",
              "settings": {"chunks_us": a.chunks, "cycles": a.cycles, "warmup": a.warmup, "rounds": a.rounds,
                           "lend": a.lend, "hold_min_us": a.hold_min_us, "hold_max_us": a.hold_max_us,
                           "after_ms": a.after_ms, "lender_ms": a.lender_ms, "idle_ms": a.idle_ms,
                           "background_load": a.background_load, "poll_ms": POLL_MS},
              "summary": summary, "runs": runs, "machine": machine}
    (a.out / "result.json").write_text(json.dumps(result, indent=1) + "\n")
    (a.out / "result.md").write_text(report(result))
    (a.out / "machine.txt").write_text(mtext)
    fields = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("chunk_us", "round", "cycle", "status"), k))
    with open(a.out / "cycles.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        for r in rows:
            w.writerow({k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()})
    shown_argv = ["bench/micro/reclaim_bound.py", *[hide(x) for x in argv]]
    (a.out / "command.txt").write_text(
        "# From the repository root (<repo>), build/release built with MPI; <tmp> is the script's temporary folder.\n"
        f".venv/bin/python {shlex.join(shown_argv)}\n"
        "# it builds the program:\n" + hide(shlex.join(build_cmd)) + "\n"
        "# starts a private daemon:\n" + hide(shlex.join(daemon_cmd)) + "\n"
        "# and runs, per chunk length and round:\n" + "\n".join(commands) + "\n")
    print(report(result))
    shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
