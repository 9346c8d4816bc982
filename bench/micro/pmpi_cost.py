#!/usr/bin/env python3
"""What libaloe-mpi adds to one intercepted MPI call (issue 15's target: under 150 ns).

Runs bench/micro/pmpi_calls (N cheap MPI calls on MPI_COMM_SELF, timed by the program) alone
(`plain`) and with libaloe-mpi preloaded (`aloe`), interleaved (rep r runs the two in the
order r mod 2), for each call (wait on MPI_REQUEST_NULL, barrier, allreduce of one int), and
reports per call the median ns per call of each variant, the ns added (median of the
per-repetition differences, with p25–p75) and the paired ratio. With valgrind it also counts
instructions (callgrind, the program's process) at two call counts, whose difference over the
extra calls gives instructions per call without start-up. Writes result.md, result.json,
runs.jsonl, command.txt and machine.json under --out (default bench/results/pmpi-cost-<date>).

    .venv/bin/python bench/micro/pmpi_cost.py [--build build/release] [--reps 11]
        [--calls 2000000] [--callgrind-calls 100000,300000 | --no-callgrind] [--lend MODE] [--out DIR]

--lend predictive|reactive (issue 19): the `aloe` variant runs with ALOE_LEND=MODE, so its
blocking calls wait politely (the nonblocking form and MPI_Test until done; no daemon, so
nothing is lent): what a balanced job pays per call for lending being on.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench" / "harness"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from aloe_harness import provenance  # noqa: E402
from gomp_forward_overhead import start_results, callgrind_total, compare, machine_line, quantiles  # noqa: E402

CALLS = ("wait", "barrier", "allreduce")
TARGET_NS = 150.0


def parse_args(argv: list[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--build", default="build/release", help="the build folder (default build/release)")
    p.add_argument("--reps", type=int, default=11, help="interleaved repetitions (default 11)")
    p.add_argument("--calls", type=int, default=2_000_000, help="calls per timed run (default 2000000)")
    p.add_argument("--callgrind-calls", default="100000,300000", help="the two call counts of callgrind")
    p.add_argument("--no-callgrind", action="store_true", help="no instruction counts")
    p.add_argument("--lend", choices=("off", "reactive", "predictive"), default=None,
                   help="ALOE_LEND for the aloe variant (default: unset, i.e. auto: off without a daemon)")
    p.add_argument("--out", help="results folder (default bench/results/pmpi-cost-YYYYMMDD)")
    a = p.parse_args(argv)
    if a.reps < 1 or a.calls < 1:
        p.error("--reps and --calls must be at least 1")
    try:
        a.cg = [int(x) for x in a.callgrind_calls.split(",")]
        assert len(a.cg) == 2 and 0 < a.cg[0] < a.cg[1]
    except (ValueError, AssertionError):
        p.error("--callgrind-calls must be two counts, the smaller first, such as 100000,300000")
    return a


def run(argv: list[str], env: dict) -> float:
    """ns per call the program printed (its checksum checked by the caller's reading)."""
    p = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=600)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(argv)} exited {p.returncode}: {p.stderr.strip()[-300:]}")
    fields = dict(line.split(None, 1) for line in p.stdout.splitlines() if " " in line)
    return float(fields["ns_per_call"])


def instructions(binary: Path, library: Path | None, call: str, counts: list[int], lend: str | None = None) -> float | None:
    if shutil.which("valgrind") is None:
        return None
    totals = []
    with tempfile.TemporaryDirectory() as work:
        for n in counts:
            out = Path(work) / f"cg.{n}"
            env = dict(os.environ, LD_PRELOAD=str(library)) if library else dict(os.environ)
            if library and lend:
                env["ALOE_LEND"] = lend
            subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", "-q",
                            str(binary), call, str(n)], env=env, capture_output=True, check=True, timeout=600)
            totals.append(callgrind_total(out))
    return (totals[1] - totals[0]) / (counts[1] - counts[0])


