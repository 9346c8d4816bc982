"""Does aloe's efficiency measure agree with true speedups? (issue 18, deliverable 4)

    python3 bench/coord/efficiency_check.py --aloe build/release/tools/aloe/aloe \
        --program bt=/path/bt.W.x --program cg=/path/cg.A.x --threads 2 --reps 3 --out DIR

For each program:
- true efficiency: its median wall time on 1 thread and on p threads, plain libgomp, from
  separate runs (interleaved): E = T1 / (p · Tp);
- measured efficiency: the program under `aloe run` on p threads, joined to a daemon that
  shares p + 1 cores with a second, idle client holding one (a client speaking the protocol
  from here: it uses no CPU, but makes the program share the node, which is when aloe takes
  its serial samples); the last efficiency `aloe daemon status --json` showed for it, and the
  measure it came from. Median over the repetitions.
Writes efficiency.csv and result.md.
"""
import argparse
import csv
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import protocol


def idle_client(path):
    """A client that holds one core and uses no CPU: registered, then silent."""
    s = protocol.connect(path)
    s.send(protocol.hello(1))
    return s


def timed(cmd, env):
    t0 = time.monotonic()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=600)
    t = time.monotonic() - t0
    if r.returncode != 0 or ("Verification" in r.stdout and "SUCCESSFUL" not in r.stdout):
        sys.exit(f"{cmd} failed: {r.returncode} {r.stderr[-400:]}")
    return t


def measured(aloe, cmd, threads):
    folder = tempfile.mkdtemp(prefix="aloe-effcheck-")
    sock = os.path.join(folder, "aloed.sock")
    env = dict(os.environ, ALOE_DAEMON_SOCKET=sock)
    subprocess.run([aloe, "daemon", "start", "--cores", str(threads + 1), "--no-background-load"], env=env,
                   check=True, capture_output=True)
    keeper = idle_client(sock)
    try:
        p = subprocess.Popen([aloe, "run", "--summary", "none", "--", *cmd], env=dict(env, OMP_NUM_THREADS=str(threads)),
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        last, measure = None, "none"
        while p.poll() is None:
            r = subprocess.run([aloe, "daemon", "status", "--json"], env=env, capture_output=True, text=True)
            if r.returncode == 0:
                for c in json.loads(r.stdout)["clients"]:
                    if c["pid"] != os.getpid() and c["efficiency"] is not None:
                        last, measure = c["efficiency"], c["measure"]
            time.sleep(0.1)
        return last, measure
    finally:
        keeper.close()
        subprocess.run([aloe, "daemon", "stop"], env=env, capture_output=True)
        subprocess.run(["rm", "-rf", folder])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--aloe", required=True)
    ap.add_argument("--program", action="append", required=True, help="NAME=COMMAND")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--out", required=True)
    ap.add_argument("--machine-label", default="")
    a = ap.parse_args()
    if a.threads < 2 or a.reps < 1:
        sys.exit("--threads must be at least 2 and --reps at least 1")
    out = Path(a.out)
    if out.exists() and any(out.iterdir()):
        sys.exit(f"{out} is not empty; not overwriting it")
    out.mkdir(parents=True, exist_ok=True)
    programs = []
    for spec in a.program:
        name, _, command = spec.partition("=")
        if not name or not command:
            sys.exit(f"--program takes NAME=COMMAND, not {spec!r}")
        programs.append((name, shlex.split(command)))
    plain = {k: v for k, v in os.environ.items() if not k.startswith("ALOE_") and k != "LD_PRELOAD"}
    rows = []
    for name, cmd in programs:
        t1, tp, eff, measures = [], [], [], []
        for _ in range(a.reps):  # interleaved: 1 thread, p threads, measured
            t1.append(timed(cmd, dict(plain, OMP_NUM_THREADS="1")))
            tp.append(timed(cmd, dict(plain, OMP_NUM_THREADS=str(a.threads))))
            e, m = measured(a.aloe, cmd, a.threads)
            if e is not None:
                eff.append(e)
            measures.append(m)
        true_e = statistics.median(t1) / (a.threads * statistics.median(tp))
        rows.append({"program": name, "threads": a.threads, "t1_s": f"{statistics.median(t1):.3f}",
                     "tp_s": f"{statistics.median(tp):.3f}", "true_efficiency": f"{true_e:.3f}",
                     "measured_efficiency": f"{statistics.median(eff):.3f}" if eff else "",
                     "measured_reps": len(eff), "measure": max(set(measures), key=measures.count)})
        print(rows[-1], flush=True)
    with open(out / "efficiency.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lines = ["# Measured efficiency against true speedup", "",
             f"Command: `python {' '.join(sys.argv)}`  ",
             f"Machine: {a.machine_label or os.uname().nodename}, {len(os.sched_getaffinity(0))} CPUs, Linux {os.uname().release}",
             "", "True: T1 / (p · Tp) from separate plain libgomp runs (medians). Measured: the last value aloed showed for "
             "the program under aloe run at p threads (its smoothed report), median over repetitions.", "",
             "| program | p | T1 s | Tp s | true E | measured E | measured/true | measure | reps measured |",
             "|---|---:|---:|---:|---:|---:|---:|---|---:|"]
    for r in rows:
        ratio = f"{float(r['measured_efficiency']) / float(r['true_efficiency']):.2f}" if r["measured_efficiency"] else ""
        lines.append(f"| {r['program']} | {r['threads']} | {r['t1_s']} | {r['tp_s']} | {r['true_efficiency']} | "
                     f"{r['measured_efficiency'] or 'none'} | {ratio} | {r['measure']} | {r['measured_reps']}/{a.reps} |")
    (out / "result.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