def main(argv: list[str]) -> int:
    a = parse_args(argv)
    build = Path(a.build)
    binary, library = build / "bench/micro/pmpi_calls", build / "lib/libaloe-mpi.so"
    for what, path in (("pmpi_calls", binary), ("libaloe-mpi", library)):
        if not path.is_file():
            print(f"pmpi_cost.py: {what} is not at {provenance.display_path(path)} (build with an MPI "
                  "installed: scripts/install-deps.sh)", file=sys.stderr)
            return 2
    out, machine = start_results(a.out, "pmpi-cost", "bench/micro/pmpi_cost.py", argv, str(build / "tools/aloe/aloe"))
    plain_env = {k: v for k, v in os.environ.items() if k != "LD_PRELOAD"}
    aloe_env = dict(plain_env, LD_PRELOAD=str(library.resolve()))
    if a.lend:
        aloe_env["ALOE_LEND"] = a.lend
    result = {"calls_per_run": a.calls, "reps": a.reps, "lend": a.lend, "machine_line": machine_line(machine), "per_call": {}}
    with open(out / "runs.jsonl", "w") as runs:
        for call in CALLS:
            ns = {"plain": [], "aloe": []}
            for rep in range(a.reps):
                for variant in (("plain", "aloe") if rep % 2 == 0 else ("aloe", "plain")):
                    t = run([str(binary), call, str(a.calls)], plain_env if variant == "plain" else aloe_env)
                    ns[variant].append(t)
                    runs.write(json.dumps({"call": call, "variant": variant, "rep": rep, "ns_per_call": t}) + "\n")
            added = [x - y for x, y in zip(ns["aloe"], ns["plain"])]
            lo, mid, hi = quantiles(added)
            r = {"plain_ns": quantiles(ns["plain"]), "aloe_ns": quantiles(ns["aloe"]),
                 "added_ns": [lo, mid, hi], "paired_ratio": compare(ns)["aloe"]["paired_ratio_median"]}
            if not a.no_callgrind:
                p = instructions(binary, None, call, a.cg)
                q = instructions(binary, library.resolve(), call, a.cg, a.lend)
                r["instructions"] = None if p is None else {"plain": p, "aloe": q, "added": q - p}
            result["per_call"][call] = r
    (out / "result.json").write_text(json.dumps(result, indent=2) + "\n")
    lend_text = f"The aloe variant runs with ALOE_LEND={a.lend} (polite waits, no daemon: nothing lent). " if a.lend else ""
    lines = ["# What libaloe-mpi adds per intercepted MPI call (issue 15)", "",
             f"Command: see command.txt. Machine: {result['machine_line']}; details in machine.json. {lend_text}"
             f"{a.reps} interleaved repetitions of {a.calls:,} calls; one process (MPI's singleton "
             "start), MPI_COMM_SELF. ns per call: median [p25–p75]; added: median of the per-repetition "
             "differences [p25–p75]. Instructions: callgrind, the difference between "
             f"{a.cg[0]:,} and {a.cg[1]:,} calls over the extra calls.", "",
             "| call | plain ns | with libaloe-mpi ns | added ns | paired ratio | instructions plain → aloe (added) | target < 150 ns |",
             "|---|---|---|---|---|---|---|"]
    for call, r in result["per_call"].items():
        fmt = lambda q: f"{q[1]:.1f} [{q[0]:.1f}–{q[2]:.1f}]"  # noqa: E731
        ins = r.get("instructions")
        ins_text = "–" if not ins else f"{ins['plain']:.0f} → {ins['aloe']:.0f} (+{ins['added']:.0f})"
        lines.append(f"| {call} | {fmt(r['plain_ns'])} | {fmt(r['aloe_ns'])} | {fmt(r['added_ns'])} | "
                     f"{r['paired_ratio']:.2f} | {ins_text} | {'met' if r['added_ns'][1] < TARGET_NS else 'missed'} |")
    (out / "result.md").write_text("\n".join(lines) + "\n")
    print((out / "result.md").read_text())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
